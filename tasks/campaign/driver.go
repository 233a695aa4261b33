package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/launcher/slurm"
	"github.com/npcorch/npcorch/tasks"
)

// driver carries one run: the scheduler's effects, the engines, the pools
// and the runners.
type driver struct {
	opt      Options
	runDir   string
	prepDir  string
	reg      *tasks.Registry
	items    []tasks.Item
	models   map[string]configs.Model
	node     placement.Node
	gpuSrc   gpu.Source
	sup      *launcher.Supervisor
	slurm    *slurm.Backend // engines run as Slurm jobs (backend: slurm)
	runner   *tasks.Runner
	client   *tasks.Client
	journal  *tasks.Journal
	events   chan schedule.Event
	loopDone chan struct{}
	start    time.Time
	plan     *schedule.Plan
	imgLimit launcher.ImageLimits

	mu       sync.Mutex
	pools    map[string]*tasks.Pool
	started  map[string]bool
	sums     map[string]tasks.Summary
	spans    map[schedule.ReplicaID]*gpu.Span
	reps     map[schedule.ReplicaID]*launcher.Replica
	allSpans []gpu.Span
	wg       sync.WaitGroup
	samples  *os.File

	// stopAsked holds the replicas the scheduler asked to stop; a start
	// that ends after that reports nothing (issue 7: a Failed or Ready
	// event after Stopped ended the whole campaign).
	stopAsked map[schedule.ReplicaID]bool
	// ended carries the end of each replica the scheduler started (its
	// launcher Failed or Stopped event, by endpoint name) from the engine
	// watcher to the goroutine that started it, which reports a failure
	// after ready to the scheduler: its GPUs are then freed.
	ended map[string]chan error
	// abandoned holds the models the scheduler gave up on.
	abandoned map[string]bool
	// endMu orders each replica's events to the scheduler: EventReady
	// never after its end, and exactly one end (failed or stopped), which
	// endSent records. The scheduler's loop never takes it.
	endMu   sync.Mutex
	endSent map[schedule.ReplicaID]bool
}

func newDriver(ctx context.Context, opt Options, runDir, prepDir string, reg *tasks.Registry, prompts *tasks.Prompts, items []tasks.Item) (*driver, error) {
	c := opt.Campaign
	d := &driver{opt: opt, runDir: runDir, prepDir: prepDir, reg: reg, items: items, models: map[string]configs.Model{},
		events: make(chan schedule.Event, 64), loopDone: make(chan struct{}), start: time.Now(), pools: map[string]*tasks.Pool{}, started: map[string]bool{},
		sums: map[string]tasks.Summary{}, spans: map[schedule.ReplicaID]*gpu.Span{}, reps: map[schedule.ReplicaID]*launcher.Replica{},
		stopAsked: map[schedule.ReplicaID]bool{}, ended: map[string]chan error{}, abandoned: map[string]bool{},
		endSent: map[schedule.ReplicaID]bool{}}

	src, err := d.gpuSource()
	if err != nil {
		return nil, err
	}
	d.gpuSrc = src
	var notes []string
	d.node, notes, err = d.planNode(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("campaign %s: %w", c.Name, err)
	}
	for _, n := range notes {
		fmt.Fprintln(opt.Log, n)
	}

	if err := os.MkdirAll(filepath.Join(runDir, "simkeys"), 0o755); err != nil {
		return nil, err
	}
	d.imgLimit = imageLimits(items)
	for _, m := range c.Resolved {
		m = reg.TrimTasks(m)
		m.Engine.Sim = slices.Clone(m.Engine.Sim)
		if m.Engine.Kind == configs.EngineSim {
			key, err := tasks.BuildSimKey(reg, d.builder(m), prompts, itemsFor(items, m).Items())
			if err != nil {
				return nil, err
			}
			path := filepath.Join(runDir, "simkeys", tasks.SafeName(m.Name)+".json")
			if err := key.Write(path); err != nil {
				return nil, err
			}
			m.Engine.Sim = append(m.Engine.Sim, "--sim-key", path, "--sim-seed", fmt.Sprint(c.Seed))
		}
		d.models[m.Name] = m
	}

	lcfg := launcher.Config{
		Engines: d.engines(),
		Shim:    append(slices.Clone(opt.Self), "serve", "engine-shim"),
		LogDir:  filepath.Join(runDir, "engines"),
		Host:    c.Host,
		Timing:  d.timing(),
	}
	if !strings.HasPrefix(c.Node, "fake:") {
		if _, absent := src.(gpu.Absent); !absent {
			lcfg.Memory = memoryProbe{src}
		}
	}
	d.sup = launcher.NewSupervisor(lcfg)

	d.client = tasks.NewClient(c.Client)
	d.journal, err = tasks.OpenJournal(runDir)
	if err != nil {
		return nil, err
	}
	state, err := tasks.ReadJournal(runDir)
	if err != nil {
		return nil, err
	}
	reportJournal(opt.Log, state, c, items)
	progress := opt.Progress
	if progress == nil {
		progress = io.Discard
	}
	d.runner = &tasks.Runner{Client: d.client, Journal: d.journal, Prompts: prompts, Tasks: reg,
		Progress: tasks.NewProgress(progress), Retries: c.Client.Retries, Backoff: c.Client.Backoff, MaxBackoff: 30 * time.Second}
	d.runner.SetState(state)
	return d, nil
}

