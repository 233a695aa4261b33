package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// lockedBuffer is a child's output, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

func TestListenOffLoopbackRefusesToStartWithoutAToken(t *testing.T) {
	file := writeCampaign(t, `tasks: [pathology]
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1}
`)
	cwd := t.TempDir()
	empty := filepath.Join(cwd, "empty-token")
	os.WriteFile(empty, []byte("\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--listen", "0.0.0.0:0"}, "is reachable from other machines: give a token (--token-file FILE, or the environment variable " + live.TokenEnv + ")"},
		{[]string{"--listen", "0.0.0.0:0", "--token-file", empty}, "--token-file " + empty + " is empty"},
		{[]string{"--listen", "0.0.0.0:0", "--token", "s3cret"}, "unknown flag: --token"},
		{[]string{"--token-file", empty}, "give --listen too"},
	} {
		cmd := npcorchCmd(t, cwd, append([]string{"run", "-c", file, "--out", "run"}, c.args...)...)
		cmd.Env = withoutEnv(cmd.Env, live.TokenEnv)
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != exitError || !strings.Contains(string(out), c.want) {
			t.Errorf("run %s: exit %d, want %d and %q:\n%s", strings.Join(c.args, " "), code, exitError, c.want, out)
		}
		if _, err := os.Stat(filepath.Join(cwd, "run", "run.json")); err == nil {
			t.Fatalf("run %s started the campaign", strings.Join(c.args, " "))
		}
	}
}

// TestRunListensWithATokenAndStatusReadsTheFolder runs a campaign with
// --listen and a token from the environment: the server asks for it, the
// token is on no command line, the server ends with the run (here
// interrupted while its engine loads, so that it surely runs while the
// test asks), and `npcorch status` then summarises the folder.
func TestRunListensWithATokenAndStatusReadsTheFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	file := writeCampaign(t, `tasks: [pathology, sequence]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms, concurrency: 1}
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle, --sim-load-time, 10m]}
`)
	const token = "tok-7d41e0aa"
	cwd := t.TempDir()
	cmd := npcorchCmd(t, cwd, "run", "-c", file, "--out", "run", "--listen", "127.0.0.1:0")
	cmd.Env = append(withoutEnv(cmd.Env, live.TokenEnv), live.TokenEnv+"="+token)
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second // engines inherit the output: a killed run's may hold it a moment
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{}) // closed once the run is waited for
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	page := regexp.MustCompile(`live page at (http://127\.0\.0\.1:\d+/) — loopback only; a token is required`)
	var url string
	deadline := time.Now().Add(30 * time.Second)
	for url == "" {
		if m := page.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no line says where the live page is:\n%s", out.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if strings.Contains(out.String(), token) {
		t.Error("the run printed its token")
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/cmdline")
	if bytes.Contains(cmdline, []byte(token)) {
		t.Error("the token is on the command line")
	}
	for _, c := range []struct {
		auth string
		code int
	}{{"", http.StatusUnauthorized}, {"Bearer " + token, http.StatusOK}} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"api/status", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err != nil {
			t.Fatalf("/api/status: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.code {
			t.Errorf("/api/status with %q: %s, want %d", c.auth, resp.Status, c.code)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the run did not end in a minute after SIGINT:\n%s", out.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("run: exit %d, want %d:\n%s", code, exitInterrupted, out.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"api/status", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("the live server answers after the run ended: %s", resp.Status)
	}

	code, text := npcorch(t, cwd, "status", "--run", "run")
	if code != 0 || !strings.Contains(text, "campaign cli — interrupted") || !regexp.MustCompile(`(?m)^\s*Lingshu-7B\s+stopped\s+0/(\d+)\s+0\s+0\s+(\d+)\s+-`).MatchString(text) {
		t.Errorf("status: exit %d:\n%s", code, text)
	}
	code, js := npcorch(t, cwd, "status", "--run", "run", "--json")
	var snap live.Snapshot
	if err := json.Unmarshal([]byte(js), &snap); code != 0 || err != nil || snap.Format != live.Format || snap.State != live.RunInterrupted ||
		snap.Totals.Requests == 0 || snap.Totals.Remaining != snap.Totals.Requests || len(snap.Engines) != 1 {
		t.Errorf("status --json: exit %d, %v, %s, %+v, %d engines", code, err, snap.State, snap.Totals, len(snap.Engines))
	}
	code, text = npcorch(t, cwd, "status", "--run", "nowhere")
	if code != exitError || !strings.Contains(text, "nowhere is not a run directory") {
		t.Errorf("status of a folder that is no run: exit %d:\n%s", code, text)
	}
}

// TestStatusOfAKilledRun: `npcorch status` tells a run that was killed
// from one that runs, counts what its journal holds, and prints the exact
// command that continues it, its --repeat included (the hint said
// `npcorch run --resume`, which would resume another folder, or the run
// as one repeat).
func TestStatusOfAKilledRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	file := writeCampaign(t, `tasks: [pathology, sequence]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms, concurrency: 1}
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle, --sim-decode-tps, "20"]}
`)
	cwd := t.TempDir()
	cmd := npcorchCmd(t, cwd, "run", "-c", file, "--out", "run", "--repeat", "2")
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
	})
	// Running: status says so once an answer is journaled.
	deadline := time.Now().Add(time.Minute)
	var text string
	for {
		var code int
		code, text = npcorch(t, cwd, "status", "--run", "run")
		if code == 0 && strings.Contains(text, "— running") && regexp.MustCompile(`answered [1-9]\d* of`).MatchString(text) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed the run running with an answer:\n%s\nrun:\n%s", text, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-done
	code, text := npcorch(t, cwd, "status", "--run", "run", "--json")
	var snap live.Snapshot
	if err := json.Unmarshal([]byte(text), &snap); code != 0 || err != nil {
		t.Fatalf("status --json of the killed run: exit %d, %v:\n%s", code, err, text)
	}
	resume := fmt.Sprintf("continue it with `npcorch run -c %s --out run --repeat 2 --resume`", file)
	if snap.State != live.RunGone || !strings.Contains(snap.Error, "is gone: it crashed or was killed") || !strings.Contains(snap.Error, resume) {
		t.Errorf("the killed run: state %s, %q; want it gone, and %q", snap.State, snap.Error, resume)
	}
	j, err := journal.Read(filepath.Join(cwd, "run"))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Totals.Answered != len(j.Records) || snap.Totals.Answered == 0 || snap.Totals.Remaining != snap.Totals.Requests-len(j.Records) {
		t.Errorf("status counts %d answered, %d remaining of %d; the journal holds %d", snap.Totals.Answered, snap.Totals.Remaining, snap.Totals.Requests, len(j.Records))
	}
}
