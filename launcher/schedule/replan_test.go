package schedule

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// observer is a recording fake Effects that also hears re-plans.
type observer struct {
	recorder
	replans []Replan
}

func (o *observer) Replanned(r Replan) { o.replans = append(o.replans, r) }

// speedAt is a speed sample of replica id at sec: over the last seconds it
// did f × 1,000 token equivalents a second (a small model's registry
// speed on one GPU of its own).
func speedAt(sec int, id ReplicaID, seconds, f float64) Event {
	return Event{Kind: EventSpeed, At: at(sec), Replica: id, Speed: SpeedSample{Seconds: seconds, Work: f * 1000 * seconds}}
}

// oneRunning starts model A (3,000 s of work) alone on one GPU, ready at
// 100 s, with B waiting.
func oneRunning(t *testing.T, pol Policy) (*Scheduler, *observer) {
	t.Helper()
	o := &observer{}
	s := mustNew(t, Config{Node: testNode(1), Models: []configs.Model{small("A"), small("B")},
		Workloads: []Workload{work("A", 3000), work("B", 1000)}, Estimator: fixed, Policy: pol}, o)
	s.Begin()
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	o.take()
	return s, o
}

func TestReplanOnlyWhenTheSpeedMovedBeyondItsGate(t *testing.T) {
	cases := []struct {
		name    string
		seconds float64
		factor  float64
		replan  bool
	}{
		{"5 % slower over 5 minutes: within the 10 % dead band", 300, 0.95, false},
		{"20 % slower over 10 seconds: within 3 SD of a 10-second sample", 10, 0.8, false},
		{"20 % slower over 10 minutes: beyond both", 600, 0.8, true},
		{"twice as slow over 5 minutes", 300, 0.5, true},
		{"twice as fast over 5 minutes", 300, 2, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, o := oneRunning(t, Policy{})
			handle(t, s, speedAt(100+int(c.seconds), 1, c.seconds, c.factor))
			if got := len(s.Replans()); got != map[bool]int{false: 0, true: 1}[c.replan] {
				t.Fatalf("%d re-plans, want re-plan %v: %+v", got, c.replan, s.Replans())
			}
			a := s.byName["A"]
			if !c.replan {
				if a.speed != 1000 || s.replicas[0].Rate != 1000 || len(o.replans) != 0 {
					t.Errorf("A's speed %v, replica rate %v after no re-plan; want the registry's 1000", a.speed, s.replicas[0].Rate)
				}
				return
			}
			// The estimate lies between the registry's and the measurement,
			// much nearer the measurement; the live replica runs at it.
			f := a.speed / 1000
			if lo, hi := min(c.factor, 1), max(c.factor, 1); !(f > lo && f < hi) || math.Abs(math.Log(f/c.factor)) > 0.1 {
				t.Errorf("A's factor %.3f after measuring %.2f×: want between it and 1, within 10 %% of it", f, c.factor)
			}
			if s.replicas[0].Rate != a.speed || s.fluid.rate("A") != a.speed {
				t.Errorf("replica rate %v, fluid rate %v; want the new speed %v", s.replicas[0].Rate, s.fluid.rate("A"), a.speed)
			}
			if len(o.replans) != 1 || !reflect.DeepEqual(o.replans[0], s.Replans()[0]) {
				t.Errorf("the observer heard %+v, want the one re-plan %+v", o.replans, s.Replans())
			}
		})
	}
}

