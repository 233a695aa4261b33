package slurm

import (
	"context"
	"errors"
	"time"

	"github.com/npcorch/npcorch/launcher"
)

// Replicas runs a run's engine replicas as Slurm jobs on the cluster's
// nodes: a launcher.Backend over a Backend, whose every stop is bounded
// and whose events arrive on a channel.
type Replicas struct {
	b   *Backend
	sub *launcher.Subscription
	// sharedFS: the nodes see this machine's files at the same paths, so
	// engines may read images from the prepared folder.
	sharedFS bool
}

// replicaStopBound is how long a cancelled job may take to leave squeue.
const replicaStopBound = 3 * time.Minute

// NewReplicas sets up a Backend over cfg (its OnEvent is the replicas'
// Events) and reads the cluster; images travel as file:// URLs only where
// cfg.Settings.SharedFilesystem says the nodes see them.
func NewReplicas(ctx context.Context, cfg Config) (*Replicas, *Cluster, error) {
	bus := &launcher.Bus{}
	sub := bus.Subscribe()
	cfg.OnEvent = bus.Publish
	b, err := New(cfg)
	if err != nil {
		sub.Close()
		return nil, nil, err
	}
	r := &Replicas{b: b, sub: sub, sharedFS: cfg.Settings.SharedFilesystem}
	cl, err := b.Discover(ctx)
	if err != nil {
		return nil, nil, errors.Join(err, r.Close(context.Background()))
	}
	return r, cl, nil
}

// Start submits the replica's job and waits until its engine is ready.
func (r *Replicas) Start(ctx context.Context, spec launcher.ReplicaSpec) (launcher.Endpoint, error) {
	if err := ctx.Err(); err != nil {
		return launcher.Endpoint{}, err // stopped before it began: nothing to submit
	}
	if !r.sharedFS {
		spec.MediaRoot = "" // images travel as base64
	}
	return r.b.Start(ctx, spec)
}

// Stop cancels the replica's job and waits, replicaStopBound at most, until it
// left squeue.
func (r *Replicas) Stop(ctx context.Context, model string, replica int) error {
	ctx, cancel := context.WithTimeout(ctx, replicaStopBound)
	defer cancel()
	return r.b.Stop(ctx, model, replica)
}

// Events are the jobs' replica events.
func (r *Replicas) Events() <-chan launcher.ReplicaEvent { return r.sub.C }

// Close cancels every job of the run and writes RUN/slurm/jobs.json.
func (r *Replicas) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, replicaStopBound)
	defer cancel()
	err := r.b.Close(ctx)
	r.sub.Close()
	return err
}
