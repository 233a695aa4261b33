package schedule

import (
	"context"
	"testing"

	"github.com/npcorch/npcorch/launcher/placement"
)

// BenchmarkPaperCampaign simulates the registry's models at the paper's L3 +
// L6 scale on each node shape and reports the plan's numbers as metrics:
//
//	go test -run '^$' -bench PaperCampaign -benchtime 20x ./launcher/schedule/
func BenchmarkPaperCampaign(b *testing.B) {
	models, wls := registryCampaign(b)
	for _, node := range []placement.Node{placement.A800SXM8(), placement.A800PCIe8(), placement.H100SXM4(), placement.H200x1()} {
		b.Run(node.Name[len("fake:"):], func(b *testing.B) {
			var p *Plan
			for b.Loop() {
				var err error
				p, err = Simulate(context.Background(), Config{Node: node, Models: models, Workloads: wls}, SimOptions{})
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
