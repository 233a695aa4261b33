package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// ReplicaSpec is one engine replica to run: a model on a GPU set.
type ReplicaSpec struct {
	Model     configs.Model
	Replica   int      // replica number within the model, from 0
	GPUs      []string // GPU UUIDs (empty for external and CPU sim engines)
	MediaRoot string   // prepared-image root for --allowed-local-media-path
	Images    ImageLimits
	// APIServers is vLLM's --api-server-count: API processes that decode
	// and preprocess images in parallel (0 or 1: vLLM's single one).
	APIServers int
	// ToolCalling starts the engine with tool calling on (Launch.ToolCalling).
	ToolCalling bool
}

func (s ReplicaSpec) name() string { return replicaName(s.Model.Name, s.Replica) }

// replicaName is how users see a replica: "Lingshu-7B/r0".
func replicaName(model string, replica int) string { return fmt.Sprintf("%s/r%d", model, replica) }

// Endpoint is how clients reach a ready replica: the one endpoint type of
// npcorch, which the task runner's client and pool use too.
type Endpoint struct {
	Model   string
	Replica int
	// External marks an endpoint npcorch did not start (engine kind
	// external): it serves the model for as long as its owner runs it.
	External   bool
	BaseURL    string // OpenAI-compatible, ending in /v1
	APIKey     string // bearer token; String redacts it
	MaxNumSeqs int    // the engine's concurrency ceiling
	// MetricsURL is the engine's Prometheus endpoint ("" when it has
	// none): clients read its queue there.
	MetricsURL string
	// CachedTokens: the engine reports cached prompt tokens, so an answer
	// without them had none cached (Invocation.CachedTokens). vLLM leaves
	// the details out when nothing was cached, so without this an absent
	// figure means "not reported", never 0.
	CachedTokens bool
	GPUs         []string
	Port         int // 0 for external endpoints
	PGID         int // process group of the engine, 0 when nothing runs
}

// String describes the endpoint without its API key.
func (e Endpoint) String() string {
	return fmt.Sprintf("%s/r%d %s max_num_seqs=%d gpus=%s", e.Model, e.Replica, e.BaseURL, e.MaxNumSeqs, e.gpuNames())
}

// gpuNames lists the endpoint's GPUs, "none" for an engine that holds no
// GPU of this node (simulated, external).
func (e Endpoint) gpuNames() string {
	if len(e.GPUs) == 0 {
		return "none"
	}
	return strings.Join(e.GPUs, ",")
}

// GoString keeps the key out of %#v too.
func (e Endpoint) GoString() string { return "launcher.Endpoint{" + e.String() + "}" }

// Status is a snapshot of a replica.
type Status struct {
	State    State
	Endpoint Endpoint // valid when State is StateReady
	Restarts int      // restart attempts since the last stable period
	Err      error    // the failure, for StateFailed
	Log      string   // the replica's log file
}

// ErrStopped is returned to callers waiting on a replica that was stopped.
var ErrStopped = errors.New("replica stopped")

// Replica runs one engine replica. One goroutine owns its state; the
// methods send it requests and wait for replies.
type Replica struct {
	spec ReplicaSpec
	cfg  Config
	pub  func(ReplicaEvent)

	reqs   chan func()   // run on the owning goroutine
	events chan func()   // async results, run on the owning goroutine
	done   chan struct{} // closed when the owning goroutine ends
	final  Status        // set before done is closed

	// Owned by the run goroutine.
	state     State
	gen       int
	port      int
	key       string
	inv       Invocation
	proc      *process
	log       *logSink
	logFile   *os.File
	logPath   string
	stopProbe context.CancelFunc
	kick      chan struct{}
	noProg    *time.Timer
	hardCap   *time.Timer
	loadingT  *time.Ticker // while starting: ReplicaLoading
	backoff   *time.Timer
	stallT    *time.Ticker
	watchdog  *Watchdog // while ready
	attempts  int
	portMoves int // moves to another port since the last ready
	readyAt   time.Time
	// launchedAt, stage and probeNote follow the current start: when it
	// was launched, the readiness stage reached, and what the last
	// readiness check saw.
	launchedAt time.Time
	stage      stage
	probeNote  string
	failure    error
	tearing    bool
	next       func(teardownErr error) // what to do when the teardown ends
	memory     map[string]uint64
	waiters    []chan readyReply
	stoppers   []chan error
	endpoint   Endpoint
	quit       bool
}

type readyReply struct {
	ep  Endpoint
	err error
}

func newReplica(spec ReplicaSpec, cfg Config, pub func(ReplicaEvent)) *Replica {
	r := &Replica{
		spec:   spec,
		cfg:    cfg,
		pub:    pub,
		reqs:   make(chan func()),
		events: make(chan func()),
		done:   make(chan struct{}),
	}
	go r.run()
	return r
}

// Spec returns what the replica runs.
func (r *Replica) Spec() ReplicaSpec { return r.spec }

// Start launches the engine and waits until it is ready or has failed. If
// ctx ends first, the replica is stopped and ctx's error returned.
func (r *Replica) Start(ctx context.Context) (Endpoint, error) {
	return r.waitReady(ctx, true)
}

// WaitReady waits until the replica is ready (again, after a restart) and
// returns its endpoint, or its failure.
func (r *Replica) WaitReady(ctx context.Context) (Endpoint, error) {
	return r.waitReady(ctx, false)
}

