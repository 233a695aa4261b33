package campaign

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/live"
	"github.com/npcorch/npcorch/tasks/send"
)

func newLoop(ctx context.Context, d *driver) *loop {
	ctx, cancel := context.WithCancel(ctx)
	return &loop{d: d, ctx: ctx, cancel: cancel, start: d.now(), inbox: make(chan message), done: make(chan struct{}),
		engines: map[schedule.ReplicaID]*engine{}, byMember: map[string]*engine{}, pools: map[string]*inference.Pool{},
		runners: map[string]bool{}, progress: map[string]*modelProgress{}, sums: map[string]send.Summary{},
		judges: map[string]chan int{}}
}

// run schedules the local models and runs the external ones, until every
// model has ended and every runner and backend call has reported; after
// an interrupt, until the runners and calls have reported.
func (l *loop) run(local []configs.Model, workloads []schedule.Workload, external []configs.Model) error {
	defer close(l.done)
	defer l.cancel()
	if len(local) > 0 {
		if err := l.begin(local, workloads); err != nil {
			return err
		}
	}
	for _, m := range external {
		l.runExternal(m)
	}
	l.serve()
	if l.sched != nil {
		l.d.plan = l.sched.Plan()
	}
	for _, id := range l.engineIDs() {
		if en := l.engines[id]; en.phase != phaseEnded && !en.span.Start.IsZero() {
			l.spans = append(l.spans, en.span) // still serving: close ends it
		}
	}
	return errors.Join(l.err, l.extErr)
}

// begin sets up the scheduler and lets it make its first decisions.
func (l *loop) begin(local []configs.Model, workloads []schedule.Workload) error {
	c := l.d.opt.Campaign
	s, err := schedule.New(schedule.Config{Node: l.d.node, Models: local, Workloads: workloads, Estimator: l.d.est,
		Policy: schedule.Policy{MaxStartFailures: c.Launch.MaxStartFailures, MaxModelRestarts: c.Launch.MaxModelRestarts},
		After:  l.d.localAfter(local)}, effects{l})
	if err != nil {
		return err
	}
	l.sched = s
	l.trackProgress(workloads)
	s.Begin()
	l.sendProgress() // a resumed run has work done already
	return nil
}

// serve handles what reaches the loop until it is over.
func (l *loop) serve() {
	events := l.d.backend.Events()
	ctxDone := l.ctx.Done()
	for !l.over() {
		select {
		case m := <-l.inbox:
			l.handle(m)
		case ev, ok := <-events:
			if !ok {
				events = nil // the backend closed: nothing more will come
				continue
			}
			l.onEngineEvent(ev)
		case <-l.d.measure:
			l.measure()
		case <-ctxDone:
			ctxDone = nil
			l.fail(fmt.Errorf("schedule: waiting for engines at %s: %w", schedule.Seconds(l.sinceStart().Seconds()), l.ctx.Err()))
		}
	}
}

// over reports whether the loop may end: every runner and backend call
// has reported and, unless the run is ending on an error, the scheduler
// has nothing left to wait for.
func (l *loop) over() bool {
	if l.running > 0 || l.calls > 0 {
		return false
	}
	return l.err != nil || l.sched == nil || l.sched.Done()
}

func (l *loop) handle(m message) {
	switch m := m.(type) {
	case started:
		l.calls--
		l.onStarted(m)
	case stopped:
		l.calls--
		l.onStopped(m)
	case ran:
		l.onRan(m)
	case journaled:
		l.onJournaled(m.rec)
	}
}

// effects carries out the scheduler's decisions on the loop's goroutine;
// none of them blocks.
type effects struct{ l *loop }

// StartReplica starts a's engine off the loop; the outcome comes back as
// a started message.
func (e effects) StartReplica(a schedule.Assignment) {
	l := e.l
	m := l.d.models[a.Model]
	lim := l.d.imgLimit
	lim.Count = maxImages(m, l.d.items)
	spec := launcher.ReplicaSpec{Model: m, Replica: a.Index, GPUs: a.UUIDs, MediaRoot: abs(l.d.prepDir), Images: lim, APIServers: a.APIServers}
	ctx, cancel := context.WithCancel(l.ctx)
	en := &engine{a: a, member: inference.MemberName(a.Model, a.Index), cancel: cancel}
	l.engines[a.ID] = en
	l.byMember[en.member] = en
	l.d.live.Post(live.Assigned{Model: a.Model, Replica: a.Index, TP: a.TP, GPUs: slices.Clone(a.GPUs), At: l.d.now()})
	l.calls++
	go func() {
		ep, err := l.d.backend.Start(ctx, spec)
		l.post(started{id: a.ID, ep: ep, err: err})
	}()
}

