package simengine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// usageLine is what vLLM's argparse prints before an argument error.
const usageLine = "usage: vllm serve [model_tag] [options]"

// options are the parsed command line of one engine: the vLLM flags npcorch
// passes and the --sim-* flags that shape the simulation.
type options struct {
	Model          string
	Host           string
	Port           int
	APIKey         string
	ServedName     string
	TensorParallel int
	GPUMemoryUtil  float64
	MaxModelLen    int
	MaxNumSeqs     int
	ImageLimit     int // images per prompt (--limit-mm-per-prompt)
	AllowedMedia   string
	ReasoningParse string
	PrefixCaching  bool
	BlockSize      int
	// PromptTokensDetails puts usage.prompt_tokens_details.cached_tokens
	// in answers that had cached tokens, as vLLM's
	// --enable-prompt-tokens-details does; without it they are left out.
	PromptTokensDetails bool
	AccessLog           bool
	// AutoToolChoice and ToolParser are --enable-auto-tool-choice and
	// --tool-call-parser: tool_choice "auto" needs both, as in vLLM.
	AutoToolChoice bool
	ToolParser     string

	LoadTime        time.Duration
	ImageTokens     int
	PrefillTPS      float64
	DecodeTPS       float64
	ChunkTokens     int
	KVTokens        int
	KeyFile         string
	ScriptFile      string
	Policy          policy
	Seed            int64
	Reasoning       bool
	ReasoningTokens int
	Workers         int
	WorkerNoSIGTERM bool
	OrphanWorkers   bool
	Faults          startFaults
}

// defaultImageLimit is the per-prompt limit of a modality that
// --limit-mm-per-prompt does not list (vLLM V1 uses 999).
const defaultImageLimit = 999

// argError is an argument error that Main reports the way vLLM's argparse
// does: usage line, "vllm serve: error: ...", exit status 2.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func argErrorf(format string, a ...any) error { return &argError{msg: fmt.Sprintf(format, a...)} }

