package simengine

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// off marks a request-count fault that is not armed.
const off = -1

// startFaults are the faults chosen with --sim-fault.
type startFaults struct {
	exitDuringLoad bool // exit 1 with a CUDA OOM traceback before listening
	neverReady     bool // listen, but /health answers 503 forever
	// Request-count faults: armed when >= 0, they fire once that many
	// requests have completed.
	crashAfter       int // SIGKILL the engine itself
	hangAfter        int // streams stop mid-answer and never finish
	unavailableAfter int // every request (and /health) answers 503
	streamErrorAfter int // an error object inside a 200 stream
}

// parseStartFaults parses the --sim-fault values (already split on commas).
func parseStartFaults(list []string) (startFaults, error) {
	f := startFaults{crashAfter: off, hangAfter: off, unavailableAfter: off, streamErrorAfter: off}
	for _, s := range list {
		s = strings.TrimSpace(s)
		name, arg, hasArg := strings.Cut(s, "=")
		var n int
		if hasArg {
			v, err := strconv.Atoi(arg)
			if err != nil || v < 0 {
				return f, fmt.Errorf("%q: N must be a non-negative integer", s)
			}
			n = v
		}
		var slot *int
		switch name {
		case "exit-during-load":
			f.exitDuringLoad = true
		case "never-ready":
			f.neverReady = true
		case "crash-after":
			slot = &f.crashAfter
		case "hang-after":
			slot = &f.hangAfter
		case "503-after":
			slot = &f.unavailableAfter
		case "stream-error-after":
			slot = &f.streamErrorAfter
		default:
			return f, fmt.Errorf("unknown fault %q (choose from exit-during-load, never-ready, crash-after=N, hang-after=N, 503-after=N, stream-error-after=N)", s)
		}
		if (slot != nil) != hasArg {
			if hasArg {
				return f, fmt.Errorf("%q: %s takes no =N", s, name)
			}
			return f, fmt.Errorf("%q: %s needs =N", s, name)
		}
		if slot != nil {
			*slot = n
		}
	}
	return f, nil
}

// faultMode is the fault a new request meets.
type faultMode int

const (
	faultNone        faultMode = iota
	faultHang                  // stop streaming mid-answer, never finish
	faultStreamError           // error object inside a 200 stream
	faultUnavailable           // 503 on /v1/* and /health
)

// runtimeFaults maps the names POST /sim/fault accepts to modes.
var runtimeFaults = map[string]faultMode{
	"none": faultNone, "hang": faultHang, "stream-error": faultStreamError, "503": faultUnavailable,
}

// faultState counts completed requests and decides which fault a request
// meets. It is safe for concurrent use.
type faultState struct {
	mu        sync.Mutex
	start     startFaults
	runtime   faultMode
	completed int
}

func newFaultState(f startFaults) *faultState { return &faultState{start: f} }

// mode returns the fault a request starting now meets.
func (s *faultState) mode() faultMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runtime != faultNone {
		return s.runtime
	}
	fired := func(n int) bool { return n != off && s.completed >= n }
	switch {
	case fired(s.start.unavailableAfter):
		return faultUnavailable
	case fired(s.start.hangAfter):
		return faultHang
	case fired(s.start.streamErrorAfter):
		return faultStreamError
	}
	return faultNone
}

// inFlight returns the fault switched on at run time that also reaches the
// answers already streaming: a stuck engine (hang) stops every answer in
// flight, and a dead engine core (503) ends each with an error, as vLLM's
// EngineDeadError does, not only the requests that arrive after.
func (s *faultState) inFlight() faultMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runtime == faultHang || s.runtime == faultUnavailable {
		return s.runtime
	}
	return faultNone
}

// complete records one successfully completed request and reports whether
// the engine must now crash.
func (s *faultState) complete() (crash bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.completed++
	return s.start.crashAfter != off && s.completed >= s.start.crashAfter
}

// crashNow reports whether crash-after=0 asks for a crash as soon as ready.
func (s *faultState) crashNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.start.crashAfter != off && s.completed >= s.start.crashAfter
}

// set switches the runtime fault; "none" also disarms the command-line
// request-count faults.
func (s *faultState) set(m faultMode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runtime = m
	if m == faultNone {
		s.start.crashAfter, s.start.hangAfter = off, off
		s.start.unavailableAfter, s.start.streamErrorAfter = off, off
	}
}

// completedCount returns how many requests have completed.
func (s *faultState) completedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed
}
