package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
)

// recorder is the recording fake Effects: it only writes down calls.
type recorder struct {
	calls   []string
	started []Assignment
}

func (r *recorder) StartReplica(x Assignment) {
	r.calls = append(r.calls, fmt.Sprintf("start %s %v", x.Model, x.GPUs))
	r.started = append(r.started, x)
}

func (r *recorder) StopReplica(x Assignment) {
	r.calls = append(r.calls, fmt.Sprintf("stop %s %v", x.Model, x.GPUs))
}

func (r *recorder) AbandonModel(model, why string) {
	r.calls = append(r.calls, fmt.Sprintf("abandon %s: %s", model, why))
}

// take returns the calls since the last take.
func (r *recorder) take() []string {
	c := r.calls
	r.calls = nil
	return c
}

const gib = uint64(1) << 30

// testNode is an idle NVLink node of n 80 GiB GPUs at A800 speed.
func testNode(n int) placement.Node {
	node := placement.Node{Name: fmt.Sprintf("test-%d", n), Link: func(a, b int) placement.LinkClass { return placement.LinkNVLink }}
	for i := range n {
		node.GPUs = append(node.GPUs, placement.GPU{Index: i, UUID: fmt.Sprintf("GPU-%d", i), MemTotal: 80 * gib, MemFree: 80 * gib, NUMA: 0})
	}
	return node
}

// small is an 8B dense model at 1,000 tokens/s per GPU.
func small(name string) configs.Model {
	return configs.Model{Name: name, ParamsB: 8, WeightBytes: 16e9, AttentionHeads: 32, SpeedTokensPerS: 1000,
		Engine: configs.Engine{Kind: configs.EngineVLLM}}
}

// work gives a model n seconds of work on one GPU (prompt tokens only).
func work(model string, seconds int64) Workload {
	return Workload{Model: model, Requests: 1, PromptTokens: 1000 * seconds}
}

// fixed start-up and stop times keep the arithmetic readable.
var fixed = Estimator{Startup: func(configs.Model, int) time.Duration { return 100 * time.Second }, Stop: 10 * time.Second}

