package launcher

import (
	"context"
	"errors"
	"net/http"
)

// ErrRemoteRejected is wrapped by ProbeRemote's error when the engine
// answered in a way no retry on that port can fix: it serves another
// model, ignores or rejects our API key, or refuses the warm-up chat.
var ErrRemoteRejected = errors.New("engine rejected")

// ErrForeignListener is wrapped too when what answered is not our engine
// (our key refused or not needed, another model served): another server
// holds the port, and the engine may do better on another one.
var ErrForeignListener = errors.New("another server listens on the engine's port")

// ProbeRemote proves that an engine npcorch launched somewhere it cannot
// watch as a child (a Slurm job on another node) is ready, by the same
// rules as a local engine: /health answers 200, /v1/models rejects a wrong
// API key and lists inv.ServedName under ours, and a one-token warm-up chat
// is answered. It polls every t.ProbeInterval until then and returns nil;
// each new stage reached ("listening", "healthy", "listed") goes to
// progress, which may be nil. It returns ctx's error when ctx ends first,
// and an error wrapping ErrRemoteRejected on a fatal answer. Deadlines are
// the caller's: it knows whether the job behind the engine still runs.
func ProbeRemote(ctx context.Context, client *http.Client, inv Invocation, t Timing, progress func(stage string)) error {
	t = t.WithDefaults()
	if client == nil {
		client = EngineClient()
	}
	p := &prober{client: client, inv: inv, timeout: t.ProbeTimeout, warmUp: t.WarmUpTimeout, interval: t.ProbeInterval,
		warmRetry: t.WarmUpRetry, warmFailures: t.WarmUpFailures}
	result := make(chan error, 1)
	last := stageDown
	go p.run(ctx, nil, func(rep probeReport) {
		switch {
		case rep.err != nil:
			result <- rep.err
		case rep.stage == stageReady:
			result <- nil
		case progress != nil && rep.stage > last:
			last = rep.stage
			progress(rep.stage.String())
		}
	})
	select {
	case err := <-result:
		var fatal *fatalProbe
		if errors.As(err, &fatal) {
			return &remoteError{fatal}
		}
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// remoteError is a fatal probe answer that wraps ErrRemoteRejected, and
// ErrForeignListener when a foreign server answered.
type remoteError struct{ *fatalProbe }

func (e *remoteError) Unwrap() []error {
	if e.kind == FailureForeign {
		return []error{ErrRemoteRejected, ErrForeignListener}
	}
	return []error{ErrRemoteRejected}
}
