package schedule

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/npcorch/npcorch/launcher/placement"
)

// paperVariants are the speed models the paper-campaign benchmark compares:
// npcorch's default (API servers sized by placement, preprocessing ceiling
// on), one API server per engine as vLLM starts by default, and no ceiling
// at all (GPU-bound engines, the model before the ceiling existed).
var paperVariants = []struct {
	name string
	est  Estimator
	pol  Policy
}{
	{"api-auto", Estimator{}, Policy{}},
	{"api-1", Estimator{}, Policy{MaxAPIServers: 1}},
	{"no-ceiling", Estimator{NoPreprocessCeiling: true}, Policy{}},
}

// BenchmarkPaperCampaign simulates the registry's models at the paper's L3 +
// L6 scale on each node shape and speed-model variant and reports the
// plan's numbers as metrics:
//
//	go test -run '^$' -bench PaperCampaign -benchtime 20x ./launcher/schedule/
func BenchmarkPaperCampaign(b *testing.B) {
	models, wls := registryCampaign(b)
	for _, node := range []placement.Node{placement.A800SXM8(), placement.A800PCIe8(), placement.H100SXM4(), placement.H200x1()} {
		for _, v := range paperVariants {
			b.Run(node.Name[len("fake:"):]+"/"+v.name, func(b *testing.B) {
				cfg := Config{Node: node, Models: models, Workloads: wls, Estimator: v.est, Policy: v.pol}
				var p *Plan
				for b.Loop() {
					var err error
					p, err = Simulate(context.Background(), cfg, SimOptions{})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(p.Makespan)/3600, "makespan-h")
				b.ReportMetric(float64(p.LowerBound)/3600, "bound-h")
				b.ReportMetric(float64(p.Naive)/3600, "naive-h")
				b.ReportMetric(float64(p.Sequential)/3600, "sequential-h")
				b.ReportMetric(p.Ratio, "makespan/bound")
				b.ReportMetric(p.Speedup, "naive/makespan")
				b.ReportMetric(p.SpeedupSequential, "sequential/makespan")
				b.ReportMetric(float64(len(p.Waves)), "waves")
			})
		}
	}
}

// BenchmarkPaperCampaignSensitivity shows how the ≥ 2× goal depends on the
// two inputs the preprocessing ceiling is most sensitive to: the images one
// API server preprocesses per second (5 … 40; the default is 20) and the
// output tokens (the full budget, as MixWorkload counts them, or a quarter of
// it, as tasks/campaign estimates a dataset's). For each it plans with
// npcorch's API-server choice and reports the plan against the naive
// baseline with the same engines (naive/makespan) and against one engine
// with vLLM's single API server, as the shell scripts run it
// (scripts/makespan):
//
//	go test -run '^$' -bench PaperCampaignSensitivity -benchtime 1x ./launcher/schedule/
func BenchmarkPaperCampaignSensitivity(b *testing.B) {
	models, wls := registryCampaign(b)
	for _, node := range []placement.Node{placement.A800SXM8(), placement.H100SXM4()} {
		for _, outputs := range []struct {
			name string
			div  int64
		}{{"out-full", 1}, {"out-quarter", 4}} {
			for _, rate := range []float64{5, 10, 20, 40} {
				name := fmt.Sprintf("%s/%s/img-%g", node.Name[len("fake:"):], outputs.name, rate)
				b.Run(name, func(b *testing.B) {
					ms := slices.Clone(models)
					for i := range ms {
						ms[i].PreprocessImagesPerS = rate
					}
					ws := slices.Clone(wls)
					for i := range ws {
						ws[i].OutputTokens /= outputs.div
					}
					var auto, scripts *Plan
					for b.Loop() {
						var err error
						if auto, err = Simulate(context.Background(), Config{Node: node, Models: ms, Workloads: ws}, SimOptions{}); err != nil {
							b.Fatal(err)
						}
						one := Config{Node: node, Models: ms, Workloads: ws, Policy: Policy{MaxAPIServers: 1}}
						if scripts, err = Simulate(context.Background(), one, SimOptions{}); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(auto.Makespan)/3600, "makespan-h")
					b.ReportMetric(auto.Ratio, "makespan/bound")
					b.ReportMetric(auto.Speedup, "naive/makespan")
					b.ReportMetric(float64(scripts.Naive)/float64(auto.Makespan), "scripts/makespan")
				})
			}
		}
	}
}