func TestReplanRecordsItsReason(t *testing.T) {
	s, _ := oneRunning(t, Policy{})
	handle(t, s, speedAt(400, 1, 300, 0.5))
	handle(t, s, Event{Kind: EventFinished, At: at(5000), Model: "A"})
	handle(t, s, Event{Kind: EventStopped, At: at(5010), Replica: 1})
	p := s.Plan()
	if len(p.Replans) != 1 {
		t.Fatalf("re-plans %+v, want one", p.Replans)
	}
	r := p.Replans[0]
	if r.At != 400 || len(r.Changes) != 1 || r.Changes[0].Model != "A" || r.Changes[0].From != 1 || r.Changes[0].Samples != 1 {
		t.Errorf("re-plan %+v: want at 400 s, one change of A from 1× on one sample", r)
	}
	for _, want := range []string{"A measured at 0.5", "× its registry speed (95 % 0.", "1 sample); the plan used 1.00×"} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason %q lacks %q", r.Reason, want)
		}
	}
	if !reflect.DeepEqual(r.Pending, []PendingModel{{Model: "B", GPUs: 1, WasGPUs: 1, WasPosition: 1}}) {
		t.Errorf("pending after the re-plan %+v, want B alone on 1 GPU as before", r.Pending)
	}
	if p.Speeds == nil || len(p.Speeds.Models) != 1 || p.Speeds.Models[0].Model != "A" || p.Speeds.Models[0].Samples != 1 {
		t.Errorf("plan speeds %+v, want A's one sample", p.Speeds)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"replans":[{"at_s":400,"reason":"A measured at`) {
		t.Errorf("plan JSON lacks the re-plan: %s", b)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"re-plans:\n    6m40s  A measured at 0.5", "measured speeds (the node's factor, taken for a model with no measurement of its own: "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(text.String(), "\n") {
		rows[strings.Join(strings.Fields(line), " ")] = true
	}
	for _, want := range []string{"A 1 5m00s 1000 511 0.51× 0.43–0.61 -", "r0, TP1 on GPU 0 1 5m00s 500 served - -"} {
		if !rows[want] {
			t.Errorf("text lacks the row %q:\n%s", want, text.String())
		}
	}
}

func TestSpeedsRecordedButIgnoredWhenReplanningIsOff(t *testing.T) {
	s, o := oneRunning(t, Policy{Replan: ReplanPolicy{Off: true}})
	ev := speedAt(400, 1, 300, 0.5)
	ev.Done = 0.5
	handle(t, s, ev)
	if len(s.Replans()) != 0 || s.byName["A"].speed != 1000 || s.fluid.remaining["A"] != 3000*1000-300*1000 || len(o.take()) != 0 {
		t.Errorf("re-plans %v, speed %v, remaining %v: want none, the registry's, and the fluid's own estimate",
			s.Replans(), s.byName["A"].speed, s.fluid.remaining["A"])
	}
	if sp := s.Speeds(); sp == nil || sp.Models[0].Factor > 0.6 {
		t.Errorf("speeds %+v: want A measured near 0.5× even so", sp)
	}
}

func TestSpeedSampleTakesProgress(t *testing.T) {
	s, _ := oneRunning(t, Policy{})
	ev := speedAt(400, 1, 300, 1)
	ev.Done = 0.25
	handle(t, s, ev)
	if got := s.fluid.remaining["A"]; got != 0.75*3000*1000 {
		t.Errorf("remaining %v after a sample at 25 %% done, want %v", got, 0.75*3000*1000)
	}
}

// TestReplanReordersAndResizesWaitingModels: two GPUs run X (images
// only, pinned to one GPU) and R (pinned to one GPU); Z (images) and Y
// (GPU work) wait. R turns out twice as slow as the registry says, and
// the prior lets that speak for the whole node: Y's GPU work now outweighs
// Z's images, so Y goes first, and needs two GPUs to end within half the
// campaign's lower bound at the measured speeds (1 GPU: 7,157 s; the bound
// max((8,000 + 7,950 + 3,700 + 7,157) / 2, 8,000) = 13,400 s).
func TestReplanReordersAndResizesWaitingModels(t *testing.T) {
	pin := func(m configs.Model) configs.Model {
		m.Engine.TensorParallel, m.Engine.Replicas = 1, 1
		return m
	}
	images := func(model string, n int64) Workload {
		return Workload{Model: model, Requests: 1, PromptTokens: 100_000, Images: n}
	}
	o := &observer{}
	s := mustNew(t, Config{
		Node:      testNode(2),
		Models:    []configs.Model{pin(imageModel("X")), pin(small("R")), imageModel("Z"), small("Y")},
		Workloads: []Workload{images("X", 8000), work("R", 4000), images("Z", 3700), work("Y", 3600)},
		Estimator: fixed,
		Policy:    Policy{Replan: ReplanPolicy{Prior: SpeedPrior{NodeSD: 1, ModelSD: 0.05}}},
	}, o)
	s.Begin()
	if got, want := o.take(), []string{"start X [0]", "start R [1]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first decisions %q, want %q", got, want)
	}
	if got := pendingOrder(s); !reflect.DeepEqual(got, []string{"Z:1", "Y:1"}) {
		t.Fatalf("waiting %v, want Z then Y, one GPU each", got)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
	handle(t, s, speedAt(400, 2, 300, 0.5))
	if got := pendingOrder(s); !reflect.DeepEqual(got, []string{"Y:2", "Z:1"}) {
		t.Fatalf("waiting after R measured at 0.5×: %v, want Y (two GPUs) before Z", got)
	}
	r := s.Replans()[0]
	if want := []PendingModel{{Model: "Y", GPUs: 2, WasGPUs: 1, WasPosition: 2}, {Model: "Z", GPUs: 1, WasGPUs: 1, WasPosition: 1}}; !reflect.DeepEqual(r.Pending, want) {
		t.Errorf("re-plan pending %+v, want %+v", r.Pending, want)
	}
	if len(r.Changes) != 2 || r.Changes[0].Model != "" || r.Changes[1].Model != "R" || !strings.Contains(r.Reason, "models not measured yet now taken at 0.50×") {
		t.Errorf("changes %+v, reason %q: want the node's factor and R's", r.Changes, r.Reason)
	}
	handle(t, s, Event{Kind: EventFinished, At: at(8000), Model: "R"})
	handle(t, s, Event{Kind: EventStopped, At: at(8010), Replica: 2})
	if got, want := o.take(), []string{"stop R [1]", "start Y [1]"}; !reflect.DeepEqual(got, want) {
		t.Errorf("when R's GPU frees: %q, want %q", got, want)
	}
}

// pendingOrder lists the waiting models in start order with their first
// waves' GPUs.
func pendingOrder(s *Scheduler) []string {
	var out []string
	for _, ms := range s.models {
		if ms.status == StatusPending {
			out = append(out, ms.m.Name+":"+string(rune('0'+ms.target)))
		}
	}
	return out
}

// TestScaleOutUsesMeasuredSpeed: A (1,000 s) and B (890 s) run on one
// GPU each. When B's GPU frees at 1,000 s the registry says A has 100 s
// left, too little to win back a replica's 100 s start-up; measured at a
// quarter of its speed, A has about 2,900 s left and gets the GPU.
func TestScaleOutUsesMeasuredSpeed(t *testing.T) {
	for _, off := range []bool{true, false} {
		o := &observer{}
		s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B")},
			Workloads: []Workload{work("A", 1000), work("B", 890)}, Estimator: fixed,
			Policy: Policy{TargetShare: 10, Replan: ReplanPolicy{Off: off}}}, o)
		s.Begin()
		handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
		handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
		ev := speedAt(400, 1, 300, 0.25)
		ev.Done = 0.075
		handle(t, s, ev)
		handle(t, s, Event{Kind: EventFinished, At: at(990), Model: "B"})
		handle(t, s, Event{Kind: EventStopped, At: at(1000), Replica: 2})
		got := o.take()
		if off {
			if want := []string{"start A [0]", "start B [1]", "stop B [1]"}; !reflect.DeepEqual(got, want) {
				t.Errorf("registry speeds: %q, want %q (no scale-out for 100 s of work)", got, want)
			}
			continue
		}
		if want := []string{"start A [0]", "start B [1]", "stop B [1]", "start A [1]"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("measured speeds: %q, want %q", got, want)
		}
		w := s.Plan().Waves[2]
		if w.Kind != WaveScaleOut || math.Abs(w.TokensPerS-s.byName["A"].speed) > 1e-9 || w.TokensPerS > 300 {
			t.Errorf("scale-out wave %+v: want kind scale-out at A's measured speed %.0f tok/s", w, s.byName["A"].speed)
		}
	}
}

