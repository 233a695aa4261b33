package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/npcorch/npcorch/launcher"
)

// replica is one engine replica run as a succession of Slurm jobs. One
// goroutine (run) owns its lifecycle; the poller hands it job states
// through jobs, and Stop asks through stop.
type replica struct {
	b    *Backend
	spec launcher.ReplicaSpec
	node Node
	key  string

	jobs     chan Job      // latest state of the current job (poller → run)
	stop     chan struct{} // closed by requestStop
	stopOnce sync.Once
	done     chan struct{} // closed when run ends; stopErr set before
	stopErr  error

	settled    chan struct{} // closed at the first ready or the failure
	settleOnce sync.Once
	ep         launcher.Endpoint
	err        error
}

func newReplica(b *Backend, spec launcher.ReplicaSpec, node Node, key string) *replica {
	return &replica{b: b, spec: spec, node: node, key: key, jobs: make(chan Job, 1),
		stop: make(chan struct{}), done: make(chan struct{}), settled: make(chan struct{})}
}

func (r *replica) name() string { return replicaName(r.spec.Model.Name, r.spec.Replica) }

func (r *replica) requestStop() { r.stopOnce.Do(func() { close(r.stop) }) }

// observe hands the poller's latest job state to run, replacing an unread
// older one. Only the poller calls it.
func (r *replica) observe(j Job) {
	select {
	case <-r.jobs:
	default:
	}
	r.jobs <- j
}

func (r *replica) settle(ep launcher.Endpoint, err error) {
	r.settleOnce.Do(func() {
		r.ep, r.err = ep, err
		close(r.settled)
	})
}

func (r *replica) emit(kind launcher.ReplicaEventKind, err error, f func(*launcher.ReplicaEvent)) {
	ev := launcher.ReplicaEvent{Time: r.b.cfg.Now(), Kind: kind, Model: r.spec.Model.Name, Replica: r.spec.Replica, Err: err}
	if f != nil {
		f(&ev)
	}
	r.b.cfg.OnEvent(ev)
}

func (r *replica) logf(format string, args ...any) {
	fmt.Fprintf(r.b.cfg.Log, "slurm: %s: %s\n", r.name(), fmt.Sprintf(format, args...))
}

// end is how one attempt ended.
type end int

const (
	endStopped  end = iota // stop requested; the job is gone
	endResubmit            // the cluster took the job, or it died after ready
	endFailed              // the engine failed to start: no resubmission
)

// run submits jobs until the replica is stopped or fails for good.
func (r *replica) run() {
	defer close(r.done)
	t := r.b.cfg.Timing
	resubmits := 0
	for attempt := 1; ; attempt++ {
		a, js, err := r.submit(attempt)
		if err != nil {
			r.fail(err)
			return
		}
		how, err := r.follow(a, js)
		r.b.unfollow(a.JobID)
		switch how {
		case endStopped:
			r.stopErr = err
			r.b.update(func() { a.Outcome = "stopped" })
			r.emit(launcher.ReplicaStopped, err, nil)
			r.settle(launcher.Endpoint{}, fmt.Errorf("%s: %w", r.name(), launcher.ErrStopped))
			return
		case endFailed:
			r.b.update(func() { a.Outcome = "failed: " + err.Error() })
			r.fail(err)
			return
		}
		if resubmits >= r.b.cfg.Settings.MaxResubmits {
			err = fmt.Errorf("slurm: %s: gave up after %d re-submissions (slurm.max_resubmits); the last job: %w", r.name(), resubmits, err)
			r.b.update(func() { a.Outcome = "failed: " + err.Error() })
			r.fail(err)
			return
		}
		resubmits++
		delay := t.Backoff(resubmits)
		r.b.update(func() { a.Outcome = "resubmitted: " + err.Error() })
		r.logf("%v; re-submitting in %v (%d of at most %d)", err, delay, resubmits, r.b.cfg.Settings.MaxResubmits)
		r.emit(launcher.ReplicaRestarting, err, func(e *launcher.ReplicaEvent) { e.Attempt, e.Delay = resubmits, delay })
		wait := time.NewTimer(delay)
		select {
		case <-wait.C:
		case <-r.stop:
			wait.Stop()
			r.emit(launcher.ReplicaStopped, nil, nil)
			r.settle(launcher.Endpoint{}, fmt.Errorf("%s: %w", r.name(), launcher.ErrStopped))
			return
		}
	}
}

func (r *replica) fail(err error) {
	r.emit(launcher.ReplicaFailed, err, nil)
	r.settle(launcher.Endpoint{}, err)
}

