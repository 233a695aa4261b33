package simengine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher/simkey"
)

func TestArgumentErrorsExit2(t *testing.T) {
	t.Parallel()
	help := spawn(t, "--help")
	if st := help.waitExit(); st.ExitCode() != 0 || !strings.Contains(help.stdout.String(), "--sim-policy") {
		t.Errorf("--help: exit %d, stdout %q", st.ExitCode(), help.stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus-flag", "1"}, "vllm serve: error: unrecognized arguments: --bogus-flag"},
		{[]string{"--sim-fault", "explode"}, `argument --sim-fault: unknown fault "explode"`},
		{[]string{"--sim-fault", "crash-after"}, "crash-after needs =N"},
		{[]string{"--dtype", "int3"}, "argument --dtype: invalid choice: 'int3'"},
		{[]string{"--limit-mm-per-prompt", "{image:3}"}, "argument --limit-mm-per-prompt: invalid loads value"},
		{[]string{"--port", "http"}, "vllm serve: error: argument --port: invalid int value: 'http'"},
		{[]string{"--sim-load-time", "soon"}, "argument --sim-load-time: invalid duration value: 'soon'"},
		{[]string{"--sim-policy", "right=1.5"}, "argument --sim-policy"},
		{[]string{"extra-positional"}, "unrecognized arguments: extra-positional"},
	} {
		p := spawn(t, c.args...)
		st := p.waitExit()
		if st.ExitCode() != 2 || !strings.Contains(p.stderr.String(), c.want) ||
			!strings.HasPrefix(p.stderr.String(), "usage: vllm serve") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, st.ExitCode(), p.stderr, c.want)
		}
	}
}

func TestPortInUseExits1(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p := spawnOn(t, ln.Addr().(*net.TCPAddr).Port)
	if st := p.waitExit(); st.ExitCode() != 1 || !strings.Contains(p.stderr.String(), "address already in use") {
		t.Errorf("exit %d, stderr %q; want 1 and address already in use", st.ExitCode(), p.stderr)
	}
}

func TestExitDuringLoad(t *testing.T) {
	t.Parallel()
	p := spawn(t, "--sim-fault", "exit-during-load", "--sim-workers", "1", "--sim-load-time", "100ms")
	st := p.waitExit()
	if st.ExitCode() != 1 {
		t.Errorf("exit %d, want 1", st.ExitCode())
	}
	if !strings.Contains(p.stderr.String(), "torch.OutOfMemoryError: CUDA out of memory") ||
		!strings.Contains(p.stderr.String(), "Traceback (most recent call last)") {
		t.Errorf("stderr lacks the CUDA OOM traceback:\n%s", p.stderr)
	}
	if strings.Contains(p.stdout.String(), "Starting vLLM API server") {
		t.Error("the engine started serving despite exit-during-load")
	}
	if procs := inGroup(t, p.cmd.Process.Pid); len(procs) != 0 {
		t.Errorf("processes left in the engine's group: %+v", procs)
	}
}

func TestNeverReady(t *testing.T) {
	t.Parallel()
	p := spawn(t, "--sim-fault", "never-ready")
	p.waitLog("Waiting for application startup.")
	p.waitHealth(http.StatusServiceUnavailable)
	if status, _ := p.do(http.MethodGet, "/v1/models", "", nil); status != http.StatusOK {
		t.Errorf("/v1/models = %d, want 200 (listening, not ready)", status)
	}
	if status, _ := p.do(http.MethodPost, "/v1/chat/completions", "", textMessage("hi", nil)); status != http.StatusServiceUnavailable {
		t.Errorf("chat = %d, want 503", status)
	}
	if status, _ := p.do(http.MethodGet, "/health", "", nil); status != http.StatusServiceUnavailable {
		t.Errorf("/health = %d, want still 503", status)
	}
	if strings.Contains(p.stderr.String(), "Application startup complete") {
		t.Error("never-ready engine logged startup complete")
	}
}

