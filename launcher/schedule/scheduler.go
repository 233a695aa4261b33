package schedule

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
)

// ModelStatus is where a model stands in the campaign.
type ModelStatus string

// Model statuses.
const (
	StatusPending     ModelStatus = "pending"     // waiting for GPUs
	StatusRunning     ModelStatus = "running"     // has replicas starting or ready
	StatusStopping    ModelStatus = "stopping"    // finished; replicas stopping
	StatusDone        ModelStatus = "done"        // finished and stopped
	StatusFailed      ModelStatus = "failed"      // gave up after start failures
	StatusUnplaceable ModelStatus = "unplaceable" // no feasible placement on this node
	StatusExternal    ModelStatus = "external"    // an external endpoint; needs no GPU
	StatusNoWork      ModelStatus = "no-work"     // nothing to run
)

// terminal reports whether the status needs no more events.
func (s ModelStatus) terminal() bool {
	switch s {
	case StatusDone, StatusFailed, StatusUnplaceable, StatusExternal, StatusNoWork:
		return true
	}
	return false
}

// Config is what a campaign schedule is computed from.
type Config struct {
	// Node is the node as it is now (free memory included).
	Node placement.Node
	// Models are the campaign's models, registry defaults applied.
	Models []configs.Model
	// Workloads give each model's work; a model without one has none.
	Workloads []Workload
	// After names, by model, the models whose answers its work needs (a
	// judge's): it starts once one of them has ended and cannot end
	// before all of them (after.go).
	After     map[string][]string
	Estimator Estimator
	Policy    Policy
}

type replicaState int

const (
	replicaStarting replicaState = iota
	replicaReady
	replicaStopping
	replicaGone
)

type liveReplica struct {
	Assignment
	state replicaState
	// starting stays true until the engine is ready or gone, even while it
	// is being stopped: the one-at-a-time rule holds until then.
	starting bool
	// served is set once the engine was ready; sampledAt and servedAt
	// are the time and the fluid's served seconds at its last speed
	// sample (or when it became ready).
	served    bool
	sampledAt time.Duration
	servedAt  float64
}

type modelState struct {
	m configs.Model
	w Workload
	// after are the models whose answers its work needs (Config.After).
	after []string
	mix   mix
	work  float64
	// speed is guess × e^logFactor: the registry's speed corrected by
	// the measured factor the plan uses now.
	speed, guess, logFactor float64
	// corrected is set once a re-plan took the model's own measurements.
	corrected bool
	status    ModelStatus
	// opts are the model's placements on the idle node.
	opts []placement.Placement
	// best, efficient and single are placements on the idle node: highest
	// rate, highest rate per GPU, best single engine; bestRate, effRate
	// (per GPU) and singleRate their rates in token equivalents per second.
	best, efficient, single       placement.Placement
	bestRate, effRate, singleRate float64
	gpuTime                       time.Duration
	target                        int
	avoid                         [][]int
	failures                      int
	crashes                       int    // its engines' crashes after ready (EventCrashed)
	crashed                       []int  // the replicas (Index) that crashed, in order, once each
	replicas                      int    // replicas started so far: the next one's Index
	lastFailure                   string // first line of the last failure
	live                          []ReplicaID
	started                       bool
	start, workEnd, end           time.Duration
	note                          string
	rejections                    []placement.Rejection
}

type gpuState struct {
	base     placement.GPU
	claimed  uint64
	starting int
	hosts    []ReplicaID
}

// Scheduler decides which engines run where and when. It does no I/O: it
// acts through Effects and learns outcomes from Handle. It is not safe for
// concurrent use; Run calls it from one goroutine.
type Scheduler struct {
	cfg      Config
	fx       Effects
	now      time.Duration
	models   []*modelState // priority order
	byName   map[string]*modelState
	gpus     []*gpuState
	gpuAt    map[int]*gpuState
	replicas []*liveReplica // index ID-1
	waves    []Wave
	failures []EngineFailure
	fluid    *fluid
	bounds   Bounds
	began    bool
	speeds   *speedBook
	replans  []Replan
	// nodeLog is the node-wide log speed factor the plan uses for models
	// not measured yet; replannedAt is when the last re-plan was made.
	nodeLog     float64
	replannedAt time.Duration
	// notes are the plan's campaign-wide notes (Plan.Notes).
	notes []string
}

