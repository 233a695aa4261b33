package configs

// EngineKind says what serves a model: its engine.kind.
type EngineKind string

// The engine kinds a model can be served by.
const (
	EngineVLLM     EngineKind = "vllm"     // `vllm serve` (or a fork through Engine.Command)
	EngineSGLang   EngineKind = "sglang"   // `python -m sglang.launch_server`
	EngineExternal EngineKind = "external" // an existing OpenAI-compatible endpoint; nothing launched
	EngineSim      EngineKind = "sim"      // npcorch's own simulated engine (`npcorch sim-engine`)
	EngineWrapper  EngineKind = "wrapper"  // a user command that serves the OpenAI API (e.g. HealthGPT)
)

// Model is one entry of the model registry (configs/models.yaml), possibly
// overridden by a campaign file.
type Model struct {
	// Name is the served model name and the key used everywhere in npcorch.
	Name string `yaml:"name" json:"name"`
	// HFID is the Hugging Face repository id (the weights the engine loads).
	HFID string `yaml:"hf_id,omitempty" json:"hf_id,omitempty"`
	// Benchmark is the paper whose roster the model belongs to: empty for
	// NPCBench (the registry's first 30), BenchmarkCliniCARE for the
	// open-weight agents of CliniCARE-Bench (§6.1), which NPCBench's
	// paper-scale plan leaves out.
	Benchmark string `yaml:"benchmark,omitempty" json:"benchmark,omitempty"`
	// Family groups related models in reports (Qwen3-VL, Lingshu, ...).
	Family string `yaml:"family,omitempty" json:"family,omitempty"`
	// ParamsB is the parameter count in billions; WeightBytes the size of
	// the weights on disk: bf16, or the checkpoint's own format (GPT-OSS
	// ships its experts in MXFP4).
	ParamsB     float64 `yaml:"params_b,omitempty" json:"params_b,omitempty"`
	WeightBytes int64   `yaml:"weight_bytes,omitempty" json:"weight_bytes,omitempty"`
	// AttentionHeads, KVHeads, VisionHeads and VocabSize decide which tensor
	// parallel sizes are valid: TP must divide each of them.
	AttentionHeads int `yaml:"attention_heads,omitempty" json:"attention_heads,omitempty"`
	KVHeads        int `yaml:"kv_heads,omitempty" json:"kv_heads,omitempty"`
	VisionHeads    int `yaml:"vision_heads,omitempty" json:"vision_heads,omitempty"`
	VocabSize      int `yaml:"vocab_size,omitempty" json:"vocab_size,omitempty"`
	// MoE marks mixture-of-experts models (active parameters are fewer).
	MoE bool `yaml:"moe,omitempty" json:"moe,omitempty"`
	// TextOnly marks a model that reads no images (the paper's Table A7
	// input interface "Text"): it is asked no task whose prompts show
	// images or build on answers about images, its engine gets no
	// multimodal flag (--limit-mm-per-prompt, --allowed-local-media-path)
	// and no API servers for image preprocessing. Such a model has no
	// vision tower (vision_heads) and no mm_processor_kwargs.
	TextOnly bool `yaml:"text_only,omitempty" json:"text_only,omitempty"`

	Engine Engine `yaml:"engine" json:"engine"`
	// ContextLength is the engine's --max-model-len.
	ContextLength int `yaml:"context_length,omitempty" json:"context_length,omitempty"`
	// Tasks holds per-task request settings (output budget, image limits).
	Tasks map[string]TaskSettings `yaml:"tasks,omitempty" json:"tasks,omitempty"`
	// ChatTemplateKwargs are sent with every request (e.g. enable_thinking:
	// false for Qwen3.5/3.6).
	ChatTemplateKwargs map[string]any `yaml:"chat_template_kwargs,omitempty" json:"chat_template_kwargs,omitempty"`
	// ReasoningEffort is the reasoning_effort a judge's requests ask for
	// (low, medium or high; none sends none; empty: the judge task's).
	ReasoningEffort string `yaml:"reasoning_effort,omitempty" json:"reasoning_effort,omitempty"`
	// MMProcessorKwargs go to --mm-processor-kwargs (max_pixels,
	// max_dynamic_patch...).
	MMProcessorKwargs map[string]any `yaml:"mm_processor_kwargs,omitempty" json:"mm_processor_kwargs,omitempty"`
	// SpeedTokensPerS is a rough prefill throughput estimate on one A800,
	// used only to order models in the campaign plan.
	SpeedTokensPerS float64 `yaml:"speed_tokens_per_s,omitempty" json:"speed_tokens_per_s,omitempty"`
	// PreprocessImagesPerS is how many 512×1644 images one API server
	// process of the engine decodes, resizes and patchifies per second
	// (larger images cost in proportion to their pixels); 0 uses the
	// planner's default (package launcher/placement explains it).
	PreprocessImagesPerS float64 `yaml:"preprocess_images_per_s,omitempty" json:"preprocess_images_per_s,omitempty"`
	// Notes is free text shown by `npcorch plan` (support caveats).
	Notes string `yaml:"notes,omitempty" json:"notes,omitempty"`
}

