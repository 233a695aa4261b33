package launcher

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// ImageLimits is the real image count and size of the prepared requests a
// model will receive; vLLM profiles memory for the declared worst case.
type ImageLimits struct {
	Count  int // images per request
	Width  int // pixels
	Height int // pixels
}

// Launch is everything an engine needs to build one replica's invocation.
type Launch struct {
	Model     configs.Model
	Replica   int      // replica number within the model, from 0
	GPUs      []string // GPU UUIDs; they become CUDA_VISIBLE_DEVICES
	Host      string   // listen address, normally 127.0.0.1
	Port      int      // allocated by Ports
	APIKey    string   // generated per replica
	MediaRoot string   // --allowed-local-media-path (prepared-image root)
	Images    ImageLimits
	// APIServers > 1 becomes --api-server-count (vLLM and sim engines).
	APIServers int
	// SecretDir is a folder only npcorch's user can read, where the
	// invocation's Files are written before the engine starts (SGLang's
	// key file). Engines that need it fail without it.
	SecretDir string
	// ToolCalling starts the engine with tool calling, for a campaign whose
	// tasks send tools: vLLM `--enable-auto-tool-choice --tool-call-parser
	// NAME`, SGLang `--tool-call-parser NAME`, NAME from the model's
	// engine.tool_call_parser. Off, the command line is what it was before
	// tool calling existed. A model with no parser for its engine is a
	// configuration error.
	ToolCalling bool
}

// SecretFile is a file an engine reads a secret from (an API key), so
// that the secret stays off its command line. The launcher writes it
// with mode 0600 before the start and removes it after the stop.
type SecretFile struct {
	// Path is absolute, inside Launch.SecretDir.
	Path string
	// Content is the file's bytes.
	Content []byte
}

// Probe says how readiness is proven for one engine kind.
type Probe struct {
	// HealthURL must answer 200; empty skips the check.
	HealthURL string
	// RequireAuth demands that /v1/models reject a wrong API key, which
	// proves the listener is our child and not a foreign server.
	RequireAuth bool
	// WarmUp sends a one-token chat before the replica is marked ready.
	WarmUp bool
	// MetricsURL serves Prometheus metrics for the stall watchdog; empty
	// disables the watchdog.
	MetricsURL string
}

// Invocation is what to run for one replica and how to reach it.
type Invocation struct {
	// Argv is the command to start; nil means nothing is launched
	// (external endpoints).
	Argv []string
	// Env is added to npcorch's environment, as KEY=VALUE, sorted. The
	// API key travels here or in Files, never in Argv: /proc/PID/cmdline
	// is readable by every user, /proc/PID/environ only by the owner.
	Env []string
	// Files must exist (mode 0600) before Argv starts.
	Files []SecretFile
	// BaseURL is the OpenAI-compatible base URL, ending in /v1.
	BaseURL string
	// APIKey is the bearer token clients send; may be empty for external
	// endpoints without a key.
	APIKey string
	// ServedName is the model name /v1/models must list.
	ServedName string
	// MaxNumSeqs is the engine's concurrency ceiling, for clients.
	MaxNumSeqs int
	// CachedTokens says that the engine was started to report cached
	// prompt tokens (usage.prompt_tokens_details.cached_tokens), so that
	// an answer without them had none cached. vLLM leaves the details out
	// when nothing was cached.
	CachedTokens bool
	// Probe describes readiness checks.
	Probe Probe
}

// Engine turns a Launch into an Invocation. Implementations hold only
// configuration; they start nothing.
type Engine interface {
	Invocation(l Launch) (Invocation, error)
}

// Defaults for engine flags the registry may leave unset.
const (
	DefaultGPUMemoryUtilization = 0.9
	DefaultMaxNumSeqs           = 256
)

// Engines chooses the Engine for a model's engine kind.
type Engines struct {
	// VLLM is the default vLLM binary, ["vllm"] when nil.
	VLLM []string
	// SGLang is the default SGLang launcher, ["python", "-m",
	// "sglang.launch_server"] when nil.
	SGLang []string
	// Sim is the simulated engine's executable, e.g. [os.Executable(),
	// "sim-engine"]; npcorch adds `serve MODEL` as for vLLM.
	Sim []string
	// Getenv reads API keys of external endpoints; os.Getenv when nil.
	Getenv func(string) string
}

