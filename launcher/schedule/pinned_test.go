package schedule

import (
	"context"
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
}
