package campaign

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/slurm"
	"github.com/npcorch/npcorch/tasks/live"
)

// Backend runs the campaign's engine replicas: on this machine (the
// launcher's Supervisor) or as Slurm jobs. The driver calls Start and Stop
// off its loop, one call at a time per replica, and hears what happens to
// a replica after its start through Events.
type Backend interface {
	// Start starts a replica and waits until its engine is ready, or
	// failed for good. If ctx ends first, the replica is stopped and
	// ctx's error returned.
	Start(ctx context.Context, spec launcher.ReplicaSpec) (launcher.Endpoint, error)
	// Stop stops a replica (starting, ready or failed) and verifies its
	// processes are gone; a replica the backend does not hold is
	// stopped. It bounds its own wait.
	Stop(ctx context.Context, model string, replica int) error
	// Events delivers every replica's lifecycle events, in order, without
	// ever blocking the replicas.
	Events() <-chan launcher.ReplicaEvent
	// Close stops every replica, verified, and releases the backend.
	Close(ctx context.Context) error
}

// localBackend runs replicas as child processes of this npcorch.
type localBackend struct {
	sup *launcher.Supervisor
	sub *launcher.Subscription
}

func newLocalBackend(cfg launcher.Config) *localBackend {
	sup := launcher.NewSupervisor(cfg)
	return &localBackend{sup: sup, sub: sup.Subscribe()}
}

func (b *localBackend) Start(ctx context.Context, spec launcher.ReplicaSpec) (launcher.Endpoint, error) {
	if err := ctx.Err(); err != nil {
		return launcher.Endpoint{}, err // stopped before it began: nothing to add
	}
	rep, err := b.sup.Add(spec)
	if err != nil {
		return launcher.Endpoint{}, err
	}
	return rep.Start(ctx)
}

// stopBound is how long a verified stop of a local replica may take.
func (b *localBackend) stopBound() time.Duration {
	t := b.sup.Timing()
	return t.Grace + t.Verify + 10*time.Second
}

func (b *localBackend) Stop(ctx context.Context, model string, replica int) error {
	ctx, cancel := context.WithTimeout(ctx, b.stopBound())
	defer cancel()
	return b.sup.StopReplica(ctx, model, replica)
}

func (b *localBackend) Events() <-chan launcher.ReplicaEvent { return b.sub.C }

func (b *localBackend) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.stopBound()+20*time.Second)
	defer cancel()
	err := b.sup.StopAll(ctx)
	b.sub.Close()
	return err
}

// slurmBackend runs replicas as Slurm jobs on the cluster's nodes.
type slurmBackend struct {
	b   *slurm.Backend
	sub *launcher.Subscription
	// sharedFS: the nodes see this machine's files at the same paths, so
	// engines may read images from the prepared folder.
	sharedFS bool
}

// slurmStopBound is how long a cancelled job may take to leave squeue.
const slurmStopBound = 3 * time.Minute

func (b *slurmBackend) Start(ctx context.Context, spec launcher.ReplicaSpec) (launcher.Endpoint, error) {
	if err := ctx.Err(); err != nil {
		return launcher.Endpoint{}, err // stopped before it began: nothing to submit
	}
	if !b.sharedFS {
		spec.MediaRoot = "" // images travel as base64
	}
	return b.b.Start(ctx, spec)
}

func (b *slurmBackend) Stop(ctx context.Context, model string, replica int) error {
	ctx, cancel := context.WithTimeout(ctx, slurmStopBound)
	defer cancel()
	return b.b.Stop(ctx, model, replica)
}

func (b *slurmBackend) Events() <-chan launcher.ReplicaEvent { return b.sub.C }

// Close cancels every job of the run and writes RUN/slurm/jobs.json.
func (b *slurmBackend) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, slurmStopBound)
	defer cancel()
	err := b.b.Close(ctx)
	b.sub.Close()
	return err
}

// gpuSource is this node's GPUs (NVML or a fake), or, for a campaign whose
// engines run as Slurm jobs on other nodes, a source that has none.
func gpuSource(c *configs.Campaign) (gpu.Source, error) {
	if c.Backend == configs.BackendSlurm {
		return gpu.Absent{Node: "slurm", Reason: "engines run as Slurm jobs on the cluster's nodes; npcorch does not sample their GPUs"}, nil
	}
	src, err := nvml.Open(c.Node)
	if err != nil {
		return nil, c.Errorf("node", "%s: %v%s", c.Node, err, fakeNodeHint(err))
	}
	return src, nil
}

// machine is this node as Run finds it before the run folder is made: its
// GPUs and, for engines started here, the node the scheduler places on
// (read once: inventory and topology).
type machine struct {
	gpus  gpu.Source
	node  placement.Node
	notes []string
}

