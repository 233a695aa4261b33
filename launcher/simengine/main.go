package simengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/launcher/simscript"
)

// Main runs the simulated engine, as `npcorch sim-engine` does:
//
//	[serve] MODEL --host H --port P [vLLM flags] [--sim-* flags]
//
// It returns when ctx ends (SIGINT/SIGTERM in the npcorch binary) after a
// graceful shutdown, or at once on an error. Argument errors are written to
// stderr the way vLLM's argparse writes them and come back as an *ExitError
// with Code 2; start-up failures (port taken, exit-during-load) as an
// *ExitError with Code 1, after their traceback has gone to stderr. Use
// ExitCode to turn the error into the process's exit status.
//
// The first argument "worker" runs a worker child instead (the engine starts
// those itself by re-executing its own binary; see SelfEnv).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "worker" {
		return runWorker(ctx, args[1:], stdout, stderr)
	}
	o, err := parseOptions(args, os.Getenv)
	if errors.Is(err, pflag.ErrHelp) {
		_, _ = io.WriteString(stdout, helpText())
		return nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s\nvllm serve: error: %v\n", usageLine, err)
		return &ExitError{Code: 2, Err: fmt.Errorf("sim-engine: %w", err)}
	}
	var key *simkey.Key
	if o.KeyFile != "" {
		if key, err = simkey.Load(o.KeyFile); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return &ExitError{Code: 1, Err: err}
		}
	}
	var script *simscript.File
	if o.ScriptFile != "" {
		if script, err = simscript.Load(o.ScriptFile); err != nil {
			fmt.Fprintf(stderr, "ERROR: %v\n", err)
			return &ExitError{Code: 1, Err: err}
		}
	}
	self, err := selfCommand(os.Getenv)
	if err != nil && o.Workers > 0 {
		fmt.Fprintf(stderr, "ERROR: %v\n", err)
		return &ExitError{Code: 1, Err: err}
	}
	pid := os.Getpid()
	e := &engine{
		o:       o,
		key:     key,
		script:  script,
		clock:   realClock{},
		faults:  newFaultState(o.Faults),
		prefix:  &prefixCache{},
		digests: &digests{},
		pid:     pid,
		self:    self,
		die:     func() { _ = syscall.Kill(pid, syscall.SIGKILL) },
	}
	if o.AllowedMedia != "" {
		e.allowedRoot = resolveDir(o.AllowedMedia)
	}
	e.log = &logger{stdout: stdout, stderr: stderr, now: e.clock.Now, pid: pid}
	e.m = newMetrics(o.ServedName)
	e.sched = newScheduler(o.MaxNumSeqs, o.KVTokens, e.m, e.clock.Now)
	e.m.watchOccupancy(e.sched, o.ServedName)
	return e.run(ctx)
}

// ExitError asks for a particular process exit status. Main has already
// written its message to stderr, so callers should exit without printing it
// again.
type ExitError struct {
	// Code is the exit status: 2 for argument errors (as argparse), 1 for
	// start-up failures.
	Code int
	// Err says what failed.
	Err error
}

// Error returns the underlying error's message.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the exit status for an error Main returned: 0 for nil, Code
// for an *ExitError, 1 otherwise.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}
