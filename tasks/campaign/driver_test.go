package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/send"
)

// The driver's unit tests run its loop against a recording fake backend
// and a fake runner: no process, no HTTP, no sleep. The test answers each
// backend call and ends each model's run itself, so every interleaving a
// test shows is the one it chose. Every wait is bounded by patience.

const patience = 10 * time.Second

// call is one Backend call the driver made.
type call struct {
	op    string // "start" or "stop"
	name  string // "MODEL/rN"
	spec  launcher.ReplicaSpec
	ctx   context.Context
	reply chan startReply // start only: the test answers
}

type startReply struct {
	ep  launcher.Endpoint
	err error
}

// ready answers a start with a ready engine.
func (c call) ready() launcher.Endpoint {
	ep := launcher.Endpoint{Model: c.spec.Model.Name, Replica: c.spec.Replica, BaseURL: fmt.Sprintf("http://127.0.0.1:%d/v1", 9000+c.spec.Replica),
		MaxNumSeqs: 4, GPUs: c.spec.GPUs}
	c.reply <- startReply{ep: ep}
	return ep
}

// fail answers a start with err.
func (c call) fail(err error) { c.reply <- startReply{err: err} }

// fakeBackend records every call in order. Start waits for the test's
// answer, whatever its context says once it waits (the test sees the
// cancellation and answers as a backend would); Stop succeeds at once. Events are handed
// over unbuffered: once push returns, the loop has taken the event, and
// once the next one is taken, the loop has handled it.
type fakeBackend struct {
	calls  chan call
	events chan launcher.ReplicaEvent
	// holdStops makes each Stop wait for the test's answer too.
	holdStops bool

	mu      sync.Mutex
	log     []string
	pending []call
}

func newFakeBackend() *fakeBackend {
	return &fakeBackend{calls: make(chan call, 64), events: make(chan launcher.ReplicaEvent)}
}

func (b *fakeBackend) record(s string) {
	b.mu.Lock()
	b.log = append(b.log, s)
	b.mu.Unlock()
}

// Calls returns the calls so far, in the order they were made.
func (b *fakeBackend) Calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.log...)
}

func (b *fakeBackend) Start(ctx context.Context, spec launcher.ReplicaSpec) (launcher.Endpoint, error) {
	c := call{op: "start", name: schedule.ReplicaName(spec.Model.Name, spec.Replica), spec: spec, ctx: ctx, reply: make(chan startReply, 1)}
	b.record("start " + c.name)
	if err := ctx.Err(); err != nil {
		return launcher.Endpoint{}, err // as the real backends: nothing to start
	}
	b.calls <- c
	r := <-c.reply
	return r.ep, r.err
}

func (b *fakeBackend) Stop(_ context.Context, model string, replica int) error {
	c := call{op: "stop", name: schedule.ReplicaName(model, replica), reply: make(chan startReply, 1)}
	b.record("stop " + c.name)
	b.calls <- c
	if b.holdStops {
		return (<-c.reply).err
	}
	return nil
}

func (b *fakeBackend) Events() <-chan launcher.ReplicaEvent { return b.events }

func (b *fakeBackend) Close(context.Context) error {
	b.record("close")
	return nil
}

// next waits for the call op on name ("start", "Hulu-Med-4B/r0"), keeping
// the others for later: replicas start side by side, in no fixed order.
func (b *fakeBackend) next(t *testing.T, op, name string) call {
	t.Helper()
	for i, c := range b.pending {
		if c.op == op && c.name == name {
			b.pending = append(b.pending[:i], b.pending[i+1:]...)
			return c
		}
	}
	timeout := time.After(patience)
	for {
		select {
		case c := <-b.calls:
			if c.op == op && c.name == name {
				return c
			}
			b.pending = append(b.pending, c)
		case <-timeout:
			t.Fatalf("no %s %s within %v; calls so far: %v", op, name, patience, b.Calls())
		}
	}
}

// push hands the loop a replica event.
func (b *fakeBackend) push(t *testing.T, ev launcher.ReplicaEvent) {
	t.Helper()
	select {
	case b.events <- ev:
	case <-time.After(patience):
		t.Fatalf("the loop did not take %s within %v", ev, patience)
	}
}