// StopReplica takes a's replica out of its pool and stops its engine: at once when
// ready, once its start has returned when starting (the start is
// cancelled). The scheduler hears EventStopped when the stop returns.
func (e effects) StopReplica(a schedule.Assignment) {
	l := e.l
	en := l.engines[a.ID]
	if en == nil || en.phase == phaseEnded || en.stopAsked {
		return
	}
	en.stopAsked = true
	if p := l.pools[a.Model]; p != nil {
		p.Remove(en.member)
	}
	switch en.phase {
	case phaseStarting:
		en.cancel()
	case phaseReady:
		l.stop(en)
	}
}

// AbandonModel ends a model the scheduler gave up on: its pool closes, so
// that its outstanding requests end as not run with the reason instead of
// waiting for a replica that never comes; a model that never ran gets its
// runner now, which journals each of its requests as not run.
func (e effects) AbandonModel(model, why string) {
	l := e.l
	why = firstLine(why)
	fmt.Fprintf(l.d.opt.Log, "model %s abandoned: %s\n", model, why)
	l.d.live.Post(live.ModelEnded{Model: model, Abandoned: why})
	l.pool(model).Close(fmt.Sprintf("model %s is not served: %s", model, why))
	l.startRunner(model)
}

// Replanned logs a re-plan on measured speeds.
func (e effects) Replanned(r schedule.Replan) {
	fmt.Fprintf(e.l.d.opt.Log, "re-plan at %s: %s\n", r.At, r.Reason)
}

// stop runs Backend.Stop for en off the loop.
func (l *loop) stop(en *engine) {
	en.phase = phaseStopping
	l.calls++
	r := en.a
	go func() {
		err := l.d.backend.Stop(context.Background(), r.Model, r.Index)
		l.post(stopped{id: r.ID, err: err})
	}()
}

// onStarted takes a start's outcome: a ready engine joins its model's
// pool and the scheduler hears EventReady (its runner starts with the
// first); a failed start is EventFailed; a start the scheduler stopped
// meanwhile is stopped for good now, and only that stop is reported.
func (l *loop) onStarted(m started) {
	en := l.engines[m.id]
	en.cancel()
	switch {
	case en.stopAsked:
		l.stop(en)
	case m.err != nil:
		l.end(en, m.err)
	case en.lost != nil:
		l.end(en, en.lost)
	default:
		en.phase = phaseReady
		ep := m.ep
		if en.latest != nil {
			ep = *en.latest // restarted before its start was answered
		}
		en.span = gpu.Span{Model: en.a.Model, Replica: fmt.Sprint(en.a.Index), GPUs: slices.Clone(en.a.GPUs), Start: l.d.now()}
		en.meter.since = en.span.Start
		pool := l.pool(en.a.Model)
		pool.Upsert(ep, l.d.opt.Campaign.Client.Concurrency)
		if en.down {
			pool.SetDown(en.member)
		}
		l.tell(schedule.Event{Kind: schedule.EventReady, Replica: en.a.ID, Model: en.a.Model, Index: en.a.Index})
		l.startRunner(en.a.Model)
	}
}

// onStopped ends a replica the scheduler stopped.
func (l *loop) onStopped(m stopped) {
	en := l.engines[m.id]
	if m.err != nil {
		fmt.Fprintf(l.d.opt.Log, "stop %s: %v\n", schedule.ReplicaName(en.a.Model, en.a.Index), m.err)
	}
	l.end(en, nil)
}

// end closes en's GPU span and tells the scheduler its end: EventStopped
// when it asked for the stop, EventFailed with err otherwise. A replica
// that served reports its last speed sample first.
func (l *loop) end(en *engine, err error) {
	if en.phase == phaseEnded {
		return
	}
	served := !en.span.Start.IsZero()
	en.phase = phaseEnded
	delete(l.byMember, en.member)
	if p := l.pools[en.a.Model]; p != nil {
		p.Remove(en.member)
	}
	if served {
		l.sendSpeed(en)
		en.span.End = l.d.now()
		l.spans = append(l.spans, en.span)
	}
	ev := schedule.Event{Kind: schedule.EventStopped, Replica: en.a.ID, Model: en.a.Model, Index: en.a.Index}
	if !en.stopAsked {
		if err == nil {
			err = fmt.Errorf("%s failed", schedule.ReplicaName(en.a.Model, en.a.Index))
		}
		ev.Kind, ev.Err, ev.Permanent = schedule.EventFailed, err.Error(), launcher.IsPermanent(err)
	}
	l.tell(ev)
}

