package launcher

import (
	"errors"
	"fmt"
	"testing"
)

// TestReclaimedKeepsTheMessageAndIsFoundThroughWrapping: a lost Slurm job
// the cluster took away is marked Reclaimed so the campaign does not count
// it against the model's restarts; the mark survives wrapping and changes
// nothing in what users read.
func TestReclaimedKeepsTheMessageAndIsFoundThroughWrapping(t *testing.T) {
	cause := errors.New("Slurm job 12 of M/r0 ended PREEMPTED")
	r := Reclaimed(cause)
	if r.Error() != cause.Error() {
		t.Errorf("message %q, want %q", r.Error(), cause.Error())
	}
	wrapped := fmt.Errorf("engine lost: %w", r)
	if !IsReclaimed(r) || !IsReclaimed(wrapped) || !errors.Is(wrapped, cause) {
		t.Errorf("IsReclaimed(%v) = %v, wrapped %v; errors.Is(cause) = %v", r, IsReclaimed(r), IsReclaimed(wrapped), errors.Is(wrapped, cause))
	}
	if IsReclaimed(cause) || IsReclaimed(nil) || IsReclaimed(&EngineError{Kind: FailureExited}) {
		t.Error("an engine's own failure counts as reclaimed")
	}
}
