package simengine

import (
	"context"
	"sync"
	"time"
)

// scheduler admits requests the way vLLM's scheduler does, in first-come
// order: at most maxSeqs run at once, and a request runs only when its
// prompt fits in the KV cache beside the running ones (or nothing runs). The
// rest wait. It keeps the running, waiting and KV usage gauges current,
// and integrates its occupancy over time (occupancy).
type scheduler struct {
	mu       sync.Mutex
	maxSeqs  int
	capacity int // KV cache tokens
	running  int
	kvUsed   int
	queue    []*seat
	m        *metrics
	now      func() time.Time
	occ      occupancy
}

// occupancy is how the engine's slots were used since it started, in
// seconds of its own clock, integrated at each change of its state: what
// its npcorch_sim:* series report, so that a client's effect on the
// engine can be measured from the engine itself rather than sampled.
type occupancy struct {
	since time.Time // the last change
	// Slot is the integral of the running requests: busy slot-seconds.
	Slot float64
	// Full is the time the engine was full: every slot running, or
	// requests waiting.
	Full float64
	// Serving is the time anything ran or waited.
	Serving float64
}

// seat is one request's place in the scheduler.
type seat struct {
	s        *scheduler
	tokens   int // KV tokens held while running
	admitted chan struct{}
	running  bool
}

func newScheduler(maxSeqs, capacity int, m *metrics, now func() time.Time) *scheduler {
	return &scheduler{maxSeqs: maxSeqs, capacity: capacity, m: m, now: now, occ: occupancy{since: now()}}
}

// advanceLocked integrates the state that held since the last change; it
// runs before every change.
func (s *scheduler) advanceLocked() {
	t := s.now()
	dt := t.Sub(s.occ.since).Seconds()
	s.occ.since = t
	if dt <= 0 {
		return
	}
	s.occ.Slot += dt * float64(s.running)
	if s.running >= s.maxSeqs || len(s.queue) > 0 {
		s.occ.Full += dt
	}
	if s.running > 0 || len(s.queue) > 0 {
		s.occ.Serving += dt
	}
}

// occupancy returns the integrals up to now.
func (s *scheduler) occupancy() occupancy {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	return s.occ
}

// acquire queues a request with a prompt of promptTokens and returns its
// seat once it runs; ctx ends the wait (the request is then forgotten).
func (s *scheduler) acquire(ctx context.Context, promptTokens int) (*seat, error) {
	st := s.enqueue(promptTokens)
	select {
	case <-st.admitted:
		return st, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	if st.running { // admitted while ctx ended: give the place back
		s.releaseLocked(st)
		return nil, ctx.Err()
	}
	for i, q := range s.queue {
		if q == st {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			break
		}
	}
	s.gaugesLocked()
	return nil, ctx.Err()
}

// enqueue puts a request at the back of the queue and admits what fits;
// the seat's admitted channel closes when it runs.
func (s *scheduler) enqueue(promptTokens int) *seat {
	st := &seat{s: s, tokens: promptTokens, admitted: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	s.queue = append(s.queue, st)
	s.admitLocked()
	return st
}

// grow records n more tokens (generated output) in the seat's KV cache.
func (st *seat) grow(n int) {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	st.tokens += n
	st.s.kvUsed += n
	st.s.gaugesLocked()
}

// release ends the request and admits waiting ones.
func (st *seat) release() {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	st.s.advanceLocked()
	st.s.releaseLocked(st)
}

func (s *scheduler) releaseLocked(st *seat) {
	if !st.running {
		return
	}
	st.running = false
	s.running--
	s.kvUsed -= st.tokens
	s.admitLocked()
}

// admitLocked starts queued requests, head first, while they fit.
func (s *scheduler) admitLocked() {
	for len(s.queue) > 0 {
		head := s.queue[0]
		if s.running >= s.maxSeqs || (s.running > 0 && s.kvUsed+head.tokens > s.capacity) {
			break
		}
		s.queue = s.queue[1:]
		head.running = true
		s.running++
		s.kvUsed += head.tokens
		close(head.admitted)
	}
	s.gaugesLocked()
}

func (s *scheduler) gaugesLocked() {
	if s.m == nil {
		return
	}
	s.m.running.Set(float64(s.running))
	s.m.waiting.Set(float64(len(s.queue)))
	s.m.kvUsage.Set(min(1, float64(s.kvUsed)/float64(s.capacity)))
}
