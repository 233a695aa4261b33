package schedule

import (
	"math"
	"time"

	"github.com/npcorch/npcorch/launcher/placement"
)

// Policy tunes the scheduling decisions; its zero value uses the defaults
// documented in the package comment.
type Policy struct {
	// TargetShare sizes a model's first wave: the fewest GPUs that finish it
	// within TargetShare × the lower bound (0 = 0.5).
	TargetShare float64
	// MinEfficiency rejects placements below this share of the model's best
	// per-GPU throughput, unless the node is otherwise idle (0 = 0.8).
	MinEfficiency float64
	// MaxStartFailures is how many failed starts a model gets (0 =
	// DefaultMaxStartFailures).
	MaxStartFailures int
	// MaxModelRestarts is how many crashes (EventCrashed) a model's
	// engines, all its replicas together, may have; the next abandons the
	// model (0 = DefaultMaxModelRestarts).
	MaxModelRestarts int
	// NoScaleOut disables adding replicas to running models.
	NoScaleOut bool
	// MaxAPIServers caps each engine's API server processes, which
	// placement sizes from the node's CPU cores (0 =
	// placement.DefaultMaxAPIServers; 1 = one, vLLM's default, no
	// --api-server-count).
	MaxAPIServers int
	// Replan tunes re-planning on measured speeds.
	Replan ReplanPolicy

	// mode is how the models share the node (guard.go); the zero value
	// lets New choose.
	mode planMode
}

func (p Policy) targetShare() float64   { return orDefault(p.TargetShare, 0.5) }
func (p Policy) minEfficiency() float64 { return orDefault(p.MinEfficiency, 0.8) }

// DefaultMaxStartFailures is how many engine failures a model gets when
// Policy.MaxStartFailures is 0.
const DefaultMaxStartFailures = 3

func (p Policy) maxStartFailures() int {
	if p.MaxStartFailures > 0 {
		return p.MaxStartFailures
	}
	return DefaultMaxStartFailures
}

// DefaultMaxModelRestarts is how many crashes of its engines, all its
// replicas together, a model gets when Policy.MaxModelRestarts is 0: as
// many as one engine's restarts (launcher.DefaultTiming.MaxRestarts), so
// that a model whose engine crashes whatever it runs on ends where its
// first engine would have given up, instead of starting again on other
// GPUs with a fresh budget.
const DefaultMaxModelRestarts = 5

func (p Policy) maxModelRestarts() int {
	if p.MaxModelRestarts > 0 {
		return p.MaxModelRestarts
	}
	return DefaultMaxModelRestarts
}

func orDefault(v, d float64) float64 {
	if v > 0 {
		return v
	}
	return d
}

// Bounds are the reference times a schedule is judged against.
type Bounds struct {
	// LowerBound is max(total GPU-time at the most efficient placements /
	// GPU count, the longest model at its best placement), start-up excluded.
	LowerBound time.Duration
	// Naive runs one model at a time with one engine at its best TP.
	Naive time.Duration
	// Sequential runs one model at a time at its best TP × replicas.
	Sequential time.Duration
}

func (s *Scheduler) computeBounds() Bounds {
	var b Bounds
	var total, longest time.Duration
	for _, ms := range s.models {
		if ms.status != StatusPending {
			continue
		}
		total = addSat(total, ms.gpuTime)
		longest = max(longest, seconds(ms.work, ms.bestRate))
		stop := s.cfg.Estimator.StopTime()
		b.Naive = addSat(b.Naive, s.cfg.Estimator.StartupTime(ms.m, ms.single.TP), seconds(ms.work, ms.singleRate), stop)
		b.Sequential = addSat(b.Sequential, s.cfg.Estimator.StartupTime(ms.m, ms.best.TP), seconds(ms.work, ms.bestRate), stop)
	}
	b.LowerBound = max(total/time.Duration(len(s.gpus)), longest)
	return b
}

// addSat adds durations, saturating instead of overflowing.
func addSat(d time.Duration, more ...time.Duration) time.Duration {
	for _, x := range more {
		if d > math.MaxInt64-x {
			return math.MaxInt64
		}
		d += x
	}
	return d
}

// waveTarget returns how many GPUs ms's first wave takes: its best
// placement's when models run one at a time (guard.go), the size chosen
// for the campaign when its replicas are pinned (pinned.go), else the
// fewest that finish it within TargetShare × bound (waveSize).
func (s *Scheduler) waveTarget(ms *modelState, bound time.Duration) int {
	switch {
	case s.sequential():
		return ms.best.GPUCount()
	case ms.pinned():
		return s.pinnedSize(ms)
	}
	return s.waveSize(ms, bound)
}

// waveSize returns the fewest GPUs that finish ms within TargetShare ×
// bound at an efficient placement on the idle node, or the node size.
func (s *Scheduler) waveSize(ms *modelState, bound time.Duration) int {
	res := placement.Result{Options: ms.opts}
	goal := time.Duration(s.cfg.Policy.targetShare() * float64(bound))
	for g := 1; g <= len(s.gpus); g++ {
		p, ok := s.pick(ms, res, g, false)
		if ok && seconds(ms.work, s.rateOf(ms, p)) <= goal {
			return g
		}
	}
	return len(s.gpus)
}

// pick returns the highest-rate option of at most limit GPUs that keeps
// MinEfficiency of the model's best rate per GPU (any option when relax is
// set). Rates include the image-preprocessing ceiling.
func (s *Scheduler) pick(ms *modelState, res placement.Result, limit int, relax bool) (placement.Placement, bool) {
	floor := s.cfg.Policy.minEfficiency() * ms.effRate
	p, _, ok := s.ranked(ms, res.Options, func(p placement.Placement, rate float64) bool {
		return p.GPUCount() <= limit && (relax || rate/float64(p.GPUCount()) >= floor*(1-1e-9))
	})
	return p, ok
}

// constraints adds the policy's API-server cap to c.
func (s *Scheduler) constraints(c placement.Constraints) placement.Constraints {
	c.MaxAPIServers = s.cfg.Policy.MaxAPIServers
	return c
}
