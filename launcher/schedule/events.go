package schedule

import (
	"context"
	"fmt"
	"time"
)

// ReplicaID numbers the replicas of one campaign from 1 in start order.
type ReplicaID int

// Assignment is the scheduler's decision to run one engine: one TP group
// of one model on given GPUs. Whoever carries out the Effects starts a
// replica for it (the campaign, a launcher Replica; the simulation, none).
type Assignment struct {
	ID    ReplicaID `json:"id"`
	Model string    `json:"model"`
	// Index numbers the model's replicas from 0 in start order: it is the
	// replica number users see ("Lingshu-7B/r0"), in its engine's log
	// name and events, as `npcorch serve` numbers them.
	Index int `json:"index"`
	// Wave is the Plan.Waves index (from 1) the replica was started in.
	Wave int `json:"wave"`
	TP   int `json:"tp"`
	// GPUs are device indices; UUIDs the same devices for CUDA_VISIBLE_DEVICES.
	GPUs  []int    `json:"gpus"`
	UUIDs []string `json:"uuids"`
	// Utilization is the engine's --gpu-memory-utilization.
	Utilization float64 `json:"utilization"`
	// APIServers is the engine's API server processes: pass
	// --api-server-count APIServers when it is above 1.
	APIServers int `json:"api_servers"`
	// Rate is the estimated token equivalents per second on GPUs of its
	// own, image preprocessing included.
	Rate float64 `json:"rate"`
	// Throughput is its GPUs' in A800-equivalents; ImagesPerS its API
	// servers' preprocessing ceiling in 512×1644 images per second.
	Throughput float64 `json:"throughput"`
	ImagesPerS float64 `json:"images_per_s"`
}

// Effects is how the scheduler acts. Calls must not block on the outcome:
// it comes back through the Source as an Event.
type Effects interface {
	// StartReplica starts a replica for a; the outcome is EventReady or
	// EventFailed.
	StartReplica(a Assignment)
	// StopReplica stops a's replica (starting or ready) and verifies its
	// GPUs are free; the end is EventStopped.
	StopReplica(a Assignment)
	// AbandonModel says that model will never be served again (it could
	// not be placed, or its engines failed for good, for why): its
	// outstanding work must end as not run, or the work would wait for a
	// replica that never comes. No event answers it.
	AbandonModel(model, why string)
}

// EventKind says what happened.
type EventKind int

// Event kinds.
const (
	// EventReady: Replica is ready to serve.
	EventReady EventKind = iota + 1
	// EventFailed: Replica failed to start, or died for good; Err says why.
	EventFailed
	// EventStopped: Replica is stopped and its GPUs verified free.
	EventStopped
	// EventFinished: every request of Model is done.
	EventFinished
	// EventProgress: Done (0..1) of Model's work is done; corrects the
	// scheduler's estimate in real runs.
	EventProgress
	// EventSpeed: Replica was measured (Speed); Done, when above 0, is
	// its model's share of work done, as in EventProgress.
	EventSpeed
	// EventCrashed: Replica's engine was lost after it was ready, by its
	// own fault (it exited or hung; not a job the cluster took away), Err
	// says why. The backend restarts it within its own budget; the
	// scheduler counts the crashes of all the model's replicas against
	// Policy.MaxModelRestarts.
	EventCrashed
)

var kindNames = [...]string{"", "ready", "failed", "stopped", "finished", "progress", "speed", "crashed"}

// String returns the kind's name.
func (k EventKind) String() string {
	if k <= 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("event(%d)", int(k))
	}
	return kindNames[k]
}

// Event is one thing the scheduler reacts to.
type Event struct {
	Kind EventKind
	// At is the time since the campaign began.
	At      time.Duration
	Replica ReplicaID
	Model   string
	// Index is the replica's number within its model (Replica.Index),
	// for messages.
	Index int
	Err   string
	// Permanent marks an EventFailed that no other GPU set can fix: the
	// model's own configuration is wrong (a bad engine command line, a
	// missing binary, an architecture the engine does not support). The
	// model fails at once and its other replicas are stopped.
	Permanent bool
	Done      float64
	Speed     SpeedSample
}

// String describes the event in one line: "ready    Lingshu-7B/r0".
func (e Event) String() string {
	switch e.Kind {
	case EventFinished:
		return fmt.Sprintf("%-8s %s", e.Kind, e.Model)
	case EventProgress:
		return fmt.Sprintf("%-8s %s %.0f%%", e.Kind, e.Model, 100*e.Done)
	case EventFailed, EventCrashed:
		return fmt.Sprintf("%-8s %s: %s", e.Kind, ReplicaName(e.Model, e.Index), e.Err)
	case EventSpeed:
		return fmt.Sprintf("%-8s %s: %.0f tok/s over %s", e.Kind, ReplicaName(e.Model, e.Index),
			e.Speed.Work/e.Speed.Seconds, fmtDur(time.Duration(e.Speed.Seconds*float64(time.Second))))
	}
	return fmt.Sprintf("%-8s %s", e.Kind, ReplicaName(e.Model, e.Index))
}

// ReplicaName is how users see a replica: "Lingshu-7B/r0".
func ReplicaName(model string, index int) string { return fmt.Sprintf("%s/r%d", model, index) }

// Source delivers events in time order. Next blocks until one arrives or
// ctx ends.
type Source interface {
	Next(ctx context.Context) (Event, error)
}

// ChanSource is a Source over a channel, for real runs: the launcher sends
// each engine's outcome on it.
type ChanSource <-chan Event

// Next returns the next event, or ctx's error.
func (c ChanSource) Next(ctx context.Context) (Event, error) {
	select {
	case ev, ok := <-c:
		if !ok {
			return Event{}, fmt.Errorf("schedule: the event channel closed while engines were still expected to report")
		}
		return ev, nil
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// Run is the campaign's event loop: it lets s make its first decisions,
// then hands it each event from src until every model is done, failed or
// unplaceable. It returns the plan so far with any error.
func Run(ctx context.Context, s *Scheduler, src Source) (*Plan, error) {
	s.Begin()
	for !s.Done() {
		ev, err := src.Next(ctx)
		if err != nil {
			return s.Plan(), fmt.Errorf("schedule: waiting for engines at %s: %w", fmtDur(s.now), err)
		}
		if err := s.Handle(ev); err != nil {
			return s.Plan(), err
		}
	}
	return s.Plan(), nil
}