// timing is the engines' lifecycle: the campaign file's launch settings
// over the caller's Timing over the launcher's defaults.
func (d *driver) timing() launcher.Timing {
	return d.opt.Timing.With(d.opt.Campaign.Launch)
}

// engines are the engine kinds npcorch launches, its own simulated engine
// among them.
func (d *driver) engines() launcher.Engines {
	return launcher.Engines{Sim: append(slices.Clone(d.opt.Self), "sim-engine")}
}

// builder is the request builder of a model: file:// URLs for engines that
// share this disk (started with --allowed-local-media-path), base64
// otherwise, unless the campaign says.
func (d *driver) builder(m configs.Model) tasks.RequestBuilder {
	media := d.opt.Campaign.Media
	if media == configs.MediaAuto {
		media = configs.MediaFile
		if m.Engine.Kind == configs.EngineExternal || d.opt.Campaign.Host != "127.0.0.1" || !d.sharesDisk() {
			media = configs.MediaBase64
		}
	}
	return tasks.RequestBuilder{Model: m, Media: media, Root: d.prepDir, MaxBytes: d.opt.Campaign.Client.MaxRequestBytes}
}

// modelItems is a model's share of the campaign's items, those of the tasks
// it is asked: a filter over the campaign's list, read as the runner goes,
// not a copy of it.
type modelItems struct {
	all   []tasks.Item
	tasks map[string]configs.TaskSettings
}

func itemsFor(items []tasks.Item, m configs.Model) modelItems {
	return modelItems{all: items, tasks: m.Tasks}
}

// Len is how many of the campaign's items the model is asked, counted
// when asked (the runner asks once a run).
func (s modelItems) Len() int {
	n := 0
	for range s.Items() {
		n++
	}
	return n
}

// Items yields the model's items in the campaign's order.
func (s modelItems) Items() iter.Seq[tasks.Item] {
	return func(yield func(tasks.Item) bool) {
		for i := range s.all {
			if _, ok := s.tasks[s.all[i].Task]; ok && !yield(s.all[i]) {
				return
			}
		}
	}
}

// maxImages is the most images one request of model m carries, over the
// items it is asked.
func maxImages(m configs.Model, items []tasks.Item) int {
	n := 1
	for it := range itemsFor(items, m).Items() {
		k := len(it.Images)
		if lim := m.Tasks[it.Task].MaxImages; lim > 0 && k > lim {
			k = lim
		}
		n = max(n, k)
	}
	return n
}

// imageLimits is the largest request the dataset makes: image count and
// pixel size, for --limit-mm-per-prompt.
func imageLimits(items []tasks.Item) launcher.ImageLimits {
	var l launcher.ImageLimits
	for _, it := range items {
		l.Count = max(l.Count, len(it.Images))
		for _, img := range it.Images {
			l.Width, l.Height = max(l.Width, img.Width), max(l.Height, img.Height)
		}
	}
	return l
}

