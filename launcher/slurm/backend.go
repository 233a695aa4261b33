package slurm

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
)

// Config sets up a Backend. Settings, Run, Dir and Engines are required;
// every other zero field takes a working default.
type Config struct {
	// Settings are the campaign's slurm section, defaults applied.
	Settings configs.SlurmSettings
	// Run names the campaign in job names ("npcorch-RUN-MODEL-rN").
	Run string
	// Dir is the run's slurm folder (RUN/slurm); it must be on a
	// filesystem the compute nodes share, for job scripts, engine logs and
	// endpoint files.
	Dir string
	// Engines builds each replica's engine invocation.
	Engines launcher.Engines
	// Cmd runs Slurm's commands; when nil, Exec in npcorch's environment
	// without SecretEnv and the providers' key variables, which sbatch
	// would hand to every job (launcher.EngineEnv).
	Cmd       Commander
	SecretEnv []string
	// HTTP probes engines; a client without proxies when nil.
	HTTP *http.Client
	// Timing: NoProgress and HardCap bound a running job's start-up,
	// ProbeInterval/ProbeTimeout/WarmUpTimeout the readiness probe,
	// RestartBackoff/MaxBackoff the re-submissions, Grace+Verify the wait
	// for a cancelled job to leave squeue (at least a minute, for Slurm's
	// KillWait).
	Timing launcher.Timing
	// Now stamps events and attempts; time.Now when nil.
	Now func() time.Time
	// Rand is the source of API keys; crypto/rand when nil.
	Rand io.Reader
	// OnEvent receives every replica event (starting, ready, crashed,
	// restarting, failed, stopped) in order; it must not block.
	OnEvent func(launcher.ReplicaEvent)
	// Log receives one line per job state change.
	Log io.Writer
	// WorkDir is the jobs' working directory (sbatch --chdir), so that
	// relative paths in engine arguments mean what they mean to npcorch;
	// npcorch's own working directory when empty. Like Dir, it must exist
	// at the same path on the nodes.
	WorkDir string
}