// onEngineEvent logs a backend event and follows it: a crashed replica
// leaves its pool until it is ready again (its in-flight requests fail and
// are retried on the others); one that failed for good while the scheduler
// still wanted it is reported failed, which frees its GPUs and lets the
// scheduler re-plan or abandon the model (before, such a model's requests
// waited for ever: issue 12).
func (l *loop) onEngineEvent(ev launcher.ReplicaEvent) {
	fmt.Fprintf(l.d.opt.Log, "engine %s\n", ev)
	l.d.live.Post(live.EngineEvent{ReplicaEvent: ev})
	en := l.byMember[inference.MemberName(ev.Model, ev.Replica)]
	if en == nil {
		return // not the campaign's, or already ended
	}
	pool := l.pool(ev.Model)
	switch ev.Kind {
	case launcher.ReplicaCrashed:
		en.down = true
		pool.SetDown(en.member)
		l.tellCrash(en, ev.Err)
	case launcher.ReplicaReady:
		en.down = false
		switch en.phase {
		case phaseStarting:
			ep := ev.Endpoint
			en.latest = &ep // its start's answer adds it to the pool
		case phaseReady:
			pool.Upsert(ev.Endpoint, l.d.opt.Campaign.Client.Concurrency)
		}
	case launcher.ReplicaFailed:
		pool.Remove(en.member)
		err := ev.Err
		if err == nil {
			err = fmt.Errorf("%s failed", schedule.ReplicaName(ev.Model, ev.Replica))
		}
		switch {
		case en.stopAsked:
		case en.phase == phaseStarting:
			en.lost = err // its start's answer reports it
		case en.phase == phaseReady:
			l.end(en, err)
		}
	case launcher.ReplicaStopped:
		pool.Remove(en.member)
	}
}

// tellCrash tells the scheduler that en's engine crashed after it was
// ready, which counts against its model's restarts
// (launch.max_model_restarts); an engine the cluster took away
// (launcher.IsReclaimed) or one being stopped does not count.
func (l *loop) tellCrash(en *engine, err error) {
	if en.stopAsked || launcher.IsReclaimed(err) {
		return
	}
	why := "the engine was lost"
	if err != nil {
		why = err.Error()
	}
	l.tell(schedule.Event{Kind: schedule.EventCrashed, Replica: en.a.ID, Model: en.a.Model, Index: en.a.Index, Err: why})
}

// pool returns model's pool, made on first use.
func (l *loop) pool(model string) *inference.Pool {
	p, ok := l.pools[model]
	if !ok {
		p = inference.NewPool(nil, l.d.opt.Campaign.Client.Concurrency)
		l.pools[model] = p
	}
	return p
}

// startRunner starts model's runner once, when its first replica is ready
// or when the scheduler abandons it (then every item ends not run).
func (l *loop) startRunner(model string) {
	if l.runners[model] {
		return
	}
	l.runners[model] = true
	l.running++
	m, pool := l.d.models[model], l.pool(model)
	if l.d.isJudge(model) {
		go pool.WatchMetrics(l.ctx, &http.Client{Timeout: 2 * time.Second}, inference.ScrapeEvery)
		l.startJudge(m, pool, false)
		return
	}
	go func() {
		go pool.WatchMetrics(l.ctx, &http.Client{Timeout: 2 * time.Second}, inference.ScrapeEvery)
		sum, err := l.d.runner.Run(l.ctx, send.ModelRun{Model: m, Builder: l.d.builder(m), Pool: pool,
			Items: itemsFor(l.d.items, m), Repeats: l.d.opt.Campaign.Repeat, OnRecord: l.onRecord})
		l.post(ran{model: model, sum: sum, err: err})
	}()
}

// runExternal runs a model served by an existing endpoint beside the
// schedule.
func (l *loop) runExternal(m configs.Model) {
	ep, err := externalEndpoint(m)
	if err != nil {
		l.extErr = errors.Join(l.extErr, err)
		return
	}
	l.running++
	pool := inference.NewPool([]launcher.Endpoint{ep}, l.d.opt.Campaign.Client.Concurrency)
	if l.d.isJudge(m.Name) {
		l.startJudge(m, pool, true)
		return
	}
	go func() {
		sum, err := l.d.runner.Run(l.ctx, send.ModelRun{Model: m, Builder: l.d.builder(m), Pool: pool,
			Items: itemsFor(l.d.items, m), Repeats: l.d.opt.Campaign.Repeat})
		l.post(ran{model: m.Name, external: true, sum: sum, err: err})
	}()
}

// onRan keeps a runner's summary; a local model whose runner answered
// everything is finished, and the scheduler stops its replicas.
func (l *loop) onRan(m ran) {
	l.running--
	l.sums[m.model] = m.sum
	l.d.live.Post(live.ModelEnded{Model: m.model, Err: m.err})
	if !l.d.isJudge(m.model) {
		l.wakeJudges()
	}
	switch {
	case m.external:
		l.extErr = errors.Join(l.extErr, m.err)
	case m.err != nil:
		if l.ctx.Err() == nil {
			l.fail(fmt.Errorf("model %s: %w", m.model, m.err))
		}
	default:
		l.tell(schedule.Event{Kind: schedule.EventFinished, Model: m.model})
	}
}
