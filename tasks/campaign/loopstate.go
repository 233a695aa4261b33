package campaign

import (
	"context"
	"fmt"
	"time"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/send"
)

// loop is a run's changing state: the scheduler, every replica it
// started, the models' pools and runners, the GPU spans and the
// measurements. One goroutine owns it (run); everything else reports to
// it as a message in its inbox: a backend call that ended, a runner that
// ended, an answer journaled. The scheduler's effects are methods of the
// loop, called on that goroutine; the slow ones (starting and stopping
// engines) run off it and report back.
type loop struct {
	d      *driver
	ctx    context.Context
	cancel context.CancelFunc // ends the runners and backend calls
	start  time.Time
	inbox  chan message  // unbuffered: a report is taken before post returns
	done   chan struct{} // closed when run returns: late reports are dropped

	sched    *schedule.Scheduler // nil when every model is external
	engines  map[schedule.ReplicaID]*engine
	byMember map[string]*engine // by pool member name ("MODEL#N")
	pools    map[string]*inference.Pool
	runners  map[string]bool // models whose runner was started
	running  int             // runners not ended yet
	calls    int             // backend calls not reported yet
	progress map[string]*modelProgress
	sums     map[string]send.Summary
	judges   map[string]chan int // each judge's count of generators left (judge.go)
	spans    []gpu.Span
	// err ends the loop: the scheduler refused an event, or the run was
	// interrupted; extErr joins the external models' errors.
	err, extErr error
}

// engine is the loop's view of one replica the scheduler started.
type engine struct {
	a      schedule.Assignment
	member string
	phase  enginePhase
	// cancel ends its start; stopAsked records that the scheduler asked
	// it to stop, which is then the only end the scheduler hears.
	cancel    context.CancelFunc
	stopAsked bool
	// While its start is being answered, the backend may already report
	// what came after: the latest endpoint, a crash, a failure for good.
	latest *launcher.Endpoint
	down   bool
	lost   error
	span   gpu.Span
	meter  meter
}

// enginePhase is where the loop's view of a replica stands.
type enginePhase int

const (
	phaseStarting enginePhase = iota // Backend.Start is running
	phaseReady                       // serving; the scheduler heard EventReady
	phaseStopping                    // Backend.Stop is running
	phaseEnded                       // the scheduler heard its end
)

// message is something that reached the loop's inbox.
type message interface{ isMessage() }

// started: a Backend.Start call returned.
type started struct {
	id  schedule.ReplicaID
	ep  launcher.Endpoint
	err error
}

// stopped: a Backend.Stop call returned.
type stopped struct {
	id  schedule.ReplicaID
	err error
}

// ran: a model's runner ended.
type ran struct {
	model    string
	external bool
	sum      send.Summary
	err      error
}

// journaled: a runner journaled one request.
type journaled struct{ rec journal.Record }

func (started) isMessage()   {}
func (stopped) isMessage()   {}
func (ran) isMessage()       {}
func (journaled) isMessage() {}

// onRecord tells the loop of a journaled request (ModelRun.OnRecord).
func (l *loop) onRecord(rec journal.Record) { l.post(journaled{rec}) }

// post hands m to the loop, or drops it once the loop has ended.
func (l *loop) post(m message) {
	select {
	case l.inbox <- m:
	case <-l.done:
	}
}

// fail ends the run on err: the runners and backend calls are cancelled,
// and the loop ends once they have reported.
func (l *loop) fail(err error) {
	if l.err == nil {
		l.err = err
	}
	l.cancel()
}

// sinceStart is the campaign time, as the scheduler counts it.
func (l *loop) sinceStart() time.Duration { return l.d.now().Sub(l.start) }

// tell hands the scheduler an event, unless the run is ending (an
// interrupted run starts nothing more); an event it refuses ends the run.
func (l *loop) tell(ev schedule.Event) {
	if l.sched == nil || l.err != nil || l.ctx.Err() != nil || l.sched.Done() {
		return
	}
	ev.At = l.sinceStart()
	fmt.Fprintf(l.d.opt.Log, "%8s  %s\n", schedule.Seconds(ev.At.Seconds()), ev)
	if err := l.sched.Handle(ev); err != nil {
		l.fail(err)
	}
}