func mustNew(t *testing.T, cfg Config, fx Effects) *Scheduler {
	t.Helper()
	s, err := New(cfg, fx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func handle(t *testing.T, s *Scheduler, ev Event) {
	t.Helper()
	if err := s.Handle(ev); err != nil {
		t.Fatal(err)
	}
}

func at(sec int) time.Duration { return time.Duration(sec) * time.Second }

func TestLongestFirstAndFreedGPUsReusedAtOnce(t *testing.T) {
	rec := &recorder{}
	s := mustNew(t, Config{
		Node:      testNode(1),
		Models:    []configs.Model{small("A"), small("B"), small("C")},
		Workloads: []Workload{work("A", 1000), work("B", 3000), work("C", 2000)},
		Estimator: fixed,
	}, rec)
	s.Begin()
	if got, want := rec.take(), []string{"start B [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first decisions %q, want %q (longest first)", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventFinished, At: at(3100), Model: "B"})
	if got, want := rec.take(), []string{"stop B [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after B finished: %q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventStopped, At: at(3110), Replica: 1})
	if got, want := rec.take(), []string{"start C [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after B stopped: %q, want %q (C next, on the GPU just freed)", got, want)
	}
	if s.Done() {
		t.Fatal("Done with A and C still to run")
	}
	handle(t, s, Event{Kind: EventReady, At: at(3210), Replica: 2})
	handle(t, s, Event{Kind: EventFinished, At: at(5210), Model: "C"})
	handle(t, s, Event{Kind: EventStopped, At: at(5220), Replica: 2})
	if got, want := rec.take(), []string{"stop C [0]", "start A [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(5320), Replica: 3})
	handle(t, s, Event{Kind: EventFinished, At: at(6320), Model: "A"})
	handle(t, s, Event{Kind: EventStopped, At: at(6330), Replica: 3})
	if !s.Done() {
		t.Fatal("not Done after every model stopped")
	}
	p := s.Plan()
	if p.Makespan != 6330 {
		t.Errorf("makespan %v, want 6330 s", float64(p.Makespan))
	}
	if rec.started[0].UUIDs[0] != "GPU-0" || rec.started[0].Utilization != 0.9 || rec.started[0].Rate != 1000 {
		t.Errorf("replica %+v: want UUID GPU-0, utilization 0.9, rate 1000", rec.started[0])
	}
}

func TestSharedGPUStartsOneAtATime(t *testing.T) {
	node := testNode(1)
	node.GPUs[0].MemTotal, node.GPUs[0].MemFree = 141*gib, 140*gib
	a, b := small("A"), small("B")
	a.Engine.GPUMemoryUtilization, b.Engine.GPUMemoryUtilization = 0.45, 0.45
	rec := &recorder{}
	s := mustNew(t, Config{Node: node, Models: []configs.Model{a, b},
		Workloads: []Workload{work("A", 2000), work("B", 1000)}, Estimator: fixed}, rec)
	s.Begin()
	if got, want := rec.take(), []string{"start A [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first decisions %q, want %q: B must wait while A starts on the GPU", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	if got, want := rec.take(), []string{"start B [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after A ready: %q, want %q (B shares GPU 0 now)", got, want)
	}
	// While B starts, nothing else may start on GPU 0, not even a stopped
	// engine's successor; A keeps running alone at full speed.
	if r := s.fluid.rate("A"); r != 1000 {
		t.Errorf("A's rate while B starts = %v, want 1000", r)
	}
	handle(t, s, Event{Kind: EventReady, At: at(200), Replica: 2})
	if r := s.fluid.rate("A"); r != 500 {
		t.Errorf("A's rate sharing the GPU with B = %v, want 500", r)
	}
}

func TestReplanAfterFailedStart(t *testing.T) {
	m := small("M")
	m.Engine.TensorParallel, m.Engine.Replicas = 1, 1
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(4), Models: []configs.Model{m}, Workloads: []Workload{work("M", 1000)}, Estimator: fixed}, rec)
	s.Begin()
	if got, want := rec.take(), []string{"start M [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventFailed, At: at(50), Replica: 1, Err: "CUDA out of memory"})
	if got, want := rec.take(), []string{"start M [1]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the failure: %q, want %q (retried elsewhere at once)", got, want)
	}
	if w := s.Plan().Waves[1]; w.Kind != WaveRetry {
		t.Errorf("second wave kind %q, want %q", w.Kind, WaveRetry)
	}
	handle(t, s, Event{Kind: EventFailed, At: at(100), Replica: 2, Err: "CUDA out of memory"})
	handle(t, s, Event{Kind: EventFailed, At: at(150), Replica: 3, Err: "port in use"})
	if got, want := rec.take(), []string{"start M [2]", "abandon M: gave up after 3 failed starts; last: port in use"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q: no more tries, and the model's work abandoned", got, want)
	}
	if !s.Done() {
		t.Fatal("not Done after the third failure")
	}
	p := s.Plan()
	if p.Models[0].Status != StatusFailed || !strings.Contains(p.Models[0].Note, "3 failed starts; last: port in use") {
		t.Errorf("model %+v: want failed after 3 starts, last error named", p.Models[0])
	}
	if len(p.Failures) != 3 || !reflect.DeepEqual(p.Failures[1].GPUs, []int{1}) {
		t.Errorf("failures %+v, want 3, the second on GPU 1", p.Failures)
	}
}

// TestReplicasAreNumberedPerModel: users see replicas as MODEL/rN, N
// counting the model's replicas from 0 in start order (a retry takes the
// next number), as `npcorch serve` numbers them; the campaign-wide ID
// stays internal.
func TestReplicasAreNumberedPerModel(t *testing.T) {
	a, b := small("A"), small("B")
	a.Engine.TensorParallel, a.Engine.Replicas = 1, 1
	b.Engine.TensorParallel, b.Engine.Replicas = 1, 1
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(4), Models: []configs.Model{a, b},
		Workloads: []Workload{work("A", 4000), work("B", 3000)}, Estimator: fixed}, rec)
	s.Begin()
	handle(t, s, Event{Kind: EventFailed, At: at(10), Replica: 1, Err: "CUDA out of memory"})
	var got []string
	for _, r := range rec.started {
		got = append(got, fmt.Sprintf("%d=%s", r.ID, ReplicaName(r.Model, r.Index)))
	}
	if want := []string{"1=A/r0", "2=B/r0", "3=A/r1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("replicas %q, want %q", got, want)
	}
	if f := s.Plan().Failures[0]; f.Index != 0 || f.Replica != 1 {
		t.Errorf("failure %+v, want replica 1, A/r0", f)
	}
}