// run plans the node and drives the scheduler's event loop to the end.
func (d *driver) run(ctx context.Context) error {
	c := d.opt.Campaign
	var local []configs.Model
	var workloads []schedule.Workload
	var external []configs.Model
	for _, m := range c.Resolved {
		m = d.models[m.Name]
		if m.Engine.Kind == configs.EngineExternal {
			external = append(external, m)
			continue
		}
		local = append(local, m)
		workloads = append(workloads, workload(m, itemsFor(d.items, m).Items(), c.Repeat)...)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopSampler := d.startSampler(ctx)
	defer stopSampler()
	go d.watchEngines(ctx)

	var extErr error
	var extWG sync.WaitGroup
	for _, m := range external {
		extWG.Add(1)
		go func() {
			defer extWG.Done()
			if err := d.runExternal(ctx, m); err != nil {
				d.mu.Lock()
				extErr = errors.Join(extErr, err)
				d.mu.Unlock()
			}
		}()
	}
	var schedErr error
	if len(local) > 0 {
		s, err := schedule.New(schedule.Config{Node: d.node, Models: local, Workloads: workloads,
			Policy: schedule.Policy{MaxStartFailures: c.Launch.MaxStartFailures}}, effects{d, ctx})
		if err != nil {
			return err
		}
		d.plan, schedErr = schedule.Run(ctx, s, schedule.Traced(schedule.ChanSource(d.events), d.opt.Log))
		close(d.loopDone)
		if schedErr == nil {
			// Every engine has ended; the runners of abandoned models are
			// still ending their requests as not run.
			d.wg.Wait()
		}
		if d.plan != nil {
			for _, f := range d.plan.Failures {
				fmt.Fprintf(d.opt.Log, "engine failure: %s on GPUs %v: %s\n", schedule.ReplicaName(f.Model, f.Index), f.GPUs, f.Err)
			}
			schedErr = errors.Join(schedErr, modelsNotRun(d.plan))
		}
	}
	extWG.Wait()
	return errors.Join(schedErr, extErr)
}

// modelsNotRun names every model the campaign abandoned, with the reason:
// the run goes on without them, but must not look complete.
func modelsNotRun(p *schedule.Plan) error {
	var errs []error
	for _, m := range p.Models {
		switch m.Status {
		case schedule.StatusFailed:
			errs = append(errs, fmt.Errorf("model %s was abandoned: %s; its engine logs are in the run directory (engines/, or slurm/ for Slurm jobs)", m.Model, firstLine(m.Note)))
		case schedule.StatusUnplaceable:
			errs = append(errs, fmt.Errorf("model %s was abandoned: %s", m.Model, m.Note))
		}
	}
	return errors.Join(errs...)
}

// effects carries out the scheduler's decisions; neither call blocks.
type effects struct {
	d   *driver
	ctx context.Context
}

func (e effects) StartReplica(r schedule.Replica) { go e.d.startReplica(e.ctx, r) }
func (e effects) StopReplica(r schedule.Replica)  { go e.d.stopReplica(r) }
func (e effects) AbandonModel(model, why string)  { e.d.abandon(e.ctx, model, why) }

// send hands an event to the scheduler's loop, or drops it once the loop
// has ended (a late stop after an interrupt).
func (d *driver) send(ev schedule.Event) {
	ev.At = time.Since(d.start)
	select {
	case d.events <- ev:
	case <-d.loopDone:
	}
}

func (d *driver) startReplica(ctx context.Context, r schedule.Replica) {
	m := d.models[r.Model]
	lim := d.imgLimit
	lim.Count = maxImages(m, d.items)
	spec := launcher.ReplicaSpec{Model: m, Replica: r.Index, GPUs: r.UUIDs, MediaRoot: abs(d.prepDir), Images: lim, APIServers: r.APIServers}
	ended := make(chan error, 1)
	d.mu.Lock()
	d.ended[endpointName(m.Name, spec.Replica)] = ended
	d.mu.Unlock()
	ep, err := d.startEngine(ctx, r.ID, spec)
	if d.stopWasAsked(r.ID) {
		// The scheduler stopped it while it started: stopReplica reports
		// EventStopped, the only end it expects. A Slurm job submitted
		// after that stop found nothing to cancel is cancelled now.
		if d.slurm != nil && err == nil {
			if err := d.stopSlurmEngine(r); err != nil {
				fmt.Fprintf(d.opt.Log, "stop %s: %v\n", schedule.ReplicaName(r.Model, r.Index), err)
			}
		}
		return
	}
	if err != nil {
		d.sendEnd(schedule.Event{Kind: schedule.EventFailed, Replica: r.ID, Model: r.Model, Index: r.Index, Err: err.Error(), Permanent: launcher.IsPermanent(err)})
		return
	}
	d.mu.Lock()
	d.spans[r.ID] = &gpu.Span{Model: r.Model, Replica: fmt.Sprint(r.Index), GPUs: slices.Clone(r.GPUs), Start: time.Now()}
	pool := d.poolLocked(m.Name)
	d.mu.Unlock()
	pool.Upsert(taskEndpoint(ep), d.opt.Campaign.Client.Concurrency)
	if !d.sendReady(schedule.Event{Kind: schedule.EventReady, Replica: r.ID, Model: r.Model, Index: r.Index}) {
		return // stopped meanwhile; the stop reported its end
	}
	d.startRunner(ctx, m.Name)
	d.watchReplica(ctx, r, ended)
}

// watchReplica waits for a ready replica's end. One that failed for good
// (its engine gave up restarting, or could not be restarted) while the
// scheduler still wanted it is reported as failed, which frees its GPUs
// and lets the scheduler re-plan or abandon the model; before this, such a
// model's requests waited for ever (issue 12).
func (d *driver) watchReplica(ctx context.Context, r schedule.Replica, ended <-chan error) {
	select {
	case err := <-ended:
		if err != nil && d.sendEnd(schedule.Event{Kind: schedule.EventFailed, Replica: r.ID, Model: r.Model, Index: r.Index, Err: err.Error(), Permanent: launcher.IsPermanent(err)}) {
			d.endSpan(r.ID)
		}
	case <-ctx.Done():
	}
}

// startRunner starts model's runner once, when its first replica is ready
// or when the scheduler abandons it (then every item ends not run).
func (d *driver) startRunner(ctx context.Context, model string) {
	d.mu.Lock()
	first := !d.started[model]
	d.started[model] = true
	pool := d.poolLocked(model)
	d.mu.Unlock()
	if first {
		d.wg.Add(1)
		go d.runModel(ctx, d.models[model], pool, len(d.node.GPUs))
	}
}

// abandon ends a model the scheduler gave up on: its pool closes, so that
// its outstanding requests end as not run with the reason instead of
// waiting for a replica that never comes; a model that never ran gets its
// runner now, which journals each of its requests as not run.
func (d *driver) abandon(ctx context.Context, model, why string) {
	why = firstLine(why)
	fmt.Fprintf(d.opt.Log, "model %s abandoned: %s\n", model, why)
	d.mu.Lock()
	d.abandoned[model] = true
	pool := d.poolLocked(model)
	d.mu.Unlock()
	pool.Close(fmt.Sprintf("model %s is not served: %s", model, why))
	d.startRunner(ctx, model)
}

// firstLine is the first line of s: an engine error's message without
// its log tail.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// startEngine starts a replica's engine as a Slurm job or as a local
// child, and waits until it is ready.
func (d *driver) startEngine(ctx context.Context, id schedule.ReplicaID, spec launcher.ReplicaSpec) (launcher.Endpoint, error) {
	if d.slurm != nil {
		return d.startSlurmEngine(ctx, spec)
	}
	rep, err := d.sup.Add(spec)
	if err != nil {
		return launcher.Endpoint{}, err
	}
	d.mu.Lock()
	d.reps[id] = rep
	asked := d.stopAsked[id]
	d.mu.Unlock()
	if asked {
		return launcher.Endpoint{}, launcher.ErrStopped
	}
	return rep.Start(ctx)
}

// sendEnd sends a replica's end to the scheduler, which expects exactly
// one: a failure after the scheduler asked the replica to stop, or any
// end after one was sent, is dropped (the stop reports EventStopped). It
// reports whether the event was sent.
func (d *driver) sendEnd(ev schedule.Event) bool {
	d.endMu.Lock()
	defer d.endMu.Unlock()
	drop := d.endSent[ev.Replica] || (ev.Kind == schedule.EventFailed && d.stopWasAsked(ev.Replica))
	d.endSent[ev.Replica] = true
	if !drop {
		d.send(ev)
	}
	return !drop
}

// sendReady sends a replica's EventReady unless its end was sent first
// (a stop that overtook the start), and reports whether it did.
func (d *driver) sendReady(ev schedule.Event) bool {
	d.endMu.Lock()
	defer d.endMu.Unlock()
	if d.endSent[ev.Replica] {
		return false
	}
	d.send(ev)
	return true
}

// stopWasAsked reports whether the scheduler asked to stop replica id.
func (d *driver) stopWasAsked(id schedule.ReplicaID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stopAsked[id]
}

func (d *driver) poolLocked(model string) *tasks.Pool {
	p, ok := d.pools[model]
	if !ok {
		p = tasks.NewPool(nil, d.opt.Campaign.Client.Concurrency)
		d.pools[model] = p
	}
	return p
}

// runModel streams a model's items through its pool (replicas join and
// leave it as the scheduler decides) and tells the scheduler when done.
func (d *driver) runModel(ctx context.Context, m configs.Model, pool *tasks.Pool, maxReplicas int) {
	defer d.wg.Done()
	go pool.WatchMetrics(ctx, &http.Client{Timeout: 2 * time.Second}, time.Second)
	sum, err := d.runner.Run(ctx, tasks.ModelRun{Model: m, Builder: d.builder(m), Pool: pool,
		Items: itemsFor(d.items, m), Repeats: d.opt.Campaign.Repeat, Workers: max(m.Engine.MaxNumSeqs, 1) * max(maxReplicas, 1)})
	d.mu.Lock()
	d.sums[m.Name] = sum
	d.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(d.opt.Log, "model %s: %v\n", m.Name, err)
		}
		return
	}
	d.send(schedule.Event{Kind: schedule.EventFinished, Model: m.Name})
}

