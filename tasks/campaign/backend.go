package campaign

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/slurm"
)

// gpuSource is this node's GPUs (NVML or a fake), or, for a campaign whose
// engines run as Slurm jobs on other nodes, a source that has none.
func gpuSource(c *configs.Campaign, spec gpu.NodeSpec) (gpu.Source, error) {
	if c.Backend == configs.BackendSlurm {
		return gpu.Absent{Node: "slurm", Reason: "engines run as Slurm jobs on the cluster's nodes; npcorch does not sample their GPUs"}, nil
	}
	src, err := nvml.Open(spec)
	if err != nil {
		return nil, c.Errorf("node", "%s: %v%s", c.Node, err, fakeNodeHint(err))
	}
	return src, nil
}

// machine is this node as Run finds it before the run folder is made: the
// campaign's node spec, its GPUs and, for engines started here, the node
// the scheduler places on (read once: inventory and topology).
type machine struct {
	spec  gpu.NodeSpec
	gpus  gpu.Source
	node  placement.Node
	notes []string
}

// localMachine reads the node that a campaign running engines here places
// on, refusing one without a GPU ("auto" without a driver) before the run
// folder is made; a Slurm campaign places on the cluster (setUp).
func localMachine(ctx context.Context, c *configs.Campaign, spec gpu.NodeSpec, src gpu.Source) (machine, error) {
	m := machine{spec: spec, gpus: src}
	if c.Backend != configs.BackendLocal {
		return m, nil
	}
	var err error
	if m.node, m.notes, err = placement.ReadNode(ctx, spec, src); err != nil {
		return m, c.Errorf("node", "%s: %v%s", c.Node, err, fakeNodeHint(err))
	}
	return m, nil
}

// fakeNodeHint tells a campaign on a machine without GPUs how to run on a
// fake node instead ("" for other errors). It names the campaign file's
// field: npcorch run has no --node flag.
func fakeNodeHint(err error) string {
	if errors.Is(err, placement.ErrNoGPU) || errors.Is(err, gpu.ErrNoDriver) || errors.Is(err, gpu.ErrNVMLNotCompiled) {
		return "; or, to run sim and external models without GPUs, set node: fake:a800-sxm-8 in the campaign file (" + gpu.FakeNodeSpecs() + ")"
	}
	return ""
}

// setUp returns the node the scheduler places on and the backend that
// runs its engines: this machine's GPUs (as localMachine read them) and
// child processes, or the Slurm
// cluster's free GPUs (every node's, TP groups kept within a node) and
// jobs.
func (d *driver) setUp(ctx context.Context, m machine) (placement.Node, launcher.Backend, []string, error) {
	c := d.opt.Campaign
	if c.Backend != configs.BackendSlurm {
		return m.node, launcher.NewLocalBackend(d.launcherConfig(m)), m.notes, nil
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
func (d *driver) newSlurmBackend(ctx context.Context) (*slurm.Replicas, *slurm.Cluster, error) {
	c := d.opt.Campaign
	return slurm.NewReplicas(ctx, slurm.Config{
		Settings:  c.Slurm,
		Run:       c.Name,
		Dir:       filepath.Join(d.runDir, "slurm"),
		Engines:   d.engines(),
		Timing:    d.timing(),
		Log:       d.opt.Log,
		SecretEnv: c.SecretEnv(),
	})
}

// launcherConfig is how the local supervisor launches engines: through
// npcorch's shim, logging to RUN/engines, checking on a real node that
// each engine's GPU memory came back.
func (d *driver) launcherConfig(m machine) launcher.Config {
	c := d.opt.Campaign
	cfg := launcher.Config{
		Engines: d.engines(),
		Shim:    append(slices.Clone(d.opt.Self), "serve", "engine-shim"),
		LogDir:  filepath.Join(d.runDir, "engines"),
		Host:    c.Host,
		Timing:  d.timing(),
		// Engines run third-party code: they get no other endpoint's key.
		SecretEnv: c.SecretEnv(),
	}
	if !m.spec.IsFake() {
		if _, absent := m.gpus.(gpu.Absent); !absent {
			cfg.Memory = memoryProbe{m.gpus}
		}
	}
	return cfg
}

// memoryProbe lets the launcher check that an engine's GPU memory came back.
type memoryProbe struct{ src gpu.Source }

func (m memoryProbe) FreeBytes(uuid string) (uint64, error) {
	inv, err := m.src.Inventory(context.Background())
	if err != nil {
		return 0, err
	}
	for _, g := range inv.GPUs {
		if g.UUID != nil && *g.UUID == uuid {
			if g.MemoryFreeBytes == nil {
				return 0, fmt.Errorf("GPU %s: NVML did not report free memory", uuid)
			}
			return *g.MemoryFreeBytes, nil
		}
	}
	return 0, fmt.Errorf("GPU %s is not on this node", uuid)
}