// launchModel is the model as the engine sees it: the TP size is the
// GPU count (the engine sees only the GPUs Slurm gave the job).
func (r *replica) launch(port int) (launcher.Invocation, error) {
	m := r.spec.Model
	m.Engine.TensorParallel = len(r.spec.GPUs)
	eng, err := r.b.cfg.Engines.For(m.Engine.Kind)
	if err != nil {
		return launcher.Invocation{}, fmt.Errorf("slurm: %s: %w", r.name(), err)
	}
	inv, err := eng.Invocation(launcher.Launch{Model: m, Replica: r.spec.Replica, Host: r.node.Addr, Port: port,
		APIKey: r.key, MediaRoot: r.spec.MediaRoot, Images: r.spec.Images,
		SecretDir: filepath.Join(r.b.cfg.Dir, launcher.SecretDirName), ToolCalling: r.spec.ToolCalling})
	if err != nil {
		return launcher.Invocation{}, fmt.Errorf("slurm: %w", err)
	}
	if inv.Argv == nil {
		return launcher.Invocation{}, fmt.Errorf("slurm: model %s is engine kind %q, which launches nothing; run external endpoints without the slurm backend", m.Name, m.Engine.Kind)
	}
	return inv, nil
}

// port picks the engine's port for an attempt: spread over the campaign's
// range by run, replica and attempt, so that a port another process holds
// is not chosen twice in a row.
func (r *replica) port(attempt int) int {
	s := r.b.cfg.Settings
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s", r.b.cfg.Dir, r.name())
	return s.PortBase + int((uint64(h.Sum32())+uint64(attempt-1)*7919)%uint64(s.PortSpan))
}

