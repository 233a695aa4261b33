package launcher

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// VLLMKeyEnv is where vLLM reads its API key when --api-key is not given
// (vllm/entrypoints/openai/api_server.py, build_app); npcorch never puts
// the key on the command line.
const VLLMKeyEnv = "VLLM_API_KEY"

// VLLM runs `vllm serve MODEL`. Binary is the executable alone; a model's
// engine.command replaces it (a fork, a virtual environment), and npcorch
// adds `serve MODEL` after it, once.
type VLLM struct {
	Binary []string
}

// Invocation implements Engine.
func (v VLLM) Invocation(l Launch) (Invocation, error) {
	bin, err := command(l.Model, v.Binary, "no vLLM binary configured; set engine.command")
	if err != nil {
		return Invocation{}, err
	}
	return vllmInvocation(l, bin, nil)
}

// vllmInvocation is `BIN serve MODEL FLAGS... TAIL...` with the key in
// VLLM_API_KEY: vLLM's and the simulated engine's invocation.
func vllmInvocation(l Launch, bin, tail []string) (Invocation, error) {
	flags, err := vllmFlags(l)
	if err != nil {
		return Invocation{}, err
	}
	argv := append(append(slices.Clone(bin), "serve", weights(l.Model)), flags...)
	inv := openAIInvocation(l, append(argv, tail...), "/health", "/metrics")
	inv.Env = baseEnv(l, VLLMKeyEnv+"="+l.APIKey)
	inv.CachedTokens = l.Model.Engine.Supports(configs.VLLMPromptTokensDetails)
	return inv, nil
}

// vllmFlags are the flags after `serve MODEL`, shared with Sim. The API
// key is not among them: it travels in VLLM_API_KEY.
func vllmFlags(l Launch) ([]string, error) {
	m := l.Model
	tp, err := tensorParallel(l)
	if err != nil {
		return nil, err
	}
	args := []string{
		"--host", hostOf(l),
		"--port", strconv.Itoa(l.Port),
		"--served-model-name", servedName(m),
		"--tensor-parallel-size", strconv.Itoa(tp),
		"--gpu-memory-utilization", formatFloat(gpuMemoryUtilization(m)),
	}
	if m.ContextLength > 0 {
		args = append(args, "--max-model-len", strconv.Itoa(m.ContextLength))
	}
	args = append(args, "--max-num-seqs", strconv.Itoa(maxNumSeqs(m)))
	media, err := mediaFlags(l)
	if err != nil {
		return nil, err
	}
	args = append(args, media...)
	// vLLM's neutral sampling defaults, not generation_config.json: the
	// same as SGLang's --sampling-defaults openai (docs/conformance.md).
	args = append(args, "--generation-config", "vllm")
	if m.Engine.Supports(configs.VLLMPromptTokensDetails) {
		args = append(args, "--enable-prompt-tokens-details")
	}
	if l.APIServers > 1 {
		if !m.Engine.Supports(configs.VLLMAPIServerCount) {
			return nil, fmt.Errorf("model %s: engine.version %s has no --api-server-count (vLLM %s and later); run one API server", m.Name, m.Engine.Version, configs.VLLMAPIServerCount)
		}
		args = append(args, "--api-server-count", strconv.Itoa(l.APIServers))
	}
	if m.Engine.TrustRemoteCode {
		args = append(args, "--trust-remote-code")
	}
	if m.Engine.ReasoningParser != "" {
		args = append(args, "--reasoning-parser", m.Engine.ReasoningParser)
	}
	if l.ToolCalling {
		name, err := toolCallParser(m, "vllm", m.Engine.ToolCallParser.VLLM)
		if err != nil {
			return nil, err
		}
		// validate_parsed_serve_args refuses --enable-auto-tool-choice
		// without --tool-call-parser (vllm/entrypoints/openai/cli_args.py).
		args = append(args, "--enable-auto-tool-choice", "--tool-call-parser", name)
	}
	if len(m.MMProcessorKwargs) > 0 {
		kw, err := json.Marshal(m.MMProcessorKwargs)
		if err != nil {
			return nil, fmt.Errorf("model %s: mm_processor_kwargs: %w", m.Name, err)
		}
		args = append(args, "--mm-processor-kwargs", string(kw))
	}
	return append(args, m.Engine.ExtraArgs...), nil
}

// mediaFlags are the flags for the images requests carry: the image limit
// and the folder file:// URLs may name. A text-only model gets neither:
// vLLM 0.10 and earlier refuse --limit-mm-per-prompt for a model that is
// not multimodal ("`limit_mm_per_prompt` is only supported for multimodal
// models", ModelConfig._init_multimodal_config), the 2026 source ignores
// it, and no request of such a model carries an image.
func mediaFlags(l Launch) ([]string, error) {
	if l.Model.TextOnly {
		return nil, nil
	}
	limit, err := mmLimit(l)
	if err != nil {
		return nil, err
	}
	args := []string{"--limit-mm-per-prompt", limit}
	if l.MediaRoot != "" {
		args = append(args, "--allowed-local-media-path", l.MediaRoot)
	}
	return args, nil
}

