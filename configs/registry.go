package configs

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strconv"
	"strings"
)

// TaskRef is a task key as a config file writes it, with the file, line
// and field that name it. configs owns no task list: whoever knows the
// tasks (package tasks, against its registry) checks each key and refuses
// an unknown one with Errorf, which names its place.
type TaskRef struct {
	Key   string
	File  string
	Line  int
	Field string
	// InList is true for a campaign's task list, where a name may stand
	// for several tasks; false for a model's task settings.
	InList bool
}

// Errorf is an error about the key, naming its file, line and field.
func (r TaskRef) Errorf(format string, args ...any) error {
	return &fieldError{File: r.File, Line: r.Line, Field: r.Field, Msg: fmt.Sprintf(format, args...)}
}

// taskRefs are the places of a task settings map's keys, in key order;
// path locates the map ("defaults.tasks", "models[2].tasks").
func (l locator) taskRefs(path string, tasks map[string]TaskSettings) []TaskRef {
	refs := make([]TaskRef, 0, len(tasks))
	for _, k := range sortedKeys(tasks) {
		field := path + "." + k
		refs = append(refs, TaskRef{Key: k, File: l.file, Line: l.line(field), Field: field})
	}
	return refs
}

// Registry is the model registry of models.yaml.
type Registry struct {
	Defaults ModelDefaults `yaml:"defaults"`
	Models   []Model       `yaml:"models"`

	// TaskRefs are the places of every task key the file names (its
	// defaults' and its models' task settings), for the tasks to check.
	TaskRefs []TaskRef `yaml:"-"`
}

// ModelDefaults fill what a registry entry leaves unset.
type ModelDefaults struct {
	Engine Engine                  `yaml:"engine"`
	Tasks  map[string]TaskSettings `yaml:"tasks"`
}

// LoadRegistry reads and validates a model registry.
func LoadRegistry(fsys fs.FS, name string) (*Registry, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read model registry: %w", err)
	}
	return ParseRegistry(name, data)
}

// ParseRegistry decodes and validates registry YAML; name is used in errors.
func ParseRegistry(name string, data []byte) (*Registry, error) {
	var r Registry
	root, err := decodeBytes(name, data, &r)
	if err != nil {
		return nil, err
	}
	loc := locator{file: name, root: root}
	if err := r.validate(loc); err != nil {
		return nil, err
	}
	return &r, nil
}

// DefaultRegistry returns the embedded registry.
func DefaultRegistry() (*Registry, error) {
	return LoadRegistry(Defaults, "models.yaml")
}

// Names returns the model names in file order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.Models))
	for i, m := range r.Models {
		out[i] = m.Name
	}
	return out
}

// sameBut returns the registry's name that differs from name only in
// case, or "".
func (r *Registry) sameBut(name string) string {
	for _, m := range r.Models {
		if m.Name != name && strings.EqualFold(m.Name, name) {
			return m.Name
		}
	}
	return ""
}

// Get returns the named model with the registry defaults applied.
func (r *Registry) Get(name string) (Model, bool) {
	for _, m := range r.Models {
		if m.Name == name {
			return r.withDefaults(m), true
		}
	}
	return Model{}, false
}

func (r *Registry) withDefaults(m Model) Model {
	d := r.Defaults
	if m.Engine.GPUMemoryUtilization == 0 {
		m.Engine.GPUMemoryUtilization = d.Engine.GPUMemoryUtilization
	}
	if m.Engine.MaxNumSeqs == 0 {
		m.Engine.MaxNumSeqs = d.Engine.MaxNumSeqs
	}
	tasks := make(map[string]TaskSettings, len(d.Tasks))
	for k, v := range d.Tasks {
		tasks[k] = v
	}
	for k, v := range m.Tasks {
		base := tasks[k]
		if v.MaxTokens != 0 {
			base.MaxTokens = v.MaxTokens
		}
		if v.MaxImages != 0 {
			base.MaxImages = v.MaxImages
		}
		tasks[k] = base
	}
	m.Tasks = tasks
	return m
}

func (r *Registry) validate(loc locator) error {
	if len(r.Models) == 0 {
		return loc.errorf("models", "the registry lists no model")
	}
	if err := checkLimits(loc, "defaults.tasks", r.Defaults.Tasks); err != nil {
		return err
	}
	if err := (Model{Name: "defaults", Engine: r.Defaults.Engine}).validateNumbers(loc, "defaults"); err != nil {
		return err
	}
	r.TaskRefs = loc.taskRefs("defaults.tasks", r.Defaults.Tasks)
	seen := map[string]bool{}
	for i, m := range r.Models {
		path := fmt.Sprintf("models[%d]", i)
		if m.Name == "" {
			return loc.errorf(path+".name", "every model needs a name")
		}
		if seen[m.Name] {
			return loc.errorf(path+".name", "model %q is listed twice", m.Name)
		}
		seen[m.Name] = true
		if err := m.validate(loc, path); err != nil {
			return err
		}
		r.TaskRefs = append(r.TaskRefs, loc.taskRefs(path+".tasks", m.Tasks)...)
	}
	return nil
}

