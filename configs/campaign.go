package configs

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MediaMode says how images travel to an engine: a campaign's media:.
type MediaMode string

// The media modes.
const (
	MediaAuto   MediaMode = "auto"   // file:// for local engines, base64 otherwise
	MediaFile   MediaMode = "file"   // always file:// (engine started with --allowed-local-media-path)
	MediaBase64 MediaMode = "base64" // always the file's own bytes, base64-encoded
)

// MediaModes lists the media modes, as media: may write them.
func MediaModes() []MediaMode { return []MediaMode{MediaAuto, MediaFile, MediaBase64} }

// Campaign is one campaign file: which models run which tasks on which node.
type Campaign struct {
	// Name labels the run in reports.
	Name string `yaml:"name"`
	// Node is "auto" (NVML if present), "nvml", or "fake:NAME" for one of
	// the gpu package's fake nodes. The gpu package owns the nodes and
	// parses it (gpu.ParseNodeSpec): run and plan refuse anything else,
	// naming this field's line (Errorf).
	Node string `yaml:"node"`
	// Output is the run directory.
	Output string `yaml:"output"`
	// Seed pins every random choice (simulated answers, bootstrap).
	Seed int64 `yaml:"seed"`
	// Dataset locates the raw and the prepared dataset.
	Dataset DatasetPaths `yaml:"dataset"`
	// Tasks lists task keys, or names of several tasks ("carepath");
	// empty means all. The tasks' registry checks them (TaskRefs).
	Tasks []string `yaml:"tasks"`
	// Registry is a models.yaml to use instead of the embedded one.
	Registry string `yaml:"registry"`
	// Prompts is a folder of TASK.tmpl prompt templates to use instead of
	// the embedded ones (configs/prompts documents what they see).
	Prompts string `yaml:"prompts"`
	// Media is auto, file or base64.
	Media MediaMode `yaml:"media"`
	// Repeat runs every request k times (repeated-run reliability).
	Repeat int `yaml:"repeat"`
	// Host is the address engines bind to (default 127.0.0.1).
	Host string `yaml:"host"`
	// Client holds the streaming client's limits.
	Client ClientSettings `yaml:"client"`
	// Launch holds the engines' start, restart and stop policy.
	Launch LaunchSettings `yaml:"launch"`
	// Backend says where engines run: local (this node, the default) or
	// slurm (one Slurm job per replica; see Slurm and docs/slurm.md).
	Backend Backend `yaml:"backend"`
	// Slurm configures the slurm backend.
	Slurm SlurmSettings `yaml:"slurm"`
	// Models are registry names, each optionally with overrides of any
	// registry field; an entry not in the registry must define the model.
	Models []yaml.Node `yaml:"models"`
	// Judges are the models that judge the generators' free-text answers
	// (O1's criterion judge), as models entries are written: any registry
	// model, local or API, with overrides (reasoning_effort, the judge
	// task's max_tokens). A judge is not one of the models.
	Judges []yaml.Node `yaml:"judges"`

	// Resolved holds the models after registry lookup, overrides and
	// defaults, in campaign order. Filled by LoadCampaign.
	Resolved []Model `yaml:"-"`
	// ResolvedJudges holds the judges likewise.
	ResolvedJudges []Model `yaml:"-"`
	// Dir is the folder relative paths are resolved against.
	Dir string `yaml:"-"`
	// File names the campaign file in errors.
	File string `yaml:"-"`
	// SeedSet and RepeatSet say the file writes seed: and repeat:; where
	// it does not, a resumed run keeps the values it was started with.
	SeedSet, RepeatSet bool `yaml:"-"`
	// root is the decoded document, for the lines Errorf names.
	root *yaml.Node
	// TaskRefs are the places of every task key the campaign uses: its
	// task list, its models' task settings, and the registry's.
	TaskRefs []TaskRef `yaml:"-"`
}

// DatasetPaths locates a campaign's data.
type DatasetPaths struct {
	// Raw is the folder holding dataset.json (`npcorch synth` writes one).
	Raw string `yaml:"raw"`
	// Prepared is the folder holding the prepared manifest.json.
	Prepared string `yaml:"prepared"`
}