func (d *driver) stopReplica(r schedule.Replica) {
	d.mu.Lock()
	d.stopAsked[r.ID] = true
	rep := d.reps[r.ID]
	pool := d.pools[r.Model]
	d.mu.Unlock()
	if pool != nil {
		pool.Remove(endpointName(r.Model, r.Index))
	}
	var err error
	if rep != nil {
		ctx, cancel := context.WithTimeout(context.Background(), d.sup.Timing().Grace+d.sup.Timing().Verify+10*time.Second)
		err = rep.Stop(ctx)
		cancel()
	}
	if d.slurm != nil {
		err = d.stopSlurmEngine(r)
	}
	d.endSpan(r.ID)
	if err != nil {
		fmt.Fprintf(d.opt.Log, "stop %s: %v\n", schedule.ReplicaName(r.Model, r.Index), err)
	}
	d.sendEnd(schedule.Event{Kind: schedule.EventStopped, Replica: r.ID, Model: r.Model, Index: r.Index})
}

func (d *driver) endSpan(id schedule.ReplicaID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if sp, ok := d.spans[id]; ok {
		sp.End = time.Now()
		d.allSpans = append(d.allSpans, *sp)
		delete(d.spans, id)
	}
}

// watchEngines follows the launcher's events: a crashed replica leaves its
// pool until it is ready again (its in-flight requests fail and are retried
// on the others), a replica that failed for good leaves it.
func (d *driver) watchEngines(ctx context.Context) {
	sub := d.sup.Subscribe()
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case ev := <-sub.C:
			d.onEngineEvent(ev)
		}
	}
}

