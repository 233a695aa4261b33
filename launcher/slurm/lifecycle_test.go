package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
)

// fakeSlurm is a scripted Slurm: each submitted job walks through the
// states its script gives, one per squeue call, and stays in the last.
type fakeSlurm struct {
	mu      sync.Mutex
	scripts [][]string // per submission, in order
	logs    []string   // written to the job's --output at submission
	// endpoint, when set, is the endpoint file a job writes beside its
	// --output, given the job's id (what the job script does on a node).
	endpoint func(id string) string
	jobs     map[string]*fakeJob
	next     int
}

type fakeJob struct {
	states []string
	i      int
}

func (f *fakeSlurm) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch name {
	case "sbatch":
		if f.next >= len(f.scripts) {
			return nil, errors.New("sbatch: error: no more jobs scripted")
		}
		id := fmt.Sprint(100 + f.next)
		f.jobs[id] = &fakeJob{states: f.scripts[f.next]}
		for _, a := range args {
			out, ok := strings.CutPrefix(a, "--output=")
			if ok && f.next < len(f.logs) {
				os.WriteFile(out, []byte(f.logs[f.next]), 0o644)
			}
			if ok && f.endpoint != nil {
				os.WriteFile(filepath.Join(filepath.Dir(out), "endpoint.json"), []byte(f.endpoint(id)), 0o644)
			}
		}
		f.next++
		return []byte(id + "\n"), nil
	case "squeue":
		var b strings.Builder
		for _, a := range args {
			ids, ok := strings.CutPrefix(a, "--jobs=")
			if !ok {
				continue
			}
			for _, id := range strings.Split(ids, ",") {
				j := f.jobs[id]
				st := j.states[min(j.i, len(j.states)-1)]
				j.i++
				start := "N/A"
				if st != "PENDING" {
					start = "2026-11-30T10:00:01"
				}
				fmt.Fprintf(&b, "%s|%s|None|n1|2026-11-30T10:00:00|%s|job\n", id, st, start)
			}
		}
		return []byte(b.String()), nil
	case "scancel":
		for _, id := range args {
			f.jobs[id].states = []string{"CANCELLED"}
			f.jobs[id].i = 0
		}
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected %s", name)
}

