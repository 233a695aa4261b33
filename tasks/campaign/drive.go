package campaign

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
	"github.com/npcorch/npcorch/tasks/send"
)

// newDriver sets the run up on m (localMachine), whose GPUs it closes when
// it fails and the driver's close closes otherwise.
func newDriver(ctx context.Context, opt Options, m machine, runDir, prepDir string, reg *tasks.Registry, prompts *tasks.Prompts, items []tasks.Item) (*driver, error) {
	c := opt.Campaign
	d := &driver{opt: opt, runDir: runDir, prepDir: prepDir, reg: reg, items: items, models: map[string]configs.Model{}, now: time.Now}
	src := m.gpus
	d.gpuSrc, d.nodeSpec = src, m.spec
	var notes []string
	var err error
	d.node, d.backend, notes, err = d.setUp(ctx, m)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("campaign %s: %w", c.Name, err), src.Close())
	}
	for _, n := range notes {
		fmt.Fprintln(opt.Log, n)
	}
	if err := d.prepare(prompts); err != nil {
		if d.journal != nil {
			err = errors.Join(err, d.journal.Close())
		}
		return nil, errors.Join(err, d.backend.Close(context.Background()), src.Close())
	}
	return d, nil
}

// prepare writes the simulated engines' answer keys, opens the journal
// and sets up the runner.
func (d *driver) prepare(prompts *tasks.Prompts) error {
	d.imgLimit = imageLimits(d.items)
	if err := d.resolveModels(prompts); err != nil {
		return err
	}
	if err := d.resolveJudges(prompts); err != nil {
		return err
	}
	d.client = inference.NewClient(d.opt.Campaign.Client)
	return d.openRunner(prompts)
}

// resolveModels keeps the campaign's models, each simulated engine given
// its answer key (RUN/simkeys/MODEL.json) and the campaign's seed.
func (d *driver) resolveModels(prompts *tasks.Prompts) error {
	c := d.opt.Campaign
	if err := os.MkdirAll(filepath.Join(d.runDir, "simkeys"), 0o755); err != nil {
		return err
	}
	for _, m := range c.Resolved {
		m = d.reg.TrimTasks(m)
		m.Engine.Sim = slices.Clone(m.Engine.Sim)
		if err := d.giveSimKey(&m, prompts, itemsFor(d.items, m).Items()); err != nil {
			return err
		}
		d.models[m.Name] = m
	}
	return nil
}

// openRunner opens the journal and sets up the runner with what it holds.
func (d *driver) openRunner(prompts *tasks.Prompts) error {
	c, opt := d.opt.Campaign, d.opt
	var err error
	d.journal, err = journal.Open(d.runDir)
	if err != nil {
		return err
	}
	state, err := journal.Read(d.runDir)
	if err != nil {
		return err
	}
	reportJournal(opt.Log, d.reg, state, c, d.items)
	d.answered = answeredBefore(state)
	for _, rec := range state.Records {
		if rec.Status == journal.StatusAnswered {
			d.before = append(d.before, rec)
		}
	}
	progress := opt.Progress
	if progress == nil {
		progress = io.Discard
	}
	runner := &send.Runner{Client: d.client, Journal: d.journal, Prompts: prompts, Tasks: d.reg,
		Progress: send.NewProgress(progress), Retries: c.Client.RetryLimit(), Backoff: c.Client.Backoff, MaxBackoff: 30 * time.Second}
	runner.SetState(state)
	d.runner = runner
	return nil
}

// run drives the campaign to its end: the scheduler places the local
// models and the loop carries out its decisions, while external models
// run beside it. It keeps the loop's results (plan, summaries, spans) and
// writes the measured speeds to RUN/speeds.json.
func (d *driver) run(ctx context.Context) error {
	c := d.opt.Campaign
	var local, external []configs.Model
	var workloads []schedule.Workload
	for _, m := range c.Resolved {
		m = d.models[m.Name]
		if m.Engine.Kind == configs.EngineExternal {
			external = append(external, m)
			continue
		}
		local = append(local, m)
		workloads = append(workloads, workload(m, itemsFor(d.items, m).Items(), c.Repeat)...)
	}
	for _, j := range c.ResolvedJudges {
		j = d.models[j.Name]
		if j.Engine.Kind == configs.EngineExternal {
			external = append(external, j)
			continue
		}
		local = append(local, j)
		workloads = append(workloads, judgeWorkload(d.items, c.Resolved, j, d.judgeTask()))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopSampler := d.startSampler(ctx)
	defer stopSampler()
	if d.measure == nil {
		t := time.NewTicker(cmp.Or(d.opt.MeasureInterval, measureEvery))
		defer t.Stop()
		d.measure = t.C
	}
	l := newLoop(ctx, d)
	if d.live != nil {
		d.live.Post(d.begin(l.start))
		defer d.postPlan(ctx, local, workloads)()
	}
	err := l.run(local, workloads, external)
	d.sums, d.spans = l.sums, l.spans
	if d.plan != nil {
		for _, f := range d.plan.Failures {
			fmt.Fprintf(d.opt.Log, "engine failure: %s on GPUs %v: %s\n", schedule.ReplicaName(f.Model, f.Index), f.GPUs, f.Err)
		}
		err = errors.Join(err, modelsNotRun(d.plan), d.writeSpeeds(d.plan.Speeds))
	}
	return err
}

// startSampler records GPU samples to RUN/gpu/samples.jsonl at 1 Hz while
// the run lasts. Fake nodes are not sampled: their readings would be
// invented, and a report must not show invented utilization.
func (d *driver) startSampler(ctx context.Context) (stop func()) {
	if d.nodeSpec.IsFake() {
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
		if err := s.Run(ctx, func(smp gpu.Sample) error { d.live.Post(live.Sampled{Sample: smp}); return enc.Encode(smp) }); err != nil && ctx.Err() == nil {
			fmt.Fprintf(d.opt.Log, "gpu sampler stopped: %v\n", err)
		}
	}()
	return func() { cancel(); <-done }
}
