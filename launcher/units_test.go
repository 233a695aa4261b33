package launcher

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
)

func TestLogSinkRedactsSplitsAndKeepsErrorTail(t *testing.T) {
	var out bytes.Buffer
	lines := 0
	s := newLogSink(&out, []string{"npc-SECRET"}, func() { lines++ })
	s.Write([]byte("INFO args api_key=npc-SECRET\nLoading 10%\rLoading 20%\r"))
	s.Write([]byte("Traceback (most recent call last):\n  File x\nValueError: bad va"))
	s.Write([]byte("lue\nINFO:     127.0.0.1:52364 - \"GET /health HTTP/1.1\" 503 Service Unavailable\nunterminated"))
	s.flush()
	if strings.Contains(out.String(), "npc-SECRET") {
		t.Errorf("secret written:\n%s", out.String())
	}
	if lines != 7 { // the probe's access line is logged but is no progress
		t.Errorf("%d lines seen, want 7:\n%s", lines, out.String())
	}
	tail := s.tail()
	want := []string{"Traceback (most recent call last):", "ValueError: bad value"}
	if !slices.Equal(tail, want) {
		t.Errorf("tail %q, want %q", tail, want)
	}
}

// TestRequestLinesAreNoStartUpProgress: the lines requests cause in a real
// vLLM's or SGLang's log (issue 12) must not push the no-progress
// deadline; loading lines must.
func TestRequestLinesAreNoStartUpProgress(t *testing.T) {
	for _, tc := range []struct {
		line     string
		progress bool
	}{
		{`INFO:     127.0.0.1:51234 - "GET /health HTTP/1.1" 200 OK`, false},
		{`(APIServer pid=4242) INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error`, false},
		{`INFO:     10.0.0.7:40000 - "GET /ping HTTP/1.1" 404 Not Found`, false},
		{`INFO:     [::1]:40000 - "GET /v1/models?x=1 HTTP/1.1" 401 Unauthorized`, false},
		{`INFO 12-01 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 0.0%`, false},
		{`(APIServer pid=4242) INFO 12-01 10:00:10 [loggers.py:127] Engine 000: Avg prompt throughput: 12.5 tokens/s, Avg generation throughput: 0.1 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: n/a, Prefix cache hit rate: n/a`, false},
		{`INFO 12-01 10:00:00 [logger.py:43] Received request chatcmpl-3f2a: prompt: 'Hi', params: SamplingParams(n=1)`, false},
		{`[2026-04-02 10:00:00] Decode batch. #running-req: 1, #token: 40, token usage: 0.00, gen throughput (token/s): 10.51, #queue-req: 0`, false},
		{`[2026-04-02 10:00:00] Prefill batch. #new-seq: 1, #new-token: 8, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0`, false},
		{`(EngineCore_DP0 pid=4300) INFO 12-01 10:00:00 [default_loader.py:267] Loading safetensors checkpoint shards:  50% Completed | 2/4`, true},
		{`INFO 12-01 10:00:00 [gpu_worker.py:298] Available KV cache memory: 16.00 GiB`, true},
		{`Capturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|██████████| 67/67`, true},
	} {
		seen := false
		s := newLogSink(nil, nil, func() { seen = true })
		s.Write([]byte(tc.line + "\n"))
		if seen != tc.progress {
			t.Errorf("progress = %v, want %v: %s", seen, tc.progress, tc.line)
		}
	}
}

func TestLogSinkTailFallsBackToLastLinesAndIsBounded(t *testing.T) {
	s := newLogSink(nil, nil, nil)
	for i := range 100 {
		s.Write([]byte("line " + strconv.Itoa(i) + "\n"))
	}
	tail := s.tail()
	if len(tail) != tailLastLines || tail[len(tail)-1] != "line 99" {
		t.Errorf("tail %q", tail)
	}
}