// mmImage and mmLimitJSON give --limit-mm-per-prompt a fixed key order.
type mmImage struct {
	Count  int `json:"count"`
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
}

type mmLimitJSON struct {
	Image *mmImage `json:"image,omitempty"`
	Video int      `json:"video"`
}

// mmLimit declares the real image count and size (memory profiling
// assumes the declared worst case) and no video. The count defaults to the
// largest max_images of the model's tasks.
func mmLimit(l Launch) (string, error) {
	img := l.Images
	if img.Count == 0 {
		for _, t := range l.Model.Tasks {
			img.Count = max(img.Count, t.MaxImages)
		}
	}
	var lim mmLimitJSON
	if img.Count > 0 {
		lim.Image = &mmImage{Count: img.Count, Width: img.Width, Height: img.Height}
	}
	b, err := json.Marshal(lim)
	if err != nil {
		return "", fmt.Errorf("model %s: --limit-mm-per-prompt: %w", l.Model.Name, err)
	}
	return string(b), nil
}

// openAIInvocation fills the parts shared by engines that serve the
// OpenAI API on root(l) with our API key.
func openAIInvocation(l Launch, argv []string, health, metrics string) Invocation {
	r := root(l)
	inv := Invocation{
		Argv:       argv,
		Env:        baseEnv(l),
		BaseURL:    r + "/v1",
		APIKey:     l.APIKey,
		ServedName: servedName(l.Model),
		MaxNumSeqs: maxNumSeqs(l.Model),
		Probe:      Probe{RequireAuth: true, WarmUp: true},
	}
	if health != "" {
		inv.Probe.HealthURL = r + health
	}
	if metrics != "" {
		inv.Probe.MetricsURL = r + metrics
	}
	return inv
}

// SGLang runs `python -m sglang.launch_server`. SGLang reads its API key
// only from --api-key; npcorch writes it to a YAML file of 0600 that
// --config names (sglang/srt/server_args_config_parser.py turns the file
// into arguments inside the process, so they never reach the process's
// command line).
type SGLang struct {
	Binary []string
}

// Invocation implements Engine.
func (s SGLang) Invocation(l Launch) (Invocation, error) {
	m := l.Model
	bin, err := command(m, s.Binary, "no SGLang launcher configured; set engine.command")
	if err != nil {
		return Invocation{}, err
	}
	tp, err := tensorParallel(l)
	if err != nil {
		return Invocation{}, err
	}
	if l.SecretDir == "" {
		return Invocation{}, fmt.Errorf("model %s: SGLang reads its API key from a file, and no private folder was given for it", m.Name)
	}
	keyFile := secretPath(l, ".yaml") // SGLang wants the suffix
	args := append(slices.Clone(bin),
		"--model-path", weights(m),
		"--host", hostOf(l),
		"--port", strconv.Itoa(l.Port),
		"--config", keyFile,
		"--served-model-name", servedName(m),
		"--tp-size", strconv.Itoa(tp),
		"--mem-fraction-static", formatFloat(gpuMemoryUtilization(m)),
		"--max-running-requests", strconv.Itoa(maxNumSeqs(m)),
		"--enable-metrics",
		"--enable-cache-report",
		// SGLang's default "model" reads generation_config.json; "openai"
		// is the neutral defaults, as vLLM's --generation-config vllm.
		"--sampling-defaults", "openai",
	)
	if m.ContextLength > 0 {
		args = append(args, "--context-length", strconv.Itoa(m.ContextLength))
	}
	if m.Engine.TrustRemoteCode {
		args = append(args, "--trust-remote-code")
	}
	if m.Engine.ReasoningParser != "" {
		args = append(args, "--reasoning-parser", sglangReasoningParser(m.Engine.ReasoningParser))
	}
	if l.ToolCalling {
		name, err := toolCallParser(m, "sglang", m.Engine.ToolCallParser.SGLang)
		if err != nil {
			return Invocation{}, err
		}
		args = append(args, "--tool-call-parser", name)
	}
	args = append(args, m.Engine.ExtraArgs...)
	inv := openAIInvocation(l, args, "/health", "/metrics")
	inv.Files = []SecretFile{{Path: keyFile, Content: []byte("api-key: " + strconv.Quote(l.APIKey) + "\n")}}
	inv.CachedTokens = true
	return inv, nil
}

// toolCallParser is the model's tool-call parser for engine, or the
// configuration error of a model that has none there.
func toolCallParser(m configs.Model, engine, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("model %s: the campaign needs tool calls, and the model has no engine.tool_call_parser.%s; add the parser %s registers for its family (testdata/conformance/tool-parsers.tsv lists them), or leave the model out of tool tasks", m.Name, engine, engine)
	}
	return name, nil
}

// sglangReasoningParser is SGLang's name for the reasoning parser vLLM
// calls name (the registry's reasoning_parser is vLLM's name). From
// SGLang's ReasoningParser.DetectorMap
// (python/sglang/srt/parser/reasoning_parser.py) against vLLM's reasoning
// parser registry; names the two share, such as qwen3, glm45 or kimi_k2,
// pass as they are.
func sglangReasoningParser(name string) string {
	switch name {
	case "openai_gptoss":
		return "gpt-oss"
	case "deepseek_r1":
		return "deepseek-r1"
	case "deepseek_v3":
		return "deepseek-v3"
	case "minimax_m2":
		return "minimax"
	case "minimax_m2_append_think":
		return "minimax-append-think"
	}
	return name
}

