package live

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/journal"
)

// state is the live state: owned by the Hub's goroutine, or by one caller
// building a snapshot from a run folder.
type state struct {
	now      func() time.Time
	grade    Grader
	campaign string
	runDir   string
	host     string
	pid      int
	started  time.Time
	run      RunState
	err      string
	taskInfo []TaskInfo
	models   []*modelState
	byModel  map[string]*modelState
	engines  []*engineState
	byEngine map[engineKey]*engineState
	gpus     GPUs
	plan     *schedule.Plan
}

type engineKey struct {
	model   string
	replica int
}

type modelState struct {
	info   ModelInfo
	ended  ModelState // "" while the model's runner runs
	note   string
	tasks  []*taskState
	byTask map[string]*taskState
	rate   rateWindow
}

type taskState struct {
	info     TaskInfo
	requests int
	planned  float64 // planned token equivalents per request
	prior    tally   // answered before this run
	cur      tally   // journaled by this run
	dur      hist
	ttft     hist
}

// tally counts requests and their tokens.
type tally struct {
	answered, notRun                  int
	correct, wrong, invalid, ungraded int
	prompt, completion                int64
	work                              float64
}

func (t *tally) add(o tally) {
	t.answered += o.answered
	t.notRun += o.notRun
	t.correct += o.correct
	t.wrong += o.wrong
	t.invalid += o.invalid
	t.ungraded += o.ungraded
	t.prompt += o.prompt
	t.completion += o.completion
	t.work += o.work
}

func (t tally) outcomes() Outcomes {
	return Outcomes{Correct: t.correct, Wrong: t.wrong, Invalid: t.invalid, Ungraded: t.ungraded, NotRun: t.notRun,
		PromptTokens: t.prompt, CompletionTokens: t.completion}
}

type engineState struct {
	Engine
	assigned, ready, end time.Time
}

func newState(campaign, runDir, host string, pid int, now func() time.Time) *state {
	return &state{now: now, campaign: campaign, runDir: runDir, host: host, pid: pid, started: now(),
		run: RunStarting, byModel: map[string]*modelState{}, byEngine: map[engineKey]*engineState{},
		gpus: GPUs{Devices: []GPU{}}}
}

// work is a request's token equivalents, as the scheduler counts them.
func work(prompt, completion int) float64 {
	return schedule.Estimator{}.Work(schedule.Workload{PromptTokens: int64(prompt), OutputTokens: int64(completion)})
}

// count tallies one record.
func (s *state) count(rec journal.Record) tally {
	if rec.Status != journal.StatusAnswered || rec.Answer == nil {
		return tally{notRun: 1}
	}
	u := rec.Answer.Usage
	t := tally{answered: 1, prompt: int64(u.PromptTokens), completion: int64(u.CompletionTokens), work: work(u.PromptTokens, u.CompletionTokens)}
	v := Ungraded
	if s.grade != nil {
		v = s.grade(rec)
	}
	switch v {
	case Correct:
		t.correct = 1
	case Wrong:
		t.wrong = 1
	case Invalid:
		t.invalid = 1
	default:
		t.ungraded = 1
	}
	return t
}

// Event is something the campaign tells the Hub. Events are values: the
// poster keeps nothing of them that it later changes.
type Event interface{ apply(s *state) }

func (b Begin) apply(s *state) {
	s.started, s.run, s.taskInfo, s.grade = b.Started, RunRunning, slices.Clone(b.Tasks), b.Grade
	titles := map[string]TaskInfo{}
	for _, t := range b.Tasks {
		titles[t.Key] = t
	}
	for _, mi := range b.Models {
		m := &modelState{info: mi, byTask: map[string]*taskState{}}
		for _, w := range mi.Work {
			info, ok := titles[w.Task]
			if !ok {
				info = TaskInfo{Key: w.Task, Title: w.Task}
			}
			t := &taskState{info: info, requests: w.Requests, dur: newHist(durationBounds), ttft: newHist(ttftBounds)}
			if w.Requests > 0 {
				t.planned = schedule.Estimator{}.Work(w) / float64(w.Requests)
			}
			m.tasks = append(m.tasks, t)
			m.byTask[w.Task] = t
		}
		s.models = append(s.models, m)
		s.byModel[mi.Name] = m
	}
	for _, rec := range b.Prior {
		if rec.Status != journal.StatusAnswered {
			continue // sent again by this run
		}
		if t := s.task(rec.Model, rec.Task); t != nil {
			t.prior.add(s.count(rec))
		}
	}
	s.gpus.Note = b.GPUNote
	s.gpus.Sampled = b.GPUNote == ""
	for _, i := range b.GPUs {
		s.gpus.Devices = append(s.gpus.Devices, GPU{Index: i})
	}
}

