package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
	"github.com/npcorch/npcorch/tasks/score"
	"github.com/npcorch/npcorch/tasks/send"
)

// Outcome is what a run did.
type Outcome struct {
	RunDir    string
	Summaries []send.Summary
	Plan      *schedule.Plan
	Results   *score.Results
	// Problems are the dataset's and the items' problems the run went
	// past (also written to Options.Log).
	Problems Problems
}

// syncWriter serialises writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// Run runs the campaign to the end, or until ctx ends: then every engine is
// stopped and verified gone, the journal is synced, and the scores of what
// was answered are written (provisional where items are missing).
//
// It goes in four steps: the preflight checks everything the campaign
// names and reads the node, leaving nothing behind when it refuses; the
// run folder is made, locked and given its event log and run.json; the
// driver places, launches and feeds the engines; the end writes what was
// left unsent and the scores, and says why a run is incomplete.
func Run(ctx context.Context, opt Options) (out *Outcome, err error) {
	if opt.Live != nil {
		defer opt.Live.Close() // a listener never served; Serve's server closes it too
	}
	reg := Benchmark()
	pre, err := preflight(ctx, opt, reg)
	if err != nil {
		return nil, err
	}
	gpus := pre.here.gpus
	defer func() {
		if gpus != nil { // not handed to the driver
			err = errors.Join(err, gpus.Close())
		}
	}()
	folder, err := openRunFolder(&opt, pre.runDir)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, folder.unlock()) }()
	defer folder.events.Close()
	hub, srv, err := startLive(opt, pre.runDir)
	if err != nil {
		return nil, err
	}
	defer func() { stopLive(opt.Log, hub, srv, live.Ended{State: endState(ctx, err), Err: err}) }()
	pre.bench.Problems.Report(opt.Log)
	noteUnjudged(opt.Log, opt.Campaign, reg, pre.bench.Items)
	out = &Outcome{RunDir: pre.runDir, Problems: pre.bench.Problems}
	meta, err := writeMeta(opt.Campaign, reg, pre.src, pre.runDir)
	if err != nil {
		return nil, err
	}

	d, err := newDriver(ctx, opt, pre.here, pre.runDir, pre.src.Prepared, reg, pre.prompts, pre.bench.Items)
	gpus = nil // the driver's now
	if err != nil {
		return nil, err
	}
	runErr := drive(ctx, d, hub, srv, out)
	return out, endRun(ctx, opt, out, folder.events, meta, pre.bench, runErr)
}

// preflighted is what the preflight found: the campaign's dataset, items
// and prompts, its run folder's absolute path, and the node.
type preflighted struct {
	src     Source
	bench   *Bench
	prompts *tasks.Prompts
	runDir  string
	here    machine
}

// preflight checks everything the campaign names before the run folder is
// made, so that a mistake leaves nothing behind: the node, the engines,
// the task keys, the dataset's folders, its items and prompts, that a
// --resume has a run to continue, and the node's GPUs (NVML without a
// driver is refused here too). The caller closes here.gpus.
func preflight(ctx context.Context, opt Options, reg *tasks.Registry) (*preflighted, error) {
	c := opt.Campaign
	node, err := nodeSpec(c)
	if err != nil {
		return nil, err
	}
	if err := checkFakeNode(c, node); err != nil {
		return nil, err
	}
	if err := checkEngines(c, launcher.Engines{Sim: opt.Self}, exec.LookPath, os.Getenv); err != nil {
		return nil, err
	}
	src, err := CampaignSource(reg, c)
	if err != nil {
		return nil, err
	}
	if err := checkFolders(c, src); err != nil {
		return nil, err
	}
	b, prompts, err := loadRunInputs(c, reg, src)
	if err != nil {
		return nil, err
	}
	runDir := abs(c.Path(c.Output)) // named the same way in every message, however it was given
	if opt.Resume && !Begun(runDir) {
		return nil, fmt.Errorf("--resume: %s holds no run to continue (no run.json, no journal/); give the --out of the interrupted run, or drop --resume to start the campaign there", runDir)
	}
	gpus, err := gpuSource(c, node)
	if err != nil {
		return nil, err
	}
	here, err := localMachine(ctx, c, node, gpus)
	if err != nil {
		return nil, errors.Join(err, gpus.Close())
	}
	return &preflighted{src: src, bench: b, prompts: prompts, runDir: runDir, here: here}, nil
}

// runFolder is the run folder while a run holds it: its lock and its
// event log (RUN/events.log).
type runFolder struct {
	events *os.File
	unlock func() error
}