// submit writes the attempt's script and submits it.
func (r *replica) submit(attempt int) (*Attempt, JobSpec, error) {
	port := r.port(attempt)
	inv, err := r.launch(port)
	if err != nil {
		return nil, JobSpec{}, err
	}
	dir := filepath.Join(r.b.cfg.Dir, jobWord(r.spec.Model.Name)+"-r"+strconv.Itoa(r.spec.Replica), strconv.Itoa(attempt))
	js := JobSpec{
		Name:      r.b.jobPrefix() + jobWord(r.spec.Model.Name) + "-r" + strconv.Itoa(r.spec.Replica),
		Comment:   "npcorch run " + r.b.cfg.Dir,
		Node:      r.node.Name,
		GPUs:      len(r.spec.GPUs),
		Settings:  r.b.cfg.Settings,
		Dir:       dir,
		WorkDir:   r.b.cfg.WorkDir,
		Host:      r.node.Addr,
		Port:      port,
		Argv:      inv.Argv,
		Env:       inv.Env,
		Heartbeat: r.b.HeartbeatPath(),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, js, fmt.Errorf("slurm: %s: %w", r.name(), err)
	}
	for _, stale := range []string{js.EndpointPath(), js.LogPath()} {
		_ = os.Remove(stale)
	}
	if err := launcher.WriteSecretFiles(inv.Files); err != nil {
		return nil, js, fmt.Errorf("slurm: %s: %w", r.name(), err)
	}
	// The script exports the API key (VLLM_API_KEY): only its owner may
	// read it, and a script left by an older run is rewritten as such.
	if err := writeOwnerOnly(js.ScriptPath(), js.Script()); err != nil {
		return nil, js, fmt.Errorf("slurm: %s: %w", r.name(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := r.b.cfg.Cmd.Run(ctx, "sbatch", js.SbatchArgs()...)
	if err != nil {
		return nil, js, fmt.Errorf("slurm: submitting %s: %w (check the campaign's slurm section: partition, account, qos, constraint, gres)", r.name(), err)
	}
	id, err := ParseSbatch(out)
	if err != nil {
		return nil, js, fmt.Errorf("slurm: submitting %s: %w", r.name(), err)
	}
	a := &Attempt{Model: r.spec.Model.Name, Replica: r.spec.Replica, Attempt: attempt, JobID: id, Node: r.node.Name,
		GPUs: js.GPUs, Port: port, Submitted: r.b.cfg.Now(), State: "PENDING", Log: js.LogPath()}
	r.b.record(a)
	r.b.follow(id, r)
	r.logf("submitted job %s (%s, %d GPU%s on %s, port %d)", id, js.Name, js.GPUs, plural(js.GPUs), r.node.Name, port)
	r.emit(launcher.ReplicaStarting, nil, func(e *launcher.ReplicaEvent) {
		e.Attempt = attempt - 1
		e.Log = js.LogPath()
		e.Endpoint = launcher.Endpoint{Model: r.spec.Model.Name, Replica: r.spec.Replica, Port: port, GPUs: r.spec.GPUs}
	})
	return a, js, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// probeResult is the outcome of one attempt's readiness probe.
type probeResult struct {
	ep    launcher.Endpoint
	probe launcher.Probe // how the watchdog reaches the ready engine
	err   error
}

// phase is where an attempt is.
type phase int

const (
	phasePending  phase = iota // queued in Slurm
	phaseStarting              // job running, engine not ready
	phaseReady                 // serving
)

// jobError is a failure of the attempt's engine, with the job and node
// named, what went wrong (detail, may be empty) and its log's tail.
func (r *replica) jobError(kind launcher.FailureKind, a *Attempt, js JobSpec, detail string) *launcher.EngineError {
	d := fmt.Sprintf("Slurm job %s on %s", a.JobID, r.node.Name)
	if detail != "" {
		d += ": " + detail
	}
	return &launcher.EngineError{Model: r.spec.Model.Name, Replica: r.spec.Replica, Kind: kind, Detail: d,
		Log: js.LogPath(), Tail: logTail(js.LogPath(), 12)}
}

// probe waits for the job's endpoint file, checks that it names our job,
// and proves the engine ready over the network.
func (r *replica) probe(ctx context.Context, js JobSpec, jobID string, out chan<- probeResult, progress chan<- struct{}) {
	t := r.b.cfg.Timing
	var ep EndpointFile
	tick := time.NewTicker(t.ProbeInterval)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(js.EndpointPath())
		if err == nil {
			if err := json.Unmarshal(data, &ep); err != nil {
				out <- probeResult{err: fmt.Errorf("endpoint file %s: %w", js.EndpointPath(), err)}
				return
			}
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
	if ep.Job != jobID {
		out <- probeResult{err: fmt.Errorf("endpoint file %s was written by job %s, not %s; is another npcorch using this run directory?", js.EndpointPath(), ep.Job, jobID)}
		return
	}
	select {
	case progress <- struct{}{}:
	default:
	}
	r.logf("job %s: engine on node %s at %s:%d (GPUs %s)", jobID, ep.Node, ep.Host, ep.Port, ep.GPUs)
	inv, err := r.launch(ep.Port)
	if err != nil {
		out <- probeResult{err: err}
		return
	}
	if ep.Host != "" && ep.Host != r.node.Addr {
		// The job bound elsewhere than planned: follow what it says.
		inv.BaseURL = strings.Replace(inv.BaseURL, r.node.Addr, ep.Host, 1)
		inv.Probe.HealthURL = strings.Replace(inv.Probe.HealthURL, r.node.Addr, ep.Host, 1)
		inv.Probe.MetricsURL = strings.Replace(inv.Probe.MetricsURL, r.node.Addr, ep.Host, 1)
	}
	err = launcher.ProbeRemote(ctx, r.b.cfg.HTTP, inv, t, func(string) {
		select {
		case progress <- struct{}{}:
		default:
		}
	})
	if ctx.Err() != nil {
		return
	}
	out <- probeResult{ep: launcher.Endpoint{Model: r.spec.Model.Name, Replica: r.spec.Replica, BaseURL: inv.BaseURL, APIKey: inv.APIKey,
		MaxNumSeqs: inv.MaxNumSeqs, MetricsURL: inv.Probe.MetricsURL, GPUs: r.spec.GPUs, Port: ep.Port, CachedTokens: inv.CachedTokens},
		probe: inv.Probe, err: err}
}

// cancel scancels the attempt's job and waits until Slurm reports it
// ended.
func (r *replica) cancel(a *Attempt) error {
	bound := r.b.cancelBound()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := r.b.queue.Cancel(ctx, a.JobID); err != nil {
		return err
	}
	r.b.pollSoon()
	for {
		select {
		case j := <-r.jobs:
			if j.ID != a.JobID {
				continue
			}
			r.b.update(func() { a.State, a.Reason = j.State, j.Reason })
			if !j.Active() {
				r.b.update(func() { a.Ended = r.b.cfg.Now() })
				r.logf("job %s cancelled (%s)", a.JobID, j.State)
				return nil
			}
			r.b.pollSoon()
		case <-ctx.Done():
			return fmt.Errorf("slurm: %s: job %s still in squeue %v after scancel; check `squeue -j %s`", r.name(), a.JobID, bound, a.JobID)
		}
	}
}

// logTail returns the last n non-empty lines of a log file.
func logTail(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const window = 16 << 10
	st, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(st.Size()-window, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && len(buf) == 0 {
		return nil
	}
	var lines []string
	for _, l := range bytes.Split(buf, []byte("\n")) {
		if s := strings.TrimSpace(string(l)); s != "" {
			lines = append(lines, s)
		}
	}
	return lines[max(len(lines)-n, 0):]
}

// writeOwnerOnly writes an executable file only its owner can read, also
// when it already exists with a wider mode (os.WriteFile keeps that).
func writeOwnerOnly(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o700); err != nil {
		return err
	}
	return os.Chmod(path, 0o700)
}