func newFakeBackend(t *testing.T, f *fakeSlurm) *Backend {
	t.Helper()
	f.jobs = map[string]*fakeJob{}
	b, err := New(Config{
		Settings: configs.SlurmSettings{GRES: "gpu", TimeLimit: time.Hour, Poll: 5 * time.Millisecond, MaxResubmits: 2, PortBase: 20000, PortSpan: 100},
		Run:      "t", Dir: relTempDir(t), Cmd: f, Engines: launcher.Engines{Sim: []string{"/bin/true"}},
		Timing: launcher.Timing{RestartBackoff: time.Millisecond, MaxBackoff: time.Millisecond, NoProgress: time.Hour, HardCap: time.Hour},
	})
	if err != nil {
		t.Fatal(err)
	}
	b.cluster = &Cluster{Nodes: []Node{{Name: "n1", Addr: "127.0.0.1", State: "IDLE", GPUs: 8}}}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

// relTempDir is a temporary folder named relative to the working
// directory, as a campaign's output usually is.
func relTempDir(t *testing.T) string {
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func simModel() configs.Model {
	return configs.Model{Name: "M", ParamsB: 7, Engine: configs.Engine{Kind: configs.EngineSim}}
}

// A job lost to a node failure while pending is re-submitted; an engine
// that exits on its own before it is ready fails the replica with its log
// tail, without another submission.
func TestNodeFailureResubmitsAndEngineExitFails(t *testing.T) {
	f := &fakeSlurm{
		scripts: [][]string{{"PENDING", "NODE_FAIL"}, {"PENDING", "RUNNING", "FAILED"}},
		logs:    []string{"", "loading\nRuntimeError: the model config is broken\n"},
	}
	b := newFakeBackend(t, f)
	var events []launcher.ReplicaEventKind
	var mu sync.Mutex
	b.cfg.OnEvent = func(e launcher.ReplicaEvent) { mu.Lock(); events = append(events, e.Kind); mu.Unlock() }
	_, err := b.Start(context.Background(), launcher.ReplicaSpec{Model: simModel(), Replica: 1, GPUs: []string{"slurm:n1:0", "slurm:n1:1"}})
	var ee *launcher.EngineError
	if !errors.As(err, &ee) || ee.Kind != launcher.FailureExited || !strings.Contains(err.Error(), "the model config is broken") || !strings.Contains(err.Error(), "FAILED") {
		t.Fatalf("Start = %v; want an engine failure naming the job state and the log tail", err)
	}
	a := b.Attempts()
	if len(a) != 2 || !strings.HasPrefix(a[0].Outcome, "resubmitted") || !strings.Contains(a[0].Outcome, "NODE_FAIL") || !strings.HasPrefix(a[1].Outcome, "failed") {
		t.Errorf("attempts %+v; want a NODE_FAIL re-submission, then the failure", a)
	}
	if !filepath.IsAbs(a[1].Log) {
		t.Errorf("the job's log path %s is relative; jobs run in another directory", a[1].Log)
	}
	if a[1].GPUs != 2 {
		t.Errorf("the job asked for %d GPUs, want the TP group's 2", a[1].GPUs)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []launcher.ReplicaEventKind{launcher.ReplicaStarting, launcher.ReplicaRestarting, launcher.ReplicaStarting, launcher.ReplicaFailed}
	if fmt.Sprint(events) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", events, want)
	}
}

// An engine's exit before it is ready is named from its log as a local
// one's is: a port another process took on the node re-submits the job on
// another port; running out of GPU memory fails it with what to change.
func TestEngineExitIsClassifiedFromTheJobLog(t *testing.T) {
	f := &fakeSlurm{
		scripts: [][]string{{"PENDING", "RUNNING", "FAILED"}, {"PENDING", "RUNNING", "FAILED"}},
		logs:    []string{"loading\nOSError: [Errno 98] Address already in use\n", "torch.OutOfMemoryError: CUDA out of memory\n"},
	}
	b := newFakeBackend(t, f)
	_, err := b.Start(context.Background(), launcher.ReplicaSpec{Model: simModel(), Replica: 1, GPUs: []string{"slurm:n1:0"}})
	var ee *launcher.EngineError
	if !errors.As(err, &ee) || ee.Kind != launcher.FailureOOM || !strings.Contains(err.Error(), "gpu_memory_utilization") {
		t.Fatalf("Start = %v; want the second job's out-of-memory failure with its hint", err)
	}
	a := b.Attempts()
	if len(a) != 2 || !strings.HasPrefix(a[0].Outcome, "resubmitted") || !strings.Contains(a[0].Outcome, "port") {
		t.Fatalf("attempts %+v; want the first re-submitted because its port was taken", a)
	}
	if a[0].Port == a[1].Port {
		t.Errorf("both jobs asked for port %d; the re-submission must try another", a[0].Port)
	}
}

// Preemption, time limits and cancellations count against max_resubmits.
func TestResubmissionsAreBounded(t *testing.T) {
	f := &fakeSlurm{scripts: [][]string{{"PREEMPTED"}, {"TIMEOUT"}, {"CANCELLED"}, {"RUNNING"}}}
	b := newFakeBackend(t, f)
	_, err := b.Start(context.Background(), launcher.ReplicaSpec{Model: simModel(), Replica: 1, GPUs: []string{"slurm:n1:0"}})
	if err == nil || !strings.Contains(err.Error(), "gave up after 2 re-submissions") || !strings.Contains(err.Error(), "CANCELLED") {
		t.Fatalf("Start = %v; want a bounded give-up naming the last end", err)
	}
	if f.next != 3 {
		t.Errorf("%d jobs submitted, want 3 (the first and 2 re-submissions)", f.next)
	}
}

// A TP group may not span nodes, and a GPU must be a slot of the cluster.
func TestStartRejectsGroupsAcrossNodes(t *testing.T) {
	b := newFakeBackend(t, &fakeSlurm{})
	for _, gpus := range [][]string{{"slurm:n1:0", "slurm:n2:0"}, {"GPU-abc"}, {"slurm:n9:0"}, nil} {
		if _, err := b.Start(context.Background(), launcher.ReplicaSpec{Model: simModel(), Replica: 1, GPUs: gpus}); err == nil {
			t.Errorf("GPUs %v were accepted", gpus)
		}
	}
}

// jobs.json keeps the attempts of an earlier run of the same folder (a
// resumed campaign) before this run's.
func TestJobsFileKeepsEarlierRuns(t *testing.T) {
	dir := t.TempDir()
	for i, script := range [][]string{{"FAILED"}, {"COMPLETED"}} {
		f := &fakeSlurm{scripts: [][]string{script}, jobs: map[string]*fakeJob{}, next: i}
		b, err := New(Config{Settings: configs.SlurmSettings{GRES: "gpu", TimeLimit: time.Hour, Poll: 5 * time.Millisecond, PortBase: 20000, PortSpan: 100},
			Run: "t", Dir: dir, Cmd: f, Engines: launcher.Engines{Sim: []string{"/bin/true"}}})
		if err != nil {
			t.Fatal(err)
		}
		b.cluster = &Cluster{Nodes: []Node{{Name: "n1", Addr: "127.0.0.1", State: "IDLE", GPUs: 8}}}
		f.scripts = append(make([][]string, i), script)
		if _, err := b.Start(context.Background(), launcher.ReplicaSpec{Model: simModel(), Replica: 1, GPUs: []string{"slurm:n1:0"}}); err == nil {
			t.Fatal("an engine that exited before ready was reported ready")
		}
		if err := b.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []Attempt
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].JobID != "100" || got[1].JobID != "101" || got[0].State != "FAILED" || got[1].State != "COMPLETED" {
		t.Errorf("jobs.json after two runs: %+v", got)
	}
}

// A job whose port on the node turns out to be served by another server
// (it answers, but refuses our key) is cancelled and re-submitted, each
// attempt on another port, within max_resubmits; it never fails the
// replica at the first clash.
func TestForeignServerOnTheJobsPortResubmits(t *testing.T) {
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		http.Error(w, `{"error":"Unauthorized"}`, http.StatusUnauthorized)
	}))
	defer foreign.Close()
	b := newFakeBackend(t, jobsServedBy(t, foreign, 3))
	_, err := b.Start(context.Background(), launcher.ReplicaSpec{Model: simModel(), Replica: 1, GPUs: []string{"slurm:n1:0"}})
	if err == nil || !strings.Contains(err.Error(), "gave up after 2 re-submissions") || !strings.Contains(err.Error(), "served by another server") {
		t.Fatalf("Start = %v; want re-submissions for the port clash, then a bounded give-up", err)
	}
	a := b.Attempts()
	if len(a) != 3 {
		t.Fatalf("%d attempts, want 3 (the first and 2 re-submissions): %+v", len(a), a)
	}
	for _, at := range a[:2] {
		if !strings.HasPrefix(at.Outcome, "resubmitted") || !strings.Contains(at.Outcome, "served by another server") {
			t.Errorf("job %s: outcome %q, want resubmitted for the port clash", at.JobID, at.Outcome)
		}
	}
	if a[0].Port == a[1].Port || a[1].Port == a[2].Port {
		t.Errorf("ports %d, %d, %d: each attempt must ask for another port", a[0].Port, a[1].Port, a[2].Port)
	}
}