// sync returns once the loop has handled everything handed to it before:
// it takes an event of no replica only between two messages.
func (b *fakeBackend) sync(t *testing.T) {
	t.Helper()
	b.push(t, launcher.ReplicaEvent{Kind: launcher.ReplicaStartUp, Model: "nobody"})
}

// fakeRunner hands each model's run to the test, which ends it.
type fakeRunner struct{ runs chan *fakeRun }

type fakeRun struct {
	ctx context.Context
	mr  send.ModelRun
	end chan runEnd
}

type runEnd struct {
	sum send.Summary
	err error
}

func (f *fakeRunner) Run(ctx context.Context, mr send.ModelRun) (send.Summary, error) {
	r := &fakeRun{ctx: ctx, mr: mr, end: make(chan runEnd, 1)}
	f.runs <- r
	select {
	case e := <-r.end:
		return e.sum, e.err
	case <-ctx.Done():
		return send.Summary{Model: mr.Model.Name}, ctx.Err()
	}
}

// next waits for the run of model.
func (f *fakeRunner) next(t *testing.T, model string) *fakeRun {
	t.Helper()
	select {
	case r := <-f.runs:
		if r.mr.Model.Name != model {
			t.Fatalf("the run of %s started, want %s", r.mr.Model.Name, model)
		}
		return r
	case <-time.After(patience):
		t.Fatalf("%s's run did not start within %v", model, patience)
	}
	return nil
}

// answerAll ends the run with every request answered.
func (r *fakeRun) answerAll() {
	n := r.mr.Items.Len()
	r.end <- runEnd{sum: send.Summary{Model: r.mr.Model.Name, Requests: n, Answered: n}}
}

// acquire takes a slot in the model's pool without waiting: the endpoint
// it would send to now, or the error.
func (r *fakeRun) acquire() (launcher.Endpoint, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l, err := r.mr.Pool.Acquire(ctx)
	if err != nil {
		return launcher.Endpoint{}, err
	}
	r.mr.Pool.Release(l, false)
	return launcher.Endpoint{BaseURL: l.Endpoint.BaseURL}, nil
}

// fakeClock is the run's clock, moved by the test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// watchedLog is the run's log; waiters hear of each write.
type watchedLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{} // closed and replaced at each write
}

func (w *watchedLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.wrote)
	w.wrote = make(chan struct{})
	return w.buf.Write(p)
}

func (w *watchedLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// saw waits until the log holds s: the loop has handled what wrote it.
func (w *watchedLog) saw(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(patience)
	for {
		w.mu.Lock()
		found, wrote := strings.Contains(w.buf.String(), s), w.wrote
		w.mu.Unlock()
		if found {
			return
		}
		select {
		case <-wrote:
		case <-timeout:
			t.Fatalf("the log did not show %q within %v:\n%s", s, patience, w.String())
		}
	}
}

// unit is one driver under test and its fakes.
type unit struct {
	d      *driver
	b      *fakeBackend
	r      *fakeRunner
	clock  *fakeClock
	tick   chan time.Time
	log    *watchedLog
	result chan error
}

// newUnit sets up a driver for the campaign models (YAML list items) on
// node, with four items per task.
func newUnit(t *testing.T, node, launch, models string) *unit {
	t.Helper()
	src := fmt.Sprintf("name: unit\nnode: %s\noutput: run\ndataset: {raw: data, prepared: prep}\ntasks: [pathology, sequence]\n%smodels:\n%s", node, launch, models)
	dir := t.TempDir()
	c, err := configs.ParseCampaign("unit.yaml", dir, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := gpu.ParseNodeSpec(c.Node)
	if err != nil {
		t.Fatal(err)
	}
	n, err := placement.FakeNode(spec.Fake)
	if err != nil {
		t.Fatal(err)
	}
	var items []tasks.Item
	for _, task := range []string{"pathology", "sequence"} {
		for i := range 4 {
			items = append(items, tasks.Item{ID: fmt.Sprintf("%s/P%d", task, i), Task: task, Patient: fmt.Sprintf("P%d", i),
				Images: []dataset.Image{{Width: 512, Height: 512}}})
		}
	}
	u := &unit{b: newFakeBackend(), r: &fakeRunner{runs: make(chan *fakeRun, 16)}, clock: &fakeClock{t: time.Unix(1e9, 0)},
		tick: make(chan time.Time), log: &watchedLog{wrote: make(chan struct{})}, result: make(chan error, 1)}
	u.d = &driver{opt: Options{Campaign: c, Log: u.log}, runDir: dir, prepDir: filepath.Join(dir, "prep"), items: items,
		models: map[string]configs.Model{}, node: n, nodeSpec: spec, backend: u.b, runner: u.r, imgLimit: imageLimits(items),
		answered: map[string]map[string]int{}, now: u.clock.Now, measure: u.tick}
	for _, m := range c.Resolved {
		u.d.models[m.Name] = m
	}
	return u
}

// run starts the driver's loop.
func (u *unit) run(ctx context.Context) {
	go func() { u.result <- u.d.run(ctx) }()
}

// wait returns the run's error once it ended.
func (u *unit) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-u.result:
		return err
	case <-time.After(patience):
		t.Fatalf("the run did not end within %v; calls %v; log:\n%s", patience, u.b.Calls(), u.logText())
	}
	return nil
}

