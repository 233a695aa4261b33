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
    params_b: 7
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
	if len(c.TaskRefs) < 4 || !reflect.DeepEqual(c.TaskRefs[:3], mine) || c.TaskRefs[3].File != "models.yaml" || !strings.HasPrefix(c.TaskRefs[3].Field, "defaults.tasks.") {
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
		base + "launch: {stop_grace: -1s}\nmodels: [Lingshu-7B]\n":                                       "c.yaml: line 3: field launch.stop_grace: -1s is negative",
		base + "launch: {max_restarts: -1}\nmodels: [Lingshu-7B]\n":                                      "field launch.max_restarts: must not be negative (0: never restart)",
		base + "launch: {no_progress_timeout: 2h, start_timeout: 1h}\nmodels: [Lingshu-7B]\n":            "field launch.no_progress_timeout: 2h0m0s is longer than launch.start_timeout",
		base + "launch: {restarts: 3}\nmodels: [Lingshu-7B]\n":                                           "field launch.restarts: unknown field",
		base + "client: {retries: -1}\nmodels: [Lingshu-7B]\n":                                           "field client.retries: -1 is negative; give 0 for no retry",
		base + "models:\n  - name: my-ext\n    engine: {kind: external, base_url: \"localhost:8000\"}\n": `c.yaml: line 5: field models[0].engine.base_url: model "my-ext": "localhost:8000" has no http:// or https:// scheme and host; want an http:// or https:// URL ending in /v1`,
	}
	// A wrong-typed value gave yaml.v3's words ("cannot unmarshal !!str
	// `abc` into int64"), without the field.
	for in, want := range map[string]string{
		base + "seed: \"abc\"\nmodels: [Lingshu-7B]\n":                        "c.yaml: line 3: field seed: want a whole number",
		base + "models: [Lingshu-7B]\nclient: {total_timeout: 30}\n":          "c.yaml: line 4: field client.total_timeout: a bare number is not a duration; write 30s",
		base + "models: [Lingshu-7B]\ntasks: g_mem\n":                         "c.yaml: line 4: field tasks: want a list, like [g_mem]",
		"output: o\ndataset: ../data\nmodels: [Lingshu-7B]\n":                 "c.yaml: line 2: field dataset: want {raw: DIR, prepared: DIR}",
		base + "models:\n  - name: Lingshu-7B\n    engine: {replicas: two}\n": "c.yaml: line 5: field models[0].engine.replicas: want a whole number",
	} {
		cases[in] = want
	}
	for in, want := range cases {
		_, err := ParseCampaign("c.yaml", ".", []byte(in), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCampaign(%q):\n got %v\nwant it to contain %q", in, err, want)
		}
	}
}

// TestStallWindowWithinClientTimeouts: a stall window no shorter than a
// request's life on a hung engine (retries × first_token_timeout + the
// shorter of first-token and chunk timeouts) is refused, naming the
// fields; one shorter, or the launcher's default, loads.
func TestStallWindowWithinClientTimeouts(t *testing.T) {
	base := "output: o\ndataset: {raw: r, prepared: p}\nmodels: [Lingshu-7B]\n"
	for in, want := range map[string]string{
		base + "client: {first_token_timeout: 5s, retries: 0}\nlaunch: {stall_window: 5s}\n":                     "field launch.stall_window: 5s is not shorter than the 5s a request on a hung engine lasts",
		base + "client: {first_token_timeout: 5s, chunk_timeout: 2s, retries: 2}\nlaunch: {stall_window: 12s}\n": "the 12s a request",
		base + "client: {first_token_timeout: 5s, chunk_timeout: 2s, retries: 2}\nlaunch: {stall_window: 11s}\n": "",
		base + "client: {first_token_timeout: 5s}\nlaunch: {stall_window: 3s}\n":                                 "",
		base + "client: {first_token_timeout: 5s, retries: 0}\n":                                                 "", // default window
	} {
		_, err := ParseCampaign("c.yaml", ".", []byte(in), nil)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", in, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q:\n got %v\nwant it to contain %q", in, err, want)
		}
	}
}

// TestZeroRetriesMeansNoRetry: a campaign that writes client.retries: 0
// asks for no retry; it used to get the default of 4, as if absent.
func TestZeroRetriesMeansNoRetry(t *testing.T) {
	base := "output: o\ndataset: {raw: r, prepared: p}\nmodels: [Lingshu-7B]\n"
	for in, want := range map[string]int{
		base:                            4,
		base + "client: {retries: 0}\n": 0,
		base + "client: {retries: 2}\n": 2,
		base + "client: {}\n":           4,
		base + "client:\n":              4,
	} {
		c, err := ParseCampaign("c.yaml", ".", []byte(in), nil)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := c.Client.RetryLimit(); got != want {
			t.Errorf("%q: %d retries, want %d", in, got, want)
		}
	}
	if got := (ClientSettings{}).RetryLimit(); got != 4 {
		t.Errorf("settings built in code without retries: %d, want the default 4", got)
	}
}