// For returns the engine serving kind (one of the configs.Engine*
// constants).
func (e Engines) For(kind configs.EngineKind) (Engine, error) {
	switch kind {
	case configs.EngineVLLM, "":
		return VLLM{Binary: e.vllm()}, nil
	case configs.EngineSGLang:
		return SGLang{Binary: e.sglang()}, nil
	case configs.EngineSim:
		return Sim{Command: e.Sim}, nil
	case configs.EngineExternal:
		getenv := e.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		return External{Getenv: getenv}, nil
	case configs.EngineWrapper:
		return Wrapper{}, nil
	}
	return nil, fmt.Errorf("unknown engine kind %q; use one of vllm, sglang, sim, wrapper, external", kind)
}

func (e Engines) vllm() []string {
	if len(e.VLLM) == 0 {
		return []string{"vllm"}
	}
	return e.VLLM
}

func (e Engines) sglang() []string {
	if len(e.SGLang) == 0 {
		return []string{"python", "-m", "sglang.launch_server"}
	}
	return e.SGLang
}

// Executable is the program a launch of m on this node starts: its
// engine.command's first word, else the kind's default. It is "" for an
// external endpoint (nothing is launched) and for a command that is not
// configured (the launch says why).
func (e Engines) Executable(m configs.Model) string {
	argv := m.Engine.Command
	if len(argv) == 0 {
		switch m.Engine.Kind {
		case configs.EngineVLLM, "":
			argv = e.vllm()
		case configs.EngineSGLang:
			argv = e.sglang()
		case configs.EngineSim:
			argv = e.Sim
		}
	}
	if m.Engine.Kind == configs.EngineExternal || len(argv) == 0 {
		return ""
	}
	return argv[0]
}

// baseEnv is the environment every launched engine gets: its GPUs by UUID,
// the names the gpu package uses to attribute processes, the model's
// engine.env, and extra (the API key), which wins over engine.env.
func baseEnv(l Launch, extra ...string) []string {
	vars := map[string]string{}
	for k, v := range l.Model.Engine.Env {
		vars[k] = v
	}
	vars["NPCORCH_MODEL"] = l.Model.Name
	vars["NPCORCH_REPLICA"] = strconv.Itoa(l.Replica)
	if len(l.GPUs) > 0 {
		vars["CUDA_VISIBLE_DEVICES"] = strings.Join(l.GPUs, ",")
	}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// root is the scheme://host:port of a launched engine.
func root(l Launch) string {
	host := l.Host
	if host == "" {
		host = "127.0.0.1"
	}
	return "http://" + host + ":" + strconv.Itoa(l.Port)
}

func hostOf(l Launch) string {
	if l.Host == "" {
		return "127.0.0.1"
	}
	return l.Host
}

// servedName is the model name clients use.
func servedName(m configs.Model) string { return m.ServedName() }

// weights is what the engine loads: the Hugging Face id, else the name.
func weights(m configs.Model) string {
	if m.HFID != "" {
		return m.HFID
	}
	return m.Name
}

// tensorParallel checks the pinned TP size against the GPU set.
func tensorParallel(l Launch) (int, error) {
	pinned := l.Model.Engine.TensorParallel
	n := len(l.GPUs)
	switch {
	case n > 0 && pinned > 0 && pinned != n:
		return 0, fmt.Errorf("model %s pins tensor_parallel %d but replica %d was given %d GPUs (%s); give it %d GPUs or change tensor_parallel",
			l.Model.Name, pinned, l.Replica, n, strings.Join(l.GPUs, ","), pinned)
	case n > 0:
		return n, nil
	case pinned > 0:
		return pinned, nil
	}
	return 1, nil
}

func maxNumSeqs(m configs.Model) int {
	if m.Engine.MaxNumSeqs > 0 {
		return m.Engine.MaxNumSeqs
	}
	return DefaultMaxNumSeqs
}

func gpuMemoryUtilization(m configs.Model) float64 {
	if m.Engine.GPUMemoryUtilization > 0 {
		return m.Engine.GPUMemoryUtilization
	}
	return DefaultGPUMemoryUtilization
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
