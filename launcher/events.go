package launcher

import (
	"fmt"
	"sync"
	"time"
)

// ReplicaEventKind names a replica lifecycle event.
type ReplicaEventKind string

// Replica event kinds, in the order a replica's life may show them.
const (
	ReplicaStarting   ReplicaEventKind = "starting"   // process launched (or external probed); Endpoint has the port
	ReplicaStartUp    ReplicaEventKind = "start-up"   // a start reached a new readiness Stage, Delay after launch
	ReplicaLoading    ReplicaEventKind = "loading"    // a start is still not ready, Delay after launch; Stage says what it waits for
	ReplicaReady      ReplicaEventKind = "ready"      // proven ready; Endpoint is usable
	ReplicaCrashed    ReplicaEventKind = "crashed"    // lost after ready (exit or stall); Err says why; the endpoint is down
	ReplicaRestarting ReplicaEventKind = "restarting" // a restart is scheduled after Delay; Attempt counts from 1 (a move off a shared port keeps it)
	ReplicaFailed     ReplicaEventKind = "failed"     // start failed or restarts exhausted; Err says why
	ReplicaStopped    ReplicaEventKind = "stopped"    // stopped; Err is a verification failure, if any
)

// ReplicaEvent is one change in a replica's life (the scheduler's own
// events are schedule.Event).
type ReplicaEvent struct {
	Time     time.Time
	Kind     ReplicaEventKind
	Model    string
	Replica  int
	Endpoint Endpoint
	Attempt  int
	// Delay is the backoff before a restart (EventRestarting), or the time
	// since launch (EventProgress).
	Delay time.Duration
	// Stage is what a start reached (EventProgress): "port open",
	// "/health answers 200", ...
	Stage string
	Err   error
	Log   string
}

// String is a one-line description without secrets.
func (e ReplicaEvent) String() string {
	s := fmt.Sprintf("%s %s/r%d %s", e.Time.Format("15:04:05.000"), e.Model, e.Replica, e.Kind)
	switch e.Kind {
	case ReplicaStarting:
		if e.Endpoint.Port != 0 {
			s += fmt.Sprintf(" port=%d pgid=%d", e.Endpoint.Port, e.Endpoint.PGID)
		}
	case ReplicaStartUp:
		s += fmt.Sprintf(": %s (%v after launch)", e.Stage, e.Delay.Round(time.Millisecond))
	case ReplicaLoading:
		s += fmt.Sprintf(" %v after launch: %s", e.Delay.Round(time.Second), e.Stage)
	case ReplicaReady:
		s += " " + e.Endpoint.BaseURL
	case ReplicaRestarting:
		s += fmt.Sprintf(" attempt=%d in %v", e.Attempt, e.Delay)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Subscription receives events in order, without ever blocking the
// replicas: a slow reader's events queue up in memory.
type Subscription struct {
	C <-chan ReplicaEvent

	bus   *Bus
	c     chan ReplicaEvent
	mu    sync.Mutex
	queue []ReplicaEvent
	kick  chan struct{}
	stop  chan struct{}
	once  sync.Once
}

// Close ends the subscription; C is closed.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.bus.remove(s)
		close(s.stop)
	})
}

func (s *Subscription) push(e ReplicaEvent) {
	s.mu.Lock()
	s.queue = append(s.queue, e)
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// forward moves queued events to C in order.
func (s *Subscription) forward() {
	defer close(s.c)
	for {
		s.mu.Lock()
		q := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, e := range q {
			select {
			case s.c <- e:
			case <-s.stop:
				return
			}
		}
		select {
		case <-s.kick:
		case <-s.stop:
			return
		}
	}
}

// Bus fans events out to subscriptions, in order, without ever blocking
// the publisher. Its zero value is ready to use; the Supervisor has one,
// and other backends (Slurm) can publish through one.
type Bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

// Subscribe returns a subscription to every event published from now on;
// Close it when done.
func (b *Bus) Subscribe() *Subscription {
	c := make(chan ReplicaEvent)
	s := &Subscription{C: c, c: c, bus: b, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[*Subscription]struct{}{}
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	go s.forward()
	return s
}

func (b *Bus) remove(s *Subscription) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
}

// Publish hands e to every subscription.
func (b *Bus) Publish(e ReplicaEvent) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.push(e)
	}
}
