package configs

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const goodCampaign = `
name: demo
node: fake:a800-sxm-8
output: runs/demo
dataset: {raw: data, prepared: prep}
tasks: [pathology, carepath]
client: {first_token_timeout: 30s}
models:
  - Lingshu-7B
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 2, sim: [--sim-policy, right=0.9]}
    tasks: {t_groups: {max_images: 40}}
  - name: My-Local-VLM
    hf_id: me/my-vlm
    attention_heads: 16
    vocab_size: 32000
    engine: {kind: vllm}
`

func TestParseCampaign(t *testing.T) {
	c, err := ParseCampaign("c.yaml", "/base", []byte(goodCampaign), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Resolved) != 3 {
		t.Fatalf("resolved %d models", len(c.Resolved))
	}
	q, _ := c.Model("Qwen3-VL-8B-Instruct")
	if q.Engine.Kind != EngineSim || q.Engine.Replicas != 2 || q.HFID != "Qwen/Qwen3-VL-8B-Instruct" {
		t.Errorf("override lost registry fields or did not apply: %+v", q.Engine)
	}
	if q.Tasks["t_groups"].MaxImages != 40 || q.Tasks["t_groups"].MaxTokens != 8192 {
		t.Errorf("t_groups settings = %+v, want 40 images and the default 8192 tokens", q.Tasks["t_groups"])
	}
	if q.Engine.ExtraArgs != nil || q.HFID == "" || q.Engine.MaxNumSeqs != 16 {
		t.Errorf("a new engine kind must drop the registry's engine arguments but keep the model and defaults: %+v", q.Engine)
	}
	l, _ := c.Model("Lingshu-7B")
	if l.Engine.Kind != EngineVLLM || l.Engine.GPUMemoryUtilization != 0.9 {
		t.Errorf("plain registry entry changed: %+v", l.Engine)
	}
	// Every task key is recorded where it is written, for the tasks'
	// registry to check: the task list, the overrides, then models.yaml.
	mine := []TaskRef{{Key: "pathology", File: "c.yaml", Line: 6, Field: "tasks[0]", InList: true},
		{Key: "carepath", File: "c.yaml", Line: 6, Field: "tasks[1]", InList: true},
		{Key: "t_groups", File: "c.yaml", Line: 12, Field: "models[1].tasks.t_groups"}}
	if len(c.TaskRefs) < 4 || !reflect.DeepEqual(c.TaskRefs[:3], mine) || c.TaskRefs[3].File != "models.yaml" || c.TaskRefs[3].Field != "defaults.tasks.card" {
		t.Errorf("task refs %+v, want %+v then models.yaml's", c.TaskRefs, mine)
	}
	if c.Client.FirstTokenTimeout != 30*time.Second || c.Client.TotalTimeout != 30*time.Minute {
		t.Errorf("client = %+v", c.Client)
	}
	if got := c.Path("data"); got != "/base/data" {
		t.Errorf("Path = %s", got)
	}
}

func TestCampaignErrors(t *testing.T) {
	base := "output: o\ndataset: {raw: r, prepared: p}\n"
	cases := map[string]string{
		"dataset: {raw: r, prepared: p}\nmodels: [Lingshu-7B]\n":                                        "c.yaml: line 1: field output: the campaign needs an output directory",
		base + "models: [Lingshu-8B]\n":                                                                 `c.yaml: line 3: field models[0]: model "Lingshu-8B" is not in the registry`,
		base + "media: jpeg\nmodels: [Lingshu-7B]\n":                                                    `c.yaml: line 3: field media: "jpeg" is not a media mode`,
		base + "models:\n  - name: Lingshu-7B\n    engine: {kind: vllm, gpu_memory_utilization: 1.5}\n": `line 5: field models[0].engine.gpu_memory_utilization`,
		base + "models:\n  - name: Lingshu-7B\n    engin: {kind: vllm}\n":                               `c.yaml: line 5: field models[0].engin: unknown field; known fields: attention_heads`,
		base + "models: []\n": "field models: the campaign lists no model",
	}
	for in, want := range cases {
		_, err := ParseCampaign("c.yaml", ".", []byte(in), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCampaign(%q):\n got %v\nwant it to contain %q", in, err, want)
		}
	}
}

func TestEmbeddedCampaignsParse(t *testing.T) {
	entries, err := Defaults.ReadDir("campaigns")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 4 {
		t.Fatalf("only %d embedded campaigns", len(entries))
	}
	for _, e := range entries {
		data, err := Defaults.ReadFile("campaigns/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseCampaign(e.Name(), ".", data, nil); err != nil {
			t.Errorf("embedded campaign: %v", err)
		}
	}
}
