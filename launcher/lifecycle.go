package launcher

// The handlers below run on a replica's owning goroutine (see run): they
// launch the engine, react to readiness, exits, stalls and deadlines, and
// tear process groups down.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// launch starts (or restarts) the engine.
func (r *Replica) launch() {
	r.gen++
	gen := r.gen
	t := r.cfg.Timing
	r.moveTo(StateStarting)
	eng, err := r.cfg.Engines.For(r.spec.Model.Engine.Kind)
	if err != nil {
		r.failNow(FailureConfig, fmt.Sprintf("model %s: %v", r.spec.Model.Name, err), err)
		return
	}
	if r.key == "" {
		if r.key, err = NewAPIKey(r.cfg.Rand); err != nil {
			r.failNow(FailureConfig, err.Error(), err)
			return
		}
	}
	launched := r.spec.Model.Engine.Kind != configs.EngineExternal
	if launched {
		if err := r.ensurePort(); err != nil {
			r.failNow(FailurePortInUse, err.Error(), err)
			return
		}
	}
	r.inv, err = eng.Invocation(Launch{
		Model: r.spec.Model, Replica: r.spec.Replica, GPUs: r.spec.GPUs,
		Host: r.cfg.Host, Port: r.port, APIKey: r.key,
		MediaRoot: r.spec.MediaRoot, Images: r.spec.Images, APIServers: r.spec.APIServers,
		SecretDir:   filepath.Join(r.cfg.LogDir, SecretDirName),
		ToolCalling: r.spec.ToolCalling,
	})
	if err != nil {
		r.failNow(FailureConfig, err.Error(), err)
		return
	}
	pgid := 0
	if r.inv.Argv != nil {
		if err := r.openLog(); err != nil {
			r.failNow(FailureConfig, err.Error(), err)
			return
		}
		if err := WriteSecretFiles(r.inv.Files); err != nil {
			r.failNow(FailureConfig, err.Error(), err)
			return
		}
		r.measureMemory()
		secrets := []string{r.key, r.inv.APIKey}
		r.log = nil
		env := EngineEnv(os.Environ(), r.cfg.SecretEnv, r.inv.Env)
		proc, log, err := startProcess(r.inv.Argv, env, r.cfg.Shim, t.Grace, t.WaitDelay, func(onLine func()) *logSink {
			return newLogSink(r.logFile, secrets, onLine)
		})
		r.log = log
		log.note(fmt.Sprintf("launch %d at %s: %s", gen, r.cfg.Now().Format(time.RFC3339), strings.Join(r.inv.Argv, " ")))
		if err != nil {
			kind := FailureExited
			if notFound(err) {
				kind = FailureNotFound
			}
			log.note("start failed: " + err.Error())
			r.failNow(kind, fmt.Sprintf("start %s: %v", r.inv.Argv[0], err), err)
			return
		}
		r.proc = proc
		pgid = proc.pgid
	}
	r.noProg = time.NewTimer(t.NoProgress)
	r.hardCap = time.NewTimer(t.HardCap)
	r.loadingT = time.NewTicker(t.LoadingNote)
	ctx, cancel := context.WithCancel(context.Background())
	r.stopProbe = cancel
	r.kick = make(chan struct{}, 1)
	p := &prober{
		client: r.cfg.HTTP, inv: r.inv, port: r.port, pgid: pgid, owners: r.cfg.Listeners,
		timeout: t.ProbeTimeout, warmUp: t.WarmUpTimeout, interval: t.ProbeInterval,
		warmRetry: t.WarmUpRetry, warmFailures: t.WarmUpFailures,
	}
	r.launchedAt, r.stage, r.probeNote = r.cfg.Now(), stageDown, ""
	go p.run(ctx, r.kick, func(rep probeReport) {
		r.post(func() { r.onProbe(gen, rep) })
	})
	r.emit(ReplicaStarting, nil, func(e *ReplicaEvent) {
		e.Attempt = r.attempts
		e.Endpoint = r.endpointNow()
	})
}

// ensurePort keeps the replica's port across restarts while it stays
// free of foreign listeners, and allocates a new one otherwise.
func (r *Replica) ensurePort() error {
	if r.port != 0 {
		if err := r.cfg.Ports.Check(r.port); err == nil {
			return nil
		}
		r.cfg.Ports.Release(r.port)
		r.port = 0
	}
	port, err := r.cfg.Ports.Allocate(r.spec.name())
	if err != nil {
		return err
	}
	r.port = port
	return nil
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func (r *Replica) openLog() error {
	if r.logFile != nil {
		return nil
	}
	dir := r.cfg.LogDir
	if dir == "" {
		return fmt.Errorf("no log directory configured for %s; set one (serve --log-dir)", r.spec.name())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create log directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, unsafeName.ReplaceAllString(r.spec.Model.Name, "_")+".r"+strconv.Itoa(r.spec.Replica)+".log")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open replica log: %w", err)
	}
	r.logFile, r.logPath = f, path
	return nil
}