// openRunFolder makes and locks the run folder, empties it for --fresh,
// takes the repeats and seed a resumed run recorded, opens its event log
// (opt.Log then writes there too, one whole line at a time) and refuses a
// journal that holds answers unless the run resumes it. On an error the
// folder is unlocked again.
func openRunFolder(opt *Options, runDir string) (f *runFolder, err error) {
	c := opt.Campaign
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	unlock, err := lockRunDir(runDir, "npcorch run")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, unlock())
		}
	}()
	if opt.Fresh && !opt.Resume {
		if err := clearRunDir(runDir); err != nil {
			return nil, err
		}
	}
	if opt.Repeat > 0 {
		c.Repeat = opt.Repeat
	}
	if opt.Resume {
		if err := keepRecorded(c, runDir, opt.Repeat); err != nil {
			return nil, err
		}
	}
	events, err := os.OpenFile(filepath.Join(runDir, "events.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	// The scheduler, the engine watcher and every model's runner log at
	// once: one lock keeps each line whole and the caller's writer safe.
	opt.Log = &syncWriter{w: io.MultiWriter(opt.Log, events)}
	if !opt.Resume {
		if st, err := journal.Read(runDir); err == nil && len(st.Records) > 0 {
			events.Close()
			return nil, fmt.Errorf("%s already holds a journal of %d requests; pass --resume to continue it, or choose another output directory", runDir, len(st.Records))
		}
	}
	return &runFolder{events: events, unlock: unlock}, nil
}

// writeMeta writes RUN/run.json: the campaign, its dataset, the tasks each
// model is asked, the repeats, seed and node.
func writeMeta(c *configs.Campaign, reg *tasks.Registry, src Source, runDir string) (Meta, error) {
	meta := Meta{Campaign: c.Name, Raw: abs(src.Raw), Prepared: abs(src.Prepared), Tasks: src.Tasks, Repeats: c.Repeat, Seed: c.Seed, Node: c.Node}
	if _, err := os.Stat(c.File); err == nil {
		meta.CampaignFile = abs(c.File)
	}
	meta.ModelTasks = map[string][]string{}
	for _, m := range c.Resolved {
		meta.Models = append(meta.Models, m.Name)
		meta.ModelTasks[m.Name] = askedTasks(reg.TrimTasks(m), src.Tasks)
	}
	return meta, writeJSON(filepath.Join(runDir, "run.json"), meta)
}

// drive runs the driver to its end and closes it (every engine stopped and
// verified gone, the journal synced), keeping each model's summary and the
// plan in out; the live page sees it all.
func drive(ctx context.Context, d *driver, hub *live.Hub, srv *live.Server, out *Outcome) error {
	d.live = hub
	if srv != nil {
		srv.SetGPUs(d.gpuCollector(ctx))
	}
	runErr := d.run(ctx)
	out.Summaries, out.Plan = d.summaries(), d.plan
	if err := d.close(); err != nil {
		runErr = errors.Join(runErr, err)
	}
	return runErr
}

// endRun finishes a driven run: it writes the items left unsent and the
// scores of what the journal holds (the table to opt.Out), and, unless
// ctx ended, says why a run is incomplete, to opt.Out and events.log
// (where `npcorch status` points). runErr is the driver's.
func endRun(ctx context.Context, opt Options, out *Outcome, events io.Writer, meta Meta, b *Bench, runErr error) error {
	if err := writeUnsent(out.RunDir, unsentItems(out.Summaries), opt.Log); err != nil {
		return errors.Join(runErr, err)
	}
	res, err := scoreBench(out.RunDir, meta, b)
	if err != nil {
		return errors.Join(runErr, err)
	}
	out.Results = res
	if opt.Out != nil {
		res.WriteMarkdown(opt.Out)
	}
	if ctx.Err() == nil {
		w := events
		if opt.Out != nil {
			w = io.MultiWriter(opt.Out, events)
		}
		runErr = errors.Join(runErr, checkComplete(res, out.Summaries, w))
	}
	return runErr
}

// noteUnjudged says, at the start of a run, that the answers of a judged
// task (O1's consultations) will have no score: the campaign has no judge.
func noteUnjudged(w io.Writer, c *configs.Campaign, reg *tasks.Registry, items []tasks.Item) {
	var withItems []string
	for _, it := range items {
		if !slices.Contains(withItems, it.Task) {
			withItems = append(withItems, it.Task)
		}
	}
	if msg := UnjudgedNote(c, reg, withItems); msg != "" {
		fmt.Fprintln(w, msg)
	}
}

// UnjudgedNote is the note of a campaign that asks a judged task (o1, one
// of taskKeys) but lists no judges: its answers will be journaled, but
// not scored. "" otherwise.
func UnjudgedNote(c *configs.Campaign, reg *tasks.Registry, taskKeys []string) string {
	if len(c.ResolvedJudges) > 0 {
		return ""
	}
	for _, t := range reg.Tasks() {
		if t.Judges != "" && slices.Contains(taskKeys, t.Judges) {
			return fmt.Sprintf("note: %s's answers will be journaled but not scored: campaign %s has no judges (its %s task judges them); add one under judges: in %s (docs/campaign.md), or leave %s out of tasks:",
				t.Judges, c.Name, t.Key, c.File, t.Judges)
		}
	}
	return ""
}

// askedTasks are the tasks of the run a model is asked: those it has
// settings for (the driver's itemsFor), in the run's order.
func askedTasks(m configs.Model, run []string) []string {
	out := []string{}
	for _, k := range run {
		if _, ok := m.Tasks[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// nodeSpec reads the campaign's node, refusing one npcorch does not have
// (a typo), naming the campaign file's line, before the dataset is read;
// gpuSource opens it once the campaign's folders are checked.
func nodeSpec(c *configs.Campaign) (gpu.NodeSpec, error) {
	spec, err := gpu.ParseNodeSpec(c.Node)
	if err != nil {
		return gpu.NodeSpec{}, c.Errorf("node", "%v", err)
	}
	return spec, nil
}

// checkFakeNode refuses to launch a real engine on a fake node: its
// CUDA_VISIBLE_DEVICES would name GPUs that do not exist. The simulated
// engine and external endpoints need no GPU and stay allowed.
func checkFakeNode(c *configs.Campaign, node gpu.NodeSpec) error {
	if !node.IsFake() || c.Backend != configs.BackendLocal {
		return nil
	}
	var errs []error
	for _, m := range c.Resolved {
		switch m.Engine.Kind {
		case configs.EngineSim, configs.EngineExternal:
			continue
		}
		errs = append(errs, fmt.Errorf("%s: model %s: engine kind %s cannot run on the fake node %s: its CUDA_VISIBLE_DEVICES would name GPUs that do not exist; on a GPU machine set node: nvml (or auto), or give this model engine: {kind: sim} to simulate it",
			c.File, m.Name, m.Engine.Kind, c.Node))
	}
	return errors.Join(errs...)
}

// checkEngines refuses, before the run folder is made, the engine settings
// every request of a model would fail on: an external endpoint's API key
// variable that is empty, and (for engines started on this node) an
// executable that lookPath cannot find or a wrapper without a command.
// Found later, each failed the model after the run had begun.
func checkEngines(c *configs.Campaign, engines launcher.Engines, lookPath func(string) (string, error), getenv func(string) string) error {
	var errs []error
	check := func(field string, m configs.Model) {
		if err := checkEngine(c, field, m, engines, lookPath, getenv); err != nil {
			errs = append(errs, err)
		}
	}
	for i, m := range c.Resolved {
		check(fmt.Sprintf("models[%d]", i), m)
	}
	for i, m := range c.ResolvedJudges {
		check(fmt.Sprintf("judges[%d]", i), m)
	}
	return errors.Join(errs...)
}

// checkEngine is checkEngines for one model; field locates its entry.
func checkEngine(c *configs.Campaign, field string, m configs.Model, engines launcher.Engines, lookPath func(string) (string, error), getenv func(string) string) error {
	if env := m.Engine.APIKeyEnv; m.Engine.Kind == configs.EngineExternal && env != "" && getenv(env) == "" {
		return c.Errorf(field+".engine.api_key_env", "model %s: environment variable %s is empty; export the endpoint's API key in it (export %s=...), then run again", m.Name, env, env)
	}
	if c.Backend != configs.BackendLocal {
		return nil // engines start on the cluster's nodes, with their PATH
	}
	if m.Engine.Kind == configs.EngineWrapper && len(m.Engine.Command) == 0 {
		return c.Errorf(field+".engine.command", "model %s: engine kind wrapper needs engine.command, a command that serves the OpenAI API (placeholders {host} {port} {model} {hf_id}; the API key is in $%s)", m.Name, configs.WrapperKeyEnv)
	}
	exe := engines.Executable(m)
	if exe == "" || strings.Contains(exe, "{") {
		return nil
	}
	if _, err := lookPath(exe); err != nil {
		return c.Errorf(field+".engine.command", "model %s: engine kind %s cannot start: %v; install the engine, or set engine.command to its executable (a path, or a name in PATH)", m.Name, m.Engine.Kind, err)
	}
	return nil
}

// loadRunInputs loads what a run sends: the dataset's items and the
// prompts. A prepared folder made from another dataset.json is refused: its
// images may not be the dataset's, and every answer would be about them.
func loadRunInputs(c *configs.Campaign, reg *tasks.Registry, src Source) (*Bench, *tasks.Prompts, error) {
	b, err := LoadBench(reg, src)
	if err != nil {
		return nil, nil, err
	}
	if b.Stale != nil {
		return nil, nil, c.Errorf("dataset.prepared", "%v", *b.Stale)
	}
	prompts, err := loadPrompts(c, reg)
	if err != nil {
		return nil, nil, err
	}
	return b, prompts, nil
}

// Begun reports whether runDir holds a run: its run.json or its journal.
func Begun(runDir string) bool {
	for _, name := range []string{"run.json", "journal"} {
		if _, err := os.Stat(filepath.Join(runDir, name)); err == nil {
			return true
		}
	}
	return false
}

// loadPrompts reads the campaign's own prompt templates, or the embedded
// ones.
func loadPrompts(c *configs.Campaign, reg *tasks.Registry) (*tasks.Prompts, error) {
	if c.Prompts == "" {
		return tasks.LoadPrompts(configs.Defaults, "prompts", reg)
	}
	p, err := tasks.LoadPrompts(os.DirFS(c.Path(c.Prompts)), ".", reg)
	if err != nil {
		return nil, fmt.Errorf("campaign %s: prompts folder %s: %w", c.Name, c.Path(c.Prompts), err)
	}
	return p, nil
}