func TestNoReplanStorm(t *testing.T) {
	// A steady 0.7× measured every minute with 20 % noise for two hours:
	// one re-plan, perhaps a second as the estimate settles, no more.
	s, _ := oneRunning(t, Policy{})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 120 {
		ev := speedAt(160+60*i, 1, 60, 0.7*math.Exp(0.2*rng.NormFloat64()))
		handle(t, s, ev)
	}
	if n := len(s.Replans()); n < 1 || n > 2 {
		t.Errorf("%d re-plans for a steady 0.7×, want 1 or 2: %+v", n, s.Replans())
	}
	if f := s.byName["A"].speed / 1000; math.Abs(f/0.7-1) > 0.1 {
		t.Errorf("A planned at %.3f×, want within 10 %% of 0.7×", f)
	}

	// Samples that swing between half and twice the speed every 30 s: the
	// plan changes at most once per Interval.
	s, _ = oneRunning(t, Policy{})
	for i := range 240 {
		f := 0.5
		if i%2 == 1 {
			f = 2
		}
		handle(t, s, speedAt(130+30*i, 1, 30, f))
	}
	rs := s.Replans()
	if len(rs) > 24 {
		t.Errorf("%d re-plans in two hours, want at most one per 5 minutes", len(rs))
	}
	for i := 1; i < len(rs); i++ {
		if gap := time.Duration(float64(rs[i].At-rs[i-1].At) * float64(time.Second)); gap < 5*time.Minute {
			t.Errorf("re-plans at %v and %v: %v apart, want ≥ 5 minutes", rs[i-1].At, rs[i].At, gap)
		}
	}
}