func TestFailedReplicaOfRunningModel(t *testing.T) {
	// Two replicas; one fails. The other keeps the model running, and the
	// failed GPU is not offered to the model again.
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{small("M")}, Workloads: []Workload{work("M", 4000)}, Estimator: fixed}, rec)
	s.Begin()
	if got, want := rec.take(), []string{"start M [0]", "start M [1]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
	handle(t, s, Event{Kind: EventFailed, At: at(120), Replica: 1, Err: "exit status 1"})
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("after the failure: %q, want no new start on the failed GPU", got)
	}
	if st := s.Plan().Models[0].Status; st != StatusRunning {
		t.Errorf("status %s, want running", st)
	}
}

// TestPermanentFailureFailsTheModelAtOnce: a bad engine command line fails
// the same way on every GPU (issue 19: three starts in a row, each failing
// with "unrecognized arguments"). The model fails at once, its other
// replica is stopped, no retry wave starts, and its work is abandoned.
func TestPermanentFailureFailsTheModelAtOnce(t *testing.T) {
	m := small("M")
	m.Engine.TensorParallel, m.Engine.Replicas = 1, 2
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(4), Models: []configs.Model{m, small("N")},
		Workloads: []Workload{work("M", 4000), work("N", 1000)}, Estimator: fixed}, rec)
	s.Begin()
	if got := rec.take(); len(got) < 2 || got[0] != "start M [0]" || got[1] != "start M [1]" {
		t.Fatalf("first decisions %q", got)
	}
	handle(t, s, Event{Kind: EventFailed, At: at(5), Replica: 1, Err: "vllm serve: error: unrecognized arguments: x", Permanent: true})
	got := rec.take()
	want := []string{"stop M [1]", "abandon M: its engine cannot run as configured: vllm serve: error: unrecognized arguments: x", "start N [0]"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after a permanent failure: %q, want %q (no retry of M elsewhere; N takes the freed GPU)", got, want)
	}
	handle(t, s, Event{Kind: EventStopped, At: at(8), Replica: 2})
	for _, c := range rec.take() {
		if strings.HasPrefix(c, "start M") {
			t.Errorf("M restarted after a permanent failure: %q", c)
		}
	}
	var st ModelStatus
	for _, pm := range s.Plan().Models {
		if pm.Model == "M" {
			st = pm.Status
		}
	}
	if st != StatusFailed {
		t.Errorf("M is %s, want failed", st)
	}
}

// TestReplicaLostAfterReadyFreesItsGPUs: a replica that was serving and
// then failed for good (its engine gave up restarting) gives its GPUs
// back; with no replica left and failed starts spent, the model is
// abandoned and the freed GPU goes to the next model.
func TestReplicaLostAfterReadyFreesItsGPUs(t *testing.T) {
	a, b := small("A"), small("B")
	a.Engine.TensorParallel, a.Engine.Replicas = 1, 1
	b.Engine.TensorParallel, b.Engine.Replicas = 1, 1
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(1), Models: []configs.Model{a, b},
		Workloads: []Workload{work("A", 4000), work("B", 1000)}, Estimator: fixed, Policy: Policy{MaxStartFailures: 1}}, rec)
	s.Begin()
	if got, want := rec.take(), []string{"start A [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventFailed, At: at(900), Replica: 1, Err: "gave up after 5 restarts"})
	want := []string{"abandon A: gave up after 1 failed starts; last: gave up after 5 restarts", "start B [0]"}
	if got := rec.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after A's last replica failed: %q, want %q", got, want)
	}
}

