package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// liveCampaign is a simulated campaign slow enough to watch: one request
// at a time per engine, and one model whose engine crashes after a few
// answers and is restarted.
const liveCampaign = `
name: watched
node: fake:a800-sxm-8
output: run
seed: 3
dataset: {raw: %q, prepared: %q}
tasks: [pathology, sequence, t_cards]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms, concurrency: 1}
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, "right=0.5", --sim-decode-tps, "%d", --sim-load-time, 300ms]}
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle, --sim-decode-tps, "%d", --sim-fault, "crash-after=%d"]}
`

// startWatched starts the campaign with a live server on loopback; wait
// returns its outcome, at most 3 minutes later.
func startWatched(t *testing.T, decodeTPS, crashAfter int) (addr string, wait func() (*Outcome, error)) {
	t.Helper()
	data, prepDir := fixture(t)
	src := fmt.Sprintf(liveCampaign, data, prepDir, decodeTPS, decodeTPS, crashAfter)
	c, err := configs.ParseCampaign("watched.yaml", t.TempDir(), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := live.Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	type result struct {
		o   *Outcome
		err error
	}
	done := make(chan result, 1)
	var log syncBuffer
	go func() {
		o, err := Run(ctx, Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming(), Live: ln})
		done <- result{o, err}
	}()
	var once sync.Once
	var res result
	wait = func() (*Outcome, error) {
		once.Do(func() {
			res = <-done
			cancel()
			t.Log(log.String())
		})
		return res.o, res.err
	}
	t.Cleanup(func() { cancel(); wait() })
	return ln.Addr().String(), wait
}

// syncBuffer is a log the run writes from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// status reads /api/status, at most 5 s.
func status(addr string) (*live.Snapshot, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/status", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var s live.Snapshot
	return &s, json.NewDecoder(resp.Body).Decode(&s)
}

// poll calls f every 50 ms until it reports done, at most d.
func poll(t *testing.T, d time.Duration, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRunServesItsStatusAndWritesItToTheRunFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	addr, wait := startWatched(t, 400, 1000)
	var mid *live.Snapshot
	poll(t, 90*time.Second, "/api/status shows answers while the run lasts", func() bool {
		s, err := status(addr)
		if err == nil && s.State == live.RunRunning && s.Totals.Answered > 0 {
			mid = s
		}
		return mid != nil
	})
	if len(mid.Models) != 2 || len(mid.Engines) == 0 || mid.Totals.Requests == 0 {
		t.Errorf("mid-run status: %d models, %d engines, %d requests", len(mid.Models), len(mid.Engines), mid.Totals.Requests)
	}
	// A real scrape, parsed by Prometheus's text parser.
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(pmodel.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("/metrics: %v", err)
	}
	for _, name := range []string{"npcorch_requests_total", "npcorch_request_duration_seconds", "npcorch_requests_remaining", "npcorch_engine_state", "npcorch_model_state"} {
		if fams[name] == nil {
			t.Errorf("/metrics lacks %s", name)
		}
	}

	o, err := wait()
	if err != nil {
		t.Fatalf("the campaign: %v", err)
	}
	// The server ends with the run.
	if _, err := status(addr); err == nil {
		t.Error("the live server still answers after the run returned")
	}
	// RUN/status.json and `npcorch status` agree with the journal.
	j, err := journal.Read(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	answered := 0
	for _, rec := range j.Records {
		if rec.Status == journal.StatusAnswered {
			answered++
		}
	}
	snap, _, err := Status(o.RunDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if snap.State != live.RunFinished || snap.Totals.Answered != answered || snap.Totals.Remaining != 0 || answered != snap.Totals.Requests {
		t.Errorf("status of the finished run: %s, %d answered of %d (%d remaining); the journal has %d", snap.State, snap.Totals.Answered, snap.Totals.Requests, snap.Totals.Remaining, answered)
	}
	for _, m := range snap.Models {
		if m.State != live.ModelDone {
			t.Errorf("%s: %s, want done", m.Model, m.State)
		}
	}
	if leftover := liveProcesses(o.RunDir); len(leftover) > 0 {
		t.Errorf("processes left: %v", leftover)
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Error("the live server's port still accepts connections")
	}
}

func TestStatusOfARunFolderWithoutAStatusFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	_, wait := startWatched(t, 4000, 1000)
	o, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	runDir := o.RunDir
	if err := os.Remove(runDir + "/" + live.StatusFile); err != nil {
		t.Fatal(err)
	}
	snap, _, err := Status(runDir, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if snap.State != live.RunUnknown || snap.Totals.Answered == 0 || snap.Totals.Answered != snap.Totals.Requests || len(snap.Notes) == 0 {
		t.Errorf("status from the journal alone: %s, %d of %d, notes %q", snap.State, snap.Totals.Answered, snap.Totals.Requests, snap.Notes)
	}
	if !strings.Contains(strings.Join(snap.Notes, " "), "has no "+live.StatusFile) {
		t.Errorf("the notes do not say the status file is missing: %q", snap.Notes)
	}
	// A status file a machine crash left empty: the same, and said so.
	if err := os.WriteFile(runDir+"/"+live.StatusFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	damaged, _, err := Status(runDir, time.Now())
	if err != nil {
		t.Fatalf("status with an empty %s: %v", live.StatusFile, err)
	}
	if damaged.State != live.RunUnknown || damaged.Totals.Answered != snap.Totals.Answered || !strings.Contains(strings.Join(damaged.Notes, " "), "cannot be read") {
		t.Errorf("status with an empty %s: %s, %d answered, notes %q", live.StatusFile, damaged.State, damaged.Totals.Answered, damaged.Notes)
	}
}

func TestEndStateFollowsHowRunReturned(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	incomplete := fmt.Errorf("model m was abandoned: oom\n%w", &incompleteError{missing: 3, total: 10})
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want live.RunState
	}{
		{context.Background(), nil, live.RunFinished},
		{context.Background(), incomplete, live.RunIncomplete},
		{context.Background(), errors.New("journal: disk full"), live.RunFailed},
		{cancelled, context.Canceled, live.RunInterrupted},
	} {
		if got := endState(c.ctx, c.err); got != c.want {
			t.Errorf("endState(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

// TestRunClosesItsListenerOnEveryReturn: a run that fails before it
// serves (a real engine on a fake node; a dataset that is missing) still
// closes the socket it was given.
func TestRunClosesItsListenerOnEveryReturn(t *testing.T) {
	dir := t.TempDir()
	for _, src := range []string{
		"node: fake:a800-sxm-8\noutput: run\ndataset: {raw: data, prepared: prep}\nmodels: [Lingshu-7B]\n",
		fmt.Sprintf(liveCampaign, dir+"/no-such-data", dir+"/no-such-prep", 100, 100, 100),
	} {
		c, err := configs.ParseCampaign("watched.yaml", dir, []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := live.Listen("127.0.0.1:0", "")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		exe, _ := os.Executable()
		_, err = Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: io.Discard, Live: ln})
		if err == nil {
			t.Fatal("the campaign ran")
		}
		if conn, derr := net.DialTimeout("tcp", addr, time.Second); derr == nil {
			conn.Close()
			t.Errorf("%s still accepts connections after Run returned %q", addr, err)
		}
	}
}
