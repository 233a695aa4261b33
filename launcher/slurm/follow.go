package slurm

// An attempt's life, from its submission to the end of its job: follow
// runs on the replica's goroutine and hands each thing that happens to
// the follower's handler for it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/npcorch/npcorch/launcher"
)

// follow drives one attempt until its job is gone: it waits out the queue,
// probes the engine once the job runs, serves, and reacts to the job's end
// and to Stop. The job is never left active when it returns.
func (r *replica) follow(a *Attempt, js JobSpec) (end, error) {
	f := newFollower(r, a, js)
	defer f.close()
	for {
		var out *outcome
		select {
		case <-r.stop:
			return endStopped, r.cancel(a)
		case j := <-r.jobs:
			if j.ID == a.JobID {
				out = f.onJob(j)
			}
		case res := <-f.probed:
			out = f.onProbed(res)
		case <-f.watchC:
			f.read()
		case rd := <-f.readings:
			out = f.onReading(rd)
		case <-f.progress:
			f.pushDeadline()
		case <-timerC(f.noProg):
			out = f.failStart(launcher.FailureNoProgress, fmt.Sprintf("no new log line and no readiness progress for %v", f.t.NoProgress))
		case <-timerC(f.hardCap):
			out = f.failStart(launcher.FailureHardCap, fmt.Sprintf("not ready after the hard cap of %v", f.t.HardCap))
		}
		if out != nil {
			return out.how, out.err
		}
	}
}

// outcome is how an attempt ended, once it has.
type outcome struct {
	how end
	err error
}

// follower is one attempt's state while follow drives it, on the
// replica's goroutine.
type follower struct {
	r  *replica
	a  *Attempt
	js JobSpec
	t  launcher.Timing
	ph phase
	// The probe runs while the job starts: it reports its result on
	// probed and each sign of progress on progress, which pushes the
	// no-progress deadline; the job's log growing does too.
	ctx             context.Context
	cancelProbe     context.CancelFunc
	probed          chan probeResult
	progress        chan struct{}
	noProg, hardCap *time.Timer
	logSize         int64
	lastState       string
	// Once ready, the engine is watched as a local one is: the shared
	// watchdog reads its /health and /metrics every StallCheck, one
	// reading at a time.
	watch    *launcher.Watchdog
	watchT   *time.Ticker
	watchC   <-chan time.Time
	readings chan launcher.Reading
	reading  bool
}

func newFollower(r *replica, a *Attempt, js JobSpec) *follower {
	ctx, cancel := context.WithCancel(context.Background())
	return &follower{r: r, a: a, js: js, t: r.b.cfg.Timing, ph: phasePending, ctx: ctx, cancelProbe: cancel,
		probed: make(chan probeResult, 1), progress: make(chan struct{}, 1), logSize: -1, readings: make(chan launcher.Reading, 1)}
}

// close stops the probe, the deadlines and the watchdog.
func (f *follower) close() {
	f.cancelProbe()
	f.stopDeadlines()
	if f.watchT != nil {
		f.watchT.Stop()
	}
}

func (f *follower) stopDeadlines() {
	for _, tm := range []*time.Timer{f.noProg, f.hardCap} {
		if tm != nil {
			tm.Stop()
		}
	}
	f.noProg, f.hardCap = nil, nil
}

func (f *follower) pushDeadline() {
	if f.noProg != nil {
		f.noProg.Reset(f.t.NoProgress)
	}
}

// onJob follows the job's state in Slurm: it records it, starts probing
// once the job runs, counts its log growing as progress, and ends the
// attempt when the job has ended.
func (f *follower) onJob(j Job) *outcome {
	r, a := f.r, f.a
	if s := j.String(); s != f.lastState {
		f.lastState = s
		r.logf("%s", s)
	}
	r.b.update(func() { a.State, a.Reason = j.State, j.Reason })
	if f.ph == phasePending && (j.Running() || !j.Active() && !j.Start.IsZero()) {
		f.jobStarted(j)
	}
	if f.ph == phaseStarting {
		if st, err := os.Stat(f.js.LogPath()); err == nil && st.Size() != f.logSize {
			f.logSize = st.Size()
			f.pushDeadline()
		}
	}
	if j.Active() {
		return nil
	}
	return f.jobEnded(j)
}

// jobStarted records the job's start and, while it runs, starts the
// start-up deadlines and the probe.
func (f *follower) jobStarted(j Job) {
	r, a := f.r, f.a
	started := j.Start
	if started.IsZero() {
		started = r.b.cfg.Now()
	}
	r.b.update(func() { a.Started = started })
	r.logf("job %s started on %s after %v pending", a.JobID, j.Node, a.Pending())
	if j.Active() {
		f.ph = phaseStarting
		f.noProg, f.hardCap = time.NewTimer(f.t.NoProgress), time.NewTimer(f.t.HardCap)
		go r.probe(f.ctx, f.js, a.JobID, f.probed, f.progress)
	}
}