// A ready engine in a live job whose requests stop producing tokens is
// caught by the watchdog: the replica reports a crash (stalled), and the
// job is cancelled and re-submitted.
func TestHungEngineInALiveJobIsResubmitted(t *testing.T) {
	served := servedNameOf(t)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
		case "/v1/models":
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer npc-") {
				http.Error(w, `{"error":"Unauthorized"}`, http.StatusUnauthorized)
				return
			}
			fmt.Fprintf(w, `{"object":"list","data":[{"id":%q,"object":"model"}]}`, served)
		case "/v1/chat/completions":
			fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"length"}]}`)
		case "/metrics":
			// Two requests running, and the token counter never moves.
			fmt.Fprint(w, "vllm:num_requests_running 2\nvllm:generation_tokens_total 1234\n")
		default:
			http.NotFound(w, r)
		}
	}))
	defer hung.Close()
	b := newFakeBackend(t, jobsServedBy(t, hung, 3))
	b.cfg.Timing.StallCheck, b.cfg.Timing.StallWindow = 10*time.Millisecond, 100*time.Millisecond
	crashed := make(chan error, 4)
	b.cfg.OnEvent = func(e launcher.ReplicaEvent) {
		if e.Kind == launcher.ReplicaCrashed {
			crashed <- e.Err
		}
	}
	if _, err := b.Start(context.Background(), launcher.ReplicaSpec{Model: simModel(), Replica: 1, GPUs: []string{"slurm:n1:0"}}); err != nil {
		t.Fatalf("Start = %v; the engine answers every readiness check", err)
	}
	select {
	case err := <-crashed:
		var ee *launcher.EngineError
		if !errors.As(err, &ee) || ee.Kind != launcher.FailureStalled || !strings.Contains(err.Error(), "no new token") {
			t.Fatalf("crash %v; want a stalled engine", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hung engine was not caught within 10 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		a := b.Attempts()
		if len(a) >= 2 && strings.HasPrefix(a[0].Outcome, "resubmitted") {
			if !strings.Contains(a[0].Outcome, "no new token") || a[0].State != "CANCELLED" {
				t.Errorf("first job: state %q outcome %q; want CANCELLED and resubmitted for the stall", a[0].State, a[0].Outcome)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hung job was not re-submitted: %+v", a)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// servedNameOf is the name the sim engine of simModel serves under.
func servedNameOf(t *testing.T) string {
	t.Helper()
	eng, err := launcher.Engines{Sim: []string{"/bin/true"}}.For(configs.EngineSim)
	if err != nil {
		t.Fatal(err)
	}
	inv, err := eng.Invocation(launcher.Launch{Model: simModel(), Replica: 1, Host: "127.0.0.1", Port: 20000, APIKey: "npc-x"})
	if err != nil {
		t.Fatal(err)
	}
	return inv.ServedName
}

// jobsServedBy is a fake Slurm whose first n jobs run at once and report
// srv as their engine's endpoint.
func jobsServedBy(t *testing.T, srv *httptest.Server, n int) *fakeSlurm {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSlurm{endpoint: func(id string) string {
		return fmt.Sprintf(`{"job":%q,"node":"n1","host":"127.0.0.1","port":%s,"gpus":"0"}`, id, u.Port())
	}}
	for range n {
		f.scripts = append(f.scripts, []string{"RUNNING"})
	}
	return f
}