func TestReplanWaitsForItsInterval(t *testing.T) {
	o := &observer{}
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B")},
		Workloads: []Workload{work("A", 3000), work("B", 3000)}, Estimator: fixed, Policy: Policy{TargetShare: 10}}, o)
	s.Begin()
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
	handle(t, s, speedAt(400, 1, 300, 0.5))
	handle(t, s, speedAt(460, 2, 360, 2))
	if n := len(s.Replans()); n != 1 || s.byName["B"].speed != 1000 {
		t.Fatalf("%d re-plans, B at %v: want only A's, B's deferred within 5 minutes", n, s.byName["B"].speed)
	}
	handle(t, s, speedAt(700, 1, 300, 0.5)) // any event after the interval
	rs := s.Replans()
	if len(rs) != 2 || rs[1].At != 700 || rs[1].Changes[0].Model != "B" || s.byName["B"].speed < 1500 {
		t.Errorf("re-plans %+v: want B's at 700 s", rs)
	}
}

func TestSpeedSampleValidation(t *testing.T) {
	o := &observer{}
	s := mustNew(t, Config{Node: testNode(1), Models: []configs.Model{small("A")}, Workloads: []Workload{work("A", 1000)}, Estimator: fixed}, o)
	s.Begin()
	if err := s.Handle(speedAt(50, 1, 50, 1)); err == nil || !strings.Contains(err.Error(), "replica 1 of A, which has not served") {
		t.Errorf("a sample from a starting engine: %v", err)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	for _, x := range []SpeedSample{{Seconds: 0, Work: 1}, {Seconds: math.NaN()}, {Seconds: 10, Work: -5}} {
		err := s.Handle(Event{Kind: EventSpeed, At: at(200), Replica: 1, Speed: x})
		if err == nil || !strings.Contains(err.Error(), "want a positive duration") {
			t.Errorf("sample %+v: %v", x, err)
		}
	}
	if err := s.Handle(speedAt(200, 9, 100, 1)); err == nil {
		t.Error("a sample from an unknown replica was accepted")
	}
	nan := speedAt(200, 1, 100, 1)
	nan.Done = math.NaN()
	if err := s.Handle(nan); err == nil || !strings.Contains(err.Error(), "done NaN is not a share of its work") {
		t.Errorf("a sample with done NaN: %v", err)
	}
	if err := s.Handle(Event{Kind: EventProgress, At: at(200), Model: "A", Done: math.Inf(1)}); err == nil ||
		!strings.Contains(err.Error(), "progress event for A: done +Inf is not a share of its work") {
		t.Errorf("progress +Inf: %v", err)
	}
	if s.Speeds() != nil || s.fluid.remaining["A"] != 1000*1000 {
		t.Errorf("refused events changed the state: speeds %+v, remaining %v", s.Speeds(), s.fluid.remaining["A"])
	}
	// A last sample racing with the engine's stop still counts.
	handle(t, s, Event{Kind: EventFinished, At: at(1100), Model: "A"})
	handle(t, s, Event{Kind: EventStopped, At: at(1110), Replica: 1})
	handle(t, s, speedAt(1115, 1, 300, 1))
	if sp := s.Speeds(); sp == nil || sp.Models[0].Samples != 1 {
		t.Errorf("a sample after the stop: speeds %+v, want it recorded", sp)
	}
}

func FuzzSpeedSample(f *testing.F) {
	f.Add(300.0, 150000.0, 10.0, 0.5, 0.3)
	f.Add(0.0, 0.0, 0.0, 0.0, 0.0)
	f.Add(math.Inf(1), math.NaN(), -1.0, 1e308, 2.0)
	f.Fuzz(func(t *testing.T, seconds, amount, images, ttft, done float64) {
		s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B")},
			Workloads: []Workload{work("A", 3000), work("B", 1000)}, Estimator: fixed, Policy: Policy{TargetShare: 10}}, &recorder{})
		s.Begin()
		handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
		x := SpeedSample{Seconds: seconds, Work: amount, Images: images, TTFT: ttft}
		err := s.Handle(Event{Kind: EventSpeed, At: at(400), Replica: 1, Speed: x, Done: done})
		if (err == nil) != x.valid() {
			t.Fatalf("sample %+v: error %v, valid %v", x, err, x.valid())
		}
		if _, err := json.Marshal(s.Plan()); err != nil {
			t.Fatalf("plan after sample %+v does not encode: %v", x, err)
		}
		if e := s.byName["A"].speed; math.IsNaN(e) || e <= 0 || math.IsInf(e, 0) {
			t.Fatalf("sample %+v left A's speed at %v", x, e)
		}
	})
}

