package launcher

import (
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

func launchFor(m configs.Model, gpus ...string) Launch {
	return Launch{
		Model: m, Replica: 1, GPUs: gpus, Port: 21001, APIKey: "npc-KEY",
		MediaRoot: "/data/prepared", Images: ImageLimits{Count: 80, Width: 512, Height: 1644},
		SecretDir: "/run/npc/.keys",
	}
}

func internVL() configs.Model {
	return configs.Model{
		Name: "InternVL3.5-38B", HFID: "OpenGVLab/InternVL3_5-38B", ContextLength: 65536,
		MMProcessorKwargs: map[string]any{"max_dynamic_patch": 1},
		Engine: configs.Engine{
			Kind: configs.EngineVLLM, TrustRemoteCode: true, ReasoningParser: "qwen3", MaxNumSeqs: 16,
			GPUMemoryUtilization: 0.85, ExtraArgs: []string{"--mm-encoder-tp-mode", "data"},
			Env: map[string]string{"VLLM_USE_V1": "1"},
		},
	}
}

func TestVLLMInvocationGolden(t *testing.T) {
	inv, err := VLLM{Binary: []string{"vllm"}}.Invocation(launchFor(internVL(), "GPU-a", "GPU-b"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"vllm", "serve", "OpenGVLab/InternVL3_5-38B",
		"--host", "127.0.0.1", "--port", "21001",
		"--served-model-name", "InternVL3.5-38B", "--tensor-parallel-size", "2",
		"--gpu-memory-utilization", "0.85", "--max-model-len", "65536", "--max-num-seqs", "16",
		"--limit-mm-per-prompt", `{"image":{"count":80,"width":512,"height":1644},"video":0}`,
		"--allowed-local-media-path", "/data/prepared", "--generation-config", "vllm", "--enable-prompt-tokens-details",
		"--trust-remote-code", "--reasoning-parser", "qwen3",
		"--mm-processor-kwargs", `{"max_dynamic_patch":1}`,
		"--mm-encoder-tp-mode", "data"}
	if !slices.Equal(inv.Argv, want) {
		t.Errorf("argv\n got %q\nwant %q", inv.Argv, want)
	}
	wantEnv := []string{"CUDA_VISIBLE_DEVICES=GPU-a,GPU-b", "NPCORCH_MODEL=InternVL3.5-38B", "NPCORCH_REPLICA=1", "VLLM_API_KEY=npc-KEY", "VLLM_USE_V1=1"}
	if !slices.Equal(inv.Env, wantEnv) {
		t.Errorf("env %q, want %q", inv.Env, wantEnv)
	}
	if inv.BaseURL != "http://127.0.0.1:21001/v1" || inv.MaxNumSeqs != 16 || inv.Probe.HealthURL != "http://127.0.0.1:21001/health" || !inv.CachedTokens ||
		!inv.Probe.RequireAuth || !inv.Probe.WarmUp || inv.Probe.MetricsURL != "http://127.0.0.1:21001/metrics" {
		t.Errorf("invocation %+v", inv)
	}
}

func TestVLLMDefaultsAndForkBinary(t *testing.T) {
	m := configs.Model{Name: "Hulu-Med-7B", HFID: "ZJU-AI4H/Hulu-Med-7B", Engine: configs.Engine{Command: []string{"/opt/hulu/bin/vllm"}},
		Tasks: map[string]configs.TaskSettings{"l3": {MaxImages: 40}, "l6": {MaxImages: 64}}}
	l := launchFor(m, "GPU-a")
	l.Images, l.MediaRoot = ImageLimits{}, ""
	inv, err := VLLM{Binary: []string{"vllm"}}.Invocation(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/opt/hulu/bin/vllm", "serve", "ZJU-AI4H/Hulu-Med-7B",
		"--host", "127.0.0.1", "--port", "21001",
		"--served-model-name", "Hulu-Med-7B", "--tensor-parallel-size", "1",
		"--gpu-memory-utilization", "0.9", "--max-num-seqs", "256",
		"--limit-mm-per-prompt", `{"image":{"count":64},"video":0}`, "--generation-config", "vllm", "--enable-prompt-tokens-details"}
	if !slices.Equal(inv.Argv, want) {
		t.Errorf("argv\n got %q\nwant %q", inv.Argv, want)
	}
	// A fork older than 0.6.4 gets no --enable-prompt-tokens-details and
	// its answers' cached tokens count as not reported; below 0.9.0 it
	// cannot run several API servers.
	m.Engine.Version = "0.6.3"
	l.Model, l.APIServers = m, 2
	if _, err := (VLLM{Binary: []string{"vllm"}}).Invocation(l); err == nil || !strings.Contains(err.Error(), "has no --api-server-count (vLLM 0.9.0 and later)") {
		t.Errorf("api servers on 0.6.3: %v", err)
	}
	l.APIServers = 1
	inv, err = VLLM{Binary: []string{"vllm"}}.Invocation(launchFor(m, "GPU-a"))
	if err != nil || slices.Contains(inv.Argv, "--enable-prompt-tokens-details") || inv.CachedTokens {
		t.Errorf("0.6.3: %q %v (cached tokens reported: %v)", inv.Argv, err, inv.CachedTokens)
	}
}

// TestTextOnlyModelGetsNoMultimodalFlags: a text-only model's vLLM (and
// simulated) command line carries no --limit-mm-per-prompt and no
// --allowed-local-media-path, whatever image limits and media folder the
// campaign hands the launch: vLLM 0.10 and earlier refuse the first for a
// model that is not multimodal, and no request of such a model carries an
// image.
func TestTextOnlyModelGetsNoMultimodalFlags(t *testing.T) {
	m := configs.Model{Name: "GPT-OSS-20B", HFID: "openai/gpt-oss-20b", TextOnly: true, ContextLength: 131072,
		Engine: configs.Engine{Kind: configs.EngineVLLM, ReasoningParser: "openai_gptoss"},
		Tasks:  map[string]configs.TaskSettings{"t_groups": {MaxTokens: 8192, MaxImages: 80}, "g_mem": {MaxTokens: 4096}}}
	want := []string{"vllm", "serve", "openai/gpt-oss-20b",
		"--host", "127.0.0.1", "--port", "21001",
		"--served-model-name", "GPT-OSS-20B", "--tensor-parallel-size", "2",
		"--gpu-memory-utilization", "0.9", "--max-model-len", "131072", "--max-num-seqs", "256",
		"--generation-config", "vllm", "--enable-prompt-tokens-details", "--reasoning-parser", "openai_gptoss"}
	inv, err := VLLM{Binary: []string{"vllm"}}.Invocation(launchFor(m, "GPU-a", "GPU-b"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(inv.Argv, want) {
		t.Errorf("argv\n got %q\nwant %q", inv.Argv, want)
	}
	m.Engine.Kind = configs.EngineSim
	sim, err := Sim{Command: []string{"npcorch", "sim-engine"}}.Invocation(launchFor(m, "GPU-a"))
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--limit-mm-per-prompt", "--allowed-local-media-path"} {
		if slices.Contains(sim.Argv, flag) {
			t.Errorf("the simulated engine of a text-only model gets %s: %q", flag, sim.Argv)
		}
	}
	// The same model reading images gets both.
	m.TextOnly = false
	mm, err := Sim{Command: []string{"npcorch", "sim-engine"}}.Invocation(launchFor(m, "GPU-a"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(mm.Argv, "--limit-mm-per-prompt") || !slices.Contains(mm.Argv, "--allowed-local-media-path") {
		t.Errorf("a multimodal model lacks its media flags: %q", mm.Argv)
	}
}

func TestTensorParallelMustMatchGPUs(t *testing.T) {
	m := internVL()
	m.Engine.TensorParallel = 4
	_, err := VLLM{Binary: []string{"vllm"}}.Invocation(launchFor(m, "GPU-a", "GPU-b"))
	if err == nil || !strings.Contains(err.Error(), "pins tensor_parallel 4 but replica 1 was given 2 GPUs") {
		t.Errorf("err = %v", err)
	}
}

func TestSGLangInvocationGolden(t *testing.T) {
	m := configs.Model{Name: "Lingshu-7B", HFID: "lingshu-medical-mllm/Lingshu-7B", ContextLength: 32768, Engine: configs.Engine{Kind: configs.EngineSGLang, MaxNumSeqs: 32}}
	inv, err := SGLang{Binary: []string{"python", "-m", "sglang.launch_server"}}.Invocation(launchFor(m, "GPU-c"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"python", "-m", "sglang.launch_server", "--model-path", "lingshu-medical-mllm/Lingshu-7B",
		"--host", "127.0.0.1", "--port", "21001", "--config", "/run/npc/.keys/Lingshu-7B.r1.yaml", "--served-model-name", "Lingshu-7B",
		"--tp-size", "1", "--mem-fraction-static", "0.9", "--max-running-requests", "32", "--enable-metrics",
		"--enable-cache-report", "--sampling-defaults", "openai", "--context-length", "32768"}
	if !slices.Equal(inv.Argv, want) {
		t.Errorf("argv\n got %q\nwant %q", inv.Argv, want)
	}
	// The key is in the --config file (SGLang has no environment variable
	// for it), which the launcher writes with mode 0600.
	if len(inv.Files) != 1 || inv.Files[0].Path != "/run/npc/.keys/Lingshu-7B.r1.yaml" || string(inv.Files[0].Content) != "api-key: \"npc-KEY\"\n" ||
		!inv.CachedTokens || inv.APIKey != "npc-KEY" {
		t.Errorf("files %q, cached tokens %v", inv.Files, inv.CachedTokens)
	}
	if !slices.Contains(inv.Env, "CUDA_VISIBLE_DEVICES=GPU-c") {
		t.Errorf("env %q", inv.Env)
	}
}

func TestSimInvocationGolden(t *testing.T) {
	m := configs.Model{Name: "sim-8b", Engine: configs.Engine{Kind: configs.EngineSim, Sim: []string{"--sim-load-time", "2s"}}}
	l := launchFor(m)
	l.MediaRoot = ""
	inv, err := Engines{Sim: []string{"/usr/bin/npcorch", "sim-engine"}}.mustFor(t, configs.EngineSim).Invocation(l)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/usr/bin/npcorch", "sim-engine", "serve", "sim-8b",
		"--host", "127.0.0.1", "--port", "21001",
		"--served-model-name", "sim-8b", "--tensor-parallel-size", "1",
		"--gpu-memory-utilization", "0.9", "--max-num-seqs", "256",
		"--limit-mm-per-prompt", `{"image":{"count":80,"width":512,"height":1644},"video":0}`,
		"--generation-config", "vllm", "--enable-prompt-tokens-details", "--sim-load-time", "2s"}
	if !slices.Equal(inv.Argv, want) {
		t.Errorf("argv\n got %q\nwant %q", inv.Argv, want)
	}
	if _, err := (Sim{}).Invocation(l); err == nil {
		t.Error("sim without a command: no error")
	}
	l.APIServers = 3
	inv, err = Engines{Sim: []string{"npcorch", "sim-engine"}}.mustFor(t, configs.EngineSim).Invocation(l)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.Index(inv.Argv, "--api-server-count"); i < 0 || inv.Argv[i+1] != "3" {
		t.Errorf("APIServers 3 should pass --api-server-count 3: %q", inv.Argv)
	}
}

func (e Engines) mustFor(t *testing.T, kind configs.EngineKind) Engine {
	t.Helper()
	eng, err := e.For(kind)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func TestWrapperPlaceholdersKeyAndMissingCommand(t *testing.T) {
	m := configs.Model{Name: "HealthGPT-Pro-8B", HFID: "lintw/HealthGPT-L14", Engine: configs.Engine{Kind: configs.EngineWrapper,
		Command: []string{"python", "serve_healthgpt.py", "--listen={host}:{port}", "--name", "{model}", "--weights", "{hf_id}"}}}
	inv, err := Wrapper{}.Invocation(launchFor(m, "GPU-a"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"python", "serve_healthgpt.py", "--listen=127.0.0.1:21001", "--name", "HealthGPT-Pro-8B", "--weights", "lintw/HealthGPT-L14"}
	if !slices.Equal(inv.Argv, want) || inv.Probe.RequireAuth || inv.Probe.HealthURL != "" || !inv.Probe.WarmUp || inv.APIKey != "npc-KEY" {
		t.Errorf("invocation %q %+v", inv.Argv, inv.Probe)
	}
	keyFile := "/run/npc/.keys/HealthGPT-Pro-8B.r1.key"
	if !slices.Contains(inv.Env, "NPCORCH_API_KEY=npc-KEY") || !slices.Contains(inv.Env, "NPCORCH_API_KEY_FILE="+keyFile) ||
		len(inv.Files) != 1 || inv.Files[0].Path != keyFile || string(inv.Files[0].Content) != "npc-KEY\n" {
		t.Errorf("the key must reach the wrapper by environment and file: env %q files %q", inv.Env, inv.Files)
	}
	m.Engine.Command = append(m.Engine.Command, "--key", "{api_key}")
	if _, err := (Wrapper{}).Invocation(launchFor(m)); err == nil || !strings.Contains(err.Error(), "{api_key} would put the API key on the wrapper's command line") {
		t.Errorf("{api_key}: %v", err)
	}
	m.Engine.Command = nil
	_, err = Wrapper{}.Invocation(launchFor(m))
	if err == nil || !strings.Contains(err.Error(), "HealthGPT-Pro-8B has no vLLM support; set engine.command to an OpenAI-compatible wrapper") {
		t.Errorf("err = %v", err)
	}
}

func TestExternalInvocation(t *testing.T) {
	m := configs.Model{Name: "gpt-4o", Engine: configs.Engine{Kind: configs.EngineExternal, BaseURL: "https://api.example/v1/", APIKeyEnv: "EXT_KEY"}}
	env := map[string]string{"EXT_KEY": "sk-1"}
	eng := Engines{Getenv: func(k string) string { return env[k] }}.mustFor(t, configs.EngineExternal)
	inv, err := eng.Invocation(Launch{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	if inv.Argv != nil || inv.BaseURL != "https://api.example/v1" || inv.APIKey != "sk-1" || inv.Probe.WarmUp || inv.Probe.HealthURL != "" {
		t.Errorf("invocation %+v", inv)
	}
	delete(env, "EXT_KEY")
	if _, err := eng.Invocation(Launch{Model: m}); err == nil || !strings.Contains(err.Error(), "EXT_KEY") {
		t.Errorf("missing key: %v", err)
	}
	m.Engine.BaseURL = ""
	if _, err := eng.Invocation(Launch{Model: m}); err == nil || !strings.Contains(err.Error(), "engine.base_url") {
		t.Errorf("missing base url: %v", err)
	}
}

func TestUnknownEngineKind(t *testing.T) {
	if _, err := (Engines{}).For("tgi"); err == nil || !strings.Contains(err.Error(), `"tgi"`) {
		t.Errorf("err = %v", err)
	}
}

// TestEveryFlagNpcorchWritesIsManaged keeps configs.ManagedFlag in step
// with the command lines built here: every flag that takes a value and
// that npcorch writes for vLLM or SGLang (with every option of the model
// set) is one a campaign's engine.extra_args may not set again.
func TestEveryFlagNpcorchWritesIsManaged(t *testing.T) {
	vllm := internVL()
	vllm.Engine.ExtraArgs = nil
	sglang := configs.Model{Name: "Lingshu-7B", HFID: "lingshu-medical-mllm/Lingshu-7B", ContextLength: 32768,
		Engine: configs.Engine{Kind: configs.EngineSGLang, MaxNumSeqs: 32, ReasoningParser: "qwen3", TrustRemoteCode: true}}
	for _, c := range []struct {
		kind configs.EngineKind
		eng  Engine
		m    configs.Model
	}{
		{configs.EngineVLLM, VLLM{Binary: []string{"vllm"}}, vllm},
		{configs.EngineSGLang, SGLang{Binary: []string{"python", "-m", "sglang.launch_server"}}, sglang},
	} {
		l := launchFor(c.m, "GPU-a", "GPU-b")
		l.APIServers = 2
		if c.kind == configs.EngineSGLang {
			l.GPUs = l.GPUs[:1]
		}
		inv, err := c.eng.Invocation(l)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range inv.Argv {
			valued := strings.HasPrefix(a, "--") && i+1 < len(inv.Argv) && !strings.HasPrefix(inv.Argv[i+1], "--")
			if _, managed := configs.ManagedFlag(c.kind, a); valued && !managed {
				t.Errorf("%s: npcorch writes %s %s, which configs.ManagedFlag does not name", c.kind, a, inv.Argv[i+1])
			}
		}
	}
}