// New prepares a scheduler for cfg acting through fx. It places every model
// on the idle node once, to rank models, size first waves and compute the
// bounds; models that cannot be placed at all are marked unplaceable.
func New(cfg Config, fx Effects) (*Scheduler, error) {
	if fx == nil {
		return nil, fmt.Errorf("schedule: no Effects given")
	}
	if err := cfg.Node.Validate(); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	s := &Scheduler{cfg: cfg, fx: fx, byName: map[string]*modelState{}, gpuAt: map[int]*gpuState{}, fluid: newFluid(),
		speeds: newSpeedBook(cfg.Policy.Replan.Prior)}
	for _, g := range cfg.Node.GPUs {
		gs := &gpuState{base: g}
		s.gpus = append(s.gpus, gs)
		s.gpuAt[g.Index] = gs
	}
	for _, m := range cfg.Models {
		if m.Name == "" {
			return nil, fmt.Errorf("schedule: a model has no name")
		}
		if _, dup := s.byName[m.Name]; dup {
			return nil, fmt.Errorf("schedule: model %q is listed twice; list each model once", m.Name)
		}
		guess := cfg.Estimator.Speed(m)
		ms := &modelState{m: m, speed: guess, guess: guess, w: Workload{Model: m.Name}}
		s.speeds.addModel(m.Name, guess)
		s.byName[m.Name] = ms
		s.models = append(s.models, ms)
	}
	parts := map[*modelState][]Workload{}
	for _, w := range cfg.Workloads {
		ms, ok := s.byName[w.Model]
		if !ok {
			return nil, fmt.Errorf("schedule: workload names model %q, which the campaign does not list", w.Model)
		}
		ms.w = ms.w.Add(w)
		parts[ms] = append(parts[ms], w)
	}
	idle := cfg.Node
	for _, ms := range s.models {
		ms.work = cfg.Estimator.Work(ms.w)
		ms.mix = newMix(cfg.Estimator, parts[ms])
		s.fluid.remaining[ms.m.Name] = ms.work
		switch {
		case ms.m.Engine.Kind == configs.EngineExternal:
			ms.status, ms.note = StatusExternal, "external endpoint; runs beside the GPU schedule"
			continue
		case ms.work <= 0:
			ms.status, ms.note = StatusNoWork, "no requests"
			continue
		}
		res := placement.Evaluate(ms.m, idle, s.constraints(placement.Constraints{}))
		ms.rejections = res.Rejections
		if len(res.Options) == 0 {
			ms.status, ms.note = StatusUnplaceable, rejectionSummary(res.Rejections)
			continue
		}
		ms.status = StatusPending
		ms.opts = res.Options
		s.rankIdle(ms)
	}
	if err := s.dependencies(); err != nil {
		return nil, err
	}
	s.bounds = s.computeBounds()
	for _, ms := range s.models {
		if ms.status == StatusPending {
			ms.target = s.waveTarget(ms, s.bounds.LowerBound)
		}
	}
	slices.SortStableFunc(s.models, byPriority)
	s.choose()
	return s, nil
}

// rankIdle finds ms's best, most efficient and best single placements on
// the idle node at its current speed, and its GPU-time.
func (s *Scheduler) rankIdle(ms *modelState) {
	ms.best, ms.bestRate, _ = s.ranked(ms, ms.opts, anyOption)
	ms.efficient, ms.effRate, _ = s.mostEfficient(ms, ms.opts)
	var single bool
	ms.single, ms.singleRate, single = s.ranked(ms, ms.opts, func(p placement.Placement, _ float64) bool { return p.Replicas == 1 })
	if !single {
		ms.single, ms.singleRate = ms.best, ms.bestRate // pinned replicas: the pinned engines are the baseline
	}
	ms.gpuTime = seconds(ms.work, ms.effRate)
}

// Bounds returns the lower bound and the baselines.
func (s *Scheduler) Bounds() Bounds { return s.bounds }

// Begin makes the first decisions at time 0. Run calls it once.
func (s *Scheduler) Begin() {
	if s.began {
		return
	}
	s.began = true
	for _, ms := range s.models {
		if ms.status == StatusUnplaceable {
			s.fx.AbandonModel(ms.m.Name, ms.note)
		}
	}
	s.schedule()
}

