package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// The campaign's side of the live view (package live): what the run tells
// the status hub, and `npcorch status` from a run folder.

// grader grades a record as the scorer would: the task's extraction of
// the answer against the item's gold label.
func grader(reg *tasks.Registry, items []tasks.Item) live.Grader {
	byID := make(map[string]*tasks.Item, len(items))
	for i := range items {
		byID[items[i].ID] = &items[i]
	}
	return func(rec journal.Record) live.Verdict {
		it := byID[rec.Item]
		t, err := reg.Task(rec.Task)
		if it == nil || err != nil || t.Answer == nil || it.Excluded || it.Gold.Label == "" || rec.Answer == nil {
			return live.Ungraded
		}
		l := t.Answer(*it, rec.Answer.Content)
		switch {
		case !l.OK():
			return live.Invalid
		case l.Is(it.Gold.Label):
			return live.Correct
		}
		return live.Wrong
	}
}

// begin is what the hub hears as the loop starts: the tasks, each model's
// work, the journal's earlier answers, the GPUs and whether they are
// sampled.
func (d *driver) begin(start time.Time) live.Begin {
	b := live.Begin{Started: start, Tasks: taskInfo(d.reg, d.items), GPUNote: d.gpuNote(), Grade: grader(d.reg, d.items), Prior: d.before}
	for _, m := range d.opt.Campaign.Resolved {
		m = d.models[m.Name]
		b.Models = append(b.Models, live.ModelInfo{Name: m.Name, External: m.Engine.Kind == configs.EngineExternal,
			Work: workload(m, itemsFor(d.items, m).Items(), d.opt.Campaign.Repeat)})
	}
	// The judges, with their first verdicts as their work (a retried
	// verdict counts again when it is answered).
	if jt := d.judgeTask(); jt != nil {
		for _, j := range d.opt.Campaign.ResolvedJudges {
			b.Models = append(b.Models, live.ModelInfo{Name: j.Name, External: j.Engine.Kind == configs.EngineExternal,
				Work: []schedule.Workload{judgeWorkload(d.items, d.opt.Campaign.Resolved, j, jt)}})
		}
	}
	for _, g := range d.node.GPUs {
		b.GPUs = append(b.GPUs, g.Index)
	}
	return b
}

// taskInfo names the tasks the items belong to, in the registry's order.
func taskInfo(reg *tasks.Registry, items []tasks.Item) []live.TaskInfo {
	has := map[string]bool{}
	for _, it := range items {
		has[it.Task] = true
	}
	var out []live.TaskInfo
	for _, t := range reg.Tasks() {
		if has[t.Key] {
			out = append(out, live.TaskInfo{Key: t.Key, Title: t.Title, Level: t.Level})
		}
	}
	return out
}

// gpuNote says why the run does not sample its GPUs, "" when it does
// (startSampler's conditions).
func (d *driver) gpuNote() string {
	if d.nodeSpec.IsFake() {
		return fmt.Sprintf("%s is a fake node: its readings would be invented", d.nodeSpec)
	}
	if a, absent := d.gpuSrc.(gpu.Absent); absent {
		return a.Reason
	}
	return ""
}

// postPlan simulates the scheduler's plan for the hub's timeline, off the
// loop: the same scheduler on the simulator, as `npcorch plan --simulate`.
// The returned stop ends the simulation, if it still runs, and waits for it.
func (d *driver) postPlan(ctx context.Context, local []configs.Model, workloads []schedule.Workload) (stop func()) {
	if len(local) == 0 {
		return func() {}
	}
	cfg := schedule.Config{Node: d.node, Models: slices.Clone(local), Workloads: slices.Clone(workloads), Estimator: d.est,
		Policy: schedule.Policy{MaxStartFailures: d.opt.Campaign.Launch.MaxStartFailures}}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p, err := schedule.Simulate(ctx, cfg, schedule.SimOptions{})
		if err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(d.opt.Log, "live: the plan for the timeline: %v\n", err)
			}
			return
		}
		d.live.Post(live.Planned{Plan: p})
	}()
	return func() {
		cancel()
		<-done
	}
}

// endState is how a run that returned err (from Run) ended.
func endState(ctx context.Context, err error) live.RunState {
	switch {
	case ctx.Err() != nil:
		return live.RunInterrupted
	case err == nil:
		return live.RunFinished
	case errors.Is(err, ErrIncomplete):
		return live.RunIncomplete
	}
	return live.RunFailed
}

