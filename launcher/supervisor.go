package launcher

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Supervisor runs replicas, hands out their endpoints and broadcasts
// their events. The campaign runner uses it as the one owner of engines.
type Supervisor struct {
	cfg Config
	bus Bus

	mu       sync.Mutex
	replicas map[string]*Replica // by ReplicaSpec.name
}

// NewSupervisor returns a supervisor with cfg's zero fields defaulted.
func NewSupervisor(cfg Config) *Supervisor {
	return &Supervisor{cfg: cfg.withDefaults(), replicas: map[string]*Replica{}}
}

// Timing returns the delays in force (defaults applied).
func (s *Supervisor) Timing() Timing { return s.cfg.Timing }

// Subscribe returns a subscription to every replica's events; Close it
// when done.
func (s *Supervisor) Subscribe() *Subscription { return s.bus.Subscribe() }

// Add registers a replica without starting it.
func (s *Supervisor) Add(spec ReplicaSpec) (*Replica, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.replicas[spec.name()]; dup {
		return nil, fmt.Errorf("replica %s already exists; stop it first or use another replica number", spec.name())
	}
	r := newReplica(spec, s.cfg, s.bus.Publish)
	s.replicas[spec.name()] = r
	return r, nil
}

// Start adds and starts replicas and waits until each is ready or has
// failed. Replicas on disjoint GPUs start in parallel; one that shares a
// GPU with an earlier spec waits for that one's start to end (two engines
// profiling one GPU at once miscount its memory). It returns the ready
// endpoints in spec order and every failure joined.
func (s *Supervisor) Start(ctx context.Context, specs ...ReplicaSpec) ([]Endpoint, error) {
	reps := make([]*Replica, len(specs))
	for i, sp := range specs {
		r, err := s.Add(sp)
		if err != nil {
			for _, prev := range reps[:i] {
				s.forget(prev)
			}
			return nil, err
		}
		reps[i] = r
	}
	eps := make([]Endpoint, len(specs))
	errs := make([]error, len(specs))
	done := make([]chan struct{}, len(specs))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var wg sync.WaitGroup
	for i := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(done[i])
			for j := range i {
				if sharesGPU(specs[i].GPUs, specs[j].GPUs) {
					select {
					case <-done[j]:
					case <-ctx.Done():
						errs[i] = ctx.Err()
						return
					}
				}
			}
			eps[i], errs[i] = reps[i].Start(ctx)
		}()
	}
	wg.Wait()
	var ready []Endpoint
	for i, err := range errs {
		if err == nil {
			ready = append(ready, eps[i])
		}
	}
	return ready, errors.Join(errs...)
}

func sharesGPU(a, b []string) bool {
	for _, g := range a {
		if slices.Contains(b, g) {
			return true
		}
	}
	return false
}

// Replicas returns the replicas of model, or all when model is empty, in
// name order.
func (s *Supervisor) Replicas(model string) []*Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Replica
	for _, r := range s.replicas {
		if model == "" || r.spec.Model.Name == model {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *Replica) int {
		if c := cmp.Compare(a.spec.Model.Name, b.spec.Model.Name); c != 0 {
			return c
		}
		return a.spec.Replica - b.spec.Replica
	})
	return out
}

// Endpoints returns the endpoints of model's replicas that are ready now
// (all models when model is empty).
func (s *Supervisor) Endpoints(model string) []Endpoint {
	var out []Endpoint
	for _, r := range s.Replicas(model) {
		if st := r.Status(); st.State == StateReady {
			out = append(out, st.Endpoint)
		}
	}
	return out
}

// Stop stops model's replicas in parallel, verified, and forgets them.
func (s *Supervisor) Stop(ctx context.Context, model string) error {
	return s.stop(ctx, s.Replicas(model))
}

// StopReplica stops one replica of model, verified, and forgets it. A
// replica the supervisor does not hold (never added, or already stopped
// and forgotten) is stopped: nil.
func (s *Supervisor) StopReplica(ctx context.Context, model string, replica int) error {
	s.mu.Lock()
	r := s.replicas[replicaName(model, replica)]
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	return s.stop(ctx, []*Replica{r})
}

// StopAll stops every replica in parallel, verified; npcorch calls it on
// SIGINT/SIGTERM before exiting.
func (s *Supervisor) StopAll(ctx context.Context) error {
	return s.stop(ctx, s.Replicas(""))
}

func (s *Supervisor) stop(ctx context.Context, reps []*Replica) error {
	errs := make([]error, len(reps))
	var wg sync.WaitGroup
	for i, r := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.Stop(ctx)
			if errs[i] == nil {
				s.forget(r)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (s *Supervisor) forget(r *Replica) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replicas[r.spec.name()] == r {
		delete(s.replicas, r.spec.name())
	}
}