// Done reports whether every model has reached an end and no engine is
// left running.
func (s *Scheduler) Done() bool {
	for _, ms := range s.models {
		if !ms.status.terminal() || len(ms.live) > 0 {
			return false
		}
	}
	return true
}

// Handle applies one event and makes the decisions it allows. An event
// that does not fit the scheduler's state (unknown replica, a replica
// ready twice) is an error and changes nothing.
func (s *Scheduler) Handle(ev Event) error {
	if !s.began {
		s.Begin()
	}
	var r *liveReplica
	var ms *modelState
	switch ev.Kind {
	case EventReady, EventFailed, EventStopped, EventSpeed, EventCrashed:
		var err error
		if r, err = s.eventReplica(ev); err != nil {
			return err
		}
		ms = s.byName[r.Model]
	case EventFinished, EventProgress:
		var ok bool
		if ms, ok = s.byName[ev.Model]; !ok {
			return fmt.Errorf("schedule: %s event for unknown model %q", ev.Kind, ev.Model)
		}
		if math.IsNaN(ev.Done) || math.IsInf(ev.Done, 0) {
			return fmt.Errorf("schedule: %s event for %s: done %v is not a share of its work", ev.Kind, ev.Model, ev.Done)
		}
	default:
		return fmt.Errorf("schedule: unknown event kind %d", int(ev.Kind))
	}
	s.now = max(s.now, ev.At)
	s.fluid.advance(s.now)

	switch ev.Kind {
	case EventReady:
		s.ready(ms, r)
	case EventFailed:
		s.failed(ms, r, ev.Err, ev.Permanent)
	case EventCrashed:
		s.crash(ms, r, ev.Err)
	case EventStopped:
		s.stopped(ms, r)
	case EventFinished:
		s.finished(ms)
	case EventProgress:
		s.progress(ms, ev.Done)
	case EventSpeed:
		if !s.measured(ms, r, ev) {
			return nil // nothing a decision rests on changed
		}
	}
	s.schedule()
	return nil
}

// eventReplica returns the replica ev is about, or why ev does not fit
// it. A speed sample may come after its replica ended, if it served.
func (s *Scheduler) eventReplica(ev Event) (*liveReplica, error) {
	if ev.Replica < 1 || int(ev.Replica) > len(s.replicas) {
		return nil, fmt.Errorf("schedule: %s event for unknown replica %d", ev.Kind, ev.Replica)
	}
	r := s.replicas[ev.Replica-1]
	switch {
	case ev.Kind == EventSpeed:
		return r, r.checkSample(ev)
	case ev.Kind == EventCrashed && r.state == replicaGone:
		return r, nil // a crash reported after its end: crash ignores it
	case r.state == replicaGone:
		return nil, fmt.Errorf("schedule: %s event for replica %d of %s, which has already ended", ev.Kind, r.ID, r.Model)
	case ev.Kind == EventReady && !r.starting:
		return nil, fmt.Errorf("schedule: replica %d of %s reported ready twice", r.ID, r.Model)
	}
	return r, nil
}

// progress sets ms's remaining work from the share done.
func (s *Scheduler) progress(ms *modelState, done float64) {
	s.fluid.remaining[ms.m.Name] = ms.work * (1 - min(max(done, 0), 1))
}

func (s *Scheduler) ready(ms *modelState, r *liveReplica) {
	r.starting = false
	for _, g := range r.GPUs {
		s.gpuAt[g].starting--
	}
	s.waves[r.Wave-1].Ready = secs(s.now)
	if r.state == replicaStopping {
		return // ready after its stop was asked; the stop goes on
	}
	r.state = replicaReady
	s.fluid.addReady(r.Assignment)
	r.served, r.sampledAt, r.servedAt = true, s.now, s.fluid.served[r.ID]
}