// newFlagSet declares every flag the simulated engine accepts and binds them
// to o. Flags that only matter to a real GPU engine are accepted and ignored.
func newFlagSet(o *options) (*pflag.FlagSet, *rawFlags) {
	fs := pflag.NewFlagSet("vllm serve", pflag.ContinueOnError)
	fs.SortFlags = false
	raw := &rawFlags{}

	// vLLM flags that the simulation honours.
	fs.StringVar(&raw.model, "model", "", "model to serve (alternative to the positional MODEL)")
	fs.StringVar(&o.Host, "host", "", "host name or address to bind (default: all interfaces)")
	fs.IntVar(&o.Port, "port", 8000, "port to listen on")
	fs.StringVar(&o.APIKey, "api-key", "", "require this key as 'Authorization: Bearer KEY' on /v1/* (default: $"+APIKeyEnv+", as vLLM)")
	fs.StringVar(&o.ServedName, "served-model-name", "", "model name in the API (default: MODEL)")
	fs.IntVar(&o.TensorParallel, "tensor-parallel-size", 1, "tensor parallel size (also the default --sim-workers)")
	fs.Float64Var(&o.GPUMemoryUtil, "gpu-memory-utilization", 0.9, "fraction of GPU memory (shown in the log)")
	fs.IntVar(&o.MaxModelLen, "max-model-len", 32768, "context length in tokens (prompt + completion)")
	fs.IntVar(&o.MaxNumSeqs, "max-num-seqs", 256, "requests running at once; the rest wait")
	fs.StringVar(&raw.limitMM, "limit-mm-per-prompt", "", `JSON limits per modality, e.g. {"image":{"count":80},"video":0}`)
	fs.StringVar(&o.AllowedMedia, "allowed-local-media-path", "", "directory under which file:// image URLs are allowed")
	fs.StringVar(&o.ReasoningParse, "reasoning-parser", "", "reasoning parser: with --sim-reasoning, thinking goes to delta.reasoning")
	fs.BoolVar(&o.PrefixCaching, "enable-prefix-caching", true, "simulate prefix caching (cached_tokens, shorter prefill)")
	fs.BoolVar(&raw.noPrefixCaching, "no-enable-prefix-caching", false, "disable prefix caching")
	fs.IntVar(&o.BlockSize, "block-size", 16, "KV cache block size in tokens (cached_tokens granularity)")
	fs.BoolVar(&o.PromptTokensDetails, "enable-prompt-tokens-details", false, "report usage.prompt_tokens_details.cached_tokens (when some were cached)")
	fs.BoolVar(&raw.noAccessLog, "disable-uvicorn-access-log", false, "do not log one line per HTTP request")
	fs.BoolVar(&o.AutoToolChoice, "enable-auto-tool-choice", false, "allow tool_choice \"auto\" (needs --tool-call-parser)")
	fs.StringVar(&o.ToolParser, "tool-call-parser", "", "tool call parser name (the simulation emits calls from --sim-script whatever the name)")

	// vLLM flags that are accepted and validated but change nothing here.
	fs.StringVar(&raw.generationConfig, "generation-config", "auto", "accepted (sampling defaults do not apply to the simulation)")
	fs.BoolVar(&raw.trustRemoteCode, "trust-remote-code", false, "accepted")
	fs.StringVar(&raw.mmProcessorKwargs, "mm-processor-kwargs", "", "JSON; accepted")
	fs.StringVar(&raw.mmEncoderTPMode, "mm-encoder-tp-mode", "weights", "weights or data; accepted")
	fs.StringVar(&raw.dtype, "dtype", "auto", "auto, half, float16, bfloat16, float or float32; accepted")
	fs.Int64Var(&raw.vllmSeed, "seed", 0, "accepted (the simulation's answers depend on --sim-seed)")
	for _, name := range []string{"tokenizer", "revision", "download-dir", "load-format", "kv-cache-dtype",
		"chat-template", "chat-template-content-format", "quantization", "hf-overrides",
		"override-generation-config", "uvicorn-log-level", "max-num-batched-tokens", "api-server-count",
		"pipeline-parallel-size", "data-parallel-size", "swap-space"} {
		fs.String(name, "", "accepted")
	}
	for _, name := range []string{"enforce-eager", "disable-log-stats", "disable-log-requests", "enable-log-requests",
		"enable-chunked-prefill", "disable-custom-all-reduce"} {
		fs.Bool(name, false, "accepted")
	}

	// Simulation flags.
	fs.DurationVar(&o.LoadTime, "sim-load-time", 0, "time spent \"loading\" with the port refusing connections")
	fs.IntVar(&o.ImageTokens, "sim-image-tokens", 800, "prompt tokens per image")
	fs.Float64Var(&o.PrefillTPS, "sim-prefill-tps", 100000, "prefill speed in tokens per second")
	fs.Float64Var(&o.DecodeTPS, "sim-decode-tps", 2000, "decode speed in tokens per second per request")
	fs.IntVar(&o.ChunkTokens, "sim-chunk-tokens", 2, "tokens per streamed chunk")
	fs.IntVar(&o.KVTokens, "sim-kv-tokens", 0, "KV cache capacity in tokens (default 4 x --max-model-len)")
	fs.StringVar(&o.KeyFile, "sim-key", "", "sim key file (format npcorch-simkey/1) with the answers")
	fs.StringVar(&o.ScriptFile, "sim-script", "", "sim script file (format npcorch-simscript/1): the turns of tool-calling agents")
	fs.StringVar(&raw.policy, "sim-policy", "oracle", "answer policy: right=P, oracle, constant or garbage")
	fs.Int64Var(&o.Seed, "sim-seed", 0, "seed of the right/wrong decisions")
	fs.BoolVar(&o.Reasoning, "sim-reasoning", false, "think before answering (delta.reasoning, or <think> in content without --reasoning-parser)")
	fs.IntVar(&o.ReasoningTokens, "sim-reasoning-tokens", 0, "with --sim-reasoning, think this many tokens before each answer (default: one sentence)")
	fs.IntVar(&o.Workers, "sim-workers", -1, "worker child processes (default --tensor-parallel-size)")
	fs.BoolVar(&o.WorkerNoSIGTERM, "sim-worker-ignore-sigterm", false, "workers ignore SIGTERM (only SIGKILL ends them)")
	fs.BoolVar(&o.OrphanWorkers, "sim-orphan-workers", false, "workers survive the engine's death (vLLM #55510)")
	fs.StringSliceVar(&raw.faults, "sim-fault", nil, "faults: exit-during-load, never-ready, crash-after=N, hang-after=N, 503-after=N, stream-error-after=N")
	return fs, raw
}