// The lines requests cause (uvicorn's access lines, here the watchdog's
// own /metrics reads and the readiness probe's /health) stay out of the
// tail: a stalled engine's error showed twenty "GET /metrics" lines and
// none of the engine's own.
func TestLogSinkTailLeavesOutRequestLines(t *testing.T) {
	s := newLogSink(nil, nil, nil)
	s.Write([]byte("INFO 12-02 08:00:00 [core.py:210] init engine took 30.1 seconds\n"))
	for range 30 {
		s.Write([]byte(`INFO:     127.0.0.1:60184 - "GET /metrics HTTP/1.1" 200 OK` + "\n"))
		s.Write([]byte(`INFO:     127.0.0.1:60170 - "GET /health HTTP/1.1" 200 OK` + "\n"))
	}
	if tail := s.tail(); len(tail) != 1 || !strings.Contains(tail[0], "init engine took") {
		t.Errorf("tail %q, want the engine's own line alone", tail)
	}
	if l := s.lastLine(); !strings.Contains(l, "init engine took") {
		t.Errorf("last line %q", l)
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		line string
		want FailureKind
	}{
		{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate", FailureOOM},
		{"ValueError: Free memory on device (30.1/79.3 GiB) on startup is less than desired GPU memory utilization (0.9, 71.4 GiB)", FailureOOM},
		{"ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (3).", FailureTPHeads},
		{"ValueError: Model architectures ['HealthGPTForCausalLM'] are not supported for now.", FailureUnsupported},
		{"OSError: [Errno 98] Address already in use", FailurePortInUse},
		{"npcorch engine shim: start vllm: exec: \"vllm\": executable file not found in $PATH", FailureNotFound},
		// argparse's wording, as vLLM (issue 19: `vllm serve serve MODEL`)
		// and SGLang print it before exiting with status 2.
		{"vllm serve: error: unrecognized arguments: ZJU-AI4H/Hulu-Med-4B", FailureArgs},
		{"vllm serve: error: argument --dtype: invalid choice: 'int3' (choose from 'auto', 'half')", FailureArgs},
		{"launch_server.py: error: the following arguments are required: --model-path", FailureArgs},
		{"ValueError: error: something unrelated", FailureExited},
		{"something else happened", FailureExited},
	} {
		got, hint := Classify([]string{"INFO start", tc.line}, FailureExited)
		if got != tc.want || hint == "" {
			t.Errorf("Classify(%q) = %s %q, want %s", tc.line, got, hint, tc.want)
		}
	}
}

func TestStallWatch(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := stallWatch{window: 10 * time.Second}
	steps := []struct {
		at      time.Duration
		l       load
		stalled bool
	}{
		{0, load{running: 2, tokens: 5}, false},
		{8 * time.Second, load{running: 2, tokens: 5}, false},
		{9 * time.Second, load{running: 2, tokens: 9}, false}, // progress
		{18 * time.Second, load{running: 2, tokens: 9}, false},
		{19 * time.Second, load{running: 2, tokens: 9}, true},
		{20 * time.Second, load{running: 0, tokens: 9}, false}, // idle is not a stall
		{40 * time.Second, load{running: 0, tokens: 9}, false},
	}
	for i, s := range steps {
		if _, got := w.observe(s.l, t0.Add(s.at)); got != s.stalled {
			t.Errorf("step %d: stalled %v, want %v", i, got, s.stalled)
		}
	}
}

// TestStallCheckHonoursWindow: a campaign's stall window shorter than the
// default /metrics period shortens the period, so that a hung engine is
// restarted within 1.5 windows of its last token, not at the next 30s
// reading (the trial: a 10s window restarted at 1m00s, a 3s window never).
func TestStallCheckHonoursWindow(t *testing.T) {
	for _, tc := range []struct {
		window, want time.Duration
	}{
		{3 * time.Second, 750 * time.Millisecond},
		{10 * time.Second, 2500 * time.Millisecond},
		{2 * time.Minute, 30 * time.Second}, // never above the default period
		{5 * time.Minute, 30 * time.Second},
	} {
		got := DefaultTiming.With(configs.LaunchSettings{StallWindow: tc.window}).WithDefaults()
		if got.StallWindow != tc.window || got.StallCheck != tc.want {
			t.Errorf("stall_window %v: window %v, check every %v; want every %v", tc.window, got.StallWindow, got.StallCheck, tc.want)
		}
	}
	if got := (Timing{StallWindow: 10 * time.Second}).WithDefaults().StallCheck; got != 2500*time.Millisecond {
		t.Errorf("Timing{StallWindow: 10s}: check every %v, want 2.5s", got)
	}
}

// TestStallMessageGivesMeasuredTime: the crash message says how long the
// readings showed no new token, which the period may make longer than the
// window, and names the window apart.
func TestStallMessageGivesMeasuredTime(t *testing.T) {
	w := NewWatchdog(nil, Probe{MetricsURL: "http://127.0.0.1:1/metrics"}, Timing{StallWindow: 10 * time.Second})
	t0 := time.Unix(1000, 0)
	hung := Reading{health: 200, load: load{running: 16, tokens: 40}}
	for _, at := range []time.Duration{0, 9 * time.Second} {
		if kind, why := w.Judge(hung, t0.Add(at)); kind != "" {
			t.Fatalf("at %v: %s %q before the window", at, kind, why)
		}
	}
	kind, why := w.Judge(hung, t0.Add(12*time.Second+400*time.Millisecond))
	want := "16 requests running and no new token for 12s (stall window 10s)"
	if kind != FailureStalled || why != want {
		t.Errorf("Judge = %s %q; want %s %q", kind, why, FailureStalled, want)
	}
}

func TestParseLoad(t *testing.T) {
	body := `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 3.0
vllm:num_requests_running{engine="1",model_name="m"} 1.0
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 1200.0
`
	l, err := parseLoad([]byte(body))
	if err != nil || l.running != 4 || l.tokens != 1200 {
		t.Errorf("parseLoad = %+v, %v", l, err)
	}
	sg := "sglang:num_running_reqs{model_name=\"m\"} 2\nsglang:generation_tokens_total{model_name=\"m\"} 7\n"
	if l, err := parseLoad([]byte(sg)); err != nil || l.running != 2 || l.tokens != 7 {
		t.Errorf("sglang parseLoad = %+v, %v", l, err)
	}
	if _, err := parseLoad([]byte("up 1\n")); err == nil {
		t.Error("metrics without counters: no error")
	}
}

func TestBackoffDoublesToCap(t *testing.T) {
	tm := DefaultTiming
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, tm.Backoff(n))
	}
	want := []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("backoff %v, want %v", got, want)
	}
}