func (r *Replica) waitReady(ctx context.Context, launch bool) (Endpoint, error) {
	reply := make(chan readyReply, 1)
	if !r.call(ctx, func() { r.onWaitReady(reply, launch) }) {
		if ctx.Err() != nil {
			return Endpoint{}, ctx.Err()
		}
		return Endpoint{}, r.final.errOr(ErrStopped)
	}
	select {
	case rep := <-reply:
		return rep.ep, rep.err
	case <-ctx.Done():
		if launch {
			stopCtx, cancel := context.WithTimeout(context.Background(), r.stopBound())
			defer cancel()
			_ = r.Stop(stopCtx)
		}
		return Endpoint{}, ctx.Err()
	}
}

// Stop ends the engine: SIGTERM to its process group, the grace period,
// SIGKILL, then verification that no process of the group remains and
// that GPU memory came back. It returns the verification's error.
func (r *Replica) Stop(ctx context.Context) error {
	reply := make(chan error, 1)
	if !r.call(ctx, func() { r.onStop(reply) }) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil // already stopped
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return fmt.Errorf("stop %s: %w (the teardown goes on)", r.spec.name(), ctx.Err())
	}
}

// Status returns a snapshot of the replica.
func (r *Replica) Status() Status {
	reply := make(chan Status, 1)
	if !r.call(context.Background(), func() { reply <- r.status() }) {
		return r.final
	}
	return <-reply
}

func (s Status) errOr(def error) error {
	if s.Err != nil {
		return s.Err
	}
	return def
}

// stopBound is the longest a verified stop should take.
func (r *Replica) stopBound() time.Duration {
	t := r.cfg.Timing
	return t.Grace + t.WaitDelay + 2*t.Verify + 5*time.Second
}

// call runs f on the owning goroutine; false when it has ended.
func (r *Replica) call(ctx context.Context, f func()) bool {
	select {
	case r.reqs <- f:
		return true
	case <-r.done:
		return false
	case <-ctx.Done():
		return false
	}
}

// post delivers an async result to the owning goroutine from a helper
// goroutine; it gives up once the replica has ended.
func (r *Replica) post(f func()) {
	select {
	case r.events <- f:
	case <-r.done:
	}
}

func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// run is the owning goroutine.
func (r *Replica) run() {
	defer close(r.done)
	for !r.quit {
		var exited, progress <-chan struct{}
		var stall, loading <-chan time.Time
		if r.loadingT != nil {
			loading = r.loadingT.C
		}
		if r.proc != nil {
			exited = r.proc.done
			progress = r.proc.progress
		}
		if r.stallT != nil {
			stall = r.stallT.C
		}
		select {
		case f := <-r.reqs:
			f()
		case f := <-r.events:
			f()
		case <-exited:
			r.onExit()
		case <-progress:
			r.onProgress()
		case <-timerC(r.noProg):
			r.noProg = nil
			r.failStart(FailureNoProgress, r.noProgressDetail(), nil)
		case <-timerC(r.hardCap):
			r.hardCap = nil
			r.failStart(FailureHardCap, fmt.Sprintf("not ready after the hard cap of %v (last stage: %s)", r.cfg.Timing.HardCap, r.stage.Describe()), nil)
		case <-timerC(r.backoff):
			r.backoff = nil
			r.launch()
		case <-stall:
			r.scrape()
		case <-loading:
			r.noteLoading()
		}
	}
	r.final = r.status()
}

func (r *Replica) status() Status {
	st := Status{State: r.state, Restarts: r.attempts, Err: r.failure, Log: r.logPath}
	if r.state == StateReady {
		st.Endpoint = r.endpoint
	}
	return st
}

func (r *Replica) emit(kind ReplicaEventKind, err error, f func(*ReplicaEvent)) {
	ev := ReplicaEvent{Time: r.cfg.Now(), Kind: kind, Model: r.spec.Model.Name, Replica: r.spec.Replica, Err: err, Log: r.logPath}
	if f != nil {
		f(&ev)
	}
	if r.pub != nil {
		r.pub(ev)
	}
}

func (r *Replica) onWaitReady(reply chan readyReply, launch bool) {
	switch r.state {
	case StateNew:
		if !launch {
			reply <- readyReply{err: fmt.Errorf("%s has not been started", r.spec.name())}
			return
		}
		r.waiters = append(r.waiters, reply)
		r.launch()
	case StateStarting, StateRestarting:
		r.waiters = append(r.waiters, reply)
	case StateReady:
		reply <- readyReply{ep: r.endpoint}
	case StateFailed:
		reply <- readyReply{err: r.failure}
	default:
		reply <- readyReply{err: fmt.Errorf("%s: %w", r.spec.name(), ErrStopped)}
	}
}

func (r *Replica) onStop(reply chan error) {
	r.stoppers = append(r.stoppers, reply)
	switch {
	case r.state == StateStopping:
		return
	case r.tearing:
		r.moveTo(StateStopping)
		r.next = r.finishStop
	case r.proc != nil && r.state != StateFailed:
		r.moveTo(StateStopping)
		r.teardown(r.finishStop)
	default:
		r.moveTo(StateStopping)
		r.finishStop(nil)
	}
}