// killedBySIGKILL reports whether the engine died of SIGKILL.
func killedBySIGKILL(p *engineProc) bool {
	ws, ok := p.waitExit().Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func TestCrashAfter(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-fault", "crash-after=2", "--sim-workers", "1")
	for i := range 2 {
		if status, m := p.chat(textMessage("q"+strconv.Itoa(i), nil)); status != http.StatusOK {
			t.Fatalf("request %d before the crash: %d %v", i, status, m)
		}
	}
	if !killedBySIGKILL(p) {
		t.Errorf("engine ended with %v, want killed by SIGKILL", p.state)
	}
	groupEmpty(t, p.cmd.Process.Pid)
}

// faultKey answers "\boxed{1}": three one-token chunks with
// --sim-chunk-tokens 1, so a faulty stream stops after the first.
func faultKey(t *testing.T) string {
	return writeKey(t, t.TempDir(), []simkey.Item{{ID: "F", Right: "\\boxed{1}"}})
}

// openStream starts a streaming chat and returns a channel of its events;
// cancel ends it.
func openStream(t *testing.T, p *engineProc) (events <-chan string, status int, cancel func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b, _ := json.Marshal(textMessage("q", map[string]any{"stream": true, "stream_options": map[string]any{"include_usage": true}}))
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/v1/chat/completions", strings.NewReader(string(b)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- d
			}
		}
	}()
	return ch, resp.StatusCode, cancel
}

// collect drains a stream to its end.
func collect(events <-chan string) []string {
	var all []string
	for ev := range events {
		all = append(all, ev)
	}
	return all
}

func TestHangAfter(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-key", faultKey(t), "--sim-chunk-tokens", "1", "--sim-fault", "hang-after=1")
	ok, _, cancel := openStream(t, p)
	if evs := collect(ok); len(evs) == 0 || evs[len(evs)-1] != "[DONE]" {
		t.Fatalf("first stream = %v, want complete", evs)
	}
	cancel()
	events, status, cancel := openStream(t, p)
	defer cancel()
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	role, first := <-events, <-events
	if !strings.Contains(role, `"role":"assistant"`) || !strings.Contains(first, `"content":"\\box"`) {
		t.Errorf("hung stream began %s / %s", role, first)
	}
	// While it hangs: the engine still looks healthy and counts it running.
	if status, _ := p.do(http.MethodGet, "/health", "", nil); status != http.StatusOK {
		t.Errorf("/health during a hang = %d, want 200", status)
	}
	if got := scrape(t, p)["vllm:num_requests_running"]; got != 1 {
		t.Errorf("num_requests_running during a hang = %v, want 1", got)
	}
	cancel()
	if rest := collect(events); len(rest) != 0 {
		t.Errorf("hung stream sent more: %v", rest)
	}
	// The hung request keeps its place even after the client left.
	if got := scrape(t, p)["vllm:num_requests_running"]; got != 1 {
		t.Errorf("num_requests_running after the client left = %v, want 1", got)
	}
}

func Test503After(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-fault", "503-after=1")
	if status, _ := p.chat(textMessage("q", nil)); status != http.StatusOK {
		t.Fatalf("first request = %d", status)
	}
	status, body := p.do(http.MethodPost, "/v1/chat/completions", "", textMessage("q", nil))
	var e struct {
		Error struct {
			Type string
			Code int
		}
	}
	if err := json.Unmarshal(body, &e); err != nil || status != http.StatusServiceUnavailable || e.Error.Code != 503 {
		t.Errorf("second request = %d %s, want vLLM's 503 error body", status, body)
	}
	if status, _ := p.do(http.MethodGet, "/health", "", nil); status != http.StatusServiceUnavailable {
		t.Errorf("/health = %d, want 503 on a dead engine", status)
	}
}

func TestStreamErrorAfter(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-key", faultKey(t), "--sim-chunk-tokens", "1", "--sim-fault", "stream-error-after=1")
	ok, _, cancel := openStream(t, p)
	collect(ok)
	cancel()
	events, status, cancel := openStream(t, p)
	defer cancel()
	evs := collect(events)
	if status != http.StatusOK || len(evs) != 4 || evs[3] != "[DONE]" {
		t.Fatalf("status %d, events %v; want 200 with role, content, error, [DONE]", status, evs)
	}
	// vLLM writes it with json.dumps: Python's separators, nested error.
	want := `{"error": {"message": "EngineCore encountered an issue. See stack trace (above) for the root cause.", "type": "InternalServerError", "param": null, "code": 500}}`
	if evs[2] != want {
		t.Errorf("error event\n got %s\nwant %s", evs[2], want)
	}
	if strings.Contains(strings.Join(evs, ""), "finish_reason\":\"") {
		t.Errorf("an errored stream must not finish: %v", evs)
	}
	if status, _ := p.do(http.MethodPost, "/v1/chat/completions", "", textMessage("q", nil)); status != http.StatusInternalServerError {
		t.Errorf("non-streaming request in stream-error mode = %d, want 500", status)
	}
}