func (c Config) withDefaults() Config {
	if c.Cmd == nil {
		c.Cmd = Exec{Env: launcher.EngineEnv(os.Environ(), c.SecretEnv, nil)}
	}
	if c.HTTP == nil {
		c.HTTP = launcher.EngineClient()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	if c.OnEvent == nil {
		c.OnEvent = func(launcher.ReplicaEvent) {}
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	c.Timing = c.Timing.WithDefaults()
	t := &c.Timing
	// A probe every 50 ms suits a local engine, not one across the network.
	t.ProbeInterval = max(t.ProbeInterval, 250*time.Millisecond)
	if c.Settings.Poll <= 0 {
		c.Settings.Poll = 10 * time.Second
	}
	return c
}

// Backend runs engine replicas as Slurm jobs. Its methods are safe for
// concurrent use.
type Backend struct {
	cfg   Config
	queue Queue

	mu       sync.Mutex
	cluster  *Cluster
	replicas map[string]*replica // by "model/rN"
	watch    map[string]*replica // job ID → replica, while the job may be active
	attempts []*Attempt
	closed   bool

	kick     chan struct{}
	quit     chan struct{}
	pollDone chan struct{}
}

// New returns a backend and starts following its jobs; Close ends it.
func New(cfg Config) (*Backend, error) {
	cfg = cfg.withDefaults()
	if cfg.Dir == "" {
		return nil, errors.New("slurm: no run directory given for job scripts and logs")
	}
	// Jobs run elsewhere, in WorkDir: every path they are given is absolute.
	var err error
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	if cfg.WorkDir == "" {
		if cfg.WorkDir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("slurm: the jobs' working directory: %w", err)
		}
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	b := &Backend{cfg: cfg, queue: Queue{Cmd: cfg.Cmd}, replicas: map[string]*replica{}, watch: map[string]*replica{},
		kick: make(chan struct{}, 1), quit: make(chan struct{}), pollDone: make(chan struct{})}
	b.touchHeartbeat()
	go b.poll()
	return b, nil
}

// Discover reads the cluster (see package Discover) and keeps it for
// Start, which pins each job to its node and binds the engine to the
// node's address.
func (b *Backend) Discover(ctx context.Context) (*Cluster, error) {
	c, err := Discover(ctx, b.cfg.Cmd, b.cfg.Settings)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.cluster = c
	b.mu.Unlock()
	return c, nil
}

// HeartbeatPath is the file npcorch touches at every poll; jobs cancel
// themselves when it grows older than slurm.orphan_timeout.
func (b *Backend) HeartbeatPath() string { return filepath.Join(b.cfg.Dir, "heartbeat") }

func (b *Backend) touchHeartbeat() {
	now := b.cfg.Now()
	if err := os.Chtimes(b.HeartbeatPath(), now, now); err != nil {
		_ = os.WriteFile(b.HeartbeatPath(), nil, 0o644)
	}
}

// Start submits spec's replica and waits until its engine is ready, or
// failed for good. spec.GPUs are GPU slots of the cluster's PlacementNode,
// all on one node. If ctx ends first, the replica's job is cancelled and
// ctx's error returned. A replica whose job dies later is re-submitted on
// its own; OnEvent tells when it is down and ready again.
func (b *Backend) Start(ctx context.Context, spec launcher.ReplicaSpec) (launcher.Endpoint, error) {
	r, err := b.add(spec)
	if err != nil {
		return launcher.Endpoint{}, err
	}
	select {
	case <-r.settled:
		return r.ep, r.err
	case <-ctx.Done():
		stopCtx, cancel := context.WithTimeout(context.Background(), b.cancelBound()+time.Minute)
		defer cancel()
		_ = b.Stop(stopCtx, spec.Model.Name, spec.Replica)
		return launcher.Endpoint{}, ctx.Err()
	}
}

func (b *Backend) add(spec launcher.ReplicaSpec) (*replica, error) {
	name := replicaName(spec.Model.Name, spec.Replica)
	if len(spec.GPUs) == 0 {
		return nil, fmt.Errorf("slurm: %s was given no GPUs; the slurm backend runs GPU engines only", name)
	}
	node := ""
	for _, g := range spec.GPUs {
		n, ok := SlotNode(g)
		if !ok {
			return nil, fmt.Errorf("slurm: %s: GPU %q is not a Slurm GPU slot (plan with the cluster from Discover)", name, g)
		}
		if node != "" && n != node {
			return nil, fmt.Errorf("slurm: %s: its TP group spans nodes %s and %s; a TP group must stay on one node", name, node, n)
		}
		node = n
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, fmt.Errorf("slurm: %s: the backend is closed", name)
	}
	if b.cluster == nil {
		return nil, fmt.Errorf("slurm: %s: call Discover before Start", name)
	}
	nd, ok := b.cluster.Node(node)
	if !ok {
		return nil, fmt.Errorf("slurm: %s: node %s is not among the usable nodes found", name, node)
	}
	if _, dup := b.replicas[name]; dup {
		return nil, fmt.Errorf("slurm: replica %s already exists; stop it first", name)
	}
	key, err := launcher.NewAPIKey(b.cfg.Rand)
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	r := newReplica(b, spec, nd, key)
	b.replicas[name] = r
	go r.run()
	return r, nil
}

func replicaName(model string, replica int) string { return fmt.Sprintf("%s/r%d", model, replica) }

// Stop cancels a replica's job, waits until Slurm no longer runs it, and
// forgets the replica. It returns the verification's error.
func (b *Backend) Stop(ctx context.Context, model string, replica int) error {
	b.mu.Lock()
	r := b.replicas[replicaName(model, replica)]
	b.mu.Unlock()
	if r == nil {
		return nil
	}
	r.requestStop()
	select {
	case <-r.done:
	case <-ctx.Done():
		return fmt.Errorf("slurm: stop %s: %w (the cancellation goes on)", r.name(), ctx.Err())
	}
	b.mu.Lock()
	if b.replicas[r.name()] == r {
		delete(b.replicas, r.name())
	}
	b.mu.Unlock()
	return r.stopErr
}

// Close stops every replica, cancels every job this backend submitted that
// may still be queued or running (one scancel), waits until squeue shows
// none of them active, writes RUN/slurm/jobs.json and stops following
// jobs. npcorch calls it on completion, on Ctrl-C and on failure.
func (b *Backend) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	reps := make([]*replica, 0, len(b.replicas))
	for _, r := range b.replicas {
		reps = append(reps, r)
	}
	b.mu.Unlock()
	var errs []error
	for _, r := range reps {
		r.requestStop()
	}
	for _, r := range reps {
		select {
		case <-r.done:
			errs = append(errs, r.stopErr)
		case <-ctx.Done():
		}
	}
	errs = append(errs, b.cancelAll(ctx))
	close(b.quit)
	<-b.pollDone
	errs = append(errs, b.writeAttempts())
	return errors.Join(errs...)
}

// cancelAll cancels every submitted job not known to have ended and waits
// until none is active.
func (b *Backend) cancelAll(ctx context.Context) error {
	ids := b.jobIDs()
	if len(ids) == 0 {
		return nil
	}
	if err := b.queue.Cancel(ctx, ids...); err != nil {
		return err
	}
	t := time.NewTicker(min(b.cfg.Settings.Poll, time.Second))
	defer t.Stop()
	for {
		states, err := b.queue.States(ctx, ids)
		if err == nil {
			var left []string
			for _, id := range ids {
				if states[id].Active() {
					left = append(left, states[id].String())
				}
			}
			if len(left) == 0 {
				return nil
			}
			err = fmt.Errorf("still active after scancel: %s", strings.Join(left, "; "))
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("slurm: cancelling the campaign's jobs: %w (%v); check `squeue --name=%s` and scancel what is left", ctx.Err(), err, b.jobPrefix()+"*")
		}
	}
}

// jobIDs returns every job ID submitted, in submission order.
func (b *Backend) jobIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for _, a := range b.attempts {
		if a.JobID != "" && !slices.Contains(ids, a.JobID) {
			ids = append(ids, a.JobID)
		}
	}
	return ids
}