func TestLaunchSettingsAndRelativeEngineCommands(t *testing.T) {
	src := `output: o
dataset: {raw: r, prepared: p}
launch: {no_progress_timeout: 30m, start_timeout: 3h, max_restarts: 0, restart_backoff: 2s, max_start_failures: 1}
models:
  - name: Hulu-Med-4B
    engine: {command: [venv/bin/vllm]}
  - name: Lingshu-7B
    engine: {command: [vllm]}
`
	c, err := ParseCampaign("c.yaml", "/base/campaigns", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := c.Launch
	if l.NoProgressTimeout != 30*time.Minute || l.StartTimeout != 3*time.Hour || l.MaxRestarts == nil || *l.MaxRestarts != 0 ||
		l.RestartBackoff != 2*time.Second || l.MaxStartFailures != 1 {
		t.Errorf("launch = %+v", l)
	}
	// Paths in a campaign file are relative to the file (issue 12); a
	// bare name is for PATH.
	h, _ := c.Model("Hulu-Med-4B")
	if got := h.Engine.Command[0]; got != "/base/campaigns/venv/bin/vllm" {
		t.Errorf("relative engine command resolves to %s", got)
	}
	if l, _ := c.Model("Lingshu-7B"); l.Engine.Command[0] != "vllm" {
		t.Errorf("a bare command became %s", l.Engine.Command[0])
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

// TestTaskOverrideKeepsTheModelsOtherLimits: a campaign that changes one
// limit of one task keeps the model's other limits from its registry
// entry. InternVL3.5-38B sends at most 35 plane groups (the paper's
// sampling); raising its output budget reset that cap to the registry
// default of 80, in silence.
func TestTaskOverrideKeepsTheModelsOtherLimits(t *testing.T) {
	src := `output: o
dataset: {raw: r, prepared: p}
models:
  - name: InternVL3.5-38B
    tasks: {t_groups: {max_tokens: 16384}, card: {max_images: 2}}
`
	c, err := ParseCampaign("c.yaml", ".", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := DefaultRegistry()
	want, _ := reg.Get("InternVL3.5-38B")
	if want.Tasks["t_groups"].MaxImages != 35 {
		t.Fatalf("the registry's InternVL3.5-38B changed: %+v", want.Tasks["t_groups"])
	}
	got, _ := c.Model("InternVL3.5-38B")
	if ts := got.Tasks["t_groups"]; ts.MaxTokens != 16384 || ts.MaxImages != 35 {
		t.Errorf("t_groups = %+v, want max_tokens 16384 from the campaign and max_images 35 from the registry entry", ts)
	}
	if ts := got.Tasks["card"]; ts.MaxImages != 2 || ts.MaxTokens != want.Tasks["card"].MaxTokens {
		t.Errorf("card = %+v, want max_images 2 and the registry's max_tokens %d", ts, want.Tasks["card"].MaxTokens)
	}
	if got.Tasks["n_groups"] != want.Tasks["n_groups"] {
		t.Errorf("n_groups = %+v, want the registry's %+v", got.Tasks["n_groups"], want.Tasks["n_groups"])
	}
}

func TestCampaignJudges(t *testing.T) {
	base := "output: out\ndataset: {raw: r, prepared: p}\nmodels: [Qwen3-VL-8B-Instruct]\n"
	c, err := ParseCampaign("c.yaml", ".", []byte(base+"judges:\n  - name: GPT-OSS-120B\n    reasoning_effort: high\n    tasks: {o1judge: {max_tokens: 4096}}\n  - GPT-5.1\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ResolvedJudges) != 2 || c.ResolvedJudges[0].ReasoningEffort != "high" || c.ResolvedJudges[0].Tasks["o1judge"].MaxTokens != 4096 ||
		c.ResolvedJudges[1].Engine.Kind != EngineExternal || len(c.Resolved) != 1 {
		t.Errorf("judges %+v, models %+v", c.ResolvedJudges, c.Resolved)
	}
	both, err := ParseCampaign("c.yaml", ".", []byte(base+"judges: [Qwen3-VL-8B-Instruct]\n"), nil)
	if err != nil || both.ResolvedJudges[0].Name != "Qwen3-VL-8B-Instruct@judge" || both.Resolved[0].Name != "Qwen3-VL-8B-Instruct" {
		t.Errorf("a generator that judges: %v, %+v", err, both)
	}
	api, err := ParseCampaign("c.yaml", ".", []byte("output: out\ndataset: {raw: r, prepared: p}\nmodels: [GPT-4.1, {name: My-API, engine: {kind: external, base_url: \"http://127.0.0.1:1/v1\"}}]\njudges: [GPT-4.1, {name: My-API, engine: {kind: external, base_url: \"http://127.0.0.1:1/v1\"}}]\n"), nil)
	if err != nil || api.ResolvedJudges[0].Name != "GPT-4.1@judge" || api.ResolvedJudges[0].Engine.APIModel != "gpt-4.1" ||
		api.ResolvedJudges[1].Name != "My-API@judge" || api.ResolvedJudges[1].Engine.APIModel != "My-API" {
		t.Errorf("API generators that judge: %v, %+v", err, api)
	}
	for in, want := range map[string]string{
		"judges: [{name: GPT-OSS-120B, reasoning_effort: max}]\n": "judges[0].reasoning_effort",
		"judges: [GPT-OSS-120B, GPT-OSS-120B]\n":                  "judges[1].name: model \"GPT-OSS-120B\" is listed twice",
		"judges: [No-Such-Judge]\n":                               "judges[0]: model \"No-Such-Judge\" is not in the registry",
	} {
		if _, err := ParseCampaign("c.yaml", ".", []byte(base+in), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}