func (s *Scheduler) failed(ms *modelState, r *liveReplica, why string, permanent bool) {
	if why == "" {
		why = "no reason given"
	}
	s.failures = append(s.failures, EngineFailure{Model: r.Model, Replica: r.ID, Index: r.Index, TP: r.TP, GPUs: slices.Clone(r.GPUs), At: secs(s.now), Err: why})
	s.waves[r.Wave-1].Failed++
	if ms.status == StatusRunning {
		ms.failures++
		ms.lastFailure = firstLine(why)
		ms.avoid = append(ms.avoid, slices.Clone(r.GPUs))
	}
	s.end(ms, r)
	if permanent && ms.status == StatusRunning {
		// Other GPUs would fail the same way: stop the model's other
		// replicas and give up on it now.
		s.stopLive(ms)
		s.giveUp(ms, "its engine cannot run as configured: "+why)
		return
	}
	if len(ms.live) > 0 {
		return
	}
	switch ms.status {
	case StatusRunning:
		if ms.failures >= s.cfg.Policy.maxStartFailures() {
			s.giveUp(ms, fmt.Sprintf("gave up after %d failed starts; last: %s", ms.failures, why))
			return
		}
		ms.status = StatusPending
	case StatusStopping:
		ms.status, ms.end = StatusDone, s.now
	}
}

// crash counts a crash of one of ms's engines after it was ready. The
// backend restarts that engine within its own budget, and a replica that
// spends it fails and is re-planned on other GPUs; but an engine that
// crashes on every request would crash there too, so the model as a
// whole gets Policy.MaxModelRestarts crashes across all its replicas.
// The next one abandons it: its replicas are stopped, its GPUs go to the
// other models and its outstanding work ends not run with the reason.
func (s *Scheduler) crash(ms *modelState, r *liveReplica, why string) {
	if ms.status != StatusRunning || r.state == replicaStopping || r.state == replicaGone {
		return // the replica or the model is ending anyway
	}
	ms.crashes++
	if !slices.Contains(ms.crashed, r.Index) {
		ms.crashed = append(ms.crashed, r.Index)
	}
	budget := s.cfg.Policy.maxModelRestarts()
	if ms.crashes <= budget {
		return
	}
	names := make([]string, len(ms.crashed))
	for i, x := range ms.crashed {
		names[i] = fmt.Sprintf("r%d", x)
	}
	if why == "" {
		why = "no reason given"
	}
	s.stopLive(ms)
	s.giveUp(ms, fmt.Sprintf("its engines crashed %d times after they were ready (replicas %s), more than the %d restarts a model gets (launch.max_model_restarts); last: %s",
		ms.crashes, strings.Join(names, ", "), budget, firstLine(why)))
}

// giveUp marks ms failed for good and tells the effects, so that its
// outstanding work ends as not run. Live replicas, if any, are stopping;
// Done waits for them.
func (s *Scheduler) giveUp(ms *modelState, note string) {
	ms.status, ms.end, ms.note = StatusFailed, s.now, note
	s.fx.AbandonModel(ms.m.Name, note)
}

// stopLive asks every live replica of ms to stop.
func (s *Scheduler) stopLive(ms *modelState) {
	for _, id := range ms.live {
		r := s.replicas[id-1]
		if r.state == replicaStopping {
			continue
		}
		s.fluid.remove(r.ID)
		r.state = replicaStopping
		s.fx.StopReplica(r.Assignment)
	}
}

func (s *Scheduler) stopped(ms *modelState, r *liveReplica) {
	s.end(ms, r)
	if len(ms.live) == 0 && ms.status == StatusStopping {
		ms.status, ms.end = StatusDone, s.now
	}
}

// end releases a replica that is gone: its GPUs, its place in the fluid,
// its model's live list.
func (s *Scheduler) end(ms *modelState, r *liveReplica) {
	s.fluid.remove(r.ID)
	for _, g := range r.GPUs {
		gs := s.gpuAt[g]
		if r.starting {
			gs.starting--
		}
		gs.claimed -= placement.Budget(gs.base, r.Utilization)
		gs.hosts = slices.DeleteFunc(gs.hosts, func(id ReplicaID) bool { return id == r.ID })
	}
	r.starting = false
	r.state = replicaGone
	ms.live = slices.DeleteFunc(ms.live, func(id ReplicaID) bool { return id == r.ID })
	w := &s.waves[r.Wave-1]
	w.endLeft--
	if w.endLeft == 0 {
		w.End = secs(s.now)
	}
}