// Engine says how a model is served.
type Engine struct {
	// Kind is one of the Engine* constants.
	Kind EngineKind `yaml:"kind" json:"kind"`
	// Command overrides the engine executable: a vLLM fork's binary or a
	// virtual environment's bin/vllm (Hulu-Med), or a wrapper (HealthGPT).
	// For vllm and sim engines it is the executable alone (with any
	// arguments that come before the subcommand): npcorch adds `serve
	// MODEL` itself, so a command ending in "serve" is refused.
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// Version is the vLLM release the engine runs, or the release a fork
	// is based on ("0.8.5"); it decides which flags npcorch may pass
	// (--api-server-count from 0.9.0, --enable-prompt-tokens-details from
	// 0.6.4). Empty means the release npcorch is checked against
	// (ReferenceVLLM), whether or not Command is set.
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Env is added to the engine's environment.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// GPUMemoryUtilization is --gpu-memory-utilization (default 0.9).
	GPUMemoryUtilization float64 `yaml:"gpu_memory_utilization,omitempty" json:"gpu_memory_utilization,omitempty"`
	// MaxNumSeqs is --max-num-seqs and the client's concurrency ceiling.
	MaxNumSeqs int `yaml:"max_num_seqs,omitempty" json:"max_num_seqs,omitempty"`
	// TrustRemoteCode adds --trust-remote-code.
	TrustRemoteCode bool `yaml:"trust_remote_code,omitempty" json:"trust_remote_code,omitempty"`
	// ReasoningParser adds --reasoning-parser (vLLM's name; SGLang's is
	// derived from it). Refused at load unless vLLM registers it.
	ReasoningParser string `yaml:"reasoning_parser,omitempty" json:"reasoning_parser,omitempty"`
	// ToolCallParser is the parser that turns the model's tool-call markup
	// into tool_calls, per engine. The engine is started with tool calling
	// (vLLM: --enable-auto-tool-choice --tool-call-parser NAME; SGLang:
	// --tool-call-parser NAME) only when a campaign needs tool calls
	// (launcher.Launch.ToolCalling). Refused at load unless that engine
	// registers the name.
	ToolCallParser ToolCallParsers `yaml:"tool_call_parser,omitempty" json:"tool_call_parser,omitzero"`
	// ExtraArgs are appended to the engine command line as they are.
	ExtraArgs []string `yaml:"extra_args,omitempty" json:"extra_args,omitempty"`
	// TensorParallel pins the TP size; 0 lets the planner choose.
	TensorParallel int `yaml:"tensor_parallel,omitempty" json:"tensor_parallel,omitempty"`
	// Replicas pins the number of data-parallel replicas; 0 lets the
	// planner choose.
	Replicas int `yaml:"replicas,omitempty" json:"replicas,omitempty"`
	// BaseURL and APIKeyEnv describe an external endpoint (Kind external).
	BaseURL   string `yaml:"base_url,omitempty" json:"base_url,omitempty"`
	APIKeyEnv string `yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	// APIModel is the model id an external endpoint serves and lists in
	// /v1/models ("gpt-4.1", "deepseek-chat"); empty means the registry
	// name. Journals, logs and score files keep the registry name.
	APIModel string `yaml:"api_model,omitempty" json:"api_model,omitempty"`
	// Sim holds the simulated engine's extra flags (Kind sim), e.g.
	// ["--sim-policy", "right=0.8"].
	Sim []string `yaml:"sim,omitempty" json:"sim,omitempty"`
}

// TaskSettings are one model's request settings for one task.
type TaskSettings struct {
	// MaxTokens is the output budget sent with every request.
	MaxTokens int `yaml:"max_tokens,omitempty" json:"max_tokens,omitempty"`
	// MaxImages caps the images of one request; plane groups beyond it are
	// sub-sampled (proportional between axial and coronal, endpoints kept).
	MaxImages int `yaml:"max_images,omitempty" json:"max_images,omitempty"`
}
