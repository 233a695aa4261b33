package schedule

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// ReplanPolicy tunes re-planning on measured speeds; its zero value uses
// the defaults the package comment gives and justifies.
type ReplanPolicy struct {
	// Off records speed samples (Scheduler.Speeds) but plans as if none
	// came: registry speeds throughout, no progress taken from samples.
	Off bool
	// MinChange and Z: a model's speed estimate must move by more than
	// MinChange (0 = 0.10, i.e. 10 %) and by more than Z standard
	// deviations of the estimate (0 = 3) from what the plan uses before
	// the plan changes.
	MinChange float64
	Z         float64
	// Interval is the least campaign time between two re-plans (0 = 5 min).
	Interval time.Duration
	// Slack: a running model whose own measurements corrected its speed
	// and whose finish at that speed lies more than (1 + Slack) × the
	// remaining lower bound ahead gets freed GPUs before waiting models do
	// (0 = 0.25).
	Slack float64
	// Prior tunes the speed estimator.
	Prior SpeedPrior
}

func (p ReplanPolicy) minChange() float64 { return orDefault(p.MinChange, 0.10) }
func (p ReplanPolicy) z() float64         { return orDefault(p.Z, 3) }
func (p ReplanPolicy) slack() float64     { return orDefault(p.Slack, 0.25) }
func (p ReplanPolicy) interval() time.Duration {
	if p.Interval > 0 {
		return p.Interval
	}
	return 5 * time.Minute
}

// Replan is one re-plan: when, why, and what the models still waiting
// look like after it.
type Replan struct {
	At Seconds `json:"at_s"`
	// Reason says in one line which measurements moved away from the plan.
	Reason  string        `json:"reason"`
	Changes []SpeedChange `json:"changes"`
	// Pending are the models still waiting, in the order they will start,
	// each with its first wave's GPUs.
	Pending []PendingModel `json:"pending,omitempty"`
}

// SpeedChange is one speed factor (measured / registry speed) the plan
// changed: a model's, or, with Model "", the node-wide factor taken for
// every model not measured yet.
type SpeedChange struct {
	Model string  `json:"model"`
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	// LogSD is the standard deviation of ln To; Samples what it rests on.
	LogSD   float64 `json:"log_sd"`
	Samples int     `json:"samples,omitempty"`
}

// PendingModel is a waiting model's first wave after a re-plan.
type PendingModel struct {
	Model string `json:"model"`
	GPUs  int    `json:"gpus"`
	// WasGPUs and WasPosition are its first wave's GPUs and its place in
	// the waiting order (from 1) before.
	WasGPUs     int `json:"was_gpus"`
	WasPosition int `json:"was_position"`
}

// ReplanObserver is an optional interface of Effects: the scheduler
// tells it each re-plan as it is made, for logs and traces.
type ReplanObserver interface {
	Replanned(Replan)
}

// Speeds returns what the engines were measured to do so far, nil before
// any sample.
func (s *Scheduler) Speeds() *Speeds { return s.speeds.snapshot() }

// Replans returns the re-plans so far.
func (s *Scheduler) Replans() []Replan { return slices.Clone(s.replans) }

// checkSample rejects a speed sample that cannot be used: from an engine
// that never served, with amounts that are not numbers, or with a share
// done that is not one.
func (r *liveReplica) checkSample(ev Event) error {
	x := ev.Speed
	switch {
	case !r.served:
		return fmt.Errorf("schedule: speed sample for replica %d of %s, which has not served", r.ID, r.Model)
	case !x.valid():
		return fmt.Errorf("schedule: speed sample for replica %d of %s: seconds %v, work %v, images %v, TTFT %v; "+
			"want a positive duration and finite, non-negative amounts", r.ID, r.Model, x.Seconds, x.Work, x.Images, x.TTFT)
	case math.IsNaN(ev.Done) || math.IsInf(ev.Done, 0):
		return fmt.Errorf("schedule: speed sample for replica %d of %s: done %v is not a share of its work", r.ID, r.Model, ev.Done)
	}
	return nil
}

// measured records a speed sample and, unless re-planning is off, takes
// its progress and re-plans if the speeds moved. It reports whether a
// decision may have changed.
func (s *Scheduler) measured(ms *modelState, r *liveReplica, ev Event) bool {
	s.speeds.observe(s.observation(ms, r, ev.Speed))
	if s.cfg.Policy.Replan.Off {
		return false
	}
	progressed := false
	if ev.Done > 0 && ms.status == StatusRunning {
		s.progress(ms, ev.Done)
		progressed = true
	}
	if s.maybeReplan() {
		return true
	}
	return progressed && s.anyFreeGPU()
}

