package schedule

import (
	"maps"
	"slices"

	"github.com/npcorch/npcorch/launcher/placement"
)

// taskLoad is one task's part of a model's work: token equivalents, and
// images in 512×1644 equivalents.
type taskLoad struct {
	task   string
	work   float64
	images float64
}

// mix is a model's work split by task. The runner sends one task after the
// other, so each task runs at the slower of its two limits.
type mix []taskLoad

// newMix groups a model's workloads by task (a workload without a task is
// a part of its own), in task-key order so the estimate is deterministic.
func newMix(e Estimator, parts []Workload) mix {
	byTask := map[string]Workload{}
	var untasked []Workload
	for _, w := range parts {
		if w.Task == "" {
			untasked = append(untasked, w)
			continue
		}
		byTask[w.Task] = byTask[w.Task].Add(w)
	}
	var x mix
	for _, task := range slices.Sorted(maps.Keys(byTask)) {
		w := byTask[task]
		x = append(x, taskLoad{task: task, work: e.Work(w), images: w.PlaneGroups()})
	}
	for _, w := range untasked {
		x = append(x, taskLoad{work: e.Work(w), images: w.PlaneGroups()})
	}
	return x
}

// rate returns the token equivalents per second of one replica over the
// whole mix, when its GPUs alone would do gpu token equivalents per second
// and its API servers preprocess images 512×1644 images per second: the
// work divided by Σ over tasks of max(work / gpu, images / images-rate).
// An images rate of 0 means no ceiling.
func (x mix) rate(gpu, images float64) float64 {
	if gpu <= 0 {
		return 0
	}
	var work, secs float64
	for _, t := range x {
		work += t.work
		s := t.work / gpu
		if images > 0 {
			s = max(s, t.images/images)
		}
		secs += s
	}
	if secs <= 0 {
		return gpu
	}
	return work / secs
}

// rateOf returns placement p's estimated token equivalents per second for
// ms: each replica at the slower of its GPUs and its image preprocessing.
func (s *Scheduler) rateOf(ms *modelState, p placement.Placement) float64 {
	sum := 0.0
	for _, g := range p.Groups {
		sum += s.groupRate(ms, g.Throughput, p.ImagesPerS)
	}
	return sum
}

// groupRate is one replica's rate: throughput in A800-equivalents, images
// its preprocessing ceiling in 512×1644 images per second.
func (s *Scheduler) groupRate(ms *modelState, throughput, images float64) float64 {
	if s.cfg.Estimator.NoPreprocessCeiling {
		images = 0
	}
	return ms.mix.rate(throughput*ms.speed, images)
}

// ranked returns, among opts, the placement of highest rate for ms that
// ok accepts (fewer GPUs on ties, then the order of opts).
func (s *Scheduler) ranked(ms *modelState, opts []placement.Placement, ok func(p placement.Placement, rate float64) bool) (placement.Placement, float64, bool) {
	return highest(opts, func(p placement.Placement) float64 { return s.rateOf(ms, p) }, ok)
}

// mostEfficient returns the placement with the highest rate per GPU (the
// smallest one on ties) and that rate per GPU.
func (s *Scheduler) mostEfficient(ms *modelState, opts []placement.Placement) (placement.Placement, float64, bool) {
	perGPU := func(p placement.Placement) float64 { return s.rateOf(ms, p) / float64(max(p.GPUCount(), 1)) }
	return highest(opts, perGPU, anyOption)
}

// anyOption accepts every placement.
func anyOption(placement.Placement, float64) bool { return true }

// highest returns, among opts that ok accepts, the placement of highest
// score and that score: a score within a billionth of the best counts as
// a tie, won by fewer GPUs, then by the order of opts.
func highest(opts []placement.Placement, score func(placement.Placement) float64, ok func(placement.Placement, float64) bool) (placement.Placement, float64, bool) {
	var best placement.Placement
	var bestScore float64
	found := false
	for _, p := range opts {
		v := score(p)
		if !ok(p, v) {
			continue
		}
		if !found || v > bestScore*(1+1e-9) || (v >= bestScore*(1-1e-9) && p.GPUCount() < best.GPUCount()) {
			best, bestScore, found = p, v, true
		}
	}
	return best, bestScore, found
}