// onEngineEvent logs an engine event and moves the replica in or out of
// its model's pool. The Slurm backend calls it directly.
func (d *driver) onEngineEvent(ev launcher.Event) {
	fmt.Fprintf(d.opt.Log, "engine %s\n", ev)
	name := endpointName(ev.Model, ev.Replica)
	d.mu.Lock()
	pool := d.pools[ev.Model]
	ended := d.ended[name]
	d.mu.Unlock()
	if ended != nil && (ev.Kind == launcher.EventFailed || ev.Kind == launcher.EventStopped) {
		err := ev.Err
		if ev.Kind == launcher.EventFailed && err == nil {
			err = fmt.Errorf("%s failed", name)
		} else if ev.Kind == launcher.EventStopped {
			err = nil
		}
		select {
		case ended <- err:
		default: // the start itself failed and reported it
		}
	}
	if pool == nil {
		return
	}
	switch ev.Kind {
	case launcher.EventCrashed:
		pool.SetDown(endpointName(ev.Model, ev.Replica))
	case launcher.EventReady:
		pool.Upsert(taskEndpoint(ev.Endpoint), d.opt.Campaign.Client.Concurrency)
	case launcher.EventFailed, launcher.EventStopped:
		pool.Remove(endpointName(ev.Model, ev.Replica))
	}
}