func (s *Scheduler) finished(ms *modelState) {
	if ms.status != StatusRunning && ms.status != StatusPending {
		return // a repeated report; nothing left to stop
	}
	s.fluid.remaining[ms.m.Name] = 0
	ms.workEnd = s.now
	ms.status = StatusStopping
	s.stopLive(ms)
	if len(ms.live) == 0 {
		ms.status, ms.end = StatusDone, s.now
	}
}

// schedule makes every decision the current state allows: extra replicas
// for running models measured to end much later than the rest, first
// waves and retries for waiting models in priority order, then extra
// replicas for running ones.
func (s *Scheduler) schedule() {
	s.noteEnded()
	s.scaleOutLate()
	idle := s.liveCount() == 0
	// Independent models first; then the dependent ones with answers to
	// work on, on what GPUs are left.
	for _, dependent := range []bool{false, true} {
		for _, ms := range s.models {
			if ms.status == StatusPending && ms.dependent() == dependent && !s.fluid.waiting(ms.m.Name) && s.mayStart(ms) {
				if s.tryStart(ms, idle) && dependent && ms.note == "" {
					ms.note = s.dependentNote(ms)
				}
				idle = idle && s.liveCount() == 0
			}
		}
	}
	if !s.cfg.Policy.NoScaleOut && !s.sequential() && !s.anyPending() {
		s.scaleOut()
	}
	if s.yieldIdle() || s.liveCount() > 0 {
		return
	}
	for _, ms := range s.models {
		if ms.status == StatusPending && !s.fluid.waiting(ms.m.Name) {
			// Nothing runs and it still cannot start: it never will.
			res := placement.Evaluate(ms.m, s.view(), s.constraints(placement.Constraints{Avoid: ms.avoid}))
			note := "no GPU set left to try: " + rejectionSummary(res.Rejections)
			if ms.lastFailure != "" {
				note = fmt.Sprintf("no GPU set left to try after %d failed starts (last: %s): %s", ms.failures, ms.lastFailure, rejectionSummary(res.Rejections))
			}
			s.giveUp(ms, note)
		}
	}
	s.noteEnded()
	if slices.ContainsFunc(s.models, func(ms *modelState) bool { return ms.status == StatusPending && !s.fluid.waiting(ms.m.Name) }) {
		s.schedule() // models given up have let dependent ones start
	}
}

func (s *Scheduler) liveCount() int {
	n := 0
	for _, ms := range s.models {
		n += len(ms.live)
	}
	return n
}

func (s *Scheduler) anyPending() bool {
	for _, ms := range s.models {
		if ms.status == StatusPending {
			return true
		}
	}
	return false
}

// view returns the node with each GPU's free memory reduced by what this
// campaign's engines claim.
func (s *Scheduler) view() placement.Node {
	n := s.cfg.Node
	n.GPUs = make([]placement.GPU, len(s.gpus))
	for i, gs := range s.gpus {
		g := gs.base
		g.MemFree -= min(g.MemFree, gs.claimed)
		n.GPUs[i] = g
	}
	return n
}

// excluded lists GPUs ms may not start on now: those where an engine is
// starting (engines sharing a GPU start one at a time), those hosting ms
// already, and, unless shared, any GPU hosting an engine.
func (s *Scheduler) excluded(ms *modelState, shared bool) []int {
	var out []int
	for _, gs := range s.gpus {
		hostsMs := slices.ContainsFunc(gs.hosts, func(id ReplicaID) bool { return s.replicas[id-1].Model == ms.m.Name })
		if gs.starting > 0 || hostsMs || (!shared && len(gs.hosts) > 0) {
			out = append(out, gs.base.Index)
		}
	}
	return out
}

// tryStart starts ms's next wave if GPUs allow: on unused GPUs first, then
// on GPUs shared with other engines where memory allows.
func (s *Scheduler) tryStart(ms *modelState, idle bool) bool {
	for _, shared := range []bool{false, true} {
		res := placement.Evaluate(ms.m, s.view(), s.constraints(placement.Constraints{
			MaxGPUs: ms.target, Exclude: s.excluded(ms, shared), Avoid: ms.avoid,
		}))
		if p, ok := s.pickWave(ms, res, idle); ok {
			kind := WaveStart
			if ms.failures > 0 {
				kind = WaveRetry
			}
			s.startWave(ms, p, kind)
			return true
		}
	}
	return false
}

