package schedule

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// judgedCampaign is three generators of 1,000, 2,000 and 3,000 s of work
// and a judge of 600 s of work over their answers, on n GPUs, under the
// greedy policy (on 4 GPUs one model at a time is about a minute sooner, and the
// guard, guard.go, would choose it).
func judgedCampaign(n int) Config {
	cfg := Config{Node: testNode(n), Estimator: fixed, After: map[string][]string{"judge": {"g1", "g2", "g3"}}, Policy: Policy{mode: modeGreedy}}
	for i, name := range []string{"g1", "g2", "g3"} {
		cfg.Models = append(cfg.Models, small(name))
		cfg.Workloads = append(cfg.Workloads, work(name, int64(1000*(i+1))))
	}
	cfg.Models = append(cfg.Models, small("judge"))
	cfg.Workloads = append(cfg.Workloads, work("judge", 600))
	return cfg
}

func planOf(t *testing.T, p *Plan) map[string]ModelPlan {
	t.Helper()
	out := map[string]ModelPlan{}
	for _, m := range p.Models {
		if m.Status != StatusDone {
			t.Fatalf("%s ended %s: %s", m.Model, m.Status, m.Note)
		}
		out[m.Model] = m
	}
	return out
}

// TestJudgeStartsOnceTheFirstAnswersExist: with GPUs to spare, the
// judge waits for the first generator to end, then runs beside the others,
// idles once it has judged what exists, and ends only after the last
// generator, judging its share after it.
func TestJudgeStartsOnceTheFirstAnswersExist(t *testing.T) {
	p, err := Simulate(context.Background(), judgedCampaign(4), SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := planOf(t, p)
	// g3 (the most GPU-time) takes the four GPUs: ready at 100 s, its
	// 3,000 s of work over 4 replicas end at 850 s, its engines stop at
	// 860 s. Then g1, g2 (two replicas) and the judge start: ready at
	// 960 s, g1 and g2 end at 1,960 s. The judge has g3's third of its
	// 600 s (200 s) by 1,160 s, then idles until 1,960 s; with 400 s
	// left on one replica and three more ready at 2,070 s (110 s done),
	// the last 290 s take 72.5 s: it ends at 2,142.5 s.
	if m["g3"].WorkEnd != 850 || m["judge"].Start != 860 || m["g1"].WorkEnd != 1960 || m["g2"].WorkEnd != 1960 {
		t.Errorf("g3 ended %v, judge started %v, g1 and g2 ended %v, %v; want 850, 860, 1960, 1960", m["g3"].WorkEnd, m["judge"].Start, m["g1"].WorkEnd, m["g2"].WorkEnd)
	}
	if m["judge"].WorkEnd != 2142.5 {
		t.Errorf("judge's work ended at %v, want 2142.5", m["judge"].WorkEnd)
	}
	if !strings.Contains(m["judge"].Note, "started once the first had ended, beside the 2 still to end") {
		t.Errorf("note %q", m["judge"].Note)
	}
}

// TestJudgeWaitsForGPUsWhenShort: on one GPU the generators take it in
// turn and the judge runs after them all.
func TestJudgeWaitsForGPUsWhenShort(t *testing.T) {
	p, err := Simulate(context.Background(), judgedCampaign(1), SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := planOf(t, p)
	last := max(m["g1"].End, m["g2"].End, m["g3"].End)
	if m["judge"].Start < last || m["judge"].WorkEnd != m["judge"].Start+100+600 {
		t.Errorf("judge %+v, want it started after the last generator stopped (%v) and done 700 s later", m["judge"], last)
	}
	if !strings.Contains(m["judge"].Note, "started after all had ended (GPUs were short until then)") {
		t.Errorf("note %q", m["judge"].Note)
	}
}

// TestJudgeGoesOnWithoutAGeneratorThatFailed: a generator that cannot be
// placed ends without answers; the judge still runs on the others'.
func TestJudgeGoesOnWithoutAGeneratorThatFailed(t *testing.T) {
	cfg := judgedCampaign(2)
	huge := small("g2")
	huge.ParamsB, huge.WeightBytes = 900, 1800e9
	cfg.Models[1] = huge
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Models {
		if m.Model == "judge" && (m.Status != StatusDone || m.WorkEnd <= 0) {
			t.Errorf("judge %+v, want it done without g2's answers", m)
		}
	}
	if _, err := New(Config{Node: testNode(1), Models: []configs.Model{small("a")}, After: map[string][]string{"a": {"b"}}}, &recorder{}); err == nil ||
		!strings.Contains(err.Error(), `depends on "b", which is not another model`) {
		t.Errorf("a dependency on an unknown model: %v", err)
	}
}

// TestJudgeWaitsForTheFirstAnswers: with GPUs free, a judge is not started
// before any generator has ended, and is once one has (the greedy policy:
// without scale-out, one model at a time would be sooner).
func TestJudgeWaitsForTheFirstAnswers(t *testing.T) {
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{small("g"), small("judge")},
		Workloads: []Workload{work("g", 1000), work("judge", 5000)}, Estimator: fixed, Policy: Policy{NoScaleOut: true, mode: modeGreedy},
		After: map[string][]string{"judge": {"g"}}}, rec)
	s.Begin()
	if got, want := rec.take(), []string{"start g [0]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first decisions %q, want %q (the judge has nothing to judge yet)", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("while g runs: %q, want nothing", got)
	}
	handle(t, s, Event{Kind: EventFinished, At: at(1100), Model: "g"})
	if got, want := rec.take(), []string{"stop g [0]", "start judge [1]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after g finished: %q, want %q", got, want)
	}
}

// TestJudgeOfAnExternalGenerator: an external generator's answers come
// beside the schedule; the judge does not wait for it to end there.
func TestJudgeOfAnExternalGenerator(t *testing.T) {
	cfg := judgedCampaign(2)
	api := small("g2")
	api.Engine.Kind = configs.EngineExternal
	cfg.Models[1] = api
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatalf("a judge of an external generator: %v", err)
	}
	for _, m := range p.Models {
		if m.Model == "judge" && m.Status != StatusDone {
			t.Errorf("judge %+v", m)
		}
	}
}

// TestIdleJudgeYieldsToAWaitingGenerator: a judge that took the GPU freed
// by the first generator, and has judged what exists, must not keep a
// generator that needs both GPUs waiting for ever: it stops, the generator
// runs, and the judge comes back for its answers.
func TestIdleJudgeYieldsToAWaitingGenerator(t *testing.T) {
	big := small("g2")
	big.ParamsB, big.WeightBytes = 40, 80e9 // TP2 at least: 2 GPUs
	cfg := Config{Node: testNode(2), Estimator: fixed, Policy: Policy{NoScaleOut: true},
		Models:    []configs.Model{small("g1"), big, small("judge")},
		Workloads: []Workload{work("g1", 4000), work("g2", 100), work("judge", 1000)},
		After:     map[string][]string{"judge": {"g1", "g2"}}}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatalf("the judge and the generator wait for each other: %v", err)
	}
	m := planOf(t, p)
	if !(m["g1"].WorkEnd < m["judge"].Start && m["g2"].Start >= m["g1"].WorkEnd && m["judge"].WorkEnd > m["g2"].WorkEnd) {
		t.Errorf("g1 %+v, g2 %+v, judge %+v: want g1, then g2 and the judge, the judge ending last", m["g1"], m["g2"], m["judge"])
	}
}