// ClientSettings bound the streaming client.
type ClientSettings struct {
	ConnectTimeout    time.Duration `yaml:"connect_timeout"`
	FirstTokenTimeout time.Duration `yaml:"first_token_timeout"`
	ChunkTimeout      time.Duration `yaml:"chunk_timeout"`
	TotalTimeout      time.Duration `yaml:"total_timeout"`
	// Retries bounds attempts after an infrastructure failure; nil (absent)
	// is the default, 0 means no retry. Read it through RetryLimit.
	Retries *int `yaml:"retries"`
	// Backoff is the first retry delay; it doubles per attempt.
	Backoff time.Duration `yaml:"backoff"`
	// Concurrency caps in-flight requests per replica (0 = max_num_seqs).
	Concurrency int `yaml:"concurrency"`
	// MaxRequestBytes caps one request body (images included).
	MaxRequestBytes int64 `yaml:"max_request_bytes"`
}

// LaunchSettings are how engines are started, restarted and stopped. A
// zero (absent) field keeps the launcher's default, which
// docs/campaign.md lists; package launcher lays them over its Timing.
type LaunchSettings struct {
	// NoProgressTimeout fails a start when the engine printed no new log
	// line (access and stats lines do not count) and reached no new
	// readiness stage for this long.
	NoProgressTimeout time.Duration `yaml:"no_progress_timeout"`
	// StartTimeout fails a start that is not ready after this long,
	// progress or not.
	StartTimeout time.Duration `yaml:"start_timeout"`
	// WarmUpTimeout bounds the one-token warm-up chat.
	WarmUpTimeout time.Duration `yaml:"warm_up_timeout"`
	// WarmUpFailures fails a start whose warm-up chat is answered 5xx (or
	// 429) this many times in a row.
	WarmUpFailures int `yaml:"warm_up_failures"`
	// MaxRestarts bounds the restarts of an engine that crashed or stalled
	// (0: never restart). A pointer: absent and 0 differ.
	MaxRestarts *int `yaml:"max_restarts"`
	// RestartBackoff is the delay before the first restart; it doubles
	// per restart up to MaxRestartBackoff.
	RestartBackoff    time.Duration `yaml:"restart_backoff"`
	MaxRestartBackoff time.Duration `yaml:"max_restart_backoff"`
	// MaxStartFailures is how many of a model's engines may fail (each on
	// other GPUs) before the model is abandoned.
	MaxStartFailures int `yaml:"max_start_failures"`
	// MaxModelRestarts is how many times a model's engines, all its
	// replicas together, may crash after they were ready (exit or hang;
	// not a Slurm job the cluster took away) before the model is
	// abandoned (0: the default, 5).
	MaxModelRestarts int `yaml:"max_model_restarts"`
	// StallWindow is how long requests may run without a new token before
	// an engine counts as hung and is restarted.
	StallWindow time.Duration `yaml:"stall_window"`
	// StopGrace separates SIGTERM and SIGKILL when an engine is stopped.
	StopGrace time.Duration `yaml:"stop_grace"`
}

func (l LaunchSettings) validate(loc locator) error {
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"no_progress_timeout", l.NoProgressTimeout}, {"start_timeout", l.StartTimeout}, {"warm_up_timeout", l.WarmUpTimeout},
		{"restart_backoff", l.RestartBackoff}, {"max_restart_backoff", l.MaxRestartBackoff}, {"stall_window", l.StallWindow}, {"stop_grace", l.StopGrace}} {
		if f.v < 0 {
			return loc.errorf("launch."+f.name, "%v is negative; give a duration such as 30s or 20m, or leave it out for the default", f.v)
		}
	}
	switch {
	case l.MaxRestarts != nil && *l.MaxRestarts < 0:
		return loc.errorf("launch.max_restarts", "must not be negative (0: never restart)")
	case l.WarmUpFailures < 0:
		return loc.errorf("launch.warm_up_failures", "must not be negative")
	case l.MaxStartFailures < 0:
		return loc.errorf("launch.max_start_failures", "must not be negative")
	case l.MaxModelRestarts < 0:
		return loc.errorf("launch.max_model_restarts", "%d is negative; give 1 or more, or leave it out for the default 5", l.MaxModelRestarts)
	case l.StartTimeout > 0 && l.NoProgressTimeout > l.StartTimeout:
		return loc.errorf("launch.no_progress_timeout", "%v is longer than launch.start_timeout (%v), which would always fire first", l.NoProgressTimeout, l.StartTimeout)
	}
	return nil
}