func (s *state) task(model, task string) *taskState {
	if m := s.byModel[model]; m != nil {
		return m.byTask[task]
	}
	return nil
}

func (j Journaled) apply(s *state) {
	rec := j.Record
	m := s.byModel[rec.Model]
	if m == nil {
		return
	}
	t := m.byTask[rec.Task]
	if t == nil {
		return
	}
	c := s.count(rec)
	t.cur.add(c)
	if c.answered == 0 {
		return
	}
	tm := rec.Answer.Timing
	t.dur.observe(tm.E2Ems / 1000)
	if tm.TTFTms > 0 {
		t.ttft.observe(tm.TTFTms / 1000)
	}
	m.rate.add(s.now(), c.work, float64(c.completion))
}

func (a Assigned) apply(s *state) {
	e := s.engine(a.Model, a.Replica)
	e.TP, e.GPUs, e.assigned, e.end = a.TP, slices.Clone(a.GPUs), a.At, time.Time{}
	e.ready = time.Time{}
	e.State, e.Since = "assigned", a.At
}

func (s *state) engine(model string, replica int) *engineState {
	k := engineKey{model, replica}
	e := s.byEngine[k]
	if e == nil {
		e = &engineState{Engine: Engine{Model: model, Replica: replica, GPUs: []int{}}}
		s.byEngine[k] = e
		s.engines = append(s.engines, e)
	}
	return e
}

func (ev EngineEvent) apply(s *state) {
	e := s.engine(ev.Model, ev.Replica)
	if ev.Kind == launcher.ReplicaLoading && e.State != "" {
		return // a note of a start still loading: its state and since stay
	}
	if e.assigned.IsZero() {
		e.assigned = ev.Time // an engine the scheduler did not announce (serve)
	}
	e.State, e.Since = string(ev.Kind), ev.Time
	if ev.Log != "" {
		e.Log = ev.Log
	}
	if ev.Attempt > e.Restarts && ev.Kind == launcher.ReplicaRestarting {
		e.Restarts = ev.Attempt
	}
	switch ev.Kind {
	case launcher.ReplicaReady:
		e.Endpoint = ev.Endpoint.BaseURL
		if e.ready.IsZero() {
			e.ready = ev.Time
		}
		e.end = time.Time{}
	case launcher.ReplicaCrashed:
		t := ev.Time
		e.LastCrash = &t
	case launcher.ReplicaFailed:
		t := ev.Time
		e.LastCrash, e.end = &t, ev.Time
	case launcher.ReplicaStopped:
		e.end = ev.Time
	}
	if ev.Err != nil {
		msg, _, _ := strings.Cut(ev.Err.Error(), "\n")
		e.Error = msg
		var ee *launcher.EngineError
		if errors.As(ev.Err, &ee) {
			e.ErrorLines = slices.Clone(ee.Tail)
		}
	}
}

func (m ModelEnded) apply(s *state) {
	ms := s.byModel[m.Model]
	if ms == nil {
		return
	}
	switch {
	case m.Abandoned != "":
		ms.ended, ms.note = ModelFailed, firstLine(m.Abandoned)
	case ms.ended == ModelFailed:
		// the runner of an abandoned model ends after it: it stays failed
	case m.Err != nil:
		ms.ended, ms.note = ModelStopped, firstLine(m.Err.Error())
	default:
		ms.ended = ModelDone
		if ms.sum().notRun > 0 {
			ms.ended = ModelPartial
		}
	}
}

func (g Sampled) apply(s *state) {
	t := g.Time
	s.gpus.Time, s.gpus.Sampled = &t, true
	devs := make([]GPU, len(g.GPUs))
	for i, d := range g.GPUs {
		devs[i] = GPU{Index: d.Index, UtilPercent: d.GPUUtilPercent, MemUsedBytes: d.MemUsedBytes, MemTotalBytes: d.MemTotalBytes, PowerWatts: d.PowerWatts}
		if d.UUID != nil {
			devs[i].UUID = *d.UUID
		}
	}
	s.gpus.Devices = devs
}

