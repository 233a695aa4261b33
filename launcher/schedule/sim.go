package schedule

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
)

// Simulator is the campaign as a discrete-event simulation: it implements
// Effects and Source on a virtual clock, with no processes and no sleeps.
// Engines become ready after the Estimator's start-up time, drain their
// model's work as the fluid model says, and stop after its stop time.
// Their true speed is the registry's unless Truth says otherwise; with
// Truth.SampleEvery set, each ready engine reports speed samples.
type Simulator struct {
	est    Estimator
	models map[string]configs.Model
	names  []string // model names in campaign order
	// FailStart, when set, decides whether a replica's start fails and with
	// what message; a failure is reported halfway through its start-up.
	FailStart func(r Assignment) error
	// Truth is what the engines really do; set it before the first event.
	Truth SpeedTruth

	truth    *truthState
	f        *fluid
	q        eventQueue
	seq      int
	live     map[ReplicaID]*simReplica
	finishAt map[string]int // model → seq of its pending EventFinished
	// idleAt: dependent model → seq of the EventProgress that reports it
	// has worked through the answers there are (after.go).
	idleAt map[string]int
}

type simReplica struct {
	r       Assignment
	readyAt int // seq of the pending ready/failed event, 0 when none
	ready   bool
	// sampleAt is the seq of the pending speed sample (0 when none);
	// sampledAt and servedAt the time and served seconds at the last.
	sampleAt  int
	sampledAt time.Duration
	servedAt  float64
}

// NewSimulator returns a simulator for the campaign cfg describes.
func NewSimulator(cfg Config) *Simulator {
	sim := &Simulator{
		est: cfg.Estimator, models: map[string]configs.Model{}, f: newFluid(),
		live: map[ReplicaID]*simReplica{}, finishAt: map[string]int{}, idleAt: map[string]int{},
	}
	for _, m := range cfg.Models {
		if _, dup := sim.models[m.Name]; !dup {
			sim.names = append(sim.names, m.Name)
		}
		sim.models[m.Name] = m
	}
	for _, w := range cfg.Workloads {
		sim.f.remaining[w.Model] += cfg.Estimator.Work(w)
	}
	for _, name := range sim.names {
		if after := cfg.After[name]; len(after) > 0 {
			sim.f.dependsOn(name, after, sim.f.remaining[name])
		}
	}
	for _, name := range sim.names {
		// Answers that come beside the schedule (an external model's), or
		// not at all (no work), are all in from the start.
		if sim.models[name].Engine.Kind == configs.EngineExternal || sim.f.remaining[name] <= 0 {
			sim.f.end(name)
		}
	}
	sim.truth = newTruthState(cfg)
	return sim
}

// Now returns the virtual time.
func (sim *Simulator) Now() time.Duration { return sim.f.now }

// StartReplica schedules r's ready (or failed) event.
func (sim *Simulator) StartReplica(r Assignment) {
	d := sim.est.StartupTime(sim.models[r.Model], r.TP)
	ev := Event{Kind: EventReady, Replica: r.ID, Model: r.Model, Index: r.Index}
	if sim.FailStart != nil {
		if err := sim.FailStart(r); err != nil {
			ev.Kind, ev.Err = EventFailed, err.Error()
			d /= 2
		}
	}
	sr := &simReplica{r: r}
	sim.live[r.ID] = sr
	sr.readyAt = sim.push(sim.f.now+d, ev)
}

// StopReplica cancels r's pending start, takes it out of the fluid and
// schedules its stopped event.
func (sim *Simulator) StopReplica(r Assignment) {
	sr, ok := sim.live[r.ID]
	if !ok {
		return
	}
	sim.q.cancel(sr.readyAt)
	sim.q.cancel(sr.sampleAt)
	sr.readyAt, sr.sampleAt = 0, 0
	if sr.ready {
		sim.f.remove(r.ID)
		sim.reschedule()
	}
	sim.push(sim.f.now+sim.est.StopTime(), Event{Kind: EventStopped, Replica: r.ID, Model: r.Model, Index: r.Index})
}

// AbandonModel implements Effects: a simulated model's work simply stops,
// and the work that waited for its answers goes on without them.
func (sim *Simulator) AbandonModel(model, why string) {
	sim.f.end(model)
	sim.reschedule()
}

// Next advances the virtual clock to the next event and returns it. It
// fails when nothing is left to happen, which means the scheduler waits for
// an event that cannot come.
func (sim *Simulator) Next(ctx context.Context) (Event, error) {
	if err := ctx.Err(); err != nil {
		return Event{}, err
	}
	for sim.q.Len() > 0 {
		it := heap.Pop(&sim.q).(*queued)
		if it.canceled {
			continue
		}
		sim.f.advance(it.ev.At)
		switch it.ev.Kind {
		case EventReady:
			sr := sim.live[it.ev.Replica]
			sr.readyAt, sr.ready = 0, true
			sim.f.addReady(sim.trueReplica(sr.r))
			sim.reschedule()
			sim.nextSample(sr)
		case EventSpeed:
			it.ev = sim.sample(it.ev)
		case EventFailed:
			delete(sim.live, it.ev.Replica)
		case EventStopped:
			delete(sim.live, it.ev.Replica)
		case EventFinished:
			sim.f.remaining[it.ev.Model] = 0
			delete(sim.finishAt, it.ev.Model)
			sim.f.end(it.ev.Model)
			sim.reschedule() // the work that waited for its answers
		}
		return it.ev, nil
	}
	return Event{}, fmt.Errorf("simulation ran out of events at %s with models still unfinished", fmtDur(sim.f.now))
}