func (u *unit) logText() string { return u.log.String() }

// schedulerSaw returns the scheduler's trace lines (the events it was
// told) that contain s.
func (u *unit) schedulerSaw(s string) []string {
	var out []string
	for _, line := range strings.Split(u.logText(), "\n") {
		if !strings.HasPrefix(line, " ") {
			continue // not a trace line: "   1m00s  ready    MODEL/r0"
		}
		if _, ev, _ := strings.Cut(strings.TrimSpace(line), "  "); strings.Contains(ev, s) {
			out = append(out, ev)
		}
	}
	return out
}

func (u *unit) status(t *testing.T, model string) schedule.ModelPlan {
	t.Helper()
	for _, m := range u.d.plan.Models {
		if m.Model == model {
			return m
		}
	}
	t.Fatalf("%s is not in the plan", model)
	return schedule.ModelPlan{}
}

// sameCalls compares the backend's calls with want, in any order:
// replicas start side by side.
func sameCalls(t *testing.T, got []string, want ...string) {
	t.Helper()
	got, want = slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("backend calls:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const (
	hulu = `  - name: Hulu-Med-4B
    engine: {kind: sim, tensor_parallel: 1, replicas: 1}
`
	lingshu = `  - name: Lingshu-7B
    engine: {kind: sim, tensor_parallel: 1, replicas: 1}
`
)

// TestDriverRunsEveryModelToTheEnd: two models start side by side, each
// runner starts with its first ready replica and sends to it, and each
// model's replica is stopped when its runner is done; the run ends with
// both done, one GPU span each, and nothing left to the backend.
func TestDriverRunsEveryModelToTheEnd(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "", hulu+lingshu)
	u.run(context.Background())
	for _, name := range []string{"Hulu-Med-4B", "Lingshu-7B"} {
		ep := u.b.next(t, "start", name+"/r0").ready()
		run := u.r.next(t, name)
		if got, err := run.acquire(); err != nil || got.BaseURL != ep.BaseURL {
			t.Fatalf("%s's pool sends to %v (%v), want its ready replica %s", name, got.BaseURL, err, ep.BaseURL)
		}
		run.answerAll()
		u.b.next(t, "stop", name+"/r0")
	}
	if err := u.wait(t); err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, name := range []string{"Hulu-Med-4B", "Lingshu-7B"} {
		if st := u.status(t, name).Status; st != schedule.StatusDone {
			t.Errorf("%s ended %s, want done", name, st)
		}
	}
	if len(u.d.spans) != 2 || u.d.spans[0].End.IsZero() {
		t.Errorf("spans %+v; want one ended span per replica", u.d.spans)
	}
	if len(u.d.sums) != 2 {
		t.Errorf("summaries %v; want one per model", u.d.sums)
	}
}

