package launcher

import "errors"

// Reclaimed marks err as the loss of an engine that was no fault of its
// own: the cluster took its resources away (a Slurm job preempted,
// cancelled by an administrator, past its time limit, or on a node that
// failed). The backend still restarts the engine; the campaign does not
// count the loss against the model's restarts (launch.max_model_restarts).
// The message stays err's.
func Reclaimed(err error) error { return reclaimedError{err} }

type reclaimedError struct{ error }

func (e reclaimedError) Unwrap() error { return e.error }

// IsReclaimed reports whether err, or an error it wraps, came from
// Reclaimed.
func IsReclaimed(err error) bool {
	var r reclaimedError
	return errors.As(err, &r)
}