// validate checks one model entry; path locates it in the file.
func (m Model) validate(loc locator, path string) error {
	if m.Name == "." || m.Name == ".." {
		// The name becomes a folder of the journal and the engine logs.
		return loc.errorf(path+".name", "%q cannot name a model: it is a folder of its own in the journal; choose another name", m.Name)
	}
	if m.Benchmark != "" && m.Benchmark != BenchmarkCliniCARE {
		return loc.errorf(path+".benchmark", "model %q: %q is not a benchmark; leave it out for NPCBench or write %s", m.Name, m.Benchmark, BenchmarkCliniCARE)
	}
	switch m.ReasoningEffort {
	case "", "none", "low", "medium", "high":
	default:
		return loc.errorf(path+".reasoning_effort", "%q is not low, medium, high or none", m.ReasoningEffort)
	}
	switch m.Engine.Kind {
	case EngineVLLM, EngineSGLang, EngineSim, EngineWrapper:
		if m.Engine.Kind != EngineSim && m.Engine.Kind != EngineWrapper && m.HFID == "" {
			return loc.errorf(path+".hf_id", "model %q is served by %s and needs the Hugging Face id of its weights", m.Name, m.Engine.Kind)
		}
		for field, v := range map[string]int{"attention_heads": m.AttentionHeads, "vocab_size": m.VocabSize} {
			if v <= 0 && m.Engine.Kind != EngineSim {
				return loc.errorf(path+"."+field, "model %q needs %s (from its config.json) to choose a tensor-parallel size", m.Name, field)
			}
		}
	case EngineExternal:
		if m.Engine.BaseURL == "" {
			return loc.errorf(path+".engine.base_url", "model %q is an external endpoint and needs engine.base_url", m.Name)
		}
		if err := checkBaseURL(m.Engine.BaseURL); err != nil {
			return loc.errorf(path+".engine.base_url", "model %q: %v", m.Name, err)
		}
	case "":
		return loc.errorf(path+".engine.kind", "model %q has no engine kind; use one of vllm, sglang, external, sim, wrapper", m.Name)
	default:
		return loc.errorf(path+".engine.kind", "model %q: unknown engine kind %q; use one of vllm, sglang, external, sim, wrapper", m.Name, m.Engine.Kind)
	}
	if m.Engine.APIModel != "" && m.Engine.Kind != EngineExternal {
		return loc.errorf(path+".engine.api_model", "model %q: api_model names the model of an external endpoint, and this engine is %s (it serves the registry name); remove it", m.Name, m.Engine.Kind)
	}
	if err := m.Engine.validateCommand(loc, path, m.Name); err != nil {
		return err
	}
	if err := m.Engine.validateExtraArgs(loc, path, m.Name); err != nil {
		return err
	}
	if err := m.Engine.validateParsers(loc, path, m.Name); err != nil {
		return err
	}
	if v := m.Engine.Version; v != "" {
		if _, err := ParseRelease(v); err != nil {
			return loc.errorf(path+".engine.version", "model %q: %v", m.Name, err)
		}
	}
	if err := m.validateNumbers(loc, path); err != nil {
		return err
	}
	if err := m.validateTextOnly(loc, path); err != nil {
		return err
	}
	return checkLimits(loc, path+".tasks", m.Tasks)
}

// checkBaseURL refuses an external endpoint's URL that the client could
// not send to: every request would fail in transit ("unsupported protocol
// scheme") after the run folder was made.
func checkBaseURL(raw string) error {
	const want = "want an http:// or https:// URL ending in /v1 (the path before /chat/completions), such as http://localhost:8000/v1"
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q is not a URL (%v); %s", raw, errors.Unwrap(err), want)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q has no http:// or https:// scheme and host; %s", raw, want)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q has a query or fragment, which the request path would follow; %s", raw, want)
	}
	return nil
}

