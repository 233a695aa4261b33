package send

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// WaitReporter is a Progress that can also show what a stalled model run
// waits on, in place of an ETA that would ignore the wait (issue 12: "ETA
// 12s" during a two-minute first-token timeout).
type WaitReporter interface {
	// Waiting says what the model's run waits on; "" once answers flow
	// again.
	Waiting(model, what string)
}

// phase is where one of a run's workers is.
type phase int

const (
	phaseIdle    phase = iota // between requests
	phaseAcquire              // waiting for a replica with room
	phaseSend                 // a request in flight
	phaseBackoff              // waiting out the backoff before a retry
)

// workerState is one worker's phase, since when, and for a backoff, until
// when and after what failure.
type workerState struct {
	phase        phase
	since, until time.Time
	failure      string
}

// activity follows a model run's workers, to say what a stalled run waits
// on. The runner's workers write it; the watcher reads it.
type activity struct {
	mu      sync.Mutex
	now     func() time.Time
	workers []*workerState
	last    time.Time // the last journaled outcome, or the start
}

func newActivity(now func() time.Time) *activity {
	return &activity{now: now, last: now()}
}

// worker adds a worker and returns its state.
func (a *activity) worker() *workerState {
	a.mu.Lock()
	defer a.mu.Unlock()
	w := &workerState{since: a.now()}
	a.workers = append(a.workers, w)
	return w
}

// forget drops a worker whose request is done.
func (a *activity) forget(w *workerState) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.workers = slices.DeleteFunc(a.workers, func(x *workerState) bool { return x == w })
}

// set moves w into phase p; until and failure describe a backoff.
func (a *activity) set(w *workerState, p phase, until time.Time, failure string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	w.phase, w.since, w.until, w.failure = p, a.now(), until, failure
}

// recorded notes a journaled outcome: answers flow.
func (a *activity) recorded() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.last = a.now()
}

// waiting says what the run waits on once no outcome was journaled for
// stallAfter, or "" while outcomes come: no replica to send to, retries
// waiting out their backoff, or requests in flight with no answer.
func (a *activity) waiting(stallAfter time.Duration) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	quiet := now.Sub(a.last)
	if quiet < stallAfter {
		return ""
	}
	var acquiring, sending, backoff int
	var nextTry time.Time
	var failure string
	for _, w := range a.workers {
		switch w.phase {
		case phaseAcquire:
			acquiring++
		case phaseSend:
			sending++
		case phaseBackoff:
			backoff++
			if nextTry.IsZero() || w.until.Before(nextTry) {
				nextTry, failure = w.until, w.failure
			}
		}
	}
	round := func(d time.Duration) time.Duration { return max(d, 0).Round(time.Second) }
	switch {
	case sending > 0:
		return fmt.Sprintf("%d request(s) in flight, none answered for %v (the client's timeouts bound each)", sending, round(quiet))
	case backoff > 0:
		return fmt.Sprintf("%d request(s) waiting to retry, next in %v, after: %s", backoff, round(nextTry.Sub(now)), failure)
	case acquiring > 0:
		return fmt.Sprintf("no replica ready to take requests for %v (engines starting or restarting)", round(quiet))
	}
	return ""
}