func TestTimingDefaultsAndNoRestart(t *testing.T) {
	tm := Timing{Grace: time.Second, MaxRestarts: -1}.WithDefaults()
	if tm.Grace != time.Second || tm.NoProgress != 20*time.Minute || tm.MaxRestarts != 0 || tm.ProbeInterval != 50*time.Millisecond {
		t.Errorf("%+v", tm)
	}
}

func TestTimingWithCampaignLaunchSettings(t *testing.T) {
	zero, three := 0, 3
	base := Timing{NoProgress: time.Second, Grace: 2 * time.Second, MaxRestarts: 2}
	got := base.With(configs.LaunchSettings{StartTimeout: time.Hour, StopGrace: 5 * time.Second, MaxRestarts: &three, WarmUpFailures: 7})
	if got.NoProgress != time.Second || got.HardCap != time.Hour || got.Grace != 5*time.Second || got.MaxRestarts != 3 || got.WarmUpFailures != 7 {
		t.Errorf("settings the file gives must win, the rest stay: %+v", got)
	}
	if never := base.With(configs.LaunchSettings{MaxRestarts: &zero}).WithDefaults(); never.MaxRestarts != 0 {
		t.Errorf("max_restarts: 0 gives %d restarts, want none", never.MaxRestarts)
	}
	if kept := base.With(configs.LaunchSettings{}); kept != base {
		t.Errorf("an empty launch block changed %+v into %+v", base, kept)
	}
}

func TestPortsSkipTakenPortsAndRelease(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	p := &Ports{First: taken, Last: taken + 2}
	a, err := p.Allocate("m/r0")
	if err != nil || a == taken {
		t.Fatalf("Allocate = %d, %v; port %d is taken", a, err, taken)
	}
	b, err := p.Allocate("m/r1")
	if err != nil || b == a || b == taken {
		t.Fatalf("second Allocate = %d, %v", b, err)
	}
	if _, err := p.Allocate("m/r2"); !errors.Is(err, ErrNoPort) {
		t.Fatalf("third Allocate: %v, want ErrNoPort", err)
	}
	if owner, ok := p.Owner(a); !ok || owner != "m/r0" {
		t.Errorf("Owner(%d) = %q %v", a, owner, ok)
	}
	p.Release(a)
	if c, err := p.Allocate("m/r3"); err != nil || c != a {
		t.Errorf("after Release: %d, %v, want %d", c, err, a)
	}
	if err := p.Check(taken); !errors.Is(err, ErrPortInUse) {
		t.Errorf("Check(taken) = %v", err)
	}
}