// TestLateModelGetsFreedGPUsFirst: A and B run on one GPU each, C waits.
// A is measured at a quarter of its registry speed: about 6,800 s left
// when B's GPU frees at 1,110 s, against a remaining lower bound of about
// 3,700 s. The GPU goes to a second replica of A, not to C, which would
// otherwise leave A running alone long after everything else. Measured at
// the registry's speed, A has 990 s left against a bound of 745 s: also
// more than 1.25 ×, but the plan was right about A, and C gets the GPU.
func TestLateModelGetsFreedGPUsFirst(t *testing.T) {
	for _, c := range []struct {
		off    bool
		factor float64
		want   string
	}{{true, 0.25, "start C [1]"}, {false, 0.25, "start A [1]"}, {false, 1, "start C [1]"}} {
		o := &observer{}
		s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B"), small("C")},
			Workloads: []Workload{work("A", 2000), work("B", 1000), work("C", 500)}, Estimator: fixed,
			Policy: Policy{TargetShare: 10, Replan: ReplanPolicy{Off: c.off}}}, o)
		s.Begin()
		handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
		handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
		ev := speedAt(400, 1, 300, c.factor)
		ev.Done = 0.15 * c.factor
		handle(t, s, ev)
		handle(t, s, Event{Kind: EventFinished, At: at(1100), Model: "B"})
		o.take()
		handle(t, s, Event{Kind: EventStopped, At: at(1110), Replica: 2})
		if got := o.take(); !reflect.DeepEqual(got, []string{c.want}) {
			t.Errorf("replanning off %v, A at %v×: when B's GPU frees %q, want %q", c.off, c.factor, got, c.want)
		}
	}
}