// cancelBound is how long a cancelled job may take to leave squeue.
func (b *Backend) cancelBound() time.Duration {
	return max(b.cfg.Timing.Grace+b.cfg.Timing.Verify, time.Minute) + 2*b.cfg.Settings.Poll
}

// jobPrefix starts the names of this run's jobs.
func (b *Backend) jobPrefix() string { return "npcorch-" + jobWord(b.cfg.Run) + "-" }

// jobWord keeps the characters that read well in a job name.
func jobWord(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// poll follows every active job with one squeue call per interval (sooner
// when kicked) and hands each state to its replica.
func (b *Backend) poll() {
	defer close(b.pollDone)
	t := time.NewTicker(b.cfg.Settings.Poll)
	defer t.Stop()
	for {
		select {
		case <-b.quit:
			return
		case <-t.C:
		case <-b.kick:
		}
		b.touchHeartbeat()
		b.mu.Lock()
		ids := make([]string, 0, len(b.watch))
		for id := range b.watch {
			ids = append(ids, id)
		}
		b.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		slices.Sort(ids)
		ctx, cancel := context.WithTimeout(context.Background(), max(b.cfg.Settings.Poll, 30*time.Second))
		states, err := b.queue.States(ctx, ids)
		cancel()
		if err != nil {
			fmt.Fprintf(b.cfg.Log, "slurm: %v\n", err)
			continue
		}
		b.mu.Lock()
		for id, j := range states {
			if r := b.watch[id]; r != nil {
				r.observe(j)
			}
		}
		b.mu.Unlock()
	}
}

// pollSoon asks for a poll now (after a submission or a cancellation).
func (b *Backend) pollSoon() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

func (b *Backend) follow(id string, r *replica) {
	b.mu.Lock()
	b.watch[id] = r
	b.mu.Unlock()
	b.pollSoon()
}

func (b *Backend) unfollow(id string) {
	b.mu.Lock()
	delete(b.watch, id)
	b.mu.Unlock()
}

// Attempt is one job submitted for one replica, with its timing: pending
// is the time queued in Slurm (submit to start), start-up the time from
// the job's start to a ready engine.
type Attempt struct {
	Model   string `json:"model"`
	Replica int    `json:"replica"`
	Attempt int    `json:"attempt"`
	JobID   string `json:"job_id"`
	Node    string `json:"node"`
	GPUs    int    `json:"gpus"`
	Port    int    `json:"port"`
	// Submitted, Started, Ready and Ended are zero when they did not
	// happen. Started is Slurm's start time (1 s resolution).
	Submitted time.Time `json:"submitted"`
	Started   time.Time `json:"started,omitzero"`
	Ready     time.Time `json:"ready,omitzero"`
	Ended     time.Time `json:"ended,omitzero"`
	// State and Reason are the job's last Slurm state and reason.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Outcome says how the attempt ended for npcorch: stopped,
	// resubmitted (and why), failed (and why).
	Outcome string `json:"outcome,omitempty"`
	Log     string `json:"log"`
}

// Pending is the time the job waited in Slurm's queue.
func (a Attempt) Pending() time.Duration {
	if a.Started.IsZero() {
		return 0
	}
	return max(a.Started.Sub(a.Submitted.Truncate(time.Second)), 0)
}

// StartUp is the time from the job's start to a ready engine.
func (a Attempt) StartUp() time.Duration {
	if a.Started.IsZero() || a.Ready.IsZero() {
		return 0
	}
	return max(a.Ready.Sub(a.Started), 0)
}

// MarshalJSON adds pending_s and startup_s.
func (a Attempt) MarshalJSON() ([]byte, error) {
	type plain Attempt
	return json.Marshal(struct {
		plain
		PendingS float64 `json:"pending_s"`
		StartUpS float64 `json:"startup_s"`
	}{plain(a), a.Pending().Seconds(), a.StartUp().Seconds()})
}

// Attempts returns every submission so far, in order.
func (b *Backend) Attempts() []Attempt {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Attempt, len(b.attempts))
	for i, a := range b.attempts {
		out[i] = *a
	}
	return out
}

func (b *Backend) record(a *Attempt) {
	b.mu.Lock()
	b.attempts = append(b.attempts, a)
	b.mu.Unlock()
}

// update changes an attempt under the lock readers take.
func (b *Backend) update(f func()) {
	b.mu.Lock()
	f()
	b.mu.Unlock()
}

// writeAttempts writes jobs.json: the attempts of earlier runs of the same
// directory (a resumed campaign), then this run's.
func (b *Backend) writeAttempts() error {
	path := filepath.Join(b.cfg.Dir, "jobs.json")
	var all []Attempt
	if old, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(old, &all) // an unreadable history is replaced
	}
	now := b.Attempts()
	all = slices.DeleteFunc(all, func(a Attempt) bool {
		return slices.ContainsFunc(now, func(n Attempt) bool { return n.JobID == a.JobID })
	})
	data, err := json.MarshalIndent(append(all, now...), "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	return nil
}