// reschedule recomputes every model's finish event from the current rates.
// A model whose work ran out but whose finish is still pending (it drains
// at this very instant) keeps a finish event, now.
func (sim *Simulator) reschedule() {
	for _, name := range sim.names {
		seq, pending := sim.finishAt[name]
		if pending {
			sim.q.cancel(seq)
			delete(sim.finishAt, name)
		}
		if sim.f.remaining[name] <= 0 {
			if pending {
				sim.finishAt[name] = sim.push(sim.f.now, Event{Kind: EventFinished, Model: name})
			}
			continue
		}
		if at, ok := sim.f.eta(name); ok {
			sim.finishAt[name] = sim.push(at, Event{Kind: EventFinished, Model: name})
		}
	}
	sim.rescheduleIdle()
}

// rescheduleIdle recomputes when each dependent model will have worked
// through the answers there are, and reports it then as its progress (so
// the scheduler can see it idle).
func (sim *Simulator) rescheduleIdle() {
	for _, name := range sim.names {
		if seq, ok := sim.idleAt[name]; ok {
			sim.q.cancel(seq)
			delete(sim.idleAt, name)
		}
		floor, rate := sim.f.floor[name], sim.f.rate(name)
		if floor <= 0 || rate <= 0 || sim.f.remaining[name] <= floor {
			continue
		}
		done := 1 - floor/sim.f.total[name]
		sim.idleAt[name] = sim.push(sim.f.now+seconds(sim.f.remaining[name]-floor, rate), Event{Kind: EventProgress, Model: name, Done: done})
	}
}

func (sim *Simulator) push(at time.Duration, ev Event) int {
	sim.seq++
	ev.At = at
	sim.q.add(&queued{ev: ev, seq: sim.seq})
	return sim.seq
}

// SimOptions adjust a simulation.
type SimOptions struct {
	// FailStart injects start failures (see Simulator.FailStart).
	FailStart func(Assignment) error
	// Trace, when set, receives one line per event as the loop handles it.
	Trace io.Writer
	// Truth is what the simulated engines really do (see SpeedTruth).
	Truth SpeedTruth
}

// Simulate runs the campaign cfg describes through the scheduler's event
// loop on the simulator and returns the plan.
func Simulate(ctx context.Context, cfg Config, opts SimOptions) (*Plan, error) {
	sim := NewSimulator(cfg)
	sim.FailStart = opts.FailStart
	sim.Truth = opts.Truth
	var fx Effects = sim
	var src Source = sim
	if opts.Trace != nil {
		fx = tracedEffects{fx: sim, now: sim.Now, w: opts.Trace}
		src = Traced(sim, opts.Trace)
	}
	s, err := New(cfg, fx)
	if err != nil {
		return nil, err
	}
	return Run(ctx, s, src)
}

// tracedEffects writes each decision before passing it on.
type tracedEffects struct {
	fx  Effects
	now func() time.Duration
	w   io.Writer
}

func (t tracedEffects) StartReplica(r Assignment) {
	fmt.Fprintf(t.w, "%8s  start    %s TP%d on %s\n", fmtDur(t.now()), ReplicaName(r.Model, r.Index), r.TP, placement.GPUList(r.GPUs))
	t.fx.StartReplica(r)
}

func (t tracedEffects) StopReplica(r Assignment) {
	fmt.Fprintf(t.w, "%8s  stop     %s\n", fmtDur(t.now()), ReplicaName(r.Model, r.Index))
	t.fx.StopReplica(r)
}

func (t tracedEffects) AbandonModel(model, why string) {
	fmt.Fprintf(t.w, "%8s  abandon  %s: %s\n", fmtDur(t.now()), model, why)
	t.fx.AbandonModel(model, why)
}

func (t tracedEffects) Replanned(r Replan) {
	fmt.Fprintf(t.w, "%8s  replan   %s\n", fmtDur(t.now()), r.Reason)
	for i, p := range r.Pending {
		fmt.Fprintf(t.w, "%8s           waiting %d: %s on %d GPUs (was %d: %d GPUs)\n", "", i+1, p.Model, p.GPUs, p.WasPosition, p.WasGPUs)
	}
}

// Traced returns a Source that writes each event of src to w as a line:
// "  2h05m  ready    Lingshu-7B/r0".
func Traced(src Source, w io.Writer) Source { return tracer{src, w} }

type tracer struct {
	src Source
	w   io.Writer
}

func (t tracer) Next(ctx context.Context) (Event, error) {
	ev, err := t.src.Next(ctx)
	if err == nil {
		fmt.Fprintf(t.w, "%8s  %s\n", fmtDur(ev.At), ev)
	}
	return ev, err
}

// queued is one pending simulation event.
type queued struct {
	ev       Event
	seq      int
	canceled bool
	index    int
}

// eventQueue orders events by time, then by the order they were pushed,
// so simultaneous events replay deterministically.
type eventQueue struct {
	items []*queued
	bySeq map[int]*queued
}

func (q *eventQueue) add(it *queued) {
	if q.bySeq == nil {
		q.bySeq = map[int]*queued{}
	}
	q.bySeq[it.seq] = it
	heap.Push(q, it)
}

func (q *eventQueue) cancel(seq int) {
	if it, ok := q.bySeq[seq]; ok {
		it.canceled = true
		delete(q.bySeq, seq)
	}
}

func (q *eventQueue) Len() int { return len(q.items) }
func (q *eventQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if a.ev.At != b.ev.At {
		return a.ev.At < b.ev.At
	}
	return a.seq < b.seq
}
func (q *eventQueue) Swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.items[i].index, q.items[j].index = i, j
}
func (q *eventQueue) Push(x any) {
	it := x.(*queued)
	it.index = len(q.items)
	q.items = append(q.items, it)
}
func (q *eventQueue) Pop() any {
	n := len(q.items)
	it := q.items[n-1]
	q.items = q.items[:n-1]
	delete(q.bySeq, it.seq)
	return it
}