func (r *Replica) measureMemory() {
	r.memory = nil
	if r.cfg.Memory == nil {
		return
	}
	for _, uuid := range r.spec.GPUs {
		free, err := r.cfg.Memory.FreeBytes(uuid)
		if err != nil {
			continue
		}
		if r.memory == nil {
			r.memory = map[string]uint64{}
		}
		r.memory[uuid] = free
	}
}

func (r *Replica) endpointNow() Endpoint {
	ep := Endpoint{
		Model: r.spec.Model.Name, Replica: r.spec.Replica, External: r.spec.Model.Engine.Kind == configs.EngineExternal,
		BaseURL: r.inv.BaseURL, APIKey: r.inv.APIKey, MaxNumSeqs: r.inv.MaxNumSeqs, MetricsURL: r.inv.Probe.MetricsURL,
		GPUs: r.spec.GPUs, Port: r.port, CachedTokens: r.inv.CachedTokens,
	}
	if r.proc != nil {
		ep.PGID = r.proc.pgid
	}
	return ep
}

func (r *Replica) onProgress() {
	if r.state != StateStarting {
		return
	}
	r.pushDeadline()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

func (r *Replica) pushDeadline() {
	if r.noProg != nil {
		r.noProg.Reset(r.cfg.Timing.NoProgress)
	}
}

func (r *Replica) onProbe(gen int, rep probeReport) {
	if gen != r.gen || r.state != StateStarting || r.tearing {
		return
	}
	var fp *fatalProbe
	switch {
	case errors.As(rep.err, &fp):
		r.failStart(fp.kind, fp.msg, nil)
	case rep.err != nil:
		r.failStart(FailureExited, rep.err.Error(), rep.err)
	case rep.stage == stageReady:
		r.becomeReady()
	default:
		r.probeNote = rep.note
		if rep.stage <= r.stage {
			return // the checks see something new, but it is no progress
		}
		r.pushDeadline()
		// One check may pass several stages (port, /health, listing):
		// each is announced, in order.
		for r.stage < rep.stage {
			r.stage++
			if r.log != nil {
				r.log.note("readiness: " + r.stage.String())
			}
			r.emit(ReplicaStartUp, nil, func(e *ReplicaEvent) {
				e.Stage, e.Attempt = r.stage.Describe(), r.attempts
				e.Delay = r.cfg.Now().Sub(r.launchedAt)
			})
		}
	}
}

// noteLoading says, while a start is not ready, how long it has been
// loading and what it waits for: the stage reached, what the last
// readiness check saw and the engine's last line (redacted).
func (r *Replica) noteLoading() {
	if r.state != StateStarting {
		return
	}
	what := "not ready (so far: " + r.stage.Describe() + ")" + r.lastCheck()
	if r.log != nil {
		if l := r.log.lastLine(); l != "" {
			what += "; last log line: " + l
		}
	}
	r.emit(ReplicaLoading, nil, func(e *ReplicaEvent) {
		e.Stage, e.Attempt = what, r.attempts
		e.Delay = r.cfg.Now().Sub(r.launchedAt)
	})
}

// noProgressDetail says what a start that made no progress was waiting
// for: the stage it reached and what the last readiness check saw.
func (r *Replica) noProgressDetail() string {
	return fmt.Sprintf("no new log line and no readiness progress for %v (last stage: %s%s)", r.cfg.Timing.NoProgress, r.stage.Describe(), r.lastCheck())
}

// lastCheck is "; last readiness check: …" when the last readiness check
// saw something to say of a start, "" otherwise.
func (r *Replica) lastCheck() string {
	if r.probeNote == "" {
		return ""
	}
	return "; last readiness check: " + r.probeNote
}

func (r *Replica) becomeReady() {
	r.stopStartTimers()
	r.moveTo(StateReady)
	r.portMoves = 0
	r.readyAt = r.cfg.Now()
	r.endpoint = r.endpointNow()
	for _, w := range r.waiters {
		w <- readyReply{ep: r.endpoint}
	}
	r.waiters = nil
	if r.watchdog = NewWatchdog(r.cfg.HTTP, r.inv.Probe, r.cfg.Timing); r.watchdog.Enabled() {
		r.stallT = time.NewTicker(r.cfg.Timing.StallCheck)
	}
	r.emit(ReplicaReady, nil, func(e *ReplicaEvent) { e.Endpoint = r.endpoint; e.Attempt = r.attempts })
}

func (r *Replica) stopStartTimers() {
	for _, t := range []*time.Timer{r.noProg, r.hardCap} {
		if t != nil {
			t.Stop()
		}
	}
	r.noProg, r.hardCap = nil, nil
	if r.loadingT != nil {
		r.loadingT.Stop()
		r.loadingT = nil
	}
	if r.stopProbe != nil {
		r.stopProbe()
		r.stopProbe = nil
	}
}

func (r *Replica) stopWatchdog() {
	if r.stallT != nil {
		r.stallT.Stop()
		r.stallT = nil
	}
}

// scrape reads /health and /metrics off the owning goroutine and hands
// the reading to the watchdog, which may find the engine lost.
func (r *Replica) scrape() {
	gen, w := r.gen, r.watchdog
	go func() {
		rd := w.Read(context.Background())
		r.post(func() {
			if gen != r.gen || r.state != StateReady {
				return
			}
			if kind, why := w.Judge(rd, r.cfg.Now()); kind != "" {
				r.crash(r.engineError(kind, why, nil))
			}
		})
	}()
}

func (r *Replica) onExit() {
	if r.tearing {
		return // the teardown goroutine owns the exit
	}
	p := r.proc
	exit := describeExit(p.err)
	switch r.state {
	case StateStarting:
		kind := FailureExited
		if notFound(p.err) {
			kind = FailureNotFound
		}
		r.failStart(kind, "exited during start-up: "+exit, nil)
	case StateReady:
		r.crash(r.engineError(FailureExited, "crashed: "+exit, nil))
	}
	// Stopping and Restarting: the teardown goroutine owns the exit.
}

// engineError builds an error with the log tail, classified from it.
func (r *Replica) engineError(kind FailureKind, detail string, err error) *EngineError {
	e := &EngineError{Model: r.spec.Model.Name, Replica: r.spec.Replica, Kind: kind, Detail: detail, Log: r.logPath, Err: err}
	if r.log != nil {
		e.Tail = r.log.tail()
		if kind == FailureExited || kind == FailureNotFound {
			lines := r.log.lines()
			e.Kind, e.Hint = Classify(lines, kind)
			// The line that names the cause goes into the first line of
			// the message, which is what journals and summaries keep.
			if ev := Evidence(lines, e.Kind); ev != "" && !strings.Contains(e.Detail, ev) {
				e.Detail += ": " + ev
			}
		}
	}
	if e.Kind == FailurePortInUse && err == nil {
		e.Err = ErrPortInUse
	}
	return e
}

// failNow fails a start before any process runs.
func (r *Replica) failNow(kind FailureKind, detail string, err error) {
	e := r.engineError(kind, detail, err)
	if r.attempts > 0 {
		r.afterCrash(e, nil)
		return
	}
	r.fail(e)
}

// failStart fails a running start: tear the group down, then move to
// another port (the port was at fault), fail (first start) or back off (a
// restart).
func (r *Replica) failStart(kind FailureKind, detail string, err error) {
	if r.state != StateStarting || r.tearing {
		return
	}
	e := r.engineError(kind, detail, err)
	r.stopStartTimers()
	if r.log != nil {
		r.log.note("start failed: " + e.Detail)
	}
	if e.Kind.portFault() && r.portMoves < maxPortMoves {
		r.portMoves++
		r.moveTo(StateRestarting)
		r.teardown(func(terr error) { r.movePort(e, terr) })
		return
	}
	if r.attempts > 0 {
		r.moveTo(StateRestarting)
		r.teardown(func(terr error) { r.afterCrash(e, terr) })
		return
	}
	r.teardown(func(terr error) {
		if terr != nil {
			e.Detail += "; cleanup: " + terr.Error()
		}
		r.fail(e)
	})
}

// maxPortMoves bounds how often one start moves to another port because
// a foreign server shares its port.
const maxPortMoves = 3

// movePort starts again at once on another port: a foreign server shares
// the old one (a program outside npcorch's port locks bound it after the
// allocation), or the engine could not bind it. That is no fault of the
// engine, so no restart is spent.
func (r *Replica) movePort(e *EngineError, teardownErr error) {
	if teardownErr != nil {
		e.Detail += "; cleanup: " + teardownErr.Error()
		r.fail(e)
		return
	}
	old := r.port
	r.releasePort() // the next launch allocates another
	if r.log != nil {
		r.log.note(fmt.Sprintf("port %d is not ours to use (%s); starting again on another port", old, e.Kind))
	}
	r.backoff = time.NewTimer(0)
	r.emit(ReplicaRestarting, e, func(ev *ReplicaEvent) { ev.Attempt = r.attempts })
}

// crash handles an engine lost after ready: event, teardown, restart.
func (r *Replica) crash(e *EngineError) {
	r.stopWatchdog()
	r.stopStartTimers()
	r.moveTo(StateRestarting)
	if r.cfg.Now().Sub(r.readyAt) >= r.cfg.Timing.StableAfter {
		r.attempts = 0
	}
	if r.log != nil {
		r.log.note("engine lost: " + e.Detail)
	}
	r.emit(ReplicaCrashed, e, func(ev *ReplicaEvent) { ev.Endpoint = r.endpoint })
	r.teardown(func(terr error) { r.afterCrash(e, terr) })
}

// afterCrash schedules the next restart, or fails when attempts are spent
// or the old group could not be removed.
func (r *Replica) afterCrash(e *EngineError, teardownErr error) {
	if teardownErr != nil {
		e.Detail += "; cleanup: " + teardownErr.Error()
		r.fail(e)
		return
	}
	if e.Kind.Permanent() {
		r.fail(e) // the next start would fail the same way
		return
	}
	if r.attempts >= r.cfg.Timing.MaxRestarts {
		e.Detail = fmt.Sprintf("gave up after %d restarts; last: %s", r.attempts, e.Detail)
		r.fail(e)
		return
	}
	r.attempts++
	delay := r.cfg.Timing.Backoff(r.attempts)
	r.moveTo(StateRestarting)
	r.backoff = time.NewTimer(delay)
	r.emit(ReplicaRestarting, e, func(ev *ReplicaEvent) { ev.Attempt = r.attempts; ev.Delay = delay })
}

func (r *Replica) fail(e *EngineError) {
	r.moveTo(StateFailed)
	r.failure = e
	r.releasePort()
	for _, w := range r.waiters {
		w <- readyReply{err: e}
	}
	r.waiters = nil
	r.emit(ReplicaFailed, e, nil)
}

// teardown stops the current process group off the owning goroutine and
// calls then with the verification's result on it.
func (r *Replica) teardown(then func(error)) {
	r.stopStartTimers()
	r.stopWatchdog()
	r.next = then
	p := r.proc
	if p == nil {
		r.next = nil
		then(nil)
		return
	}
	r.tearing = true
	gen := r.gen
	t := r.cfg.Timing
	scan, mem, before := r.cfg.Scanner, r.cfg.Memory, r.memory
	log := r.log
	go func() {
		killed, err := stopGroup(p, scan, t.Grace, t.Verify)
		if killed && log != nil {
			log.note(fmt.Sprintf("teardown: the engine ignored SIGTERM for the %v grace period; sent SIGKILL to process group %d", t.Grace, p.pgid))
		}
		if err == nil && mem != nil && len(before) > 0 {
			err = memoryBack(mem, before, t.MemorySlack, t.Verify)
		}
		r.post(func() { r.onTornDown(gen, err) })
	}()
}

func (r *Replica) onTornDown(gen int, err error) {
	if gen != r.gen {
		return
	}
	r.tearing = false
	if r.log != nil {
		if err != nil {
			r.log.note("teardown: " + err.Error())
		} else {
			r.log.note("teardown: process group empty")
		}
	}
	r.proc = nil
	next := r.next
	r.next = nil
	if next != nil {
		next(err)
	}
}

// finishStop ends a Stop: everything is gone (or err says what is left).
func (r *Replica) finishStop(err error) {
	if r.backoff != nil {
		r.backoff.Stop()
		r.backoff = nil
	}
	r.stopStartTimers()
	r.stopWatchdog()
	r.releasePort()
	var verr error
	if err != nil {
		verr = r.engineError(FailureStopped, "stop could not be verified", err)
	}
	for _, s := range r.stoppers {
		s <- verr
	}
	r.stoppers = nil
	for _, w := range r.waiters {
		w <- readyReply{err: fmt.Errorf("%s: %w", r.spec.name(), ErrStopped)}
	}
	r.waiters = nil
	r.moveTo(StateStopped)
	RemoveSecretFiles(r.inv.Files)
	if r.logFile != nil {
		r.logFile.Close()
	}
	r.emit(ReplicaStopped, verr, nil)
	r.quit = true
}

func (r *Replica) releasePort() {
	if r.port != 0 {
		r.cfg.Ports.Release(r.port)
		r.port = 0
	}
}