// scaleOut gives unused GPUs, one replica at a time, to the running model
// with the most estimated time left, while that shortens its finish.
func (s *Scheduler) scaleOut() {
	for {
		type cand struct {
			ms   *modelState
			left time.Duration
		}
		var cands []cand
		for _, ms := range s.models {
			if ms.status != StatusRunning || ms.m.Engine.Replicas > 0 {
				continue
			}
			cands = append(cands, cand{ms, seconds(s.fluid.remaining[ms.m.Name], s.plannedRate(ms))})
		}
		slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.left, a.left) })
		added := false
		for _, c := range cands {
			if s.tryScaleOut(c.ms, c.left) {
				added = true
				break
			}
		}
		if !added {
			return
		}
	}
}

// plannedRate is the model's rate once all its live replicas are ready.
func (s *Scheduler) plannedRate(ms *modelState) float64 {
	sum := 0.0
	for _, id := range ms.live {
		if r := s.replicas[id-1]; r.state == replicaStarting || r.state == replicaReady {
			sum += r.Rate
		}
	}
	return sum
}

func (s *Scheduler) tryScaleOut(ms *modelState, left time.Duration) bool {
	res := placement.Evaluate(ms.m, s.view(), s.constraints(placement.Constraints{
		MaxGPUs: ms.efficient.TP, Exclude: s.excluded(ms, false), Avoid: ms.avoid,
	}))
	p, ok := s.pick(ms, res, ms.efficient.TP, false)
	if !ok {
		return false
	}
	planned := s.plannedRate(ms)
	add := s.rateOf(ms, p)
	startup := s.cfg.Estimator.StartupTime(ms.m, p.TP)
	rest := max(0, s.fluid.remaining[ms.m.Name]-planned*startup.Seconds())
	after := startup + seconds(rest, planned+add)
	if float64(after) >= 0.95*float64(left) {
		return false
	}
	s.startWave(ms, p, WaveScaleOut)
	return true
}

func (s *Scheduler) startWave(ms *modelState, p placement.Placement, kind WaveKind) {
	w := Wave{
		ID: len(s.waves) + 1, Model: ms.m.Name, Kind: kind, TP: p.TP, Replicas: p.Replicas, APIServers: p.APIServers,
		Start: secs(s.now), Throughput: p.Throughput, TokensPerS: s.rateOf(ms, p),
		endLeft: p.Replicas,
	}
	var start []Assignment
	for _, g := range p.Groups {
		r := &liveReplica{Assignment: Assignment{
			ID: ReplicaID(len(s.replicas) + 1), Model: ms.m.Name, Index: ms.replicas, Wave: w.ID, TP: p.TP,
			GPUs: slices.Clone(g.GPUs), Utilization: p.Utilization, APIServers: p.APIServers,
			Rate: s.groupRate(ms, g.Throughput, p.ImagesPerS), Throughput: g.Throughput, ImagesPerS: p.ImagesPerS,
		}, starting: true}
		for _, x := range g.GPUs {
			gs := s.gpuAt[x]
			r.UUIDs = append(r.UUIDs, gs.base.UUID)
			gs.claimed += placement.Budget(gs.base, p.Utilization)
			gs.starting++
			gs.hosts = append(gs.hosts, r.ID)
		}
		s.replicas = append(s.replicas, r)
		ms.replicas++
		ms.live = append(ms.live, r.ID)
		w.GPUs = append(w.GPUs, r.GPUs)
		start = append(start, r.Assignment)
	}
	s.waves = append(s.waves, w)
	if !ms.started {
		ms.started, ms.start = true, s.now
	}
	ms.status = StatusRunning
	for _, r := range start {
		s.fx.StartReplica(r)
	}
}

// firstLine is the first line of an engine error (its log tail follows).
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// rejectionSummary joins rejection messages into one line.
func rejectionSummary(rej []placement.Rejection) string {
	if len(rej) == 0 {
		return "no feasible placement"
	}
	msgs := make([]string, len(rej))
	for i, r := range rej {
		msgs[i] = r.Message
	}
	return strings.Join(msgs, "; ")
}
