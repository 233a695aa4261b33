package placement

import (
	"testing"

	"github.com/npcorch/npcorch/configs"
)

func TestAPIServers(t *testing.T) {
	vllm := lingshu7B()
	// An upstream vLLM in a virtual environment (h100-sxm-4.yaml) takes
	// --api-server-count; a fork based on a release before 0.9.0 does not.
	venv := lingshu7B()
	venv.Engine.Command = []string{"/opt/vllm/venv/bin/vllm"}
	fork := lingshu7B()
	fork.Engine.Command, fork.Engine.Version = []string{"/opt/fork/bin/vllm"}, "0.8.5"
	sim := lingshu7B()
	sim.Engine.Kind = configs.EngineSim
	wrapper := lingshu7B()
	wrapper.Engine.Kind = configs.EngineWrapper
	sglang := lingshu7B()
	sglang.Engine.Kind = configs.EngineSGLang

	sxm := A800SXM8() // 64 cores, 8 per GPU
	lean := sxm
	lean.CPUs = 32 // 4 per GPU
	unknown := sxm
	unknown.CPUs = 0
	for _, c := range []struct {
		name  string
		m     configs.Model
		n     Node
		tp    int
		limit int
		want  int
	}{
		{"8 cores, TP1: 8-2=6, capped at 4", vllm, sxm, 1, 0, DefaultMaxAPIServers},
		{"cap raised: the cores decide", vllm, sxm, 1, 16, 6},
		{"TP8: 64-9", vllm, sxm, 8, 64, 55},
		{"cap 1 is vLLM's default", vllm, sxm, 4, 1, 1},
		{"4 cores a GPU, TP1: 4-2", vllm, lean, 1, 0, 2},
		{"4 cores a GPU, TP2: 8-3", vllm, lean, 2, 0, 4},
		{"unknown cores", vllm, unknown, 2, 0, 1},
		{"sim engine takes the flag", sim, sxm, 1, 0, 4},
		{"vLLM in a virtual environment", venv, sxm, 1, 0, DefaultMaxAPIServers},
		{"a fork on vLLM 0.8.5", fork, sxm, 1, 0, 1},
		{"wrapper", wrapper, sxm, 1, 0, 1},
		{"sglang", sglang, sxm, 1, 0, 1},
		{"no TP", vllm, sxm, 0, 0, 1},
	} {
		if got := APIServers(c.m, c.n, c.tp, c.limit); got != c.want {
			t.Errorf("%s: APIServers = %d, want %d", c.name, got, c.want)
		}
	}
	text := vllm
	text.TextOnly, text.VisionHeads = true, 0
	if got := APIServers(text, sxm, 1, 16); got != 1 {
		t.Errorf("text-only model: %d API servers, want 1 (it preprocesses no image)", got)
	}
	tiny := sxm
	tiny.CPUs = 8 // one core a GPU: nothing left for API servers, still one
	if got := APIServers(vllm, tiny, 1, 0); got != 1 {
		t.Errorf("starved node: %d API servers, want 1", got)
	}
}

func TestEvaluateCarriesThePreprocessingCeiling(t *testing.T) {
	m := lingshu7B()
	res := Evaluate(m, A800SXM8(), Constraints{})
	if len(res.Options) == 0 {
		t.Fatal("no options")
	}
	for _, p := range res.Options {
		want := float64(APIServers(m, A800SXM8(), p.TP, 0)) * DefaultPreprocessImagesPerS
		if p.APIServers < 1 || p.ImagesPerS != want {
			t.Errorf("%v: %d API servers, %v images/s; want %v", p, p.APIServers, p.ImagesPerS, want)
		}
	}
	m.PreprocessImagesPerS = 7
	one := Evaluate(m, A800SXM8(), Constraints{MaxAPIServers: 1})
	for _, p := range one.Options {
		if p.APIServers != 1 || p.ImagesPerS != 7 {
			t.Errorf("cap 1, 7 images/s per server: %v has %d API servers, %v images/s", p, p.APIServers, p.ImagesPerS)
		}
	}
	if got := PreprocessRate(configs.Model{}); got != DefaultPreprocessImagesPerS {
		t.Errorf("default rate %v", got)
	}
}

// TestTextOnlyModelHasNoPreprocessingCeiling: a text-only model sends no
// image, so its placements run one API server and carry no image ceiling
// (0: none), whatever the registry says of its preprocessing.
func TestTextOnlyModelHasNoPreprocessingCeiling(t *testing.T) {
	m := configs.Model{Name: "GPT-OSS-20B", TextOnly: true, ParamsB: 20.9, WeightBytes: 13_760_000_000, MoE: true,
		AttentionHeads: 64, KVHeads: 8, VocabSize: 201088, PreprocessImagesPerS: 7, Engine: configs.Engine{Kind: configs.EngineVLLM}}
	res := Evaluate(m, A800SXM8(), Constraints{MaxAPIServers: 8})
	if len(res.Options) == 0 {
		t.Fatalf("no options: %v", messages(res.Rejections))
	}
	for _, p := range res.Options {
		if p.APIServers != 1 || p.ImagesPerS != 0 {
			t.Errorf("%v: %d API servers, %v images/s; want 1 and no ceiling", p, p.APIServers, p.ImagesPerS)
		}
	}
	if got := PreprocessRate(m); got != 0 {
		t.Errorf("text-only preprocessing rate %v, want 0", got)
	}
}