func TestHandleRejectsEventsThatDoNotFit(t *testing.T) {
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(1), Models: []configs.Model{small("A")}, Workloads: []Workload{work("A", 10)}, Estimator: fixed}, rec)
	s.Begin()
	for _, ev := range []Event{
		{Kind: EventReady, Replica: 7},
		{Kind: EventFinished, Model: "Z"},
		{Kind: EventKind(99)},
	} {
		if err := s.Handle(ev); err == nil {
			t.Errorf("Handle(%v) accepted an impossible event", ev)
		}
	}
	handle(t, s, Event{Kind: EventReady, At: at(1), Replica: 1})
	if err := s.Handle(Event{Kind: EventReady, At: at(2), Replica: 1}); err == nil || !strings.Contains(err.Error(), "ready twice") {
		t.Errorf("second ready: %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	cases := map[string]Config{
		"no GPUs":          {Node: placement.Node{Name: "x"}},
		"duplicate model":  {Node: testNode(1), Models: []configs.Model{small("A"), small("A")}},
		"unknown workload": {Node: testNode(1), Models: []configs.Model{small("A")}, Workloads: []Workload{work("B", 1)}},
	}
	for name, cfg := range cases {
		if _, err := New(cfg, &recorder{}); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := New(Config{Node: testNode(1)}, nil); err == nil {
		t.Error("New accepted nil Effects")
	}
}

func TestExternalUnplaceableAndIdle(t *testing.T) {
	huge := small("Huge")
	huge.WeightBytes = 400e9
	ext := configs.Model{Name: "GPT", Engine: configs.Engine{Kind: configs.EngineExternal, BaseURL: "https://x"}}
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{huge, ext, small("Idle")},
		Workloads: []Workload{work("Huge", 10), work("GPT", 10)}, Estimator: fixed}, rec)
	s.Begin()
	calls := rec.take()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "abandon Huge: ") || !s.Done() {
		t.Fatalf("calls %q: nothing is placeable; the scheduler should abandon Huge and be done without starting anything", calls)
	}
	p := s.Plan()
	status := map[string]ModelStatus{}
	for _, m := range p.Models {
		status[m.Model] = m.Status
	}
	want := map[string]ModelStatus{"Huge": StatusUnplaceable, "GPT": StatusExternal, "Idle": StatusNoWork}
	if !reflect.DeepEqual(status, want) {
		t.Errorf("statuses %v, want %v", status, want)
	}
	var note string
	for _, m := range p.Models {
		if m.Model == "Huge" {
			note = m.Note
		}
	}
	// Larger than the whole node: said once, in words (placement's
	// larger-than-node rejection), not per TP size.
	if !strings.Contains(note, "Huge needs at least 7 GPUs of this kind") || !strings.Contains(note, "larger than one node") {
		t.Errorf("unplaceable note %q does not explain the memory", note)
	}
}

func TestBoundsAndSimulationHandWorked(t *testing.T) {
	// Two 8B models on 2 NVLink GPUs at 1,000 tokens/s per GPU; start-up
	// 100 s, stop 10 s. A has 3,600 GPU-seconds of work, B 1,800.
	//   TP1×2 gives 2.0 A800-equivalents; TP2×1 gives 2 × 0.75 = 1.5.
	//   lower bound = max((3600 + 1800) / 2, 3600 / 2) = 2700 s
	//   naive       = (100 + 3600/1.5 + 10) + (100 + 1800/1.5 + 10) = 3820 s
	//   sequential  = (100 + 1800 + 10) + (100 + 900 + 10) = 2920 s
	// First waves: A cannot finish within 1350 s even on both GPUs, so it
	// gets the whole node; it runs 0-1910 s. Each stopped replica of A hands
	// its GPU to B at once: B starts on GPU 0, then scales out to GPU 1,
	// both at 1910 s, and ends at 2920 s.
	cfg := Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B")},
		Workloads: []Workload{work("A", 3600), work("B", 1800)}, Estimator: fixed}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := []Seconds{p.LowerBound, p.Naive, p.Sequential, p.Makespan}
	if want := []Seconds{2700, 3820, 2920, 2920}; !reflect.DeepEqual(got, want) {
		t.Fatalf("lower bound, naive, sequential, makespan = %v, want %v", got, want)
	}
	if p.Ratio != 1.081 || p.Speedup != 1.308 {
		t.Errorf("ratio %v speedup %v, want 1.081 and 1.308", p.Ratio, p.Speedup)
	}
	type wave struct {
		model string
		kind  WaveKind
		gpus  [][]int
		start Seconds
	}
	var waves []wave
	for _, w := range p.Waves {
		waves = append(waves, wave{w.Model, w.Kind, w.GPUs, w.Start})
	}
	want := []wave{{"A", WaveStart, [][]int{{0}, {1}}, 0}, {"B", WaveStart, [][]int{{0}}, 1910}, {"B", WaveScaleOut, [][]int{{1}}, 1910}}
	if !reflect.DeepEqual(waves, want) {
		t.Errorf("waves %+v, want %+v", waves, want)
	}
}

