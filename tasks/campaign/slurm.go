package campaign

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/launcher/slurm"
)

// gpuSource is this node's GPUs (NVML or a fake), or, for a campaign whose
// engines run as Slurm jobs on other nodes, a source that has none.
func (d *driver) gpuSource() (gpu.Source, error) {
	c := d.opt.Campaign
	if c.Backend == configs.BackendSlurm {
		return gpu.Absent{Node: "slurm", Reason: "engines run as Slurm jobs on the cluster's nodes; npcorch does not sample their GPUs"}, nil
	}
	src, err := nvml.Open(c.Node)
	if err != nil {
		return nil, fmt.Errorf("campaign %s: node %s: %w", c.Name, c.Node, err)
	}
	return src, nil
}

// planNode is the node the scheduler places on: this one, or the Slurm
// cluster's free GPUs (every node's GPUs, TP groups kept within a node).
func (d *driver) planNode(ctx context.Context, src gpu.Source) (placement.Node, []string, error) {
	c := d.opt.Campaign
	if c.Backend != configs.BackendSlurm {
		return PlanNode(ctx, c.Node, src)
	}
	b, err := slurm.New(slurm.Config{
		Settings: c.Slurm,
		Run:      c.Name,
		Dir:      filepath.Join(d.runDir, "slurm"),
		Engines:  d.engines(),
		Timing:   d.timing(),
		OnEvent:  d.onEngineEvent,
		Log:      d.opt.Log,
	})
	if err != nil {
		return placement.Node{}, nil, err
	}
	cl, err := b.Discover(ctx)
	if err != nil {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = b.Close(closeCtx)
		return placement.Node{}, nil, err
	}
	d.slurm = b
	notes := []string{fmt.Sprintf("slurm: partition %q: %d usable node(s)", cl.Partition, len(cl.Nodes))}
	for _, n := range cl.Nodes {
		notes = append(notes, fmt.Sprintf("slurm: node %s (%s) %s: %d of %d GPUs free", n.Name, n.Addr, n.State, n.FreeGPUs(), n.GPUs))
	}
	for _, s := range cl.Skipped {
		notes = append(notes, "slurm: skipped "+s)
	}
	return cl.PlacementNode(c.Slurm), notes, nil
}

// sharesDisk says whether engines see this machine's files at the same
// paths, so that images may travel as file:// URLs.
func (d *driver) sharesDisk() bool {
	c := d.opt.Campaign
	return c.Backend != configs.BackendSlurm || c.Slurm.SharedFilesystem
}

// startSlurmEngine submits a replica's job and waits until its engine is
// ready.
func (d *driver) startSlurmEngine(ctx context.Context, spec launcher.ReplicaSpec) (launcher.Endpoint, error) {
	if !d.sharesDisk() {
		spec.MediaRoot = "" // images travel as base64
	}
	return d.slurm.Start(ctx, spec)
}

// stopSlurmEngine cancels a replica's job and waits until Slurm has ended
// it.
func (d *driver) stopSlurmEngine(r schedule.Replica) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return d.slurm.Stop(ctx, r.Model, r.Index)
}

// closeSlurm cancels every job of the run and writes RUN/slurm/jobs.json.
func (d *driver) closeSlurm() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return d.slurm.Close(ctx)
}
