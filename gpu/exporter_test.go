package gpu_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

func TestCollectorExportsDCGMNames(t *testing.T) {
	f, src := newFake(t, "h200-1")
	f.SetTimeline(0, nvml.Reading{GPUUtil: 87, MemUtil: 41, SMActivity: 55, PowerMilliwatts: 512_250,
		EnergyMillijoule: 123_456_789, TemperatureC: 61, SMClockMHz: 1980, Throttle: 0x4})
	f.SetFree(0, 100<<30)
	f.SetProcesses(0, nvml.FakeProcess{PID: 31337, MemoryBytes: 40 << 30, Model: "internvl3-8b", Replica: "2"})
	inv, _ := src.Inventory(context.Background())
	uuid := *inv.GPUs[0].UUID
	c, err := gpu.NewCollector(context.Background(), src, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	usedMiB := (144384 - 600 - 100*1024)
	labels := `{Hostname="node-a",UUID="` + uuid + `",device="nvidia0",gpu="0",modelName="NVIDIA H200 141GB HBM3e"}`
	want := `
# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE` + labels + ` 102400
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED` + labels + ` ` + strconv.Itoa(usedMiB) + `
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL` + labels + ` 87
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE` + labels + ` 512.25
# HELP DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION Total energy consumption since boot (in mJ).
# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter
DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` + labels + ` 1.23456789e+08
# HELP DCGM_FI_PROF_SM_ACTIVE The ratio of cycles an SM has at least 1 warp assigned (0 to 1), from NVML GPM.
# TYPE DCGM_FI_PROF_SM_ACTIVE gauge
DCGM_FI_PROF_SM_ACTIVE` + labels + ` 0.55
# HELP npcorch_gpu_process_memory_bytes GPU memory held by a compute process (in bytes); model and replica are set for engines npcorch launched.
# TYPE npcorch_gpu_process_memory_bytes gauge
npcorch_gpu_process_memory_bytes{Hostname="node-a",UUID="` + uuid + `",gpu="0",model="internvl3-8b",pid="31337",replica="2"} 4.294967296e+10
`
	// The first scrape primes GPM (no SM activity yet); the second has it.
	if n := testutil.CollectAndCount(c, "DCGM_FI_PROF_SM_ACTIVE"); n != 0 {
		t.Errorf("SM activity exported before two GPM samples: %d series", n)
	}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_USED",
		"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
		"DCGM_FI_PROF_SM_ACTIVE", "npcorch_gpu_process_memory_bytes"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c); n != 11 {
		t.Errorf("%d series, want 10 GPU metrics and 1 process", n)
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		// dcgm-exporter's names are not Prometheus-style; only report
		// problems other than naming.
		for _, p := range problems {
			if !strings.Contains(p.Text, "snake_case") && !strings.Contains(p.Text, "unit") &&
				!strings.Contains(p.Text, "counter metrics should have") && !strings.Contains(p.Text, "camelCase") {
				t.Errorf("lint %s: %s", p.Metric, p.Text)
			}
		}
	}
}

func TestMonitorServesMetricsAndLogsSamples(t *testing.T) {
	_, src := newFake(t, "a800-sxm-8")
	c, err := gpu.NewCollector(context.Background(), src, "fakehost")
	if err != nil {
		t.Fatal(err)
	}
	tick := handTicker{make(chan time.Time)}
	var log bytes.Buffer
	addrs := make(chan net.Addr, 1)
	samples := make(chan gpu.Sample, 16)
	m := &gpu.Monitor{
		Sampler:   &gpu.Sampler{Source: src, NewTicker: func(time.Duration) gpu.Ticker { return tick }},
		Collector: c, Listen: "127.0.0.1:0", Log: &log,
		OnListen: func(a net.Addr) { addrs <- a },
		OnSample: func(s gpu.Sample) { samples <- s },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	addr := <-addrs
	<-samples // the first sample is taken at once
	tick.c <- time.Time{}
	<-samples

	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape status %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing exposition: %v", err)
	}
	util := families["DCGM_FI_DEV_GPU_UTIL"]
	if util == nil || len(util.Metric) != 8 {
		t.Fatalf("DCGM_FI_DEV_GPU_UTIL: %v", util)
	}
	for _, name := range []string{"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_POWER_USAGE",
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_COPY_UTIL"} {
		if fam := families[name]; fam == nil || len(fam.Metric) != 8 {
			t.Errorf("%s missing or not one series per GPU", name)
		}
	}
	if _, ok := families["DCGM_FI_PROF_SM_ACTIVE"]; ok {
		t.Error("A800 has no GPM, yet SM activity was exported")
	}
	// Series come sorted by label values (UUID first); find GPU 0's.
	var labels map[string]string
	for _, m := range util.Metric {
		l := map[string]string{}
		for _, p := range m.Label {
			l[p.GetName()] = p.GetValue()
		}
		if l["gpu"] == "0" {
			labels = l
		}
	}
	if labels["Hostname"] != "fakehost" || labels["modelName"] != "NVIDIA A800-SXM4-80GB" || labels["device"] != "nvidia0" ||
		labels["gpu"] != "0" || !strings.HasPrefix(labels["UUID"], "GPU-") {
		t.Errorf("labels %v", labels)
	}
	if v := util.Metric[0].Gauge.GetValue(); v < 0 || v > 100 {
		t.Errorf("GPU util %v", v)
	}
	if _, err := http.Get("http://" + addr.String() + "/"); err != nil {
		t.Error(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	logged, err := gpu.ReadSamples(&log)
	if err != nil || len(logged) != 2 || len(logged[1].GPUs) != 8 || logged[1].GPUs[0].EnergyJoules == nil {
		t.Fatalf("sample log: %d samples, %v", len(logged), err)
	}
	if _, err := http.Get("http://" + addr.String() + "/metrics"); err == nil {
		t.Error("metrics server still up after the monitor stopped")
	}
}

func TestMonitorStopsAfterDuration(t *testing.T) {
	_, src := newFake(t, "h200-1")
	var n int
	m := &gpu.Monitor{
		Sampler:  &gpu.Sampler{Source: src, NewTicker: func(time.Duration) gpu.Ticker { return handTicker{make(chan time.Time)} }},
		Duration: time.Millisecond,
		OnSample: func(gpu.Sample) { n++ },
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d samples, want the one taken at start", n)
	}
}

func TestMonitorRejectsBusyAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, src := newFake(t, "h200-1")
	c, _ := gpu.NewCollector(context.Background(), src, "h")
	m := &gpu.Monitor{Sampler: &gpu.Sampler{Source: src}, Collector: c, Listen: ln.Addr().String()}
	if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Errorf("busy address: %v", err)
	}
}