// checkStallWindow refuses a launch.stall_window the client's timeouts
// make useless: on a hung engine each request in flight times out after
// its first-token (or chunk) timeout and is sent again, and once it has
// spent every retry, retries × first_token_timeout + the shorter of the
// two later (backoff aside), it is given up. A stall window that long
// restarts the engine only after every request that was in flight when
// it hung is lost.
func (c *Campaign) checkStallWindow(loc locator) error {
	w, cl := c.Launch.StallWindow, c.Client
	if w <= 0 {
		return nil // the launcher's default, which docs/campaign.md relates to the client's
	}
	budget := time.Duration(cl.RetryLimit())*cl.FirstTokenTimeout + min(cl.FirstTokenTimeout, cl.ChunkTimeout)
	if w < budget {
		return nil
	}
	return loc.errorf("launch.stall_window", "%v is not shorter than the %v a request on a hung engine lasts before it is given up "+
		"(client.retries %d × client.first_token_timeout %v + the shorter of client.first_token_timeout and client.chunk_timeout), "+
		"so the watchdog would restart a hung engine only after every request in flight had failed; "+
		"give a stall window below client.first_token_timeout (e.g. %v), or raise the client's timeouts or retries",
		w, budget, cl.RetryLimit(), cl.FirstTokenTimeout, cl.FirstTokenTimeout/2)
}

// Backend says where a campaign's engines run: its backend:.
type Backend string

// The backends.
const (
	BackendLocal Backend = "local" // child processes on this node
	BackendSlurm Backend = "slurm" // one Slurm batch job per replica
)

// SlurmSettings configure the slurm backend: what every replica's sbatch
// asks for, and how npcorch follows the jobs.
type SlurmSettings struct {
	// Partition, Account, QOS and Constraint become sbatch's --partition,
	// --account, --qos and --constraint; empty ones are left out.
	Partition  string `yaml:"partition"`
	Account    string `yaml:"account"`
	QOS        string `yaml:"qos"`
	Constraint string `yaml:"constraint"`
	// TimeLimit is each job's --time (default 4h).
	TimeLimit time.Duration `yaml:"time_limit"`
	// GRES is the GPU resource name, optionally with a type, e.g. "gpu"
	// (the default) or "gpu:a100"; a replica of TP n asks --gres=GRES:n.
	GRES string `yaml:"gres"`
	// Nodes restricts placement to these node names (default: every node
	// of the partition with GPUs).
	Nodes []string `yaml:"nodes"`
	// CPUsPerGPU and MemPerGPU size each job (--cpus-per-task = n ×
	// CPUsPerGPU; --mem = n × MemPerGPU, e.g. "64G"); zero leaves
	// Slurm's defaults.
	CPUsPerGPU int    `yaml:"cpus_per_gpu"`
	MemPerGPU  string `yaml:"mem_per_gpu"`
	// SharedFilesystem declares that the compute nodes see the prepared
	// images at the same path: images then travel as file:// URLs,
	// otherwise as base64. The run directory must be shared in any case.
	SharedFilesystem bool `yaml:"shared_filesystem"`
	// GPUMemoryGiB is each GPU's memory, which Slurm does not report
	// (default 80); GPUSpeed its throughput relative to an A800 (default 1).
	GPUMemoryGiB float64 `yaml:"gpu_memory_gib"`
	GPUSpeed     float64 `yaml:"gpu_speed"`
	// Setup lines run in the job before the engine starts (module load,
	// source a virtual environment).
	Setup []string `yaml:"setup"`
	// SbatchArgs are passed to sbatch as they are.
	SbatchArgs []string `yaml:"sbatch_args"`
	// Poll is how often squeue is read (default 10s).
	Poll time.Duration `yaml:"poll"`
	// MaxResubmits bounds how often one replica is re-submitted after its
	// job died (default 5).
	MaxResubmits int `yaml:"max_resubmits"`
	// PortBase and PortSpan are the engine port range on compute nodes
	// (default 24000 and 8000: above the local launcher's ports, below
	// Linux's ephemeral range).
	PortBase int `yaml:"port_base"`
	PortSpan int `yaml:"port_span"`
	// OrphanTimeout cancels a job from inside when npcorch's heartbeat
	// file is older than this (npcorch was killed); default 10m, negative
	// disables.
	OrphanTimeout time.Duration `yaml:"orphan_timeout"`
}

