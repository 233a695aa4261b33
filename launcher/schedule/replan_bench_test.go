package schedule

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
)

// speedCase is one benchmark variant: how far off the registry's speeds
// are (factors log-uniform in [1/spread, spread], times node for every
// model) and how engines report.
type speedCase struct {
	name   string
	spread float64
	node   float64
	every  time.Duration
	noise  float64
}

// speedCases are the benchmark's variants: the goal's (speeds off by up
// to 2× each, a sample every 5 minutes with 20 % noise over a minute,
// which the estimator assumes), a harsher reporting (every 15 minutes,
// 50 % noise: 2.5 times what the estimator assumes), a registry that is
// right (what re-planning on noise costs), and errors most models share
// (the node's GPUs half or twice as fast as the registry assumes, each
// model within 1.25× of that).
var speedCases = []speedCase{
	{"err2/5min-noise0.2", 2, 1, 5 * time.Minute, 0.2},
	{"err2/15min-noise0.5", 2, 1, 15 * time.Minute, 0.5},
	{"err1/5min-noise0.2", 1, 1, 5 * time.Minute, 0.2},
	{"node0.5-err1.25/5min-noise0.2", 1.25, 0.5, 5 * time.Minute, 0.2},
	{"node2-err1.25/5min-noise0.2", 1.25, 2, 5 * time.Minute, 0.2},
}

// truth is the variant's truth for one seed.
func (c speedCase) truth(models []configs.Model, seed uint64) SpeedTruth {
	f := RandomSpeedFactors(models, c.spread, seed)
	for m := range f {
		f[m] *= c.node
	}
	return SpeedTruth{Factors: f, SampleEvery: c.every, Noise: c.noise, Seed: seed}
}

// speedErrorResult is one seed's campaigns: today's static plan (samples
// ignored), one that takes only the samples' progress (no re-plan, no
// early scale-out: to show where the gain comes from), the re-planning
// one, and the static plan of a registry that knew the true speeds; and
// how long the scheduler took to handle each event that re-planned: the
// least of timedRuns runs of the same campaign (the machine's other load
// only ever adds), and in the first run alone.
type speedErrorResult struct {
	seed                             uint64
	static, progress, replan, oracle *Plan
	replanTimes, firstRunTimes       []time.Duration
}

// timedRuns is how often the re-planning campaign runs to time its events.
const timedRuns = 3

// runSpeedError simulates one seed on node.
func runSpeedError(tb testing.TB, node placement.Node, models []configs.Model, wls []Workload, seed uint64, c speedCase, pol Policy) speedErrorResult {
	tb.Helper()
	truth := c.truth(models, seed)
	res := speedErrorResult{seed: seed}
	var err error
	static := pol
	static.Replan.Off = true
	if res.static, _, err = simulateTimed(Config{Node: node, Models: models, Workloads: wls, Policy: static}, truth); err != nil {
		tb.Fatal(err)
	}
	progress := pol
	progress.Replan.MinChange, progress.Replan.Slack = math.Inf(1), math.Inf(1)
	if res.progress, _, err = simulateTimed(Config{Node: node, Models: models, Workloads: wls, Policy: progress}, truth); err != nil {
		tb.Fatal(err)
	}
	for i := range timedRuns {
		p, times, err := simulateTimed(Config{Node: node, Models: models, Workloads: wls, Policy: pol}, truth)
		if err != nil {
			tb.Fatal(err)
		}
		if i == 0 {
			res.replan, res.firstRunTimes, res.replanTimes = p, times, slices.Clone(times)
			continue
		}
		for j := range res.replanTimes {
			res.replanTimes[j] = min(res.replanTimes[j], times[j])
		}
	}
	oracle := Config{Node: node, Models: WithSpeedFactors(models, truth.Factors, Estimator{}), Workloads: wls, Policy: static}
	if res.oracle, _, err = simulateTimed(oracle, SpeedTruth{}); err != nil {
		tb.Fatal(err)
	}
	return res
}