// validateNumbers refuses a model's numbers outside their range; zero
// always means unset (the registry's default or the planner's choice).
func (m Model) validateNumbers(loc locator, path string) error {
	for _, f := range []struct {
		field string
		v     float64
		what  string
	}{
		{"params_b", m.ParamsB, "the parameter count in billions"},
		{"weight_bytes", float64(m.WeightBytes), "the weights' size on disk in bytes"},
		{"attention_heads", float64(m.AttentionHeads), "the attention heads from config.json"},
		{"kv_heads", float64(m.KVHeads), "the key-value heads from config.json"},
		{"vision_heads", float64(m.VisionHeads), "the vision tower's heads from config.json"},
		{"vocab_size", float64(m.VocabSize), "the vocabulary size from config.json"},
		{"context_length", float64(m.ContextLength), "the context length in tokens"},
		{"speed_tokens_per_s", m.SpeedTokensPerS, "a prefill throughput in tokens/s"},
		{"preprocess_images_per_s", m.PreprocessImagesPerS, "images preprocessed per second"},
		{"engine.max_num_seqs", float64(m.Engine.MaxNumSeqs), "the requests one replica runs at once (1 or more)"},
		{"engine.replicas", float64(m.Engine.Replicas), "the data-parallel replicas (1 or more)"},
	} {
		if f.v < 0 {
			return loc.errorf(path+"."+f.field, "model %q: %g is negative; give %s, or leave it out for the default", m.Name, f.v, f.what)
		}
	}
	if u := m.Engine.GPUMemoryUtilization; u < 0 || u > 1 {
		return loc.errorf(path+".engine.gpu_memory_utilization", "model %q: %g is outside (0, 1]; give a fraction such as 0.9, or leave it out for the default", m.Name, u)
	}
	if tp := m.Engine.TensorParallel; tp < 0 || tp&(tp-1) != 0 {
		return loc.errorf(path+".engine.tensor_parallel", "model %q: %d is not a power of two; give 1, 2, 4 or 8, or leave it out for the planner's choice", m.Name, tp)
	}
	return nil
}

// ServedName is the model name requests carry and /v1/models lists: an
// external endpoint's own model id (engine.api_model) when set, else the
// registry name, which npcorch's engines serve (--served-model-name).
func (m Model) ServedName() string {
	if m.Engine.Kind == EngineExternal && m.Engine.APIModel != "" {
		return m.Engine.APIModel
	}
	return m.Name
}

// validateTextOnly refuses a text-only model that also describes a vision
// tower or image processing: one of the two is a mistake, and npcorch
// would plan and launch the model as the wrong kind.
func (m Model) validateTextOnly(loc locator, path string) error {
	if !m.TextOnly {
		return nil
	}
	if m.VisionHeads > 0 {
		return loc.errorf(path+".vision_heads", "model %q is text_only but has a vision tower of %d heads; remove text_only if it reads images, else vision_heads", m.Name, m.VisionHeads)
	}
	if len(m.MMProcessorKwargs) > 0 {
		return loc.errorf(path+".mm_processor_kwargs", "model %q is text_only, and vLLM takes --mm-processor-kwargs only for multimodal models; remove mm_processor_kwargs, or text_only if it reads images", m.Name)
	}
	return nil
}

// checkLimits refuses negative task limits; path locates the settings.
func checkLimits(loc locator, path string, tasks map[string]TaskSettings) error {
	for _, k := range sortedKeys(tasks) {
		if ts := tasks[k]; ts.MaxTokens < 0 || ts.MaxImages < 0 {
			return loc.errorf(path+"."+k, "negative limits; max_tokens and max_images are 0 (unset) or more")
		}
	}
	return nil
}

// validateCommand refuses the two engine.command mistakes that would
// break a launch or leak a secret: a vllm or sim command that ends in
// "serve" (npcorch adds `serve MODEL` itself; vLLM's parser takes one
// positional, so `vllm serve serve MODEL` exits 2), and a wrapper command
// that puts the API key on its command line, where every user sees it.
func (e Engine) validateCommand(loc locator, path, model string) error {
	cmd := e.Command
	switch e.Kind {
	case EngineVLLM, EngineSim:
		if n := len(cmd); n > 1 && cmd[n-1] == "serve" {
			return loc.errorf(path+".engine.command",
				"model %q: the command ends in \"serve\", but npcorch adds `serve MODEL` itself; write the executable alone: [%s]",
				model, strings.Join(quoteAll(cmd[:n-1]), ", "))
		}
	case EngineWrapper:
		for i, a := range append(append([]string{}, cmd...), e.ExtraArgs...) {
			if strings.Contains(a, "{api_key}") {
				field := fmt.Sprintf("engine.command[%d]", i)
				if i >= len(cmd) {
					field = fmt.Sprintf("engine.extra_args[%d]", i-len(cmd))
				}
				return loc.errorf(path+"."+field,
					"model %q: {api_key} would put the API key on the wrapper's command line, where every user of the machine sees it (ps); read it from the environment variable %s (or the file named by %s) instead",
					model, WrapperKeyEnv, WrapperKeyFileEnv)
			}
		}
	}
	return nil
}

// Where a wrapper (engine kind wrapper) finds the API key npcorch expects
// on /v1/*: the key itself, and a 0600 file holding it.
const (
	WrapperKeyEnv     = "NPCORCH_API_KEY"
	WrapperKeyFileEnv = "NPCORCH_API_KEY_FILE"
)

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}
