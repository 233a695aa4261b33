package gpu_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

// campaignTimeline samples a fake 8×A800 node through a small campaign:
// qwen on GPUs 0-3 (TP-4), then two llava replicas on 4-5 and 6-7, with
// memory loaded while each engine runs.
func campaignTimeline(t *testing.T) ([]gpu.Sample, []gpu.Span) {
	t.Helper()
	f, src := newFake(t, "a800-sxm-8")
	spans := []gpu.Span{
		{Model: "qwen2.5-vl-72b", Replica: "0", GPUs: []int{0, 1, 2, 3}, Start: t0.Add(10 * time.Second), End: t0.Add(100 * time.Second)},
		{Model: "llava-onevision-7b", Replica: "0", GPUs: []int{4, 5}, Start: t0.Add(30 * time.Second), End: t0.Add(80 * time.Second)},
		{Model: "llava-onevision-7b", Replica: "1", GPUs: []int{6, 7}, Start: t0.Add(40 * time.Second), End: t0.Add(110 * time.Second)},
	}
	const ticks = 121
	for g := range 8 {
		readings := make([]nvml.Reading, ticks)
		var energy uint64 = 5_000_000
		for i := range ticks {
			at := t0.Add(time.Duration(i) * time.Second)
			r := nvml.Reading{GPUUtil: 0, PowerMilliwatts: 62_000, TemperatureC: 33, SMClockMHz: 210, Throttle: 0x1}
			for _, sp := range spans {
				if slices.Contains(sp.GPUs, g) && at.After(sp.Start) && !at.After(sp.End) {
					u := uint32(70 + (i*7+g*13)%28)
					r = nvml.Reading{GPUUtil: u, MemUtil: u / 2, PowerMilliwatts: 250_000 + u*1500, TemperatureC: 55, SMClockMHz: 1410}
				}
			}
			readings[i] = r
			r.EnergyMillijoule = energy
			readings[i] = r
			energy += uint64(r.PowerMilliwatts)
		}
		f.SetTimeline(g, readings...)
	}
	s := &gpu.Sampler{Source: src, Clock: &stepClock{t0, time.Second}}
	var samples []gpu.Sample
	for i := range ticks {
		at := t0.Add(time.Duration(i) * time.Second)
		for g := range 8 {
			free := uint64(81920-512) << 20
			for _, sp := range spans {
				if slices.Contains(sp.GPUs, g) && !at.Before(sp.Start) && at.Before(sp.End) {
					free = 9 << 30
				}
			}
			f.SetFree(g, free)
		}
		smp, err := s.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, smp)
	}
	return samples, spans
}

func TestUtilizationReportFiles(t *testing.T) {
	samples, spans := campaignTimeline(t)
	dir := t.TempDir()
	r, err := gpu.WriteUtilizationReport(dir, samples, spans)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.GPUs) != 8 || len(r.Spans) != 3 || !r.Start.Equal(t0) || !r.End.Equal(t0.Add(120*time.Second)) {
		t.Fatalf("report %d GPUs %d spans %v..%v", len(r.GPUs), len(r.Spans), r.Start, r.End)
	}
	q := r.Spans[0]
	if q.GPUSeconds != 360 || q.Samples != 90 || *q.MeanGPUUtilPercent < 70 || *q.MeanGPUUtilPercent > 97 {
		t.Errorf("qwen span %+v", q)
	}
	// Energy is exact: the sum of the per-tick counter deltas.
	var wantJ float64
	for _, s := range samples {
		if s.Time.After(q.Start) && !s.Time.After(q.End) {
			for _, g := range s.GPUs[:4] {
				wantJ += *g.EnergyJoules
			}
		}
	}
	if *q.EnergyWh != wantJ/3600 {
		t.Errorf("qwen energy %v Wh, want %v", *q.EnergyWh, wantJ/3600)
	}
	if *q.PeakMemUsedBytes != (81920-512)<<20-9<<30 {
		t.Errorf("qwen peak memory %d", *q.PeakMemUsedBytes)
	}

	var back gpu.UtilizationReport
	b, _ := os.ReadFile(filepath.Join(dir, gpu.ReportJSONFile))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Spans) != 3 || !strings.Contains(back.Note, "sm_active_pct") {
		t.Errorf("JSON report: %v", err)
	}
	if !strings.Contains(string(b), `"sm_active_pct": null`) {
		t.Error("A800 SM activity must be null in JSON")
	}

	rows := readCSV(t, filepath.Join(dir, gpu.ReportGPUCSVFile))
	if len(rows) != 9 || rows[0][0] != "gpu" || rows[1][0] != "0" || rows[0][len(rows[0])-1] != "energy_j" {
		t.Fatalf("GPU CSV %v", rows[:2])
	}
	col := slices.Index(rows[0], "sm_active_pct_mean")
	if rows[1][col] != "" {
		t.Errorf("unknown SM activity written as %q, want empty", rows[1][col])
	}
	col = slices.Index(rows[0], "gpu_util_pct_max")
	if rows[1][col] == "" || rows[1][col] == "0" {
		t.Errorf("GPU 0 max util %q", rows[1][col])
	}
	spanRows := readCSV(t, filepath.Join(dir, gpu.ReportSpanCSVFile))
	if len(spanRows) != 4 || spanRows[1][0] != "qwen2.5-vl-72b" || spanRows[1][2] != "0 1 2 3" || spanRows[3][1] != "1" {
		t.Errorf("span CSV %v", spanRows)
	}

	fpng, err := os.Open(filepath.Join(dir, gpu.ReportTimelineFile))
	if err != nil {
		t.Fatal(err)
	}
	defer fpng.Close()
	img, err := png.Decode(fpng)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 8*150 {
		t.Errorf("timeline %v too small for 8 GPU rows", b)
	}
	if out := os.Getenv("NPCORCH_TIMELINE_PNG"); out != "" { // for looking at it
		data, _ := os.ReadFile(filepath.Join(dir, gpu.ReportTimelineFile))
		os.WriteFile(out, data, 0o644)
	}
}

func TestTimelineNeedsSamples(t *testing.T) {
	if err := gpu.WriteTimelinePNG(nil, nil, nil); err == nil {
		t.Error("empty timeline drew")
	}
	if r := gpu.NewUtilizationReport(nil, nil); r.GPUs == nil || len(r.Spans) != 0 {
		t.Errorf("empty report %+v", r)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