func (p Planned) apply(s *state) { s.plan = p.Plan }

func (e Ended) apply(s *state) {
	s.run = e.State
	if e.Err != nil {
		s.err = firstLine(e.Err.Error())
	}
	for _, m := range s.models {
		if m.ended == "" {
			m.ended = ModelStopped
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// sum is the model's requests over its tasks, before and in this run.
func (m *modelState) sum() tally {
	var t tally
	for _, ts := range m.tasks {
		t.add(ts.prior)
		t.add(ts.cur)
	}
	return t
}

// modelStateOf is the model's state: its end, or what its engines do.
func (s *state) modelStateOf(m *modelState) ModelState {
	if m.ended != "" {
		return m.ended
	}
	if m.info.External {
		return ModelServing
	}
	st := ModelWaiting
	for _, e := range s.engines {
		if e.Model != m.info.Name {
			continue
		}
		switch launcher.ReplicaEventKind(e.State) {
		case launcher.ReplicaReady:
			return ModelServing
		case launcher.ReplicaStopped, launcher.ReplicaFailed:
		default:
			st = ModelStarting
		}
	}
	return st
}

// counts turns a tally of requests asked into Counts.
func counts(requests int, t tally) Counts {
	c := Counts{Requests: requests, Answered: t.answered, NotRun: t.notRun, Correct: t.correct, Wrong: t.wrong,
		Invalid: t.invalid, Ungraded: t.ungraded, PromptTokens: t.prompt, CompletionTokens: t.completion}
	c.Remaining = max(requests-t.answered-t.notRun, 0)
	if g := t.correct + t.wrong + t.invalid; g > 0 {
		a := float64(t.correct) / float64(g)
		c.Accuracy = &a
	}
	return c
}

// snapshot builds the state's snapshot at now.
func (s *state) snapshot() *Snapshot {
	now := s.now()
	snap := &Snapshot{Format: Format, Campaign: s.campaign, RunDir: s.runDir, State: s.run, Error: s.err, Host: s.host, PID: s.pid,
		Started: s.started, Updated: now, ElapsedS: seconds(now.Sub(s.started)), Models: []Model{}, Engines: []Engine{}, GPUs: s.gpus}
	snap.GPUs.Devices = slices.Clone(s.gpus.Devices)
	var total tally
	requests := 0
	est := etaSum{}
	for _, m := range s.models {
		mv := s.modelView(m, now)
		snap.Models = append(snap.Models, mv)
		total.add(m.sum())
		requests += mv.Requests
		est.add(mv, s.remainingWork(m))
	}
	snap.Totals = counts(requests, total)
	snap.ETA = est.eta(now, s.run)
	for _, e := range s.engines {
		ev := e.Engine
		ev.GPUs = slices.Clone(e.GPUs)
		ev.ErrorLines = slices.Clone(e.ErrorLines)
		snap.Engines = append(snap.Engines, ev)
	}
	snap.Timeline = s.timeline(snap, now)
	return snap
}

func (s *state) modelView(m *modelState, now time.Time) Model {
	var sum tally
	requests := 0
	mv := Model{Model: m.info.Name, State: s.modelStateOf(m), External: m.info.External, Note: m.note, Tasks: []Task{}}
	for _, t := range m.tasks {
		all := t.prior
		all.add(t.cur)
		sum.add(all)
		requests += t.requests
		mv.Tasks = append(mv.Tasks, Task{Task: t.info.Key, Title: t.info.Title, Level: t.info.Level, Counts: counts(t.requests, all),
			ThisRun: t.cur.outcomes(), Duration: t.dur.view(), TTFT: t.ttft.view()})
	}
	mv.Counts = counts(requests, sum)
	mv.WorkPerS, mv.TokensPerS = m.rate.rates(now)
	mv.ETA = modelETA(mv, s.remainingWork(m), now)
	if mv.State == ModelWaiting {
		mv.PlannedStartS = s.plannedStart(m.info.Name)
	}
	return mv
}

// plannedStart is when the plan starts the model's first wave, nil
// without a plan or a wave for it.
func (s *state) plannedStart(model string) *float64 {
	if s.plan == nil {
		return nil
	}
	var at *float64
	for _, w := range s.plan.Waves {
		if w.Model == model && (at == nil || float64(w.Start) < *at) {
			v := float64(w.Start)
			at = &v
		}
	}
	return at
}

// remainingWork is the model's work left in token equivalents: each
// task's remaining requests at the work its answers took so far, or, before
// any, at the model's mean, or the plan's estimate.
func (s *state) remainingWork(m *modelState) float64 {
	if m.ended != "" {
		return 0
	}
	all := m.sum()
	mean := 0.0
	if all.answered > 0 {
		mean = all.work / float64(all.answered)
	}
	left := 0.0
	for _, t := range m.tasks {
		done := t.prior
		done.add(t.cur)
		rem := float64(max(t.requests-done.answered-done.notRun, 0))
		switch {
		case done.answered > 0:
			left += rem * done.work / float64(done.answered)
		case mean > 0:
			left += rem * mean
		default:
			left += rem * t.planned
		}
	}
	return left
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// timeline is the plan's waves, each replica's life and each serving
// model's projection to its ETA.
func (s *state) timeline(snap *Snapshot, now time.Time) Timeline {
	tl := Timeline{Bars: []Bar{}}
	if s.plan != nil {
		tl.PlannedS = float64(s.plan.Makespan)
		for _, w := range s.plan.Waves {
			for i, g := range w.GPUs {
				tl.Bars = append(tl.Bars, Bar{Model: w.Model, Kind: BarPlanned, Replica: i, GPUs: slices.Clone(g),
					StartS: float64(w.Start), ReadyS: float64(w.Ready), EndS: float64(w.End)})
			}
		}
	}
	at := func(t time.Time) float64 { return max(seconds(t.Sub(s.started)), 0) }
	for _, e := range s.engines {
		b := Bar{Model: e.Model, Kind: BarActual, Replica: e.Replica, GPUs: slices.Clone(e.GPUs), StartS: at(e.assigned)}
		if !e.ready.IsZero() {
			b.ReadyS = at(e.ready)
		}
		if e.end.IsZero() && s.run == RunRunning {
			b.EndS, b.Open = at(now), true
		} else if e.end.IsZero() {
			b.EndS = at(now)
		} else {
			b.EndS = at(e.end)
		}
		tl.Bars = append(tl.Bars, b)
	}
	for _, m := range snap.Models {
		if m.State == ModelServing && m.ETA.RemainingS != nil {
			tl.Bars = append(tl.Bars, Bar{Model: m.Model, Kind: BarProjected, StartS: at(now), EndS: at(now) + *m.ETA.RemainingS})
		}
	}
	return tl
}

// etaSum adds up the models for the campaign's ETA.
type etaSum struct {
	work, rate, longest float64
	measured            bool
}

func (e *etaSum) add(m Model, left float64) {
	e.work += left
	e.rate += m.WorkPerS
	if m.ETA.RemainingS != nil {
		e.longest = max(e.longest, *m.ETA.RemainingS)
		e.measured = true
	}
}

// eta is the campaign's: the later of the slowest serving model's ETA and
// all the work left at the pace the node keeps now.
func (e etaSum) eta(now time.Time, run RunState) ETA {
	switch {
	case run != RunRunning && run != RunStarting:
		zero := 0.0
		return ETA{RemainingS: &zero, At: &now, Basis: "the run has ended"}
	case e.work == 0 && e.measured:
		zero := 0.0
		return ETA{RemainingS: &zero, At: &now, Basis: "no work left"}
	case e.rate <= 0:
		return ETA{Basis: "nothing measured yet: the estimate starts with the first answers"}
	}
	left := max(e.longest, e.work/e.rate)
	at := now.Add(time.Duration(left * float64(time.Second)))
	return ETA{RemainingS: &left, At: &at, Basis: fmt.Sprintf("at the pace of the last minute (%.0f token equivalents/s in all), the slowest serving model's own pace at least", e.rate)}
}

// modelETA is a model's time left at its pace of the last minute.
func modelETA(m Model, left float64, now time.Time) ETA {
	switch {
	case m.State != ModelServing && m.State != ModelStarting && m.State != ModelWaiting:
		zero := 0.0
		return ETA{RemainingS: &zero, Basis: "ended"}
	case m.WorkPerS <= 0:
		return ETA{Basis: "not measured: no answer in the last minute"}
	}
	rem := left / m.WorkPerS
	at := now.Add(time.Duration(rem * float64(time.Second)))
	return ETA{RemainingS: &rem, At: &at, Basis: "at its pace of the last minute"}
}