// simulateTimed is Simulate with the loop written out, timing each
// Handle that made a re-plan.
func simulateTimed(cfg Config, truth SpeedTruth) (*Plan, []time.Duration, error) {
	sim := NewSimulator(cfg)
	sim.Truth = truth
	s, err := New(cfg, sim)
	if err != nil {
		return nil, nil, err
	}
	var times []time.Duration
	s.Begin()
	for !s.Done() {
		ev, err := sim.Next(context.Background())
		if err != nil {
			return s.Plan(), times, err
		}
		n := len(s.replans)
		start := time.Now()
		if err := s.Handle(ev); err != nil {
			return s.Plan(), times, err
		}
		if d := time.Since(start); len(s.replans) > n {
			times = append(times, d)
		}
	}
	return s.Plan(), times, nil
}

// BenchmarkSpeedError runs the registry's campaign at the paper's scale
// with every model's speed wrong by a random factor in [0.5, 2], 20
// seeds, and reports the makespans against a plan that knew the true
// speeds, with re-planning and without, and the time to handle an event
// that re-plans, per node and variant (speedCases):
//
//	go test -run '^$' -bench SpeedError -benchtime 1x ./launcher/schedule/
func BenchmarkSpeedError(b *testing.B) {
	models, wls := registryCampaign(b)
	for _, node := range []placement.Node{placement.A800SXM8(), placement.A800PCIe8(), placement.H100SXM4()} {
		for _, c := range speedCases {
			b.Run(node.Name[len("fake:"):]+"/"+c.name, func(b *testing.B) {
				var results []speedErrorResult
				for b.Loop() {
					results = results[:0]
					for seed := range uint64(20) {
						results = append(results, runSpeedError(b, node, models, wls, seed+1, c, Policy{}))
					}
				}
				reportSpeedError(b, results)
			})
		}
	}
}

// reportSpeedError writes one line per seed and the summary metrics.
func reportSpeedError(b *testing.B, results []speedErrorResult) {
	var lines strings.Builder
	fmt.Fprintf(&lines, "\nseed  oracle   static   progress  replan   static/oracle  progress/oracle  replan/oracle  replans\n")
	var sumS, sumP, sumR, maxS, maxP, maxR float64
	var times, first []time.Duration
	replans := 0
	for _, r := range results {
		o := float64(r.oracle.Makespan)
		s, pr, rp := float64(r.static.Makespan)/o, float64(r.progress.Makespan)/o, float64(r.replan.Makespan)/o
		sumS, sumP, sumR, maxS, maxP, maxR = sumS+s, sumP+pr, sumR+rp, max(maxS, s), max(maxP, pr), max(maxR, rp)
		times = append(times, r.replanTimes...)
		first = append(first, r.firstRunTimes...)
		replans += len(r.replan.Replans)
		fmt.Fprintf(&lines, "%4d  %7s  %7s  %8s  %7s  %13.3f  %15.3f  %13.3f  %7d\n", r.seed, r.oracle.Makespan, r.static.Makespan,
			r.progress.Makespan, r.replan.Makespan, s, pr, rp, len(r.replan.Replans))
	}
	b.Log(lines.String())
	n := float64(len(results))
	b.ReportMetric(sumS/n, "static/oracle")
	b.ReportMetric(maxS, "static/oracle-max")
	b.ReportMetric(sumP/n, "progress/oracle")
	b.ReportMetric(maxP, "progress/oracle-max")
	b.ReportMetric(sumR/n, "replan/oracle")
	b.ReportMetric(maxR, "replan/oracle-max")
	b.ReportMetric(float64(replans)/n, "replans/campaign")
	if len(times) > 0 {
		slices.Sort(times)
		b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "replan-ms-p50")
		b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "replan-ms-p99")
		b.ReportMetric(float64(times[len(times)-1].Microseconds())/1000, "replan-ms-max")
		b.ReportMetric(float64(slices.Max(first).Microseconds())/1000, "replan-ms-max-first-run")
	}
}
