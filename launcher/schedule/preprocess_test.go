package schedule

import (
	"context"
	"math"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

func TestMixRate(t *testing.T) {
	x := mix{{task: "a", work: 500_000, images: 1000}, {task: "b", work: 500_000}}
	// Task a needs 1,000 s of preprocessing at 1 image/s but 500 s of GPU;
	// task b 500 s of GPU: 1,500 s for 1 M token equivalents.
	if got, want := x.rate(1000, 1), 1e6/1500; math.Abs(got-want) > 1e-9 {
		t.Errorf("rate = %v, want %v", got, want)
	}
	if got := x.rate(1000, 0); got != 1000 {
		t.Errorf("no ceiling: rate %v, want the GPUs' 1000", got)
	}
	if got := x.rate(1000, 100); got != 1000 {
		t.Errorf("ample preprocessing: rate %v, want 1000", got)
	}
	if got := x.rate(0, 1); got != 0 {
		t.Errorf("no GPU: rate %v, want 0", got)
	}
	if got := (mix{}).rate(1000, 1); got != 1000 {
		t.Errorf("empty mix: rate %v, want 1000", got)
	}
}

func TestNewMixGroupsByTask(t *testing.T) {
	var e Estimator
	x := newMix(e, []Workload{
		{Model: "M", Task: "t_groups", PromptTokens: 100, Images: 2},
		{Model: "M", Task: "card", PromptTokens: 10, Images: 1, ImagePixels: 3 * 512 * 1644},
		{Model: "M", Task: "t_groups", PromptTokens: 50, Images: 1},
		{Model: "M", PromptTokens: 7},
	})
	want := mix{{task: "card", work: 10, images: 3}, {task: "t_groups", work: 150, images: 3}, {work: 7}}
	if len(x) != len(want) {
		t.Fatalf("mix %+v, want %+v", x, want)
	}
	for i := range want {
		if x[i] != want[i] {
			t.Errorf("part %d = %+v, want %+v", i, x[i], want[i])
		}
	}
}

// imageModel is an 8B model at 1,000 tokens/s per GPU whose API server
// preprocesses one image a second.
func imageModel(name string) configs.Model {
	m := small(name)
	m.PreprocessImagesPerS = 1
	return m
}

func TestPreprocessingCeilingSlowsAnEngine(t *testing.T) {
	// 1,000 images with 500 token equivalents each: 500 s of GPU, 1,000 s
	// of preprocessing on one API server.
	imageTask := Workload{Model: "M", Task: "t_groups", Requests: 10, PromptTokens: 500_000, Images: 1000}
	textTask := Workload{Model: "M", Task: "cp_care", Requests: 10, PromptTokens: 500_000}
	run := func(node int, cpus int, est Estimator, pol Policy, wls ...Workload) (*Plan, Assignment) {
		t.Helper()
		n := testNode(node)
		n.CPUs = cpus
		est.Startup, est.Stop = fixed.Startup, fixed.Stop
		rec := &recorder{}
		cfg := Config{Node: n, Models: []configs.Model{imageModel("M")}, Workloads: wls, Estimator: est, Policy: pol}
		sim := NewSimulator(cfg)
		s := mustNew(t, cfg, teeEffects{sim, rec})
		p, err := Run(context.Background(), s, sim)
		if err != nil {
			t.Fatal(err)
		}
		return p, rec.started[0]
	}
	p, r := run(1, 0, Estimator{}, Policy{}, imageTask)
	if p.Makespan != 100+1000+10 || r.APIServers != 1 || r.Rate != 500 {
		t.Errorf("image-bound: makespan %v s, replica %d API servers at %v/s; want 1110 s, 1, 500", float64(p.Makespan), r.APIServers, r.Rate)
	}
	if p.Models[0].Images != 1000 {
		t.Errorf("plan counts %d images, want 1000", p.Models[0].Images)
	}
	p, _ = run(1, 0, Estimator{NoPreprocessCeiling: true}, Policy{}, imageTask)
	if p.Makespan != 100+500+10 {
		t.Errorf("without the ceiling: makespan %v s, want 610", float64(p.Makespan))
	}
	// Four cores for one GPU: two API servers (4 - 1 worker - 1 engine
	// core), so preprocessing keeps up with the GPU.
	p, r = run(1, 4, Estimator{}, Policy{}, imageTask)
	if p.Makespan != 610 || r.APIServers != 2 {
		t.Errorf("two API servers: makespan %v s with %d; want 610 s with 2", float64(p.Makespan), r.APIServers)
	}
	p, r = run(1, 4, Estimator{}, Policy{MaxAPIServers: 1}, imageTask)
	if p.Makespan != 1110 || r.APIServers != 1 {
		t.Errorf("policy caps at one API server: makespan %v s with %d; want 1110 s with 1", float64(p.Makespan), r.APIServers)
	}
	// Tasks run one after the other: 1,000 s of preprocessing, then 500 s
	// of GPU, not the max of the totals (1,000 s).
	p, _ = run(1, 0, Estimator{}, Policy{}, imageTask, textTask)
	if p.Makespan != 100+1500+10 {
		t.Errorf("two tasks: makespan %v s, want 1610", float64(p.Makespan))
	}
	mixed := imageTask.Add(textTask)
	p, _ = run(1, 0, Estimator{}, Policy{}, mixed)
	if p.Makespan != 100+1000+10 {
		t.Errorf("one untasked mix: makespan %v s, want 1110", float64(p.Makespan))
	}
	// Replicas each bring their own API server; a larger TP does not: two
	// TP-1 replicas preprocess 2 images/s together (500 s), one TP-2
	// engine 1 image/s however fast its GPUs (1,000 s).
	p, _ = run(2, 0, Estimator{}, Policy{}, imageTask)
	if w := p.Waves[0]; w.TP != 1 || w.Replicas != 2 || p.Makespan != 100+500+10 {
		t.Errorf("two GPUs: TP%d×%d, makespan %v s; want TP1×2, 610 s", w.TP, w.Replicas, float64(p.Makespan))
	}
}

// TestTextAndImageModelsInOneCampaign: a text-only model and an image
// model planned together. The text model's replica runs one API server
// with no preprocessing ceiling (it sends no image) at its GPU's rate; the
// image model's takes the node's spare cores for API servers and is
// bound by its preprocessing.
func TestTextAndImageModelsInOneCampaign(t *testing.T) {
	img, text := imageModel("I"), small("T")
	text.TextOnly, text.PreprocessImagesPerS = true, 1
	for _, m := range []*configs.Model{&img, &text} {
		m.Engine.TensorParallel, m.Engine.Replicas = 1, 1
	}
	n := testNode(2)
	n.CPUs = 8 // 4 a GPU: 2 API servers for a TP-1 engine
	est := fixed
	cfg := Config{Node: n, Models: []configs.Model{img, text}, Estimator: est, Workloads: []Workload{
		// 1,000 images and 500 s of GPU: 500 s of preprocessing on 2 API servers.
		{Model: "I", Task: "t_groups", Requests: 10, PromptTokens: 500_000, Images: 1000},
		// 800 s of GPU and no image.
		{Model: "T", Task: "g_mem", Requests: 10, PromptTokens: 800_000},
	}}
	rec := &recorder{}
	sim := NewSimulator(cfg)
	p, err := Run(context.Background(), mustNew(t, cfg, teeEffects{sim, rec}), sim)
	if err != nil {
		t.Fatal(err)
	}
	byModel := map[string]Assignment{}
	for _, r := range rec.started {
		byModel[r.Model] = r
	}
	if r := byModel["T"]; r.APIServers != 1 || r.ImagesPerS != 0 || r.Rate != 1000 {
		t.Errorf("text model's replica: %d API servers, %v images/s, %v tokens/s; want 1, no ceiling, the GPU's 1000", r.APIServers, r.ImagesPerS, r.Rate)
	}
	if r := byModel["I"]; r.APIServers != 2 || r.ImagesPerS != 2 || r.Rate != 1000 {
		t.Errorf("image model's replica: %d API servers, %v images/s, %v tokens/s; want 2, 2, 1000", r.APIServers, r.ImagesPerS, r.Rate)
	}
	for _, m := range p.Models {
		if m.Status != StatusDone {
			t.Errorf("%s: %s, want done", m.Model, m.Status)
		}
	}
	// Both start at once on their own GPU: the text model ends last, at
	// 100 s of start-up + 800 s + 10 s of stop.
	if p.Makespan != 100+800+10 {
		t.Errorf("makespan %v s, want 910", float64(p.Makespan))
	}
}

// teeEffects passes each decision to the simulator and records it.
type teeEffects struct {
	sim *Simulator
	rec *recorder
}

func (t teeEffects) StartReplica(r Assignment) { t.rec.StartReplica(r); t.sim.StartReplica(r) }
func (t teeEffects) StopReplica(r Assignment)  { t.rec.StopReplica(r); t.sim.StopReplica(r) }
func (t teeEffects) AbandonModel(m, why string) {
	t.rec.AbandonModel(m, why)
	t.sim.AbandonModel(m, why)
}

// Two models that drain at the same instant both finish: the first finish
// stops its engine and re-plans the others' finish events, which must not
// drop the second (its work is already zero).
func TestSimultaneousFinishes(t *testing.T) {
	a, b := small("A"), small("B")
	a.Engine.TensorParallel, a.Engine.Replicas = 1, 1
	b.Engine.TensorParallel, b.Engine.Replicas = 1, 1
	cfg := Config{Node: testNode(2), Models: []configs.Model{a, b},
		Workloads: []Workload{work("A", 1000), work("B", 1000)}, Estimator: fixed}
	p, err := Simulate(context.Background(), cfg, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Models {
		if m.Status != StatusDone || m.WorkEnd != p.Models[0].WorkEnd {
			t.Errorf("%s: %s, work done at %v; want done with the other", m.Model, m.Status, m.WorkEnd)
		}
	}
}
