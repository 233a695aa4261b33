package schedule

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// TestPinnedModelIsSizedForTheCampaign: an 8B model pinned at 2 replicas
// and an unpinned one of the same work on 8 GPUs. At 1 GPU a replica
// (1,000 tokens/s each: 4 h) the pinned model would end 1.4× after the
// sequential baseline (TP4×2 then TP1×8: 2h50m); it gets TP2×2 (4 GPUs,
// 0.75 kept per doubling on NVLink for a dense model under 12 B: 3,000
// tokens/s, 2h40m) from the start, and the unpinned model the other four.
func TestPinnedModelIsSizedForTheCampaign(t *testing.T) {
	pinned, free := small("pinned"), small("free")
	pinned.Engine.Replicas = 2
	cfg := Config{Node: testNode(8), Models: []configs.Model{free, pinned}, Workloads: []Workload{work("pinned", 28800), work("free", 28800)}, Estimator: fixed}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Makespan > p.Sequential {
		t.Errorf("makespan %s, later than the sequential baseline %s", p.Makespan, p.Sequential)
	}
	if len(p.Waves) < 2 || p.Waves[0].Model != "pinned" || p.Waves[0].Start != 0 || p.Waves[0].TP*p.Waves[0].Replicas != 4 || p.Waves[0].Replicas != 2 {
		t.Fatalf("waves %+v; want pinned first, 2 replicas on 4 GPUs at 0", p.Waves)
	}
	if w := p.Waves[1]; w.Model != "free" || w.Start != 0 || w.TP*w.Replicas != 4 {
		t.Errorf("wave 2 %+v; want free on the other 4 GPUs at 0", w)
	}
	if len(p.Notes) != 0 {
		t.Errorf("notes %q; the overlapping plan is the sooner", p.Notes)
	}
}

// TestSlowerThanSequentialRunsOneAtATime: a policy that gives each model
// one GPU and never scales out ends far after the sequential baseline;
// the scheduler then runs the models one at a time at their best
// placement, and says so.
func TestSlowerThanSequentialRunsOneAtATime(t *testing.T) {
	cfg := Config{Node: testNode(8), Models: []configs.Model{small("a"), small("b")},
		Workloads: []Workload{work("a", 8000), work("b", 8000)}, Estimator: fixed,
		Policy: Policy{TargetShare: 100, NoScaleOut: true}}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Makespan > p.Sequential {
		t.Errorf("makespan %s, later than the sequential baseline %s", p.Makespan, p.Sequential)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "models run one at a time: overlapping them would end at ") {
		t.Errorf("notes %q; want the one saying the models run one at a time", p.Notes)
	}
	if len(p.Waves) != 2 || p.Waves[1].Start < p.Waves[0].End || p.Waves[0].Replicas*p.Waves[0].TP != 8 {
		t.Errorf("waves %+v; want one model at a time on all 8 GPUs", p.Waves)
	}
	var text strings.Builder
	if err := p.WriteText(&text); err != nil || !strings.Contains(text.String(), "\nnote: models run one at a time") {
		t.Errorf("text plan lacks the note (%v):\n%s", err, text.String())
	}
	// The same campaign with the default policy overlaps, with no note.
	cfg.Policy = Policy{}
	if p, err := Simulate(context.Background(), cfg, SimOptions{}); err != nil || len(p.Notes) != 0 || p.Makespan > p.Sequential {
		t.Errorf("default policy: %v, notes %q, makespan %s vs sequential %s", err, p.Notes, p.Makespan, p.Sequential)
	}
}

// TestSequentialWaitsForAnswers: one at a time, a judge starts only once
// every model it judges has ended.
func TestSequentialWaitsForAnswers(t *testing.T) {
	cfg := Config{Node: testNode(8), Models: []configs.Model{small("a"), small("b"), small("judge")},
		Workloads: []Workload{work("a", 8000), work("b", 8000), work("judge", 800)}, Estimator: fixed,
		After: map[string][]string{"judge": {"a", "b"}}, Policy: Policy{TargetShare: 100, NoScaleOut: true}}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Notes) != 1 {
		t.Fatalf("notes %q; want one at a time", p.Notes)
	}
	i := slices.IndexFunc(p.Models, func(m ModelPlan) bool { return m.Model == "judge" })
	for _, m := range p.Models {
		if m.Model != "judge" && (m.Status != StatusDone || m.End > p.Models[i].Start) {
			t.Errorf("%s %s, ended %s; the judge started %s", m.Model, m.Status, m.End, p.Models[i].Start)
		}
	}
}