func (cl ClientSettings) validate(loc locator) error {
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"connect_timeout", cl.ConnectTimeout}, {"first_token_timeout", cl.FirstTokenTimeout}, {"chunk_timeout", cl.ChunkTimeout},
		{"total_timeout", cl.TotalTimeout}, {"backoff", cl.Backoff}} {
		if f.v < 0 {
			return loc.errorf("client."+f.name, "%v is negative; give a duration such as 30s or 10m, or leave it out for the default", f.v)
		}
	}
	switch {
	case cl.RetryLimit() < 0:
		return loc.errorf("client.retries", "%d is negative; give 0 for no retry, or leave it out for the default %d", cl.RetryLimit(), defaultRetries)
	case cl.Concurrency < 0:
		return loc.errorf("client.concurrency", "%d is negative; give the in-flight requests per replica (1 or more), or leave it out to follow engine.max_num_seqs", cl.Concurrency)
	case cl.MaxRequestBytes < 0:
		return loc.errorf("client.max_request_bytes", "%d is negative; give a size in bytes, or leave it out for the default %d (256 MiB)", cl.MaxRequestBytes, defaultClient.MaxRequestBytes)
	}
	return nil
}

// defaultRetries is client.retries when a campaign leaves it out.
const defaultRetries = 4

// RetryLimit is how many times a request is sent again after an
// infrastructure failure: the campaign's client.retries, or the default.
func (cl ClientSettings) RetryLimit() int {
	if cl.Retries == nil {
		return defaultRetries
	}
	return *cl.Retries
}

// DefaultClient are the client limits when a campaign sets none.
var defaultClient = ClientSettings{
	ConnectTimeout:    10 * time.Second,
	FirstTokenTimeout: 10 * time.Minute,
	ChunkTimeout:      2 * time.Minute,
	TotalTimeout:      30 * time.Minute,
	Backoff:           time.Second,
	MaxRequestBytes:   256 << 20,
}

// LoadCampaign reads a campaign file and resolves its models against reg
// (the embedded registry when reg is nil and the file names none).
func LoadCampaign(path string, reg *Registry) (*Campaign, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read campaign: %w", err)
	}
	return ParseCampaign(path, filepath.Dir(path), data, reg)
}

// ParseCampaign decodes campaign YAML. name is used in errors; dir is the
// folder relative paths are resolved against.
func ParseCampaign(name, dir string, data []byte, reg *Registry) (*Campaign, error) {
	// Unknown fields first, named by their path and line (the strict
	// decoder would name a Go type instead).
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) == nil && doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		if err := checkKnownFields(name, doc.Content[0], reflect.TypeOf(Campaign{}), ""); err != nil {
			return nil, err
		}
	}
	var c Campaign
	root, err := decodeBytes(name, data, &c)
	if err != nil {
		return nil, err
	}
	c.File, c.Dir, c.root = name, dir, root
	loc := locator{file: name, root: root}
	c.SeedSet, c.RepeatSet = loc.has("seed"), loc.has("repeat")
	if reg == nil {
		if c.Registry != "" {
			if rel := filepath.ToSlash(filepath.Clean(c.Registry)); !filepath.IsAbs(c.Registry) && !fs.ValidPath(rel) {
				return nil, loc.errorf("registry", "%q leaves the campaign's folder %s; give a path inside it, or an absolute path", c.Registry, dir)
			}
			reg, err = LoadRegistry(os.DirFS(dir), filepath.ToSlash(filepath.Clean(c.Registry)))
			if filepath.IsAbs(c.Registry) {
				data, rerr := os.ReadFile(c.Registry)
				if rerr != nil {
					return nil, loc.errorf("registry", "%v", rerr)
				}
				reg, err = ParseRegistry(c.Registry, data)
			}
		} else {
			reg, err = DefaultRegistry()
		}
		if err != nil {
			return nil, err
		}
	}
	c.applyDefaults()
	if err := c.validate(loc); err != nil {
		return nil, err
	}
	for i, t := range c.Tasks {
		field := fmt.Sprintf("tasks[%d]", i)
		c.TaskRefs = append(c.TaskRefs, TaskRef{Key: t, File: loc.file, Line: loc.line(field), Field: field, InList: true})
	}
	if err := c.resolveModels(loc, reg); err != nil {
		return nil, err
	}
	c.TaskRefs = append(c.TaskRefs, reg.TaskRefs...)
	return &c, nil
}