// TestDriverReplansAfterAFailedStart: a start that fails frees its GPU;
// the scheduler starts the model again on another one, the run goes on
// there, and the plan keeps the failure.
func TestDriverReplansAfterAFailedStart(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "", hulu)
	u.run(context.Background())
	first := u.b.next(t, "start", "Hulu-Med-4B/r0")
	first.fail(&launcher.EngineError{Model: "Hulu-Med-4B", Kind: launcher.FailureOOM, Detail: "CUDA out of memory"})
	second := u.b.next(t, "start", "Hulu-Med-4B/r1")
	if strings.Join(second.spec.GPUs, ",") == strings.Join(first.spec.GPUs, ",") {
		t.Errorf("the retry went to the GPUs that failed: %v", second.spec.GPUs)
	}
	second.ready()
	u.r.next(t, "Hulu-Med-4B").answerAll()
	u.b.next(t, "stop", "Hulu-Med-4B/r1")
	if err := u.wait(t); err != nil {
		t.Fatalf("run: %v", err)
	}
	if f := u.d.plan.Failures; len(f) != 1 || !strings.Contains(f[0].Err, "CUDA out of memory") {
		t.Errorf("plan failures %+v; want the one failed start", f)
	}
	if st := u.status(t, "Hulu-Med-4B").Status; st != schedule.StatusDone {
		t.Errorf("Hulu-Med-4B ended %s, want done", st)
	}
	sameCalls(t, u.b.Calls(), "start Hulu-Med-4B/r0", "start Hulu-Med-4B/r1", "stop Hulu-Med-4B/r1")
}

// TestDriverAbandonsAModelWhoseEngineFailsToStart: with
// launch.max_start_failures 1, one failed start abandons the model: its
// runner starts anyway, finds its pool closed with the reason, and the
// run ends with an error that names the model.
func TestDriverAbandonsAModelWhoseEngineFailsToStart(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "launch: {max_start_failures: 1}\n", hulu)
	u.run(context.Background())
	u.b.next(t, "start", "Hulu-Med-4B/r0").fail(errors.New("engine exited during start-up"))
	run := u.r.next(t, "Hulu-Med-4B")
	if _, err := run.acquire(); !errors.Is(err, inference.ErrPoolClosed) || !strings.Contains(err.Error(), "engine exited during start-up") {
		t.Errorf("acquire: %v; want the pool closed with the start's failure", err)
	}
	run.end <- runEnd{sum: send.Summary{Model: "Hulu-Med-4B", Requests: 8, NotRun: 8}}
	err := u.wait(t)
	if err == nil || !strings.Contains(err.Error(), "model Hulu-Med-4B was abandoned") {
		t.Fatalf("run: %v; want the abandoned model named", err)
	}
	sameCalls(t, u.b.Calls(), "start Hulu-Med-4B/r0")
	if s := u.d.sums["Hulu-Med-4B"]; s.NotRun != 8 {
		t.Errorf("summary %+v; want the runner's", s)
	}
}

// TestDriverFollowsACrashMidRun: a crashed replica leaves its pool, comes
// back at the endpoint its restart reports, and when its engine gives up
// for good the scheduler hears the failure and starts the model again
// elsewhere; the runner, started once, goes on throughout.
func TestDriverFollowsACrashMidRun(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "", hulu)
	u.run(context.Background())
	ep := u.b.next(t, "start", "Hulu-Med-4B/r0").ready()
	run := u.r.next(t, "Hulu-Med-4B")

	u.b.push(t, launcher.ReplicaEvent{Kind: launcher.ReplicaCrashed, Model: "Hulu-Med-4B", Replica: 0, Err: errors.New("exit status 1")})
	u.b.sync(t)
	if got, err := run.acquire(); err == nil {
		t.Errorf("the crashed replica still takes requests at %s", got.BaseURL)
	}
	moved := ep
	moved.BaseURL = "http://127.0.0.1:9100/v1"
	u.b.push(t, launcher.ReplicaEvent{Kind: launcher.ReplicaReady, Model: "Hulu-Med-4B", Replica: 0, Endpoint: moved})
	u.b.sync(t)
	if got, err := run.acquire(); err != nil || got.BaseURL != moved.BaseURL {
		t.Errorf("after its restart the pool sends to %q (%v), want %s", got.BaseURL, err, moved.BaseURL)
	}

	u.b.push(t, launcher.ReplicaEvent{Kind: launcher.ReplicaFailed, Model: "Hulu-Med-4B", Replica: 0, Err: errors.New("gave up after 2 restarts")})
	u.b.next(t, "start", "Hulu-Med-4B/r1").ready()
	u.log.saw(t, "ready    Hulu-Med-4B/r1")
	run.answerAll()
	u.b.next(t, "stop", "Hulu-Med-4B/r1")
	if err := u.wait(t); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := u.schedulerSaw("failed   Hulu-Med-4B/r0: gave up after 2 restarts"); len(got) != 1 {
		t.Errorf("the scheduler heard the failure %d times, want once; log:\n%s", len(got), u.logText())
	}
	select {
	case r := <-u.r.runs:
		t.Errorf("a second run of %s started", r.mr.Model.Name)
	default:
	}
	sameCalls(t, u.b.Calls(), "start Hulu-Med-4B/r0", "start Hulu-Med-4B/r1", "stop Hulu-Med-4B/r1")
	if len(u.d.spans) != 2 {
		t.Errorf("spans %+v; want the failed replica's and its successor's; log:\n%s", u.d.spans, u.logText())
	}
}