// observation turns a sample into a log speed factor: the GPU speed at
// which the replica, at the share of its GPUs it had since its last
// sample, would have done the sample's work, against the registry's.
func (s *Scheduler) observation(ms *modelState, r *liveReplica, x SpeedSample) speedObs {
	o := speedObs{model: ms.m.Name, replica: r.ID, index: r.Index, tp: r.TP, gpus: r.GPUs, sample: x}
	elapsed := (s.now - r.sampledAt).Seconds()
	served := s.fluid.served[r.ID] - r.servedAt
	r.sampledAt, r.servedAt = s.now, s.fluid.served[r.ID]
	share := 1.0
	if elapsed > 0 {
		share = served / elapsed
	}
	if share <= 0 || x.Work <= 0 {
		return o
	}
	images := r.ImagesPerS
	if s.cfg.Estimator.NoPreprocessCeiling {
		images = 0
	}
	y, e, ok := ms.mix.gpuFactor(ms.guess, r.Throughput, images, x.Work/(x.Seconds*share))
	if ok {
		noise := s.cfg.Policy.Replan.Prior.noiseSD()
		o.logFactor, o.precision = y, e*e*x.Seconds/60/(noise*noise)
	}
	return o
}

func (s *Scheduler) anyFreeGPU() bool {
	return slices.ContainsFunc(s.gpus, func(g *gpuState) bool { return len(g.hosts) == 0 })
}

// maybeReplan compares every waiting or running model's speed estimate
// with the factor the plan uses; when one moved beyond its gate (and the
// last re-plan is Interval ago), it takes the new speeds, sizes and
// orders the waiting models again, and records why.
func (s *Scheduler) maybeReplan() bool {
	if len(s.replans) > 0 && s.now-s.replannedAt < s.cfg.Policy.Replan.interval() {
		return false
	}
	node := s.speeds.node()
	nodeDue := s.moved(node, s.nodeLog)
	type move struct {
		ms *modelState
		to float64
	}
	var moves []move
	var changes []SpeedChange
	for _, ms := range s.models {
		if ms.status != StatusPending && ms.status != StatusRunning {
			continue
		}
		switch e := s.speeds.estimate(ms.m.Name, node); {
		case e.measured && s.moved(e, ms.logFactor):
			changes = append(changes, SpeedChange{Model: ms.m.Name, From: round4(math.Exp(ms.logFactor)), To: round4(math.Exp(e.mean)),
				LogSD: round4(e.sd), Samples: s.speeds.models[ms.m.Name].n})
			ms.corrected = true
			moves = append(moves, move{ms, e.mean})
		case !e.measured && nodeDue && e.mean != ms.logFactor:
			moves = append(moves, move{ms, e.mean})
		}
	}
	if len(moves) == 0 {
		return false
	}
	if nodeDue {
		nc := SpeedChange{From: round4(math.Exp(s.nodeLog)), To: round4(math.Exp(node.mean)), LogSD: round4(node.sd)}
		changes = append([]SpeedChange{nc}, changes...)
		s.nodeLog = node.mean
	}
	for _, m := range moves {
		m.ms.logFactor = m.to
		s.setSpeed(m.ms)
	}
	s.replannedAt = s.now
	s.record(Replan{At: secs(s.now), Reason: replanReason(changes), Changes: changes, Pending: s.replanPending()})
	return true
}

// moved reports whether estimate e lies beyond the gate around the log
// factor the plan uses: more than MinChange and Z standard deviations.
func (s *Scheduler) moved(e speedEstimate, planned float64) bool {
	pol := s.cfg.Policy.Replan
	return math.Abs(e.mean-planned) > max(math.Log1p(pol.minChange()), pol.z()*e.gateSD)
}

// setSpeed applies ms's log factor to its speed, its idle-node ranking and
// its live replicas' rates.
func (s *Scheduler) setSpeed(ms *modelState) {
	ms.speed = ms.guess * math.Exp(ms.logFactor)
	s.rankIdle(ms)
	for _, id := range ms.live {
		r := s.replicas[id-1]
		r.Rate = s.groupRate(ms, r.Throughput, r.ImagesPerS)
		s.fluid.setRate(r.ID, r.Rate)
	}
}

// replanPending sizes every waiting model's first wave against the
// campaign's lower bound at the speeds now known, as New sized them
// against the registry's, and orders them longest-first again, in the
// places they held in s.models.
func (s *Scheduler) replanPending() []PendingModel {
	var slots []int
	var pending []*modelState
	was := map[*modelState]PendingModel{}
	for i, ms := range s.models {
		if ms.status == StatusPending {
			slots = append(slots, i)
			pending = append(pending, ms)
			was[ms] = PendingModel{WasGPUs: ms.target, WasPosition: len(pending)}
		}
	}
	bound := s.campaignBound()
	for _, ms := range pending {
		ms.target = s.waveTarget(ms, bound)
	}
	slices.SortStableFunc(pending, byPriority)
	out := make([]PendingModel, len(pending))
	for i, ms := range pending {
		s.models[slots[i]] = ms
		out[i] = was[ms]
		out[i].Model, out[i].GPUs = ms.m.Name, ms.target
	}
	return out
}

