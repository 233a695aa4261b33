package schedule

import (
	"time"

	"github.com/npcorch/npcorch/launcher/placement"
)

// A model whose replica count the campaign pins (engine.replicas) never
// scales out: the TP size of its one wave fixes its pace for its whole
// run. Its wave is therefore sized for the campaign, not like the others'
// (half the bound at an efficient placement, grown later): among its
// GPU counts, the one that minimises the campaign's estimated makespan,
// max(its own duration, (the others' GPU-time + its GPUs × its duration)
// / GPU count). It waits for that many GPUs rather than start smaller,
// and it comes before the unpinned models, which fit around it and grow
// later.

// pinned reports whether the campaign pins ms's replica count.
func (ms *modelState) pinned() bool { return ms.m.Engine.Replicas > 0 }

// pinnedSize returns the GPU count of ms's wave: the one whose estimated
// campaign makespan is least (fewer GPUs on ties).
func (s *Scheduler) pinnedSize(ms *modelState) int {
	others := (s.campaignGPUTime() - ms.gpuTime).Seconds() // float: durations near the cap must not overflow
	size, best := 0, 0.0
	for _, p := range ms.opts {
		d := seconds(ms.work, s.rateOf(ms, p)).Seconds()
		est := max(d, (others+d*float64(p.GPUCount()))/float64(len(s.gpus)))
		if size == 0 || est < best || est == best && p.GPUCount() < size {
			size, best = p.GPUCount(), est
		}
	}
	return max(size, 1)
}

// campaignGPUTime is every placeable model's GPU-time at its most
// efficient placement, at the speeds the plan uses now.
func (s *Scheduler) campaignGPUTime() time.Duration {
	var total time.Duration
	for _, ms := range s.models {
		if ms.effRate > 0 {
			total = addSat(total, ms.gpuTime)
		}
	}
	return total
}

// pickWave returns the placement of ms's next wave among res's options.
func (s *Scheduler) pickWave(ms *modelState, res placement.Result, idle bool) (placement.Placement, bool) {
	if ms.pinned() {
		return s.pickPinned(ms, res, idle)
	}
	return s.pick(ms, res, ms.target, idle)
}

// pickPinned returns the highest-rate option of exactly ms's wave size;
// on an otherwise idle node, the highest-rate option that fits at all.
func (s *Scheduler) pickPinned(ms *modelState, res placement.Result, idle bool) (placement.Placement, bool) {
	p, _, ok := s.ranked(ms, res.Options, func(p placement.Placement, _ float64) bool { return p.GPUCount() == ms.target })
	if ok || !idle {
		return p, ok
	}
	return s.pick(ms, res, len(s.gpus), true)
}

// byPriority orders models pinned first, then longest first by GPU-time,
// then by name.
func byPriority(a, b *modelState) int {
	if a.pinned() != b.pinned() {
		if a.pinned() {
			return -1
		}
		return 1
	}
	return byGPUTime(a, b)
}