// runExternal runs a model served by an existing endpoint.
func (d *driver) runExternal(ctx context.Context, m configs.Model) error {
	key := ""
	if m.Engine.APIKeyEnv != "" {
		key = os.Getenv(m.Engine.APIKeyEnv)
		if key == "" {
			return fmt.Errorf("model %s: environment variable %s is empty; export the endpoint's API key in it", m.Name, m.Engine.APIKeyEnv)
		}
	}
	ep := tasks.Endpoint{Name: m.Name + "#ext", BaseURL: m.Engine.BaseURL, APIKey: key, MaxNumSeqs: max(m.Engine.MaxNumSeqs, 1)}
	pool := tasks.NewPool([]tasks.Endpoint{ep}, d.opt.Campaign.Client.Concurrency)
	sum, err := d.runner.Run(ctx, tasks.ModelRun{Model: m, Builder: d.builder(m), Pool: pool, Items: itemsFor(d.items, m), Repeats: d.opt.Campaign.Repeat})
	d.mu.Lock()
	d.sums[m.Name] = sum
	d.mu.Unlock()
	return err
}

func endpointName(model string, replica int) string { return fmt.Sprintf("%s#%d", model, replica) }

func taskEndpoint(ep launcher.Endpoint) tasks.Endpoint {
	return tasks.Endpoint{Name: endpointName(ep.Model, ep.Replica), BaseURL: ep.BaseURL, APIKey: ep.APIKey,
		MaxNumSeqs: ep.MaxNumSeqs, MetricsURL: strings.TrimSuffix(ep.BaseURL, "/v1") + "/metrics", Local: true,
		CachedTokens: ep.CachedTokens}
}

// startSampler records GPU samples to RUN/gpu/samples.jsonl at 1 Hz while
// the run lasts. Fake nodes are not sampled: their readings would be
// invented, and a report must not show invented utilization.
func (d *driver) startSampler(ctx context.Context) (stop func()) {
	if strings.HasPrefix(d.opt.Campaign.Node, "fake:") {
		return func() {}
	}
	if _, absent := d.gpuSrc.(gpu.Absent); absent {
		return func() {}
	}
	dir := filepath.Join(d.runDir, "gpu")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(d.opt.Log, "gpu sampler: %v\n", err)
		return func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, "samples.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Fprintf(d.opt.Log, "gpu sampler: %v\n", err)
		return func() {}
	}
	d.samples = f
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	s := &gpu.Sampler{Source: d.gpuSrc, Host: gpu.SystemHost{}, Interval: d.opt.SampleInterval}
	enc := json.NewEncoder(f)
	go func() {
		defer close(done)
		if err := s.Run(ctx, func(smp gpu.Sample) error { return enc.Encode(smp) }); err != nil && ctx.Err() == nil {
			fmt.Fprintf(d.opt.Log, "gpu sampler stopped: %v\n", err)
		}
	}()
	return func() { cancel(); <-done }
}

func (d *driver) summaries() []tasks.Summary {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []tasks.Summary
	for _, m := range d.opt.Campaign.Resolved {
		if s, ok := d.sums[m.Name]; ok {
			out = append(out, s)
		}
	}
	return out
}

// close stops every engine (verified), waits for the runners, syncs the
// journal and writes the GPU spans.
func (d *driver) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), d.sup.Timing().Grace+d.sup.Timing().Verify+30*time.Second)
	defer cancel()
	err := d.sup.StopAll(ctx)
	if d.slurm != nil {
		err = errors.Join(err, d.closeSlurm())
	}
	d.wg.Wait()
	d.mu.Lock()
	ids := make([]schedule.ReplicaID, 0, len(d.spans))
	for id := range d.spans {
		ids = append(ids, id)
	}
	d.mu.Unlock()
	for _, id := range ids {
		d.endSpan(id)
	}
	d.client.Close()
	err = errors.Join(err, d.journal.Close())
	if d.samples != nil {
		err = errors.Join(err, d.samples.Close())
		slices.SortFunc(d.allSpans, func(a, b gpu.Span) int { return a.Start.Compare(b.Start) })
		err = errors.Join(err, writeJSON(filepath.Join(d.runDir, "gpu", "spans.json"), d.allSpans))
	}
	return errors.Join(err, d.gpuSrc.Close())
}