// rawFlags hold flag values that need checking or converting after parsing.
type rawFlags struct {
	model             string
	limitMM           string
	noPrefixCaching   bool
	noAccessLog       bool
	generationConfig  string
	trustRemoteCode   bool
	mmProcessorKwargs string
	mmEncoderTPMode   string
	dtype             string
	vllmSeed          int64
	policy            string
	faults            []string
}

// APIKeyEnv is where vLLM, and so the simulated engine, reads the API key
// when --api-key is not given (--api-key wins when both are set).
const APIKeyEnv = "VLLM_API_KEY"

// parseOptions parses an engine command line: [serve] MODEL [flags], with
// the API key from getenv(APIKeyEnv) unless --api-key gives one. It
// returns pflag.ErrHelp for -h/--help and an *argError for anything vLLM's
// argparse would reject.
func parseOptions(args []string, getenv func(string) string) (*options, error) {
	o := &options{}
	fs, raw := newFlagSet(o)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, err
		}
		return nil, argErrorf("%s", argparseMessage(err))
	}
	pos := fs.Args()
	if len(pos) > 0 && pos[0] == "serve" {
		pos = pos[1:]
	}
	switch {
	case len(pos) == 1:
		o.Model = pos[0]
	case len(pos) == 0 && raw.model != "":
		o.Model = raw.model
	case len(pos) == 0:
		return nil, argErrorf("the following arguments are required: model_tag")
	default:
		return nil, argErrorf("unrecognized arguments: %s", strings.Join(pos[1:], " "))
	}
	if o.ServedName == "" {
		o.ServedName = o.Model
	}
	if o.APIKey == "" && getenv != nil {
		o.APIKey = getenv(APIKeyEnv)
	}
	if raw.noPrefixCaching {
		o.PrefixCaching = false
	}
	o.AccessLog = !raw.noAccessLog
	if err := o.check(raw); err != nil {
		return nil, err
	}
	return o, nil
}