func TestHugeSlackNeverScalesOutEarly(t *testing.T) {
	// (1 + Slack) × the bound beyond time.Duration's range must not wrap
	// around to a negative limit that every model exceeds.
	o := &observer{}
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{small("A"), small("B"), small("C")},
		Workloads: []Workload{work("A", 2000), work("B", 1000), work("C", 500)}, Estimator: fixed,
		Policy: Policy{TargetShare: 10, Replan: ReplanPolicy{Slack: math.Inf(1)}}}, o)
	s.Begin()
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
	handle(t, s, speedAt(400, 1, 300, 0.25))
	handle(t, s, Event{Kind: EventFinished, At: at(1100), Model: "B"})
	o.take()
	handle(t, s, Event{Kind: EventStopped, At: at(1110), Replica: 2})
	if got := o.take(); !reflect.DeepEqual(got, []string{"start C [1]"}) {
		t.Errorf("with an infinite slack: %q, want C started", got)
	}
}

// TestReplanLateKeepsFirstWavesAtCampaignScale: a re-plan near the end of
// a long campaign sizes a waiting model's first wave against the whole
// campaign's bound at the speeds now known (10,000 s: one GPU for
// B's 2,000 s is enough), not against the little work left, which would
// hand B both GPUs for no gain.
func TestReplanLateKeepsFirstWavesAtCampaignScale(t *testing.T) {
	pin := func(m configs.Model) configs.Model {
		m.Engine.TensorParallel, m.Engine.Replicas = 1, 1
		return m
	}
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{pin(small("A")), pin(small("C")), small("B")},
		Workloads: []Workload{work("A", 10000), work("C", 10000), work("B", 2000)}, Estimator: fixed}, &observer{})
	s.Begin()
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
	handle(t, s, speedAt(9000, 1, 300, 1.5))
	rs := s.Replans()
	if len(rs) != 1 || !reflect.DeepEqual(rs[0].Pending, []PendingModel{{Model: "B", GPUs: 1, WasGPUs: 1, WasPosition: 1}}) {
		t.Errorf("re-plans %+v: want one, B still on one GPU", rs)
	}
}

// The measured speeds name each replica as engines, logs and `npcorch
// status` do, by its number within its model (r0, r1), beside the
// campaign's replica ID: calibrate printed "replica 1" for what status
// called r0.
func TestSpeedsNameReplicasByTheirModelsNumber(t *testing.T) {
	m := small("A")
	m.Engine.TensorParallel, m.Engine.Replicas = 1, 2
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{m}, Workloads: []Workload{work("A", 6000)}, Estimator: fixed}, &observer{})
	s.Begin()
	for _, id := range []ReplicaID{1, 2} {
		handle(t, s, Event{Kind: EventReady, At: at(100), Replica: id})
	}
	handle(t, s, speedAt(400, 2, 300, 1))
	handle(t, s, speedAt(410, 1, 310, 1))
	var got []string
	for _, r := range s.Speeds().Models[0].Replicas {
		got = append(got, fmt.Sprintf("ID %d r%d", r.Replica, r.Index))
	}
	if want := []string{"ID 1 r0", "ID 2 r1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("replicas %q, want %q", got, want)
	}
}
