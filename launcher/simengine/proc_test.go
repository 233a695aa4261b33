package simengine_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/simengine"
	"github.com/npcorch/npcorch/launcher/simkey"
)

// childEnv makes the test binary run simengine.Main instead of the tests.
const childEnv = "SIMENGINE_TEST_CHILD"

// TestMain lets the test binary stand in for the npcorch binary: started
// with childEnv=1 it is a sim engine (or one of its workers).
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := simengine.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
		stop()
		os.Exit(simengine.ExitCode(err))
	}
	os.Exit(m.Run())
}

// waitLimit bounds every wait for an engine event; it is a safety net
// against hangs, not a latency assertion.
const waitLimit = 30 * time.Second

// engineProc is a sim engine running as a real child process in its own
// process group.
type engineProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	port   int
	base   string
	stdout *proctest.Buffer
	stderr *proctest.Buffer
	exited chan struct{} // closed once the process has been reaped
	state  *os.ProcessState
}

// spawn starts `serve sim-model --host 127.0.0.1 --port P --sim-workers 0
// args...` without waiting for readiness. Later flags override earlier ones.
func spawn(t testing.TB, args ...string) *engineProc {
	t.Helper()
	return spawnOn(t, proctest.FreePort(t), args...)
}

func spawnOn(t testing.TB, port int, args ...string) *engineProc {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	full := append([]string{"serve", "sim-model", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--sim-workers", "0"}, args...)
	cmd := exec.Command(self, full...)
	cmd.Env = append(os.Environ(), childEnv+"=1", simengine.SelfEnv+"="+self)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &engineProc{t: t, cmd: cmd, port: port, base: fmt.Sprintf("http://127.0.0.1:%d", port),
		stdout: &proctest.Buffer{}, stderr: &proctest.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		p.state = cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		if t.Failed() {
			t.Logf("engine stdout:\n%s\nengine stderr:\n%s", p.stdout, p.stderr)
		}
	})
	return p
}

// start spawns an engine and waits until /health answers 200.
func start(t testing.TB, args ...string) *engineProc {
	t.Helper()
	p := spawn(t, args...)
	p.waitHealth(http.StatusOK)
	return p
}

// waitHealth polls /health until it answers status.
func (p *engineProc) waitHealth(status int) {
	p.t.Helper()
	p.eventually("/health answers "+strconv.Itoa(status), func() bool {
		resp, err := http.Get(p.base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == status
	})
}

// eventually polls cond until it holds, failing the test after waitLimit or
// if the engine exits first.
func (p *engineProc) eventually(what string, cond func() bool) {
	p.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		select {
		case <-p.exited:
			if cond() {
				return
			}
			p.t.Fatalf("engine exited (%v) before: %s", p.state, what)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("gave up waiting for: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// poll polls cond until it holds, failing the test after waitLimit; unlike
// eventually it does not mind the engine having exited.
func poll(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// groupEmpty waits until no live process is left in group pgid.
func groupEmpty(t testing.TB, pgid int) {
	t.Helper()
	poll(t, fmt.Sprintf("process group %d empty", pgid), func() bool { return len(inGroup(t, pgid)) == 0 })
}

// waitLog waits until the engine's stdout or stderr contains s.
func (p *engineProc) waitLog(s string) {
	p.t.Helper()
	p.eventually("log line "+strconv.Quote(s), func() bool {
		return strings.Contains(p.stdout.String()+p.stderr.String(), s)
	})
}

// waitExit waits for the process to end and returns its state.
func (p *engineProc) waitExit() *os.ProcessState {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.state
	case <-time.After(waitLimit):
		p.t.Fatal("engine did not exit")
		return nil
	}
}

// do sends a request with an optional JSON body and bearer key and returns
// the status and body.
func (p *engineProc) do(method, path, key string, body any) (int, []byte) {
	p.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			p.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		p.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// chat sends a non-streaming chat request and decodes the answer.
func (p *engineProc) chat(req map[string]any) (int, map[string]any) {
	p.t.Helper()
	status, body := p.do(http.MethodPost, "/v1/chat/completions", "", req)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		p.t.Fatalf("chat answer is not JSON: %v: %s", err, body)
	}
	return status, m
}

// content returns choices[0].message.content of a chat.completion.
func content(t *testing.T, m map[string]any) string {
	t.Helper()
	choices, _ := m["choices"].([]any)
	if len(choices) != 1 {
		t.Fatalf("want one choice, got %v", m)
	}
	msg := choices[0].(map[string]any)["message"].(map[string]any)
	s, _ := msg["content"].(string)
	return s
}

// sseEvents reads an SSE body and returns the data payloads in order.
func sseEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("SSE line without data: prefix: %q", line)
		}
		events = append(events, data)
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("read SSE: %v", err)
	}
	return events
}

// textMessage is a one-message chat request body.
func textMessage(text string, extra map[string]any) map[string]any {
	m := map[string]any{"model": "sim-model", "messages": []any{map[string]any{"role": "user", "content": text}}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// fakePNG returns distinct bytes with a PNG signature (never decoded).
func fakePNG(i int) []byte {
	return append([]byte("\x89PNG\r\n\x1a\n"), fmt.Sprintf("image number %d", i)...)
}

// imageMessage is a chat request with text and images as data URLs.
func imageMessage(text string, images [][]byte, extra map[string]any) map[string]any {
	parts := []any{map[string]any{"type": "text", "text": text}}
	for _, img := range images {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]any{
			"url": "data:image/png;base64," + b64(img)}})
	}
	m := map[string]any{"model": "sim-model", "messages": []any{map[string]any{"role": "user", "content": parts}}}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// imageFingerprint is simkey.Fingerprint over the images' bytes.
func imageFingerprint(images ...[]byte) string {
	hashes := make([]string, len(images))
	for i, img := range images {
		sum := sha256.Sum256(img)
		hashes[i] = hex.EncodeToString(sum[:])
	}
	return simkey.Fingerprint(hashes)
}

// writeKey writes a sim key file into dir and returns its path.
func writeKey(t testing.TB, dir string, items []simkey.Item) string {
	t.Helper()
	b, err := json.Marshal(simkey.Key{Format: simkey.Format, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "simkey.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// procInfo is one process as /proc shows it.
type procInfo struct {
	pid, ppid, pgid int
	state           byte
}

// processes lists live (non-zombie) processes, read from /proc.
func processes(t testing.TB) []procInfo {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		i := bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgid, _ := strconv.Atoi(f[2])
		out = append(out, procInfo{pid: pid, ppid: ppid, pgid: pgid, state: f[0][0]})
	}
	return out
}

// inGroup returns the live processes of process group pgid.
func inGroup(t testing.TB, pgid int) []procInfo {
	var out []procInfo
	for _, p := range processes(t) {
		if p.pgid == pgid {
			out = append(out, p)
		}
	}
	return out
}

// childrenOf returns the live children of pid.
func childrenOf(t testing.TB, pid int) []procInfo {
	var out []procInfo
	for _, p := range processes(t) {
		if p.ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