// byGPUTime orders models longest first by GPU-time, then by name.
func byGPUTime(a, b *modelState) int {
	if c := cmp.Compare(b.gpuTime, a.gpuTime); c != 0 {
		return c
	}
	return strings.Compare(a.m.Name, b.m.Name)
}

// campaignBound is the whole campaign's lower bound at the speeds the
// plan uses now: the bound first waves were sized against, with what was
// learnt since.
func (s *Scheduler) campaignBound() time.Duration {
	var total, longest time.Duration
	for _, ms := range s.models {
		if ms.effRate <= 0 {
			continue // external, without work, or unplaceable
		}
		total = addSat(total, ms.gpuTime)
		longest = max(longest, seconds(ms.work, ms.bestRate))
	}
	return max(total/time.Duration(len(s.gpus)), longest)
}

// remainingBound is the lower bound of what is left: max(the remaining
// GPU-time at each model's most efficient placement / GPU count, the
// longest remaining model at its best placement), start-up excluded.
func (s *Scheduler) remainingBound() time.Duration {
	var total, longest time.Duration
	for _, ms := range s.models {
		if ms.status != StatusPending && ms.status != StatusRunning {
			continue
		}
		rem := s.fluid.remaining[ms.m.Name]
		total = addSat(total, seconds(rem, ms.effRate))
		longest = max(longest, seconds(rem, ms.bestRate))
	}
	return max(total/time.Duration(len(s.gpus)), longest)
}

func (s *Scheduler) record(r Replan) {
	s.replans = append(s.replans, r)
	if o, ok := s.fx.(ReplanObserver); ok {
		o.Replanned(r)
	}
}

// replanReason writes the changes as one line.
func replanReason(changes []SpeedChange) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		lo, hi := c.To*math.Exp(-1.96*c.LogSD), c.To*math.Exp(1.96*c.LogSD)
		if c.Model == "" {
			parts[i] = fmt.Sprintf("models not measured yet now taken at %.2f× their registry speed (95 %% %.2f–%.2f), not %.2f×",
				c.To, lo, hi, c.From)
			continue
		}
		parts[i] = fmt.Sprintf("%s measured at %.2f× its registry speed (95 %% %.2f–%.2f, %d sample%s); the plan used %.2f×",
			c.Model, c.To, lo, hi, c.Samples, plural(c.Samples), c.From)
	}
	return strings.Join(parts, "; ")
}

// scaleOutLate gives unused GPUs, before any waiting model gets them, to
// running models whose measurements corrected their speed and put their
// finish more than (1 + Slack) × the remaining lower bound ahead: the
// model that would end much later than the rest. A model measured as the
// registry says keeps the first wave the plan gave it.
func (s *Scheduler) scaleOutLate() {
	if s.cfg.Policy.Replan.Off || s.cfg.Policy.NoScaleOut || s.sequential() {
		return
	}
	limit := (1 + s.cfg.Policy.Replan.slack()) * s.remainingBound().Seconds() // float: a huge Slack must not overflow
	for {
		type cand struct {
			ms   *modelState
			left time.Duration
		}
		var cands []cand
		for _, ms := range s.models {
			if ms.status != StatusRunning || ms.m.Engine.Replicas > 0 || !ms.corrected {
				continue
			}
			if left := seconds(s.fluid.remaining[ms.m.Name], s.plannedRate(ms)); left.Seconds() > limit {
				cands = append(cands, cand{ms, left})
			}
		}
		slices.SortStableFunc(cands, func(a, b cand) int { return cmp.Compare(b.left, a.left) })
		added := false
		for _, c := range cands {
			if s.tryScaleOut(c.ms, c.left) {
				added = true
				break
			}
		}
		if !added {
			return
		}
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeSpeeds writes the re-plans and the measured speeds, if any.
func (p *Plan) writeSpeeds(w io.Writer) {
	if len(p.Replans) > 0 {
		fmt.Fprintln(w, "\nre-plans:")
		for _, r := range p.Replans {
			fmt.Fprintf(w, "  %7s  %s\n", r.At, r.Reason)
		}
	}
	if p.Speeds == nil {
		return
	}
	fmt.Fprintln(w)
	p.Speeds.WriteText(w) // w keeps its own first error
}