// faultMidStream starts an engine answering slowly (one token a chunk, 20
// tokens a second), opens a stream, and once its role chunk arrived
// switches fault on: the answer has most of its pieces left.
func faultMidStream(t *testing.T, fault string) (events <-chan string, cancel func()) {
	t.Helper()
	p := start(t, "--sim-key", faultKey(t), "--sim-chunk-tokens", "1", "--sim-decode-tps", "20")
	events, _, cancel = openStream(t, p)
	<-events // the role chunk: the request is in flight
	if status, _ := p.do(http.MethodPost, "/sim/fault", "", map[string]string{"fault": fault}); status != http.StatusOK {
		cancel()
		t.Fatalf("POST /sim/fault %s = %d", fault, status)
	}
	return events, cancel
}

// TestRuntimeHangStopsAnswersInFlight: a hang switched on by POST
// /sim/fault stops the answers already streaming, as a stuck engine does,
// not only the requests that come after (a client that had sent all its
// requests met no fault at all).
func TestRuntimeHangStopsAnswersInFlight(t *testing.T) {
	t.Parallel()
	events, cancel := faultMidStream(t, "hang")
	defer cancel()
	// The answer has pieces left (one token each at 20 tokens/s); after
	// the switch, at most the piece in progress still comes.
	time.Sleep(time.Second)
	cancel()
	for _, ev := range collect(events) {
		if ev == "[DONE]" || strings.Contains(ev, `"finish_reason":"`) {
			t.Fatalf("the stream in flight finished after the hang: %v", ev)
		}
	}
}

// TestRuntime503EndsAnswersInFlight: a dead engine core (POST /sim/fault
// 503) ends the answers already streaming with vLLM's error object and
// [DONE], as EngineDeadError does, not only the requests that come after.
// Before, a chaos trial whose fault came once the client had sent all its
// requests saw no attempt fail.
func TestRuntime503EndsAnswersInFlight(t *testing.T) {
	t.Parallel()
	events, cancel := faultMidStream(t, "503")
	defer cancel()
	evs := collect(events)
	if len(evs) < 2 || evs[len(evs)-1] != "[DONE]" || !strings.HasPrefix(evs[len(evs)-2], `{"error": {"message": "EngineCore encountered an issue.`) {
		t.Fatalf("stream in flight after the 503 fault: %v; want vLLM's error object, then [DONE]", evs)
	}
	for _, ev := range evs {
		if strings.Contains(ev, `"finish_reason":"`) {
			t.Errorf("the stream in flight finished after the engine died: %v", ev)
		}
	}
}

func TestRuntimeFaultSwitch(t *testing.T) {
	t.Parallel()
	p := start(t, "--sim-key", faultKey(t), "--sim-chunk-tokens", "1", "--sim-workers", "1")
	set := func(f string) int {
		status, _ := p.do(http.MethodPost, "/sim/fault", "", map[string]string{"fault": f})
		return status
	}
	if set("503") != http.StatusOK {
		t.Fatal("POST /sim/fault 503 failed")
	}
	if status, _ := p.chat(textMessage("q", nil)); status != http.StatusServiceUnavailable {
		t.Errorf("chat after 503 = %d", status)
	}
	p.waitHealth(http.StatusServiceUnavailable)
	set("none")
	p.waitHealth(http.StatusOK)
	if status, _ := p.chat(textMessage("q", nil)); status != http.StatusOK {
		t.Errorf("chat after none = %d", status)
	}
	set("stream-error")
	events, _, cancel := openStream(t, p)
	if evs := collect(events); len(evs) != 4 || !strings.HasPrefix(evs[2], `{"error":`) {
		t.Errorf("stream-error stream = %v", evs)
	}
	cancel()
	set("hang")
	events, _, cancel = openStream(t, p)
	<-events
	<-events
	// The stream stops halfway: within a moment nothing more arrives, and
	// it never finishes (what was already in flight may still come).
	time.Sleep(200 * time.Millisecond)
	cancel()
	for _, ev := range collect(events) {
		if ev == "[DONE]" || strings.Contains(ev, `"finish_reason":"`) {
			t.Errorf("hang stream finished: %v", ev)
		}
	}
	if status := set("explode"); status != http.StatusBadRequest {
		t.Errorf("unknown fault = %d, want 400", status)
	}
	if status := set("crash"); status != http.StatusOK {
		t.Errorf("crash = %d, want 200 before dying", status)
	}
	if !killedBySIGKILL(p) {
		t.Errorf("engine ended with %v, want killed by SIGKILL", p.state)
	}
	groupEmpty(t, p.cmd.Process.Pid)
}