// check validates value ranges and converts the raw flags.
func (o *options) check(raw *rawFlags) error {
	if o.Port < 0 || o.Port > 65535 {
		return argErrorf("argument --port: %d is not a valid port (0-65535)", o.Port)
	}
	for _, c := range []struct {
		name string
		v    int
		min  int
	}{
		{"--tensor-parallel-size", o.TensorParallel, 1},
		{"--max-model-len", o.MaxModelLen, 1},
		{"--max-num-seqs", o.MaxNumSeqs, 1},
		{"--block-size", o.BlockSize, 1},
		{"--sim-image-tokens", o.ImageTokens, 0},
		{"--sim-chunk-tokens", o.ChunkTokens, 1},
		{"--sim-kv-tokens", o.KVTokens, 0},
		{"--sim-reasoning-tokens", o.ReasoningTokens, 0},
	} {
		if c.v < c.min {
			return argErrorf("argument %s: must be at least %d, got %d", c.name, c.min, c.v)
		}
	}
	if o.GPUMemoryUtil <= 0 || o.GPUMemoryUtil > 1 {
		return argErrorf("argument --gpu-memory-utilization: must be in (0, 1], got %g", o.GPUMemoryUtil)
	}
	if o.PrefillTPS <= 0 || o.DecodeTPS <= 0 {
		return argErrorf("arguments --sim-prefill-tps and --sim-decode-tps must be positive")
	}
	if o.LoadTime < 0 {
		return argErrorf("argument --sim-load-time: must not be negative")
	}
	if o.KVTokens == 0 {
		o.KVTokens = 4 * o.MaxModelLen
	}
	if o.Workers < 0 {
		o.Workers = o.TensorParallel
	}
	if !slices.Contains([]string{"auto", "half", "float16", "bfloat16", "float", "float32"}, raw.dtype) {
		return argErrorf("argument --dtype: invalid choice: '%s' (choose from 'auto', 'half', 'float16', 'bfloat16', 'float', 'float32')", raw.dtype)
	}
	if !slices.Contains([]string{"weights", "data"}, raw.mmEncoderTPMode) {
		return argErrorf("argument --mm-encoder-tp-mode: invalid choice: '%s' (choose from 'weights', 'data')", raw.mmEncoderTPMode)
	}
	if raw.mmProcessorKwargs != "" && !json.Valid([]byte(raw.mmProcessorKwargs)) {
		return argErrorf("argument --mm-processor-kwargs: invalid loads value: '%s'", raw.mmProcessorKwargs)
	}
	limit, err := parseImageLimit(raw.limitMM)
	if err != nil {
		return err
	}
	o.ImageLimit = limit
	if o.Policy, err = parsePolicy(raw.policy); err != nil {
		return argErrorf("argument --sim-policy: %v", err)
	}
	if o.Faults, err = parseStartFaults(raw.faults); err != nil {
		return argErrorf("argument --sim-fault: %v", err)
	}
	return nil
}

// parseImageLimit reads the image count out of --limit-mm-per-prompt, which
// vLLM accepts as {"image": N} or {"image": {"count": N, "width": W, ...}}.
func parseImageLimit(s string) (int, error) {
	if s == "" {
		return defaultImageLimit, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return 0, argErrorf("argument --limit-mm-per-prompt: invalid loads value: '%s'", s)
	}
	img, ok := m["image"]
	if !ok {
		return defaultImageLimit, nil
	}
	var n int
	if err := json.Unmarshal(img, &n); err == nil {
		if n < 0 {
			return 0, argErrorf("argument --limit-mm-per-prompt: image count must not be negative, got %d", n)
		}
		return n, nil
	}
	var spec struct {
		Count *int `json:"count"`
	}
	if err := json.Unmarshal(img, &spec); err != nil || spec.Count == nil || *spec.Count < 0 {
		return 0, argErrorf(`argument --limit-mm-per-prompt: "image" must be a count or {"count": N, ...}, got %s`, img)
	}
	return *spec.Count, nil
}

// invalidArgRe matches pflag's message for a value that does not parse.
var invalidArgRe = regexp.MustCompile(`^invalid argument "(.*)" for "(?:-\w, )?(--[\w-]+)" flag: (.*)$`)

// argparseMessage rewrites pflag's parse errors in argparse's words.
func argparseMessage(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "unknown flag: "); ok {
		return "unrecognized arguments: " + rest
	}
	if rest, ok := strings.CutPrefix(msg, "unknown shorthand flag: "); ok {
		return "unrecognized arguments: " + rest
	}
	if rest, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return "argument " + strings.Trim(rest, "'") + ": expected one argument"
	}
	if m := invalidArgRe.FindStringSubmatch(msg); m != nil {
		kind := "value"
		switch {
		case strings.Contains(m[3], "ParseInt"), strings.Contains(m[3], "Atoi"):
			kind = "int value"
		case strings.Contains(m[3], "ParseFloat"):
			kind = "float value"
		case strings.Contains(m[3], "duration"):
			kind = "duration value"
		}
		return fmt.Sprintf("argument %s: invalid %s: '%s'", m[2], kind, m[1])
	}
	return msg
}

// helpText renders the flag help that --help prints.
func helpText() string {
	fs, _ := newFlagSet(&options{})
	return usageLine + "\n\nSimulated vLLM engine (npcorch sim-engine): [serve] MODEL [options]\n\noptions:\n" + fs.FlagUsages()
}