// Sim runs npcorch's simulated engine the way vLLM runs: `COMMAND serve
// MODEL` with vLLM's flags, the key in VLLM_API_KEY, then the model's
// engine.sim flags. Command is the executable alone (npcorch sim-engine);
// a model's engine.command replaces it.
type Sim struct {
	Command []string
}

// Invocation implements Engine.
func (s Sim) Invocation(l Launch) (Invocation, error) {
	bin, err := command(l.Model, s.Command, "the sim engine's command is not set (npcorch sets it to `npcorch sim-engine`)")
	if err != nil {
		return Invocation{}, err
	}
	return vllmInvocation(l, bin, l.Model.Engine.Sim)
}

// External is an OpenAI-compatible endpoint that already runs: nothing is
// launched; it is ready when /v1/models lists the model.
type External struct {
	Getenv func(string) string
}

// Invocation implements Engine.
func (e External) Invocation(l Launch) (Invocation, error) {
	m := l.Model
	base := strings.TrimRight(m.Engine.BaseURL, "/")
	if base == "" {
		return Invocation{}, fmt.Errorf("model %s is an external endpoint but engine.base_url is empty; set it (e.g. http://host:8000/v1)", m.Name)
	}
	var key string
	if env := m.Engine.APIKeyEnv; env != "" {
		if e.Getenv != nil {
			key = e.Getenv(env)
		}
		if key == "" {
			return Invocation{}, fmt.Errorf("model %s: environment variable %s (engine.api_key_env) is empty; export the endpoint's API key in it", m.Name, env)
		}
	}
	return Invocation{
		BaseURL:    base,
		APIKey:     key,
		ServedName: servedName(m),
		MaxNumSeqs: maxNumSeqs(m),
	}, nil
}

// Wrapper runs a user command that serves the OpenAI API, for models
// without engine support (HealthGPT). Placeholders {host}, {port}, {model}
// (served name) and {hf_id} are replaced in each argument. The API key
// clients send is in the environment variable NPCORCH_API_KEY and in the
// 0600 file NPCORCH_API_KEY_FILE names; the loader refuses {api_key},
// which would put it on the command line. Whether the wrapper checks the
// key is its own affair, so readiness does not demand it.
type Wrapper struct{}

// Invocation implements Engine.
func (Wrapper) Invocation(l Launch) (Invocation, error) {
	m := l.Model
	if len(m.Engine.Command) == 0 {
		return Invocation{}, fmt.Errorf("model %s has no vLLM support; set engine.command to an OpenAI-compatible wrapper command (placeholders {host} {port} {model} {hf_id}; the API key is in $%s)", m.Name, configs.WrapperKeyEnv)
	}
	r := strings.NewReplacer(
		"{host}", hostOf(l),
		"{port}", strconv.Itoa(l.Port),
		"{model}", servedName(m),
		"{hf_id}", weights(m),
	)
	argv := make([]string, 0, len(m.Engine.Command)+len(m.Engine.ExtraArgs))
	for _, a := range append(slices.Clone(m.Engine.Command), m.Engine.ExtraArgs...) {
		if strings.Contains(a, "{api_key}") {
			return Invocation{}, fmt.Errorf("model %s: {api_key} would put the API key on the wrapper's command line; read $%s instead", m.Name, configs.WrapperKeyEnv)
		}
		argv = append(argv, r.Replace(a))
	}
	inv := openAIInvocation(l, argv, "", "")
	extra := []string{configs.WrapperKeyEnv + "=" + l.APIKey}
	if l.SecretDir != "" {
		keyFile := secretPath(l, ".key")
		inv.Files = []SecretFile{{Path: keyFile, Content: []byte(l.APIKey + "\n")}}
		extra = append(extra, configs.WrapperKeyFileEnv+"="+keyFile)
	}
	inv.Env = baseEnv(l, extra...)
	inv.Probe.RequireAuth = false
	return inv, nil
}

// secretPath is the replica's key file in l.SecretDir, which replicas of
// several models may share.
func secretPath(l Launch, suffix string) string {
	return filepath.Join(l.SecretDir, unsafeName.ReplaceAllString(l.Model.Name, "_")+".r"+strconv.Itoa(l.Replica)+suffix)
}

var (
	_ Engine = VLLM{}
	_ Engine = SGLang{}
	_ Engine = Sim{}
	_ Engine = External{}
	_ Engine = Wrapper{}
)

// command is the engine executable of a launched replica: the model's
// engine.command when it sets one (a fork, a virtual environment), else
// the engine's default; missing says what to do when there is neither.
func command(m configs.Model, def []string, missing string) ([]string, error) {
	if len(m.Engine.Command) > 0 {
		return m.Engine.Command, nil
	}
	if len(def) == 0 {
		return nil, fmt.Errorf("model %s: %s", m.Name, missing)
	}
	return def, nil
}
