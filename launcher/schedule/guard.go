package schedule

import (
	"context"
	"fmt"
)

// The greedy policy overlaps models to beat running them one at a time,
// but it decides online and may lose: a plan that is slower than the
// sequential baseline, which the planner computes itself, must never be
// the one used. New therefore simulates the greedy schedule first; when it
// ends after the sequential baseline, it simulates one model at a time
// too and keeps the sooner of the two, saying so in the plan's notes.

// planMode is how the models share the node.
type planMode int

const (
	// modeChoose: simulate modeGreedy and fall back to modeSequential
	// when that ends sooner.
	modeChoose planMode = iota
	// modeGreedy: the policy of the package comment.
	modeGreedy
	// modeSequential: one model at a time, each at its best TP ×
	// replicas, a dependent model once all it needs have ended.
	modeSequential
)

// sequential reports whether the models run one at a time.
func (s *Scheduler) sequential() bool { return s.cfg.Policy.mode == modeSequential }

// choose settles modeChoose: it simulates the greedy schedule and, when
// that ends after the sequential baseline, one model at a time, and
// keeps the sooner. A simulation that fails leaves the greedy policy.
func (s *Scheduler) choose() {
	if s.cfg.Policy.mode != modeChoose {
		return
	}
	s.cfg.Policy.mode = modeGreedy
	if !s.anyPending() {
		return
	}
	greedy, err := s.simulateAs(modeGreedy)
	if err != nil || greedy.Makespan <= secs(s.bounds.Sequential) {
		return
	}
	seq, err := s.simulateAs(modeSequential)
	if err != nil || seq.Makespan >= greedy.Makespan {
		return
	}
	s.cfg.Policy.mode = modeSequential
	for _, ms := range s.models {
		if ms.status == StatusPending {
			ms.target = s.waveTarget(ms, s.bounds.LowerBound)
		}
	}
	s.notes = append(s.notes, fmt.Sprintf("models run one at a time: overlapping them would end at %s, later than the sequential baseline (%s); one at a time ends at %s",
		greedy.Makespan, secs(s.bounds.Sequential), seq.Makespan))
}

// simulateAs simulates the campaign, at the registry's speeds, under mode.
func (s *Scheduler) simulateAs(mode planMode) (*Plan, error) {
	cfg := s.cfg
	cfg.Policy.mode = mode
	return Simulate(context.Background(), cfg, SimOptions{})
}

// mayStart reports whether a waiting model may start now: in sequential
// mode, only when nothing runs and all the answers it needs are in.
func (s *Scheduler) mayStart(ms *modelState) bool {
	return !s.sequential() || s.liveCount() == 0 && s.fluid.floor[ms.m.Name] <= 0
}