func TestScaleOutFillsTheTail(t *testing.T) {
	// A: 3,600 GPU-seconds; B: 600. With first waves of one GPU each, B ends
	// at 710 s; A then gets GPU 1 too: at 710 s it has 2,990 s left alone,
	// with a replica ready at 810 s it finishes at 810 + 2890/2 = 2255 s.
	cfg := Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B")},
		Workloads: []Workload{work("A", 3600), work("B", 600)}, Estimator: fixed, Policy: Policy{TargetShare: 10}}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := []WaveKind{}
	for _, w := range p.Waves {
		kinds = append(kinds, w.Kind)
	}
	if !reflect.DeepEqual(kinds, []WaveKind{WaveStart, WaveStart, WaveScaleOut}) || p.Waves[2].Start != 710 {
		t.Fatalf("waves %+v, want A and B, then A scaled out at 710 s", p.Waves)
	}
	if p.Makespan != 2265 {
		t.Errorf("makespan %v s, want 2265", float64(p.Makespan))
	}
	cfg.Policy.NoScaleOut = true
	cfg.Policy.mode = modeGreedy // one model at a time (2,320 s) would be chosen otherwise (guard.go)
	p, err = Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Makespan != 3710 {
		t.Errorf("without scale-out: makespan %v s, want 3710", float64(p.Makespan))
	}
}

// registryCampaign is the registry's image models at the paper's L3 + L6
// scale (testdata/paper_mixes.json); the text-only models answer neither
// level and are left out.
func registryCampaign(t testing.TB) ([]configs.Model, []Workload) {
	t.Helper()
	reg, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	var models []configs.Model
	for _, name := range reg.Names() {
		if m, _ := reg.Get(name); !m.TextOnly {
			models = append(models, m)
		}
	}
	var wls []Workload
	for _, m := range models {
		for _, mix := range paperMixes(t) {
			wls = append(wls, MixWorkload(m, mix))
		}
	}
	return models, wls
}

func TestSimulationIsDeterministic(t *testing.T) {
	models, wls := registryCampaign(t)
	fails := 0
	failFirstTwo := func(r Assignment) error {
		if r.Model == "Lingshu-32B" && fails < 2 {
			fails++
			return errors.New("CUDA out of memory")
		}
		return nil
	}
	run := func() (string, string) {
		fails = 0
		var trace strings.Builder
		p, err := Simulate(context.Background(), Config{Node: placement.A800PCIe8(), Models: models, Workloads: wls},
			SimOptions{FailStart: failFirstTwo, Trace: &trace})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), trace.String()
	}
	j1, t1 := run()
	j2, t2 := run()
	if j1 != j2 || t1 != t2 {
		t.Fatal("two simulations of the same campaign differ")
	}
	var p Plan
	if err := json.Unmarshal([]byte(j1), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Failures) != 2 || p.Failures[0].Err != "CUDA out of memory" {
		t.Errorf("failures %+v, want the two injected", p.Failures)
	}
	for _, m := range p.Models {
		if m.Model == "Lingshu-32B" && m.Status != StatusDone {
			t.Errorf("Lingshu-32B %s after two failed starts; want it re-planned and done", m.Status)
		}
	}
	if !regexp.MustCompile(`failed   [^ ]+/r[0-9]+: CUDA out of memory`).MatchString(t1) || !strings.Contains(t1, "finished Lingshu-32B") {
		t.Errorf("trace lacks the failure or the finish:\n%s", t1[:min(len(t1), 2000)])
	}
}