func (c *Campaign) applyDefaults() {
	if c.Node == "" {
		c.Node = "auto"
	}
	if c.Media == "" {
		c.Media = MediaAuto
	}
	if c.Repeat == 0 {
		c.Repeat = 1
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Backend == "" {
		c.Backend = BackendLocal
	}
	if c.Backend == BackendSlurm {
		c.Slurm.applyDefaults()
	}
	if c.Name == "" {
		c.Name = strings.TrimSuffix(filepath.Base(c.File), filepath.Ext(c.File))
	}
	d := defaultClient
	cl := &c.Client
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cl.ConnectTimeout, d.ConnectTimeout}, {&cl.FirstTokenTimeout, d.FirstTokenTimeout},
		{&cl.ChunkTimeout, d.ChunkTimeout}, {&cl.TotalTimeout, d.TotalTimeout}, {&cl.Backoff, d.Backoff}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if cl.Retries == nil {
		n := defaultRetries
		cl.Retries = &n
	}
	if cl.MaxRequestBytes == 0 {
		cl.MaxRequestBytes = d.MaxRequestBytes
	}
}

func (c *Campaign) validate(loc locator) error {
	if c.Output == "" {
		return loc.errorf("output", "the campaign needs an output directory")
	}
	if c.Dataset.Prepared == "" {
		return loc.errorf("dataset.prepared", "the campaign needs the prepared dataset folder (npcorch prep writes it)")
	}
	if c.Dataset.Raw == "" {
		return loc.errorf("dataset.raw", "the campaign needs the raw dataset folder (the one holding dataset.json)")
	}
	if !slices.Contains(MediaModes(), c.Media) {
		return loc.errorf("media", "%q is not a media mode; use auto, file or base64", c.Media)
	}
	if c.Repeat < 1 {
		return loc.errorf("repeat", "repeat must be at least 1, not %d; leave it out to send every request once", c.Repeat)
	}
	if err := c.Client.validate(loc); err != nil {
		return err
	}
	if err := c.Launch.validate(loc); err != nil {
		return err
	}
	if err := c.checkStallWindow(loc); err != nil {
		return err
	}
	switch c.Backend {
	case BackendLocal:
	case BackendSlurm:
		if err := c.Slurm.validate(loc); err != nil {
			return err
		}
	default:
		return loc.errorf("backend", "%q is not a backend; use local or slurm", c.Backend)
	}
	if len(c.Models) == 0 {
		return loc.errorf("models", "the campaign lists no model")
	}
	return nil
}

func (c *Campaign) resolveModels(loc locator, reg *Registry) error {
	seen := map[string]bool{}
	var err error
	if c.Resolved, err = c.resolveList(loc, reg, "models", c.Models, seen); err != nil {
		return err
	}
	judges := map[string]bool{}
	if c.ResolvedJudges, err = c.resolveList(loc, reg, "judges", c.Judges, judges); err != nil {
		return err
	}
	for i := range c.ResolvedJudges {
		m := &c.ResolvedJudges[i]
		if !seen[m.Name] {
			continue
		}
		// A generator that also judges is served again (a local one) and
		// journalled under a name of its own; an API model keeps asking
		// its endpoint for its own id.
		if m.Engine.Kind == EngineExternal && m.Engine.APIModel == "" {
			m.Engine.APIModel = m.Name
		}
		m.Name += JudgeSuffix
	}
	return nil
}

// JudgeSuffix ends the name a judge is served and journalled under when it
// is also one of the campaign's generators.
const JudgeSuffix = "@judge"

