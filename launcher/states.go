package launcher

import "fmt"

// State is where a replica is in its lifecycle.
type State int

// Replica states.
const (
	StateNew        State = iota // created, not started
	StateStarting                // launched, not yet proven ready
	StateReady                   // serving
	StateRestarting              // crashed or stalled: cleaning up, then waiting out the backoff
	StateStopping                // stop requested, group being torn down
	StateStopped                 // stopped and verified (terminal)
	StateFailed                  // start failed or restarts exhausted; processes gone
)

// String names the state.
func (s State) String() string {
	return [...]string{"new", "starting", "ready", "restarting", "stopping", "stopped", "failed"}[s]
}

// transition is one state change a replica may make, and what makes it.
type transition struct {
	from, to State
	cause    string
}

// lifecycle is every state change a replica makes: the handlers move a
// replica only along these rows (moveTo), and a test walks them.
var lifecycle = []transition{
	{StateNew, StateStarting, "Start launches the engine"},
	{StateNew, StateStopping, "Stop before any start"},
	{StateStarting, StateReady, "the readiness checks pass"},
	{StateStarting, StateFailed, "the first start fails: the engine exits, a deadline passes, or it cannot be launched"},
	{StateStarting, StateRestarting, "a restart's start fails, or a foreign server shares the port: back off, or move to another port"},
	{StateStarting, StateStopping, "Stop during the start"},
	{StateReady, StateRestarting, "the engine exits, stalls or stops answering /health while serving"},
	{StateReady, StateStopping, "Stop"},
	{StateRestarting, StateStarting, "the backoff ends: launch again"},
	{StateRestarting, StateFailed, "restarts are spent, the failure is the configuration's, or the old process group could not be removed"},
	{StateRestarting, StateStopping, "Stop during the backoff or the teardown"},
	{StateFailed, StateStopping, "Stop after a failure"},
	{StateStopping, StateStopped, "the teardown is verified"},
}

// canMove reports whether the lifecycle has a row from → to.
func canMove(from, to State) bool {
	for _, t := range lifecycle {
		if t.from == from && t.to == to {
			return true
		}
	}
	return false
}

// moveTo changes the replica's state. A change the lifecycle lacks is a
// bug in npcorch: it is noted in the replica's log (and told to the
// tests' observer), and made all the same, so that a replica is never
// wedged in a state it has left.
func (r *Replica) moveTo(to State) {
	from := r.state
	if from == to {
		return
	}
	if !canMove(from, to) && r.log != nil {
		r.log.note(fmt.Sprintf("npcorch bug: the state change %s → %s is not in the replica lifecycle", from, to))
	}
	if r.cfg.onMove != nil {
		r.cfg.onMove(from, to)
	}
	r.state = to
}