func TestPaperCampaignMeetsTheGoal(t *testing.T) {
	models, wls := registryCampaign(t)
	for _, node := range []placement.Node{placement.A800SXM8(), placement.A800PCIe8(), placement.H100SXM4()} {
		plans := map[string]*Plan{}
		for _, v := range paperVariants {
			p, err := Simulate(context.Background(), Config{Node: node, Models: models, Workloads: wls, Estimator: v.est, Policy: v.pol}, SimOptions{})
			if err != nil {
				t.Fatal(err)
			}
			plans[v.name] = p
			if p.Ratio > 1.10 || p.Ratio < 1 {
				t.Errorf("%s, %s: makespan / lower bound = %.3f, want within [1, 1.10]", node.Name, v.name, p.Ratio)
			}
			if p.Speedup <= 1 || p.SpeedupSequential < 1 {
				t.Errorf("%s, %s: slower than a baseline: naive %.2f×, sequential %.2f×", node.Name, v.name, p.Speedup, p.SpeedupSequential)
			}
			for _, m := range p.Models {
				if m.Status != StatusDone && m.Status != StatusExternal {
					t.Errorf("%s, %s: %s ended %s: %s", node.Name, v.name, m.Model, m.Status, m.Note)
				}
			}
		}
		// ≥ 2× faster than one model at a time holds on the PCIe node only;
		// docs/BENCHMARKS.md says why it does not on the NVLink nodes.
		if p := plans["api-auto"]; node.Name == placement.A800PCIe8().Name && p.Speedup < 2 {
			t.Errorf("%s: %.2f× faster than one model at a time, want ≥ 2×", node.Name, p.Speedup)
		}
		// The ceiling only ever slows engines, and more API servers only
		// ever help.
		auto, one, free := plans["api-auto"], plans["api-1"], plans["no-ceiling"]
		if !(free.Naive <= auto.Naive && auto.Naive <= one.Naive && free.LowerBound <= auto.LowerBound && auto.LowerBound <= one.LowerBound) {
			t.Errorf("%s: naive %v ≤ %v ≤ %v and bound %v ≤ %v ≤ %v should hold (no ceiling, auto, one API server)",
				node.Name, free.Naive, auto.Naive, one.Naive, free.LowerBound, auto.LowerBound, one.LowerBound)
		}
	}
}

func TestRunStopsWithTheContext(t *testing.T) {
	s := mustNew(t, Config{Node: testNode(1), Models: []configs.Model{small("A")}, Workloads: []Workload{work("A", 10)}, Estimator: fixed}, &recorder{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := Run(ctx, s, ChanSource(make(chan Event)))
	if !errors.Is(err, context.Canceled) || p == nil || len(p.Waves) != 1 {
		t.Fatalf("Run = %v, %v; want the partial plan and context.Canceled", p, err)
	}
	ch := make(chan Event, 3)
	ch <- Event{Kind: EventReady, At: at(100), Replica: 1}
	ch <- Event{Kind: EventFinished, At: at(110), Model: "A"}
	ch <- Event{Kind: EventStopped, At: at(120), Replica: 1}
	s = mustNew(t, Config{Node: testNode(1), Models: []configs.Model{small("A")}, Workloads: []Workload{work("A", 10)}, Estimator: fixed}, &recorder{})
	p, err = Run(context.Background(), s, ChanSource(ch))
	if err != nil || p.Makespan != 120 {
		t.Fatalf("Run over a channel = makespan %v, %v; want 120 s", p.Makespan, err)
	}
}

func TestWriteText(t *testing.T) {
	cfg := Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B")},
		Workloads: []Workload{work("A", 3600), work("B", 1800)}, Estimator: fixed}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"node test-2, 2 GPUs",
		"1     A      start      TP1×2      1    0 1   0s      1m40s   31m50s  2000",
		"3     B      scale-out  TP1×1      1    1     31m50s  33m30s  48m40s  1000",
		"makespan     48m40s",
		"lower bound  45m00s  (makespan / lower bound = 1.081)",
		"naive        1h03m  (one model at a time, one engine each; 1.31× the makespan)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

func TestStopWhileStarting(t *testing.T) {
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(1), Models: []configs.Model{small("A"), small("B")},
		Workloads: []Workload{work("A", 100), work("B", 50)}, Estimator: fixed}, rec)
	s.Begin()
	rec.take()
	// The runner reports A finished (say, every request was answered from a
	// resumed journal) while its engine is still starting.
	handle(t, s, Event{Kind: EventFinished, At: at(5), Model: "A"})
	if got, want := rec.take(), []string{"stop A [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(6), Replica: 1}) // the engine got ready before the stop landed
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("%q: nothing may start on GPU 0 before the engine there is stopped", got)
	}
	handle(t, s, Event{Kind: EventStopped, At: at(20), Replica: 1})
	if got, want := rec.take(), []string{"start B [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	if g := s.gpus[0]; g.starting != 1 || len(g.hosts) != 1 || g.claimed != placement.Budget(g.base, 0.9) {
		t.Errorf("GPU 0 state %+v: want exactly B's engine starting there", g)
	}
}