// localMachine reads the node that a campaign running engines here places
// on, refusing one without a GPU ("auto" without a driver) before the run
// folder is made; a Slurm campaign places on the cluster (setUp).
func localMachine(ctx context.Context, c *configs.Campaign, src gpu.Source) (machine, error) {
	m := machine{gpus: src}
	if c.Backend != configs.BackendLocal {
		return m, nil
	}
	var err error
	if m.node, m.notes, err = PlanNode(ctx, c.Node, src); err != nil {
		return m, c.Errorf("node", "%s: %v%s", c.Node, err, fakeNodeHint(err))
	}
	return m, nil
}

// fakeNodeHint tells a campaign on a machine without GPUs how to run on a
// fake node instead ("" for other errors). It names the campaign file's
// field: npcorch run has no --node flag.
func fakeNodeHint(err error) string {
	if errors.Is(err, ErrNoGPU) || errors.Is(err, gpu.ErrNoDriver) || errors.Is(err, gpu.ErrNVMLNotCompiled) {
		return "; or, to run sim and external models without GPUs, set node: fake:a800-sxm-8 in the campaign file (" + nvml.FakeNodeSpecs() + ")"
	}
	return ""
}

// setUp returns the node the scheduler places on and the backend that
// runs its engines: this machine's GPUs (as localMachine read them) and
// child processes, or the Slurm
// cluster's free GPUs (every node's, TP groups kept within a node) and
// jobs.
func (d *driver) setUp(ctx context.Context, m machine) (placement.Node, Backend, []string, error) {
	c := d.opt.Campaign
	if c.Backend != configs.BackendSlurm {
		return m.node, newLocalBackend(d.launcherConfig(m.gpus)), m.notes, nil
	}
	backend, cl, err := d.newSlurmBackend(ctx)
	if err != nil {
		return placement.Node{}, nil, nil, err
	}
	notes := []string{fmt.Sprintf("slurm: partition %q: %d usable node(s)", cl.Partition, len(cl.Nodes))}
	for _, n := range cl.Nodes {
		notes = append(notes, fmt.Sprintf("slurm: node %s (%s) %s: %d of %d GPUs free", n.Name, n.Addr, n.State, n.FreeGPUs(), n.GPUs))
	}
	for _, s := range cl.Skipped {
		notes = append(notes, "slurm: skipped "+s)
	}
	return cl.PlacementNode(c.Slurm), backend, notes, nil
}

// newSlurmBackend sets up the Slurm backend and reads the cluster.
func (d *driver) newSlurmBackend(ctx context.Context) (*slurmBackend, *slurm.Cluster, error) {
	c := d.opt.Campaign
	bus := &launcher.Bus{}
	sub := bus.Subscribe()
	b, err := slurm.New(slurm.Config{
		Settings:  c.Slurm,
		Run:       c.Name,
		Dir:       filepath.Join(d.runDir, "slurm"),
		Engines:   d.engines(),
		Timing:    d.timing(),
		OnEvent:   bus.Publish,
		Log:       d.opt.Log,
		SecretEnv: SecretEnv(c),
	})
	if err != nil {
		sub.Close()
		return nil, nil, err
	}
	backend := &slurmBackend{b: b, sub: sub, sharedFS: c.Slurm.SharedFilesystem}
	cl, err := b.Discover(ctx)
	if err != nil {
		return nil, nil, errors.Join(err, backend.Close(context.Background()))
	}
	return backend, cl, nil
}

// launcherConfig is how the local supervisor launches engines: through
// npcorch's shim, logging to RUN/engines, checking on a real node that
// each engine's GPU memory came back.
func (d *driver) launcherConfig(src gpu.Source) launcher.Config {
	c := d.opt.Campaign
	cfg := launcher.Config{
		Engines: d.engines(),
		Shim:    append(slices.Clone(d.opt.Self), "serve", "engine-shim"),
		LogDir:  filepath.Join(d.runDir, "engines"),
		Host:    c.Host,
		Timing:  d.timing(),
		// Engines run third-party code: they get no other endpoint's key.
		SecretEnv: SecretEnv(c),
	}
	if !strings.HasPrefix(c.Node, "fake:") {
		if _, absent := src.(gpu.Absent); !absent {
			cfg.Memory = memoryProbe{src}
		}
	}
	return cfg
}

// SecretEnv names the environment variables of c's secrets that no engine
// needs: every model's and judge's engine.api_key_env (the keys of API
// endpoints) and the live page's token.
func SecretEnv(c *configs.Campaign) []string {
	names := []string{live.TokenEnv}
	for _, m := range slices.Concat(c.Resolved, c.ResolvedJudges) {
		if m.Engine.APIKeyEnv != "" {
			names = append(names, m.Engine.APIKeyEnv)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// sharesDisk says whether engines see this machine's files at the same
// paths, so that images may travel as file:// URLs.
func (d *driver) sharesDisk() bool {
	c := d.opt.Campaign
	return c.Backend != configs.BackendSlurm || c.Slurm.SharedFilesystem
}