// jobEnded ends the attempt on a job Slurm no longer runs: a job lost
// after ready or taken by the cluster is resubmitted; one that ended
// before its engine was ready failed, named from its log as a local
// engine's exit is (a port taken on the node is resubmitted).
func (f *follower) jobEnded(j Job) *outcome {
	r, a := f.r, f.a
	r.b.update(func() { a.Ended = r.b.cfg.Now() })
	cause := fmt.Errorf("Slurm job %s of %s ended %s%s", a.JobID, r.name(), j.State, reasonNote(j.Reason))
	switch {
	case f.ph == phaseReady:
		lost := cause
		if j.ClusterEnded() {
			lost = launcher.Reclaimed(cause) // not the engine's crash: the model's restarts are not spent
		}
		r.emit(launcher.ReplicaCrashed, lost, func(e *launcher.ReplicaEvent) { e.Log = f.js.LogPath() })
		return &outcome{endResubmit, cause}
	case j.ClusterEnded():
		return &outcome{endResubmit, cause}
	}
	e := r.jobError(launcher.FailureExited, a, f.js, "ended "+j.State+" before the engine was ready")
	if e.Kind, e.Hint = launcher.Classify(e.Tail, launcher.FailureExited); e.Kind == launcher.FailurePortInUse {
		return &outcome{endResubmit, fmt.Errorf("%w: port %d was taken on %s", cause, f.js.Port, r.node.Name)}
	}
	return &outcome{endFailed, e}
}

// onProbed takes the probe's result: a ready engine serves (and is
// watched from now on); a foreign server on the port sends the replica to
// another port; any other probe failure fails the start.
func (f *follower) onProbed(res probeResult) *outcome {
	r, a := f.r, f.a
	if errors.Is(res.err, launcher.ErrForeignListener) {
		// Another server holds the port on that node (engines bind with
		// SO_REUSEPORT, so ours started anyway): the next attempt asks
		// for another port.
		err := fmt.Errorf("Slurm job %s on %s: port %d is served by another server: %w", a.JobID, r.node.Name, f.js.Port, res.err)
		if cerr := r.cancel(a); cerr != nil {
			return &outcome{endFailed, errors.Join(err, cerr)}
		}
		return &outcome{endResubmit, err}
	}
	if res.err != nil {
		err := r.jobError(launcher.FailureRejected, a, f.js, "")
		err.Err = res.err
		return &outcome{endFailed, errors.Join(err, r.cancel(a))}
	}
	f.ph = phaseReady
	f.stopDeadlines()
	now := r.b.cfg.Now()
	r.b.update(func() { a.Ready = now })
	r.logf("job %s ready at %s (pending %v, start-up %v)", a.JobID, res.ep.BaseURL, a.Pending().Round(time.Millisecond), a.StartUp().Round(time.Millisecond))
	r.emit(launcher.ReplicaReady, nil, func(e *launcher.ReplicaEvent) { e.Endpoint = res.ep; e.Log = f.js.LogPath() })
	r.settle(res.ep, nil)
	if w := launcher.NewWatchdog(r.b.cfg.HTTP, res.probe, f.t); w.Enabled() {
		f.watch, f.watchT = w, time.NewTicker(f.t.StallCheck)
		f.watchC = f.watchT.C
	}
	return nil
}

// read takes a watchdog reading off the goroutine, unless one is under way.
func (f *follower) read() {
	if f.reading {
		return
	}
	f.reading = true
	go func() { f.readings <- f.watch.Read(f.ctx) }()
}

// onReading judges a reading: an engine found lost is crashed, its job
// cancelled and resubmitted, unless the job may still hold its GPUs and
// port (a replacement is never put beside it).
func (f *follower) onReading(rd launcher.Reading) *outcome {
	f.reading = false
	r, a := f.r, f.a
	kind, why := f.watch.Judge(rd, r.b.cfg.Now())
	if kind == "" {
		return nil
	}
	err := r.jobError(kind, a, f.js, why)
	r.emit(launcher.ReplicaCrashed, err, func(e *launcher.ReplicaEvent) { e.Log = f.js.LogPath() })
	if cerr := r.cancel(a); cerr != nil {
		return &outcome{endFailed, errors.Join(err, cerr)}
	}
	return &outcome{endResubmit, err}
}

// failStart fails a start that missed a deadline, and cancels its job.
func (f *follower) failStart(kind launcher.FailureKind, detail string) *outcome {
	err := f.r.jobError(kind, f.a, f.js, detail)
	return &outcome{endFailed, errors.Join(err, f.r.cancel(f.a))}
}

// timerC is t's channel, nil (never ready) for no timer.
func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}