// Status is the summary of the run in runDir, from its folder alone: the
// last status file, with the journal's counts (exact after any crash) and,
// when the dataset can be read, its answers graded again; a run whose
// status says running but whose process is gone is called gone. speeds is
// RUN/speeds.json when the run wrote it.
func Status(runDir string, now time.Time) (snap *live.Snapshot, speeds *schedule.Speeds, err error) {
	var meta Meta
	data, err := os.ReadFile(filepath.Join(runDir, "run.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not a run directory: %w", runDir, err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(runDir, "run.json"), err)
	}
	j, err := journal.Read(runDir)
	if err != nil {
		return nil, nil, err
	}
	reg := Benchmark()
	b, benchErr := LoadBench(reg, Source{Raw: meta.Raw, Prepared: meta.Prepared, Tasks: meta.Tasks})
	snap, err = live.ReadStatusFile(runDir)
	if err != nil {
		// The journal still says what was answered: without a status file
		// (an older npcorch), or with one a machine crash left empty, the
		// run's items say what it asks.
		why := fmt.Sprintf("the run folder has no %s (a run of an older npcorch, or one that ended before writing it)", live.StatusFile)
		if !errors.Is(err, os.ErrNotExist) {
			why = fmt.Sprintf("%s cannot be read (%v)", live.StatusFile, err)
		}
		if benchErr != nil {
			return nil, nil, fmt.Errorf("%s, and the dataset that would say what the run asks cannot be read either: %w", why, benchErr)
		}
		snap = live.Skeleton(meta.Campaign, runDir, skeletonBegin(reg, meta, b.Items), why)
	}
	var grade live.Grader
	if benchErr == nil {
		grade = grader(reg, b.Items)
	} else {
		snap.Notes = append(snap.Notes, fmt.Sprintf("accuracy as of the status file: the dataset cannot be read to grade the journal (%v)", benchErr))
	}
	snap = live.Recount(snap, j.Records, grade)
	file := meta.CampaignFile
	if file == "" {
		file = "CAMPAIGN" // an embedded campaign, or a run of an older npcorch
	}
	live.CheckAlive(snap, now, ResumeCommand(file, runDir, meta.Repeats))
	speeds, err = readSpeeds(runDir)
	if err != nil {
		snap.Notes = append(snap.Notes, err.Error())
	}
	return snap, speeds, nil
}

// skeletonBegin is what a run asks, from its run.json and its items.
func skeletonBegin(reg *tasks.Registry, meta Meta, items []tasks.Item) live.Begin {
	b := live.Begin{Tasks: taskInfo(reg, items), GPUNote: "unknown: the run folder has no status file"}
	byTask := map[string]int{}
	for _, it := range items {
		byTask[it.Task]++
	}
	for _, name := range meta.Models {
		mi := live.ModelInfo{Name: name}
		for _, t := range b.Tasks {
			// Every model asked every task: run.json keeps no model's own
			// task list, and a text model's image tasks show as remaining.
			mi.Work = append(mi.Work, schedule.Workload{Model: name, Task: t.Key, Requests: byTask[t.Key] * max(meta.Repeats, 1)})
		}
		b.Models = append(b.Models, mi)
	}
	return b
}

// readSpeeds reads RUN/speeds.json (schedule.ReadSpeeds, which checks
// it), nil when the run measured nothing.
func readSpeeds(runDir string) (*schedule.Speeds, error) {
	s, err := schedule.ReadSpeeds(filepath.Join(runDir, schedule.SpeedsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("measured speeds not shown: %w", err)
	}
	return s, nil
}

// startLive starts the run's status hub, which writes RUN/status.json,
// and, with Options.Live, the server that shows it.
func startLive(opt Options, runDir string) (*live.Hub, *live.Server, error) {
	hub := live.NewHub(live.HubOptions{Campaign: opt.Campaign.Name, RunDir: runDir, Log: opt.Log})
	if opt.Live == nil {
		return hub, nil, nil
	}
	srv, err := opt.Live.Serve(hub)
	if err != nil {
		return nil, nil, errors.Join(err, hub.Close(live.Ended{State: live.RunFailed, Err: err}))
	}
	return hub, srv, nil
}

// stopLive tells the hub how the run ended, which publishes and writes
// the last status, then stops the server. Their errors are logged: a
// status the run could not show does not change how it went.
func stopLive(log io.Writer, hub *live.Hub, srv *live.Server, end live.Ended) {
	if err := errors.Join(hub.Close(end), srv.Close()); err != nil {
		fmt.Fprintf(log, "live: %v\n", err)
	}
}

// gpuCollector is the GPU exporter for the live server's /metrics, nil
// when the run does not sample its GPUs.
func (d *driver) gpuCollector(ctx context.Context) prometheus.Collector {
	if d.gpuNote() != "" {
		return nil
	}
	inv, err := d.gpuSrc.Inventory(ctx)
	if err != nil {
		fmt.Fprintf(d.opt.Log, "live: GPU metrics: %v\n", err)
		return nil
	}
	c, err := gpu.NewCollector(ctx, d.gpuSrc, inv.Node)
	if err != nil {
		fmt.Fprintf(d.opt.Log, "live: GPU metrics: %v\n", err)
		return nil
	}
	return c
}