// TestPortsOfTwoRegistriesNeverCollide is the race behind the flaky
// TestParentSIGINTStopsEnginesBeforeExit: two npcorch processes (there,
// the fake parent and the campaign package's tests) each proved port
// 20000 free by binding it while neither engine listened yet (an engine
// listens only once loaded), both engines bound it with SO_REUSEPORT,
// and both starts failed as foreign listeners. Two registries stand for
// the two processes: flock locks conflict between open files even within
// one process.
func TestPortsOfTwoRegistriesNeverCollide(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // free again: only the registries' locks can keep them apart
	dir := t.TempDir()
	a := &Ports{First: first, Last: first + 1, LockDir: dir}
	b := &Ports{First: first, Last: first + 1, LockDir: dir}
	pa, err := a.Allocate("run/m/r0")
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.Allocate("serve/m/r0")
	if err != nil {
		t.Fatal(err)
	}
	if pa == pb {
		t.Fatalf("two registries handed out port %d twice", pa)
	}
	if _, err := b.Allocate("serve/m/r1"); !errors.Is(err, ErrNoPort) {
		t.Fatalf("third allocation in a two-port range: %v, want ErrNoPort", err)
	}
	a.Release(pa)
	if pc, err := b.Allocate("serve/m/r1"); err != nil || pc != pa {
		t.Errorf("after the other registry released %d: %d, %v", pa, pc, err)
	}
}

func TestProcScannerReadsStatWithOddNames(t *testing.T) {
	root := t.TempDir()
	write := func(pid, stat string) {
		os.MkdirAll(filepath.Join(root, pid), 0o755)
		os.WriteFile(filepath.Join(root, pid, "stat"), []byte(stat), 0o644)
	}
	write("10", "10 (VLLM::Worker) TP0) S 1 42 42 0 -1")
	write("11", "11 (python) S 10 42 42 0 -1")
	write("12", "12 (zombie) Z 10 42 42 0 -1")
	write("13", "13 (other) S 1 7 7 0 -1")
	pids, err := ProcScanner{Root: root}.Members(42)
	if err != nil || !slices.Equal(pids, []int{10, 11}) {
		t.Errorf("Members = %v, %v", pids, err)
	}
}

func TestAPIKeysAreRandomAndWellFormed(t *testing.T) {
	a, err := NewAPIKey(bytes.NewReader(bytes.Repeat([]byte{0xab}, 16)))
	if err != nil || a != "npc-abababababababababababababababab" {
		t.Errorf("key %q, %v", a, err)
	}
	if _, err := NewAPIKey(bytes.NewReader(nil)); err == nil {
		t.Error("short random source: no error")
	}
}

func TestEngineErrorMessage(t *testing.T) {
	e := &EngineError{Model: "m", Replica: 2, Kind: FailureOOM, Detail: "exited during start-up: exit status 1", Hint: "lower it", Log: "/l/m.r2.log", Tail: []string{"a", "b"}}
	want := "model m replica 2: cuda-out-of-memory: exited during start-up: exit status 1; lower it\n  last log lines of /l/m.r2.log:\n    a\n    b"
	if e.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", e.Error(), want)
	}
}

// TestErrorLinesAreKeptForTheTail: the lines a failure report needs, and
// none of the ordinary ones (a plain access line, a loading line).
func TestErrorLinesAreKeptForTheTail(t *testing.T) {
	for line, want := range map[string]bool{
		`torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB`:                          true,
		`ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).`: true,
		`[rank0]: fatal error in NCCL`:                                                                     true,
		`/bin/sh: line 1: 4242 Killed                  vllm serve`:                                         true,
		`ERROR:    [Errno 98] error while attempting to bind on address`:                                   true,
		`INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error`:       true,
		`INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK`:                          false,
		`(EngineCore_DP0 pid=4300) INFO 12-01 10:00:00 [default_loader.py:267] Loading safetensors shards`: false,
	} {
		if got := isErrorLine(line); got != want {
			t.Errorf("isErrorLine = %v, want %v: %s", got, want, line)
		}
	}
}