// resolveList resolves the model entries of a list field.
func (c *Campaign) resolveList(loc locator, reg *Registry, field string, nodes []yaml.Node, seen map[string]bool) ([]Model, error) {
	var out []Model
	for i := range nodes {
		m, err := c.resolveModel(loc, reg, fmt.Sprintf("%s[%d]", field, i), &nodes[i], seen)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// resolveModel resolves one model entry: a registry name, or a mapping
// with a name and overrides.
func (c *Campaign) resolveModel(loc locator, reg *Registry, path string, node *yaml.Node, seen map[string]bool) (Model, error) {
	var name string
	switch node.Kind {
	case yaml.ScalarNode:
		name = node.Value
	case yaml.MappingNode:
		var head struct {
			Name string `yaml:"name"`
		}
		if err := node.Decode(&head); err != nil {
			return Model{}, loc.decodeError(path, err)
		}
		name = head.Name
		if err := checkKnownFields(loc.file, node, reflect.TypeOf(Model{}), path); err != nil {
			return Model{}, err
		}
	default:
		return Model{}, loc.errorf(path, "a model entry is a registry name or a mapping with name and overrides")
	}
	if name == "" {
		return Model{}, loc.errorf(path+".name", "every model needs a name")
	}
	if seen[name] {
		return Model{}, loc.errorf(path+".name", "model %q is listed twice", name)
	}
	seen[name] = true
	m, ok := reg.Get(name)
	if !ok {
		if like := reg.sameBut(name); like != "" {
			return Model{}, loc.errorf(path, "model %q is not in the registry; did you mean %q? (names are case-sensitive)", name, like)
		}
		if node.Kind == yaml.ScalarNode {
			return Model{}, loc.errorf(path, "model %q is not in the registry; known models: %s", name, strings.Join(reg.Names(), ", "))
		}
		m = reg.withDefaults(Model{Name: name})
	}
	if node.Kind == yaml.MappingNode {
		var probe Model
		if err := node.Decode(&probe); err != nil {
			return Model{}, loc.decodeError(path, err)
		}
		if probe.Engine.Kind != "" && probe.Engine.Kind != m.Engine.Kind {
			// Another engine kind: the registry's command, extra
			// arguments and endpoint belong to the old one.
			m.Engine = Engine{}
		}
		tasks := maps.Clone(m.Tasks)
		if err := node.Decode(&m); err != nil {
			return Model{}, loc.decodeError(path, err)
		}
		m.Tasks = overlayTasks(tasks, probe.Tasks)
		m = reg.withDefaults(m)
		if len(probe.Engine.Command) > 0 {
			m.Engine.Command[0] = c.commandPath(m.Engine.Command[0])
		}
		c.TaskRefs = append(c.TaskRefs, loc.taskRefs(path+".tasks", probe.Tasks)...)
	}
	if err := m.validate(loc, path); err != nil {
		return Model{}, err
	}
	if !ok && m.Engine.Kind != EngineExternal && m.ParamsB <= 0 && m.WeightBytes <= 0 {
		return Model{}, loc.errorf(path, "model %q is not in the registry, so this entry defines it: add params_b (billions of parameters) or weight_bytes, which decide the GPUs it needs", name)
	}
	return m, nil
}

// overlayTasks lays a campaign's per-task limits over the model's: a limit
// the campaign gives replaces the model's, the others stay (the decoder
// would reset a task's other limit, which the registry defaults would
// then fill instead of the model's own).
func overlayTasks(model, campaign map[string]TaskSettings) map[string]TaskSettings {
	out := maps.Clone(model)
	if out == nil {
		out = map[string]TaskSettings{}
	}
	for k, v := range campaign {
		base := out[k]
		if v.MaxTokens != 0 {
			base.MaxTokens = v.MaxTokens
		}
		if v.MaxImages != 0 {
			base.MaxImages = v.MaxImages
		}
		out[k] = base
	}
	return out
}

// Errorf is an error about a field of the campaign file ("dataset.raw",
// "models[2].engine"), naming the file, the field's line and the field.
func (c *Campaign) Errorf(field, format string, args ...any) error {
	return locator{file: c.File, root: c.root}.errorf(field, format, args...)
}

// Path resolves a campaign-relative path.
func (c *Campaign) Path(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.Dir, p)
}

// commandPath resolves an engine executable named in the campaign file: a
// relative path (venv/bin/vllm) is relative to the file, like every path
// in it; a bare name (vllm) is looked up in PATH when it runs.
func (c *Campaign) commandPath(exe string) string {
	if filepath.IsAbs(exe) || !strings.ContainsRune(exe, filepath.Separator) {
		return exe
	}
	if a, err := filepath.Abs(c.Path(exe)); err == nil {
		return a // engines may run from another folder
	}
	return c.Path(exe)
}

// Model returns the resolved model of the given name.
func (c *Campaign) Model(name string) (Model, bool) {
	for _, m := range c.Resolved {
		if m.Name == name {
			return m, true
		}
	}
	return Model{}, false
}

func (s *SlurmSettings) applyDefaults() {
	if s.TimeLimit == 0 {
		s.TimeLimit = 4 * time.Hour
	}
	if s.GRES == "" {
		s.GRES = "gpu"
	}
	if s.GPUMemoryGiB == 0 {
		s.GPUMemoryGiB = 80
	}
	if s.GPUSpeed == 0 {
		s.GPUSpeed = 1
	}
	if s.Poll == 0 {
		s.Poll = 10 * time.Second
	}
	if s.MaxResubmits == 0 {
		s.MaxResubmits = 5
	}
	if s.PortBase == 0 {
		s.PortBase = 24000
	}
	if s.PortSpan == 0 {
		s.PortSpan = 8000
	}
	if s.OrphanTimeout == 0 {
		s.OrphanTimeout = 10 * time.Minute
	}
}

func (s *SlurmSettings) validate(loc locator) error {
	switch {
	case s.TimeLimit < time.Minute:
		return loc.errorf("slurm.time_limit", "%v is shorter than Slurm's one-minute granularity; give e.g. 4h", s.TimeLimit)
	case s.GPUMemoryGiB < 0:
		return loc.errorf("slurm.gpu_memory_gib", "%g is negative; give each GPU's memory in GiB (e.g. 80), or leave it out for 80", s.GPUMemoryGiB)
	case s.GPUSpeed < 0:
		return loc.errorf("slurm.gpu_speed", "%g is negative; give the GPUs' speed relative to an A800 (1, about 2 for an H100), or leave it out for 1", s.GPUSpeed)
	case s.Poll < 0:
		return loc.errorf("slurm.poll", "%v is negative; give a duration such as 10s, or leave it out for the default", s.Poll)
	case s.MaxResubmits < 0:
		return loc.errorf("slurm.max_resubmits", "%d is negative; give 1 or more, or leave it out for the default 5", s.MaxResubmits)
	case s.CPUsPerGPU < 0:
		return loc.errorf("slurm.cpus_per_gpu", "%d is negative; give 1 or more, or leave it out for Slurm's default", s.CPUsPerGPU)
	case s.PortSpan < 1:
		return loc.errorf("slurm.port_span", "%d: give how many ports engines may use from slurm.port_base (1 or more; default 8000)", s.PortSpan)
	case s.PortBase < 1024 || s.PortBase+s.PortSpan > 65536:
		return loc.errorf("slurm.port_base", "ports %d..%d are not a usable range; keep them within 1024..65535", s.PortBase, s.PortBase+s.PortSpan-1)
	}
	if strings.ContainsAny(s.GRES, " ,=") || strings.Count(s.GRES, ":") > 1 {
		return loc.errorf("slurm.gres", "%q is not a GRES name; write gpu or gpu:TYPE (npcorch adds the count)", s.GRES)
	}
	return nil
}

// LiveTokenEnv is the environment variable that may hold the live page's
// token (package tasks/live).
const LiveTokenEnv = "NPCORCH_LIVE_TOKEN"

// SecretEnv names the environment variables of c's secrets that no engine
// needs: every model's and judge's engine.api_key_env (the keys of API
// endpoints) and the live page's token, sorted, each once.
func (c *Campaign) SecretEnv() []string {
	names := []string{LiveTokenEnv}
	for _, m := range slices.Concat(c.Resolved, c.ResolvedJudges) {
		if m.Engine.APIKeyEnv != "" {
			names = append(names, m.Engine.APIKeyEnv)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}
