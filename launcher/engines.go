package launcher

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// VLLM runs `vllm serve`. A model's engine.command replaces Binary, for
// forks and virtual environments (it must accept `serve MODEL` and vLLM's
// flags).
type VLLM struct {
	Binary []string
}

// Invocation implements Engine.
func (v VLLM) Invocation(l Launch) (Invocation, error) {
	bin, err := command(l.Model, v.Binary, "no vLLM binary configured; set engine.command")
	if err != nil {
		return Invocation{}, err
	}
	flags, err := vllmFlags(l)
	if err != nil {
		return Invocation{}, err
	}
	argv := append(append(append([]string{}, bin...), "serve", weights(l.Model)), flags...)
	return openAIInvocation(l, argv, "/health", "/metrics"), nil
}

// vllmFlags are the flags after `serve MODEL`, shared with Sim.
func vllmFlags(l Launch) ([]string, error) {
	m := l.Model
	tp, err := tensorParallel(l)
	if err != nil {
		return nil, err
	}
	args := []string{
		"--host", hostOf(l),
		"--port", strconv.Itoa(l.Port),
		"--api-key", l.APIKey,
		"--served-model-name", servedName(m),
		"--tensor-parallel-size", strconv.Itoa(tp),
		"--gpu-memory-utilization", formatFloat(gpuMemoryUtilization(m)),
	}
	if m.ContextLength > 0 {
		args = append(args, "--max-model-len", strconv.Itoa(m.ContextLength))
	}
	args = append(args, "--max-num-seqs", strconv.Itoa(maxNumSeqs(m)))
	limit, err := mmLimit(l)
	if err != nil {
		return nil, err
	}
	args = append(args, "--limit-mm-per-prompt", limit)
	if l.MediaRoot != "" {
		args = append(args, "--allowed-local-media-path", l.MediaRoot)
	}
	args = append(args, "--generation-config", "vllm")
	if l.APIServers > 1 {
		args = append(args, "--api-server-count", strconv.Itoa(l.APIServers))
	}
	if m.Engine.TrustRemoteCode {
		args = append(args, "--trust-remote-code")
	}
	if m.Engine.ReasoningParser != "" {
		args = append(args, "--reasoning-parser", m.Engine.ReasoningParser)
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

// SGLang runs `python -m sglang.launch_server`.
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
	args := append([]string{}, bin...)
	args = append(args,
		"--model-path", weights(m),
		"--host", hostOf(l),
		"--port", strconv.Itoa(l.Port),
		"--api-key", l.APIKey,
		"--served-model-name", servedName(m),
		"--tp-size", strconv.Itoa(tp),
		"--mem-fraction-static", formatFloat(gpuMemoryUtilization(m)),
		"--max-running-requests", strconv.Itoa(maxNumSeqs(m)),
		"--enable-metrics",
	)
	if m.ContextLength > 0 {
		args = append(args, "--context-length", strconv.Itoa(m.ContextLength))
	}
	if m.Engine.TrustRemoteCode {
		args = append(args, "--trust-remote-code")
	}
	if m.Engine.ReasoningParser != "" {
		args = append(args, "--reasoning-parser", m.Engine.ReasoningParser)
	}
	args = append(args, m.Engine.ExtraArgs...)
	return openAIInvocation(l, args, "/health", "/metrics"), nil
}

// Sim runs npcorch's simulated engine with vLLM's flags plus the model's
// engine.sim flags. Command is the self-invocation up to and including
// "serve"; a model's engine.command replaces it.
type Sim struct {
	Command []string
}

// Invocation implements Engine.
func (s Sim) Invocation(l Launch) (Invocation, error) {
	bin, err := command(l.Model, s.Command, "the sim engine's command is not set (npcorch sets it to `npcorch sim-engine serve`)")
	if err != nil {
		return Invocation{}, err
	}
	flags, err := vllmFlags(l)
	if err != nil {
		return Invocation{}, err
	}
	argv := append(append([]string{}, bin...), weights(l.Model))
	argv = append(append(argv, flags...), l.Model.Engine.Sim...)
	return openAIInvocation(l, argv, "/health", "/metrics"), nil
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
// without engine support (HealthGPT). Placeholders {host}, {port},
// {api_key}, {model} (served name) and {hf_id} are replaced in each
// argument.
type Wrapper struct{}

// Invocation implements Engine.
func (Wrapper) Invocation(l Launch) (Invocation, error) {
	m := l.Model
	if len(m.Engine.Command) == 0 {
		return Invocation{}, fmt.Errorf("model %s has no vLLM support; set engine.command to an OpenAI-compatible wrapper command (placeholders {host} {port} {api_key} {model} {hf_id})", m.Name)
	}
	r := strings.NewReplacer(
		"{host}", hostOf(l),
		"{port}", strconv.Itoa(l.Port),
		"{api_key}", l.APIKey,
		"{model}", servedName(m),
		"{hf_id}", weights(m),
	)
	usesKey := false
	argv := make([]string, 0, len(m.Engine.Command)+len(m.Engine.ExtraArgs))
	for _, a := range append(append([]string{}, m.Engine.Command...), m.Engine.ExtraArgs...) {
		usesKey = usesKey || strings.Contains(a, "{api_key}")
		argv = append(argv, r.Replace(a))
	}
	inv := openAIInvocation(l, argv, "", "")
	inv.Probe.RequireAuth = usesKey
	if !usesKey {
		inv.APIKey = ""
	}
	return inv, nil
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
