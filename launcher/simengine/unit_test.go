package simengine

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/spf13/pflag"
)

func TestDecide(t *testing.T) {
	const n = 20000
	rights := 0
	for i := range n {
		id := fmt.Sprintf("item-%d", i)
		if r, _ := Decide(3, "m", id, 1, 2); !r {
			t.Fatalf("p=1 answered %s wrong", id)
		}
		if r, _ := Decide(3, "m", id, 0, 2); r {
			t.Fatalf("p=0 answered %s right", id)
		}
		r, wi := Decide(3, "m", id, 0.3, 3)
		if wi < 0 || wi > 2 {
			t.Fatalf("wrong index %d out of range", wi)
		}
		if r {
			rights++
		}
		if r2, wi2 := Decide(3, "m", id, 0.3, 3); r2 != r || wi2 != wi {
			t.Fatalf("Decide is not deterministic for %s", id)
		}
	}
	if frac := float64(rights) / n; frac < 0.28 || frac > 0.32 {
		t.Errorf("right=0.3 answered %.3f right", frac)
	}
	same := 0
	for i := range 200 {
		id := fmt.Sprintf("item-%d", i)
		a, _ := Decide(3, "model-a", id, 0.5, 1)
		b, _ := Decide(3, "model-b", id, 0.5, 1)
		if a == b {
			same++
		}
	}
	if same == 200 {
		t.Error("the served model name does not change any decision")
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions([]string{"serve", "Qwen/Qwen3-VL-8B-Instruct", "--host", "127.0.0.1", "--port", "9000",
		"--tensor-parallel-size", "2", "--limit-mm-per-prompt", `{"image":{"count":80,"width":512,"height":1644},"video":0}`,
		"--no-enable-prefix-caching", "--sim-fault", "crash-after=3,hang-after=1", "--sim-fault", "never-ready",
		"--trust-remote-code", "--mm-processor-kwargs", `{"max_dynamic_patch":1}`, "--generation-config", "vllm",
		"--dtype", "bfloat16", "--seed", "0", "--mm-encoder-tp-mode", "data", "--reasoning-parser", "qwen3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Model != "Qwen/Qwen3-VL-8B-Instruct" || o.ServedName != o.Model || o.Port != 9000 || o.ImageLimit != 80 ||
		o.Workers != 2 || o.KVTokens != 4*32768 || o.PrefixCaching || o.ReasoningParse != "qwen3" {
		t.Errorf("options %+v", o)
	}
	f := o.Faults
	if f.crashAfter != 3 || f.hangAfter != 1 || !f.neverReady || f.exitDuringLoad || f.unavailableAfter != off || f.streamErrorAfter != off {
		t.Errorf("faults %+v", f)
	}
	for _, c := range []struct {
		limit string
		want  int
	}{{`{"image":5}`, 5}, {`{"video":0}`, defaultImageLimit}, {``, defaultImageLimit}, {`{"image":{"count":0}}`, 0}} {
		o, err := parseOptions([]string{"m", "--limit-mm-per-prompt", c.limit}, nil)
		if err != nil || o.ImageLimit != c.want {
			t.Errorf("limit %s: %v %v, want %d", c.limit, o, err, c.want)
		}
	}
	if o, err := parseOptions([]string{"--model", "m", "--sim-workers", "0"}, nil); err != nil || o.Model != "m" || o.Workers != 0 {
		t.Errorf("--model: %+v %v", o, err)
	}
	if _, err := parseOptions([]string{"--help"}, nil); !errors.Is(err, pflag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	for _, args := range [][]string{
		{}, {"m", "--nope"}, {"m", "--limit-mm-per-prompt", `{"image":"x"}`}, {"m", "--gpu-memory-utilization", "1.5"},
		{"m", "--sim-fault", "never-ready=2"}, {"m", "--max-num-seqs", "0"}, {"m", "--sim-policy", "sometimes"},
	} {
		var ae *argError
		if _, err := parseOptions(args, nil); !errors.As(err, &ae) {
			t.Errorf("%v: error %v, want an argument error", args, err)
		}
	}
}

func TestGenerate(t *testing.T) {
	e := &engine{o: &options{ChunkTokens: 2}}
	out := e.generate("abcdefghij", false, 100) // 3 tokens: abcd efgh ij
	if len(out.pieces) != 2 || out.pieces[0].text != "abcdefgh" || out.pieces[1].text != "ij" || out.tokens != 3 || out.finish != "stop" {
		t.Errorf("generate = %+v", out)
	}
	out = e.generate("abcdefghij", false, 1)
	if len(out.pieces) != 1 || out.pieces[0].text != "abcd" || out.tokens != 1 || out.finish != "length" {
		t.Errorf("max_tokens 1: %+v", out)
	}
	e.o.ReasoningParse = "qwen3"
	out = e.generate("ANSWER", true, 1000)
	var reasoning, content string
	for i, p := range out.pieces {
		if p.reasoning {
			if content != "" {
				t.Fatalf("reasoning piece %d after content", i)
			}
			reasoning += p.text
		} else {
			content += p.text
		}
	}
	if reasoning != thinking || content != "ANSWER" {
		t.Errorf("reasoning %q content %q", reasoning, content)
	}
	e.o.ReasoningParse = ""
	out = e.generate("ANSWER", true, 1000)
	if len(out.pieces) == 0 || out.pieces[0].reasoning || !strings.HasPrefix(out.pieces[0].text, "<think>") {
		t.Errorf("no parser: %+v", out.pieces)
	}
	if toks := splitTokens("ñandú€x"); len(toks) != 2 || toks[0] != "ñand" || toks[1] != "ú€x" {
		t.Errorf("splitTokens counts runes: %q", toks)
	}
}

// admitted reports whether a seat is running, without blocking.
func admitted(st *seat) bool {
	select {
	case <-st.admitted:
		return true
	default:
		return false
	}
}

func TestSchedulerAdmitsInOrderWithinSeqsAndKV(t *testing.T) {
	m := newMetrics("m")
	s := newScheduler(2, 10, m, time.Now)
	a, b := s.enqueue(4), s.enqueue(4)
	c := s.enqueue(1) // no free sequence
	if !admitted(a) || !admitted(b) || admitted(c) {
		t.Fatal("want a and b running, c waiting")
	}
	if testutil.ToFloat64(m.running) != 2 || testutil.ToFloat64(m.waiting) != 1 || testutil.ToFloat64(m.kvUsage) != 0.8 {
		t.Errorf("gauges running %v waiting %v kv %v", testutil.ToFloat64(m.running), testutil.ToFloat64(m.waiting), testutil.ToFloat64(m.kvUsage))
	}
	a.release()
	if !admitted(c) {
		t.Fatal("c not admitted after a left")
	}
	d := s.enqueue(8) // b(4) and c(1) run: no free sequence, and 4+1+8 > 10
	e := s.enqueue(1) // first come, first served: behind d
	b.release()       // running: c(1); d fits now (1+8 <= 10)
	if !admitted(d) || admitted(e) {
		t.Fatal("want d admitted, e waiting behind max-num-seqs")
	}
	c.grow(3)
	if got := testutil.ToFloat64(m.kvUsage); got != 1 { // (1+3+8)/10, capped
		t.Errorf("kv usage %v, want capped at 1", got)
	}
	c.release()
	d.release()
	if !admitted(e) {
		t.Fatal("e not admitted")
	}
	e.release()
	if testutil.ToFloat64(m.running) != 0 || testutil.ToFloat64(m.waiting) != 0 || testutil.ToFloat64(m.kvUsage) != 0 {
		t.Error("gauges not back to zero")
	}
	// A prompt bigger than the whole cache still runs when alone.
	big := s.enqueue(50)
	if !admitted(big) {
		t.Error("an oversized prompt never runs")
	}
	// A waiting request whose client leaves is dropped from the queue.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s2 := newScheduler(1, 10, nil, time.Now)
	s2.enqueue(1)
	if _, err := s2.acquire(ctx, 1); !errors.Is(err, context.Canceled) || len(s2.queue) != 0 {
		t.Errorf("cancelled wait: %v, queue %d", err, len(s2.queue))
	}
}

// TestSchedulerIntegratesItsOccupancy checks the npcorch_sim:* series: busy
// slot-seconds, time full (every slot running, or requests waiting) and
// time serving, on the engine's own clock.
func TestSchedulerIntegratesItsOccupancy(t *testing.T) {
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	m := newMetrics("m")
	s := newScheduler(2, 100, m, clock)
	m.watchOccupancy(s, "m")
	step := func(d time.Duration) { now = now.Add(d) }
	step(time.Second) // idle: counts for nothing
	a := s.enqueue(1)
	step(time.Second) // one of two slots: serving, not full
	b := s.enqueue(1)
	c := s.enqueue(1)
	step(2 * time.Second) // two running, one waiting: full
	a.release()
	step(time.Second) // two running: full
	b.release()
	c.release()
	step(time.Second) // idle
	want := occupancy{Slot: 1 + 2*2 + 2, Full: 3, Serving: 4}
	got := s.occupancy()
	got.since = time.Time{}
	if got != want {
		t.Errorf("occupancy %+v, want %+v", got, want)
	}
	fams, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]float64{}
	for _, f := range fams {
		for _, x := range f.GetMetric() {
			seen[f.GetName()] = x.GetCounter().GetValue() + x.GetGauge().GetValue()
		}
	}
	for name, v := range map[string]float64{"npcorch_sim:slot_seconds_total": 7, "npcorch_sim:full_seconds_total": 3,
		"npcorch_sim:serving_seconds_total": 4, "npcorch_sim:max_num_seqs": 2, "vllm:num_preemptions_total": 0} {
		if got, ok := seen[name]; !ok || got != v {
			t.Errorf("%s = %v (exposed %v), want %v", name, got, ok, v)
		}
	}
}

func TestPrefixCache(t *testing.T) {
	c := &prefixCache{}
	mk := func(tokens ...int) *prompt {
		p := &prompt{}
		for i, n := range tokens {
			p.prefixes = append(p.prefixes, prefixMark{hash: sha256.Sum256([]byte(fmt.Sprint(tokens[:i+1]))), tokens: n})
		}
		p.tokens = tokens[len(tokens)-1]
		return p
	}
	if got := c.lookup(mk(40, 50), true, 16); got != 0 {
		t.Errorf("cold cache: %d", got)
	}
	if got := c.lookup(mk(40, 50), true, 16); got != 48 {
		t.Errorf("same prompt: %d, want 48 (whole blocks of 49)", got)
	}
	if got := c.lookup(mk(40, 77), true, 16); got != 32 {
		t.Errorf("shared first message: %d, want 32", got)
	}
	if got := c.lookup(mk(40, 50), false, 16); got != 0 {
		t.Errorf("disabled: %d", got)
	}
}

// TestAPIKeyFromEnvironment: like vLLM, the engine reads its key from
// VLLM_API_KEY, and --api-key wins when both are given.
func TestAPIKeyFromEnvironment(t *testing.T) {
	env := func(k string) string {
		if k == APIKeyEnv {
			return "from-env"
		}
		return ""
	}
	if o, err := parseOptions([]string{"m"}, env); err != nil || o.APIKey != "from-env" {
		t.Errorf("key = %q (%v), want the environment's", o.APIKey, err)
	}
	if o, err := parseOptions([]string{"m", "--api-key", "flag"}, env); err != nil || o.APIKey != "flag" {
		t.Errorf("key = %q (%v), want --api-key to win", o.APIKey, err)
	}
}

func TestSelfCommand(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	if got, err := selfCommand(env(`["/bin/npcorch","sim-engine"]`)); err != nil || strings.Join(got, " ") != "/bin/npcorch sim-engine" {
		t.Errorf("JSON argv: %v %v", got, err)
	}
	if got, err := selfCommand(env("/tmp/x.test")); err != nil || len(got) != 1 || got[0] != "/tmp/x.test" {
		t.Errorf("path: %v %v", got, err)
	}
	if _, err := selfCommand(env(`[1,2]`)); err == nil || !strings.Contains(err.Error(), SelfEnv) {
		t.Errorf("bad JSON: %v", err)
	}
	if got, err := selfCommand(env("")); err != nil || len(got) != 2 || got[1] != "sim-engine" {
		t.Errorf("default: %v %v", got, err)
	}
}

func TestExitCode(t *testing.T) {
	if ExitCode(nil) != 0 || ExitCode(errors.New("x")) != 1 || ExitCode(fmt.Errorf("w: %w", &ExitError{Code: 2, Err: errors.New("u")})) != 2 {
		t.Error("ExitCode")
	}
}

func TestFaultState(t *testing.T) {
	f, err := parseStartFaults([]string{"503-after=2", "crash-after=3", "stream-error-after=1"})
	if err != nil {
		t.Fatal(err)
	}
	s := newFaultState(f)
	if s.mode() != faultNone {
		t.Error("fault before any completion")
	}
	if s.complete() {
		t.Error("crash after 1")
	}
	if s.mode() != faultStreamError {
		t.Errorf("after 1: %v", s.mode())
	}
	s.complete()
	if s.mode() != faultUnavailable {
		t.Errorf("after 2: %v, want 503 to win", s.mode())
	}
	if !s.complete() {
		t.Error("no crash after 3")
	}
	s.set(faultHang)
	if s.mode() != faultHang {
		t.Error("runtime fault ignored")
	}
	s.set(faultNone)
	if s.mode() != faultNone || s.complete() {
		t.Error("none did not disarm the command-line faults")
	}
}