// TestDriverAbandonsAModelWhenItsEnginesGaveUp is issue 12.1 without
// processes: a ready engine fails for good, the model has no start left
// (max_start_failures 1), its pool closes so that its waiting requests
// end as not run instead of waiting for ever, and the run says so.
func TestDriverAbandonsAModelWhenItsEnginesGaveUp(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "launch: {max_start_failures: 1}\n", hulu)
	u.run(context.Background())
	u.b.next(t, "start", "Hulu-Med-4B/r0").ready()
	run := u.r.next(t, "Hulu-Med-4B")
	u.b.push(t, launcher.ReplicaEvent{Kind: launcher.ReplicaFailed, Model: "Hulu-Med-4B", Replica: 0, Err: errors.New("gave up after 1 restarts")})
	u.b.sync(t)
	if _, err := run.acquire(); !errors.Is(err, inference.ErrPoolClosed) || !strings.Contains(err.Error(), "gave up after 1 restarts") {
		t.Errorf("acquire: %v; want the pool closed with the engine's last failure", err)
	}
	run.end <- runEnd{sum: send.Summary{Model: "Hulu-Med-4B", Requests: 8, Answered: 3, NotRun: 5}}
	err := u.wait(t)
	if err == nil || !strings.Contains(err.Error(), "Hulu-Med-4B was abandoned") {
		t.Fatalf("run: %v; want the abandoned model named", err)
	}
	if st := u.status(t, "Hulu-Med-4B").Status; st != schedule.StatusFailed {
		t.Errorf("Hulu-Med-4B ended %s, want failed", st)
	}
	sameCalls(t, u.b.Calls(), "start Hulu-Med-4B/r0")
}

// TestDriverStopsDuringStartOnAConfigurationFailure is issue 19.4 and a
// stop during a start: of two replicas starting, one fails with a bad
// command line, which no other GPU fixes. The scheduler abandons the
// model at once and stops the other, still starting: its start is
// cancelled, answered ready all the same (the race a real backend can
// lose), stopped for good, and the scheduler hears only that stop.
func TestDriverStopsDuringStartOnAConfigurationFailure(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "", `  - name: Hulu-Med-4B
    engine: {kind: sim, tensor_parallel: 1, replicas: 2}
`)
	u.run(context.Background())
	r0 := u.b.next(t, "start", "Hulu-Med-4B/r0")
	r1 := u.b.next(t, "start", "Hulu-Med-4B/r1")
	r0.fail(&launcher.EngineError{Model: "Hulu-Med-4B", Kind: launcher.FailureArgs, Detail: "unrecognized arguments: --bogus"})
	select {
	case <-r1.ctx.Done():
	case <-time.After(patience):
		t.Fatalf("r1's start was not cancelled within %v; log:\n%s", patience, u.logText())
	}
	r1.ready()
	u.b.next(t, "stop", "Hulu-Med-4B/r1")
	run := u.r.next(t, "Hulu-Med-4B")
	if _, err := run.acquire(); !errors.Is(err, inference.ErrPoolClosed) {
		t.Errorf("acquire: %v; want the pool closed", err)
	}
	run.end <- runEnd{sum: send.Summary{Model: "Hulu-Med-4B", Requests: 8, NotRun: 8}}
	err := u.wait(t)
	if err == nil || !strings.Contains(err.Error(), "cannot run as configured") {
		t.Fatalf("run: %v; want the model abandoned for its configuration", err)
	}
	sameCalls(t, u.b.Calls(), "start Hulu-Med-4B/r0", "start Hulu-Med-4B/r1", "stop Hulu-Med-4B/r1")
	if got := u.schedulerSaw("Hulu-Med-4B/r1"); strings.Join(got, "|") != "stopped  Hulu-Med-4B/r1" {
		t.Errorf("the scheduler heard %q of r1, want only its stop", got)
	}
	if f := u.d.plan.Failures; len(f) != 1 {
		t.Errorf("plan failures %+v; want only the bad command line", f)
	}
}

