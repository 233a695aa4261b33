package live

import (
	"time"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/journal"
)

// Begin is the campaign as it starts: its models and tasks, what each
// model is asked, and the answers its journal already holds.
type Begin struct {
	// Started is the campaign's time zero, as the scheduler counts it.
	Started time.Time
	// Tasks are the campaign's tasks in the registry's order.
	Tasks []TaskInfo
	// Models are the campaign's models in its order.
	Models []ModelInfo
	// Prior are the journal's records before this run (a resumed run):
	// their answers are done; their not-run requests are sent again.
	Prior []journal.Record
	// GPUs are the node's GPU indices; GPUNote says why they are not
	// sampled, when they are not.
	GPUs    []int
	GPUNote string
	// Grade grades the answered records; nil leaves them ungraded.
	Grade Grader
}

// TaskInfo names a task.
type TaskInfo struct {
	Key, Title, Level string
}

// ModelInfo is what a model is asked.
type ModelInfo struct {
	Name     string
	External bool
	// Work is the model's work by task: requests and the planned token
	// equivalents (schedule.Workload), in task order.
	Work []schedule.Workload
}

// Journaled is a request this run journaled.
type Journaled struct{ Record journal.Record }

// Assigned is a replica the scheduler started on GPUs.
type Assigned struct {
	Model   string
	Replica int
	TP      int
	GPUs    []int
	At      time.Time
}

// EngineEvent is an engine replica's lifecycle event.
type EngineEvent struct{ launcher.ReplicaEvent }

// ModelEnded is a model's runner that ended, or a model the scheduler
// abandoned (Abandoned says why).
type ModelEnded struct {
	Model     string
	Abandoned string
	Err       error
}

// Sampled is a GPU sample of the campaign's sampler.
type Sampled struct{ gpu.Sample }

// Planned is the plan the scheduler makes at the start, simulated.
type Planned struct{ Plan *schedule.Plan }

// Ended is the run's end.
type Ended struct {
	State RunState
	Err   error
}
