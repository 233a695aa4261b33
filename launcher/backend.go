package launcher

import (
	"context"
	"time"
)

// Backend runs a run's engine replicas: on this machine (LocalBackend) or
// as Slurm jobs (package slurm's Jobs). Its caller calls Start and Stop off
// its own loop, one call at a time per replica, and hears what happens to
// a replica after its start through Events.
type Backend interface {
	// Start starts a replica and waits until its engine is ready, or
	// failed for good. If ctx ends first, the replica is stopped and
	// ctx's error returned.
	Start(ctx context.Context, spec ReplicaSpec) (Endpoint, error)
	// Stop stops a replica (starting, ready or failed) and verifies its
	// processes are gone; a replica the backend does not hold is
	// stopped. It bounds its own wait.
	Stop(ctx context.Context, model string, replica int) error
	// Events delivers every replica's lifecycle events, in order, without
	// ever blocking the replicas.
	Events() <-chan ReplicaEvent
	// Close stops every replica, verified, and releases the backend.
	Close(ctx context.Context) error
}

// LocalBackend runs replicas as child processes of this npcorch, through
// a Supervisor.
type LocalBackend struct {
	sup *Supervisor
	sub *Subscription
}

// NewLocalBackend starts a Supervisor over cfg and subscribes to its
// events.
func NewLocalBackend(cfg Config) *LocalBackend {
	sup := NewSupervisor(cfg)
	return &LocalBackend{sup: sup, sub: sup.Subscribe()}
}

// Start adds the replica to the supervisor and starts it.
func (b *LocalBackend) Start(ctx context.Context, spec ReplicaSpec) (Endpoint, error) {
	if err := ctx.Err(); err != nil {
		return Endpoint{}, err // stopped before it began: nothing to add
	}
	rep, err := b.sup.Add(spec)
	if err != nil {
		return Endpoint{}, err
	}
	return rep.Start(ctx)
}

// stopBound is how long a verified stop of a local replica may take.
func (b *LocalBackend) stopBound() time.Duration {
	t := b.sup.Timing()
	return t.Grace + t.Verify + 10*time.Second
}

// Stop stops the replica, verified, within the grace and verify delays
// and 10 s more.
func (b *LocalBackend) Stop(ctx context.Context, model string, replica int) error {
	ctx, cancel := context.WithTimeout(ctx, b.stopBound())
	defer cancel()
	return b.sup.StopReplica(ctx, model, replica)
}

// Events are the supervisor's replica events.
func (b *LocalBackend) Events() <-chan ReplicaEvent { return b.sub.C }

// Close stops every replica, verified, and ends the event subscription.
func (b *LocalBackend) Close(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.stopBound()+20*time.Second)
	defer cancel()
	err := b.sup.StopAll(ctx)
	b.sub.Close()
	return err
}