// TestDriverInterruptEndsStartsAndRuns: cancelling the run while an
// engine starts and another serves ends the start and the runner; the run
// returns the interruption once both have reported.
func TestDriverInterruptEndsStartsAndRuns(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "", hulu+lingshu)
	ctx, cancel := context.WithCancel(context.Background())
	u.run(ctx)
	u.b.next(t, "start", "Hulu-Med-4B/r0").ready()
	u.r.next(t, "Hulu-Med-4B")
	starting := u.b.next(t, "start", "Lingshu-7B/r0")
	cancel()
	<-starting.ctx.Done()
	starting.fail(starting.ctx.Err())
	err := u.wait(t)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v; want the interruption", err)
	}
	if len(u.d.spans) != 1 || !u.d.spans[0].End.IsZero() {
		t.Errorf("spans %+v; want the serving replica's, still open for close to end", u.d.spans)
	}
}

// TestDriverMeasuresProgressAndSpeeds: what the runner journals reaches
// the scheduler as the model's share of work done and the replica's speed
// (prompt + 5 × output tokens per second of serving), every measuring
// tick and once more when the replica stops; RUN/speeds.json keeps the
// scheduler's estimate, from the first tick on (a status reader follows
// the run with it).
func TestDriverMeasuresProgressAndSpeeds(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "", hulu)
	u.run(context.Background())
	u.b.next(t, "start", "Hulu-Med-4B/r0").ready()
	run := u.r.next(t, "Hulu-Med-4B")
	answer := func(task string, i int) {
		run.mr.OnRecord(journal.Record{Model: "Hulu-Med-4B", Task: task, Item: fmt.Sprintf("%s/P%d", task, i), Status: journal.StatusAnswered,
			Replica: "Hulu-Med-4B#0", Images: 1, Answer: &inference.Answer{Usage: inference.Usage{PromptTokens: 1000, CompletionTokens: 20},
				Timing: inference.Timing{TTFTms: 500}}})
	}
	for i := range 4 {
		answer("pathology", i) // every pathology item; no sequence item
	}
	u.clock.Advance(time.Minute)
	u.tick <- u.clock.Now()
	u.b.sync(t)
	// Pathology asks 16 output tokens at most, sequence more: the share is
	// pathology's part of the estimated work, not half the requests.
	m := u.d.models["Hulu-Med-4B"]
	path := schedule.Estimator{}.Work(workload(m, itemsFor(u.d.items, m).Items(), 1)[0])
	all := 0.0
	for _, w := range workload(m, itemsFor(u.d.items, m).Items(), 1) {
		all += schedule.Estimator{}.Work(w)
	}
	wantDone := fmt.Sprintf("progress Hulu-Med-4B %.0f%%", 100*path/all)
	if got := u.schedulerSaw("progress"); len(got) != 1 || got[0] != wantDone {
		t.Errorf("progress told %q, want %q", got, wantDone)
	}
	// 4 answers × (1000 + 5 × 20) over 60 s.
	if got := u.schedulerSaw("speed"); len(got) != 1 || got[0] != "speed    Hulu-Med-4B/r0: 73 tok/s over 1m00s" {
		t.Errorf("speed told %q", got)
	}
	live, err := schedule.ReadSpeeds(filepath.Join(u.d.runDir, schedule.SpeedsFile))
	if err != nil {
		t.Fatalf("while the run goes: %v", err)
	}
	if len(live.Models) != 1 || live.Models[0].Samples != 1 || live.Models[0].Work != 4*1100 {
		t.Errorf("speeds.json while the run goes: %+v; want the first sample", live.Models)
	}
	answer("sequence", 0)
	u.clock.Advance(10 * time.Second)
	run.answerAll()
	u.b.next(t, "stop", "Hulu-Med-4B/r0")
	if err := u.wait(t); err != nil {
		t.Fatalf("run: %v", err)
	}
	if got := u.schedulerSaw("speed"); len(got) != 2 || got[1] != "speed    Hulu-Med-4B/r0: 110 tok/s over 10s" {
		t.Errorf("speed samples %q; want the last one, at the stop", got)
	}
	data, err := os.ReadFile(filepath.Join(u.d.runDir, "speeds.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sp schedule.Speeds
	if err := json.Unmarshal(data, &sp); err != nil {
		t.Fatal(err)
	}
	if len(sp.Models) != 1 || sp.Models[0].Samples != 2 || sp.Models[0].Work != 5*1100 || sp.Models[0].TTFT != 0.5 {
		t.Errorf("speeds.json: %s", data)
	}
}

// TestDriverGivesUpAtOnceOnAConfigurationFailure is issue 19.4: a start
// that fails for the model's own configuration (here a missing engine
// binary) is not re-planned onto other GPUs though starts are left
// (max_start_failures 3): one start, the model failed, its requests not
// run with the reason.
func TestDriverGivesUpAtOnceOnAConfigurationFailure(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "launch: {max_start_failures: 3}\n", hulu)
	u.run(context.Background())
	u.b.next(t, "start", "Hulu-Med-4B/r0").fail(&launcher.EngineError{Model: "Hulu-Med-4B", Kind: launcher.FailureNotFound,
		Detail: "start /nonexistent/bin/vllm: no such file or directory"})
	run := u.r.next(t, "Hulu-Med-4B")
	if _, err := run.acquire(); !errors.Is(err, inference.ErrPoolClosed) || !strings.Contains(err.Error(), "binary-not-found") {
		t.Errorf("acquire: %v; want the pool closed for the missing binary", err)
	}
	run.end <- runEnd{sum: send.Summary{Model: "Hulu-Med-4B", Requests: 8, NotRun: 8}}
	err := u.wait(t)
	if err == nil || !strings.Contains(err.Error(), "cannot run as configured") {
		t.Fatalf("run: %v; want the model abandoned for its configuration", err)
	}
	sameCalls(t, u.b.Calls(), "start Hulu-Med-4B/r0")
	if st := u.status(t, "Hulu-Med-4B").Status; st != schedule.StatusFailed {
		t.Errorf("Hulu-Med-4B ended %s, want failed", st)
	}
}

// TestDriverKeepsAStoppingReplicaOutOfItsPool: a replica whose engine
// comes back from a restart while the scheduler is stopping it does not
// rejoin its model's pool.
func TestDriverKeepsAStoppingReplicaOutOfItsPool(t *testing.T) {
	u := newUnit(t, "fake:h100-sxm-4", "", hulu)
	u.b.holdStops = true
	u.run(context.Background())
	ep := u.b.next(t, "start", "Hulu-Med-4B/r0").ready()
	run := u.r.next(t, "Hulu-Med-4B")
	run.answerAll()
	stop := u.b.next(t, "stop", "Hulu-Med-4B/r0")
	u.b.push(t, launcher.ReplicaEvent{Kind: launcher.ReplicaReady, Model: "Hulu-Med-4B", Replica: 0, Endpoint: ep})
	u.b.sync(t)
	if got, err := run.acquire(); err == nil {
		t.Errorf("the stopping replica is back in its pool at %s", got.BaseURL)
	}
	stop.reply <- startReply{}
	if err := u.wait(t); err != nil {
		t.Fatalf("run: %v", err)
	}
}
