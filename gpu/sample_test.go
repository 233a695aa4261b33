package gpu_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

// stepClock advances one interval per reading.
type stepClock struct {
	t    time.Time
	step time.Duration
}

func (c *stepClock) Now() time.Time {
	now := c.t
	c.t = c.t.Add(c.step)
	return now
}

// handTicker is a ticker the test drives.
type handTicker struct{ c chan time.Time }

func (h handTicker) C() <-chan time.Time { return h.c }
func (h handTicker) Stop()               {}

type fixedHost struct{}

func (fixedHost) Host(context.Context) gpu.HostSample {
	return gpu.HostSample{CPUPercent: gpu.Ptr(12.5), MemUsedBytes: gpu.Ptr(uint64(3 << 30)), MemTotalBytes: gpu.Ptr(uint64(16 << 30))}
}

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func newFake(t testing.TB, name string) (*nvml.Fake, gpu.Source) {
	t.Helper()
	f, err := nvml.NewFake(name)
	if errors.Is(err, gpu.ErrNVMLNotCompiled) {
		t.Skip("fake GPU nodes are go-nvml mocks and need cgo")
	}
	if err != nil {
		t.Fatal(err)
	}
	src := f.Source()
	t.Cleanup(func() { src.Close() })
	return f, src
}

func TestSamplerEnergyDeltasSurviveCounterReset(t *testing.T) {
	f, src := newFake(t, "h200-1")
	f.SetTimeline(0,
		gpu0(50, 300_000, 10_000_000),
		gpu0(60, 310_000, 10_300_000), // +300 J
		gpu0(70, 320_000, 10_610_000), // +310 J
		gpu0(80, 330_000, 250_000),    // driver reloaded: counter restarts, 250 J since
		gpu0(90, 340_000, 590_000),    // +340 J
	)
	s := &gpu.Sampler{Source: src, Host: fixedHost{}, Clock: &stepClock{t0, time.Second}}
	var got []float64
	for i := range 5 {
		smp, err := s.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !smp.Time.Equal(t0.Add(time.Duration(i) * time.Second)) {
			t.Errorf("tick %d at %v", i, smp.Time)
		}
		g := smp.GPUs[0]
		if i == 0 {
			if g.EnergyJoules != nil {
				t.Errorf("first tick has an energy delta %v", *g.EnergyJoules)
			}
			continue
		}
		got = append(got, *g.EnergyJoules)
		if *smp.Host.CPUPercent != 12.5 || *smp.Host.MemUsedBytes != 3<<30 {
			t.Errorf("host sample %+v", smp.Host)
		}
	}
	want := []float64{300, 310, 250, 340}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("energy deltas %v, want %v", got, want)
			break
		}
	}
}

func gpu0(util uint32, mw uint32, mj uint64) nvml.Reading {
	return nvml.Reading{GPUUtil: util, MemUtil: util / 2, SMActivity: float64(util) / 2, PowerMilliwatts: mw,
		EnergyMillijoule: mj, TemperatureC: 50, SMClockMHz: 1980, Throttle: 0x4 | 0x40}
}

func TestSamplerThrottleNamesAndNullUnknowns(t *testing.T) {
	f, src := newFake(t, "h200-1")
	f.SetTimeline(0, gpu0(50, 300_000, 1))
	s := &gpu.Sampler{Source: src, Clock: &stepClock{t0, time.Second}}
	smp, err := s.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(smp.GPUs[0].Throttle, ",") != "sw_power_cap,hw_thermal" {
		t.Errorf("throttle %v", smp.GPUs[0].Throttle)
	}
	b, _ := json.Marshal(smp)
	var m map[string]any
	json.Unmarshal(b, &m)
	host := m["host"].(map[string]any)
	if host["cpu_pct"] != nil || len(host) != 3 {
		t.Errorf("host without a probe should be nulls: %s", b)
	}
	g := m["gpus"].([]any)[0].(map[string]any)
	if g["sm_active_pct"] != nil || g["energy_j"] != nil {
		t.Errorf("first-tick SM activity and energy must be null: %v %v", g["sm_active_pct"], g["energy_j"])
	}
	if g["gpu_util_pct"] != 50.0 || g["power_w"] != 300.0 {
		t.Errorf("sample JSON %s", b)
	}
}

func TestThrottleNames(t *testing.T) {
	if got := gpu.ThrottleNames(0); len(got) != 0 || got == nil {
		t.Errorf("no reasons: %#v", got)
	}
	if got := strings.Join(gpu.ThrottleNames(0x1|0x1000), ","); got != "gpu_idle,0x1000" {
		t.Errorf("got %s", got)
	}
}

func TestSamplerRunTicksUntilCancelled(t *testing.T) {
	_, src := newFake(t, "a800-sxm-8")
	tick := handTicker{make(chan time.Time)}
	var interval time.Duration
	s := &gpu.Sampler{Source: src, Clock: &stepClock{t0, time.Second},
		NewTicker: func(d time.Duration) gpu.Ticker { interval = d; return tick }}
	ctx, cancel := context.WithCancel(context.Background())
	var got []gpu.Sample
	done := make(chan error)
	go func() {
		done <- s.Run(ctx, func(smp gpu.Sample) error {
			got = append(got, smp)
			if len(got) == 4 {
				cancel()
			}
			return nil
		})
	}()
	for range 3 {
		tick.c <- time.Time{}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if interval != time.Second {
		t.Errorf("default interval %v", interval)
	}
	if len(got) != 4 || len(got[3].GPUs) != 8 {
		t.Fatalf("%d samples", len(got))
	}
	if *got[1].GPUs[0].EnergyJoules <= 0 {
		t.Errorf("no energy on a loaded fake GPU: %v", *got[1].GPUs[0].EnergyJoules)
	}
}

func TestSamplerRunStopsOnRecordError(t *testing.T) {
	_, src := newFake(t, "h200-1")
	s := &gpu.Sampler{Source: src, NewTicker: func(time.Duration) gpu.Ticker { return handTicker{make(chan time.Time)} }}
	boom := errors.New("disk full")
	if err := s.Run(context.Background(), func(gpu.Sample) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Run = %v", err)
	}
}

// timeline builds n samples one second apart for two GPUs from funcs.
func timeline(n int, util func(gpuIdx, i int) *float64, energy func(gpuIdx, i int) *float64, mem func(gpuIdx, i int) *uint64) []gpu.Sample {
	out := make([]gpu.Sample, n)
	for i := range n {
		s := gpu.Sample{Time: t0.Add(time.Duration(i) * time.Second)}
		for g := range 2 {
			gs := gpu.GPUSample{DeviceSample: gpu.DeviceSample{Index: g, GPUUtilPercent: util(g, i),
				MemUsedBytes: mem(g, i), MemTotalBytes: gpu.Ptr(uint64(80 << 30)), PowerWatts: gpu.Ptr(100 + float64(10*g))}}
			gs.EnergyJoules = energy(g, i)
			s.GPUs = append(s.GPUs, gs)
		}
		out[i] = s
	}
	return out
}

func TestWindowsMeanMinMax(t *testing.T) {
	samples := timeline(6,
		func(g, i int) *float64 {
			if g == 1 && i == 2 {
				return nil // unknown stays out of the stats
			}
			return gpu.Ptr(float64(10*i + g))
		},
		func(g, i int) *float64 { return gpu.Ptr(float64(i)) },
		func(g, i int) *uint64 { return gpu.Ptr(uint64(i) << 30) })
	ws := gpu.Windows(samples, 3*time.Second)
	if len(ws) != 4 {
		t.Fatalf("%d windows, want 2 windows x 2 GPUs", len(ws))
	}
	w := ws[1] // window 0, GPU 1: util 1, 11, (unknown)
	if w.GPU != 1 || !w.Start.Equal(t0) || !w.End.Equal(t0.Add(3*time.Second)) || w.Samples != 3 {
		t.Errorf("window %+v", w)
	}
	if u := w.GPUUtilPercent; u.N != 2 || u.Mean != 6 || u.Min != 1 || u.Max != 11 {
		t.Errorf("util %+v", u)
	}
	w = ws[2] // window 1, GPU 0: i = 3,4,5
	if u := w.GPUUtilPercent; u.Mean != 40 || u.Min != 30 || u.Max != 50 {
		t.Errorf("util %+v", u)
	}
	if *w.EnergyJoules != 12 || w.MemUsedBytes.Max != 5<<30 || w.SMActivityPercent != nil {
		t.Errorf("energy %v mem %+v sm %v", *w.EnergyJoules, w.MemUsedBytes, w.SMActivityPercent)
	}
	all := gpu.Windows(samples, 0)
	if len(all) != 2 || all[0].Samples != 6 || *all[0].EnergyJoules != 15 {
		t.Errorf("whole-run windows %+v", all)
	}
	var tot gpu.Totals
	for _, s := range samples {
		tot.Add(s)
	}
	if got := tot.GPUs(); len(got) != 2 || *got[0].GPUUtilPercent != *all[0].GPUUtilPercent || *got[1].EnergyJoules != 15 {
		t.Errorf("Totals %+v, want as Windows(samples, 0)", got)
	}
}

func TestSpanSummaries(t *testing.T) {
	samples := timeline(11,
		func(g, i int) *float64 { return gpu.Ptr(float64(50 + 10*g)) },
		func(g, i int) *float64 {
			if i == 0 {
				return nil
			}
			return gpu.Ptr(360.0) // 0.1 Wh per tick
		},
		func(g, i int) *uint64 { return gpu.Ptr(uint64(i+g) << 30) })
	spans := []gpu.Span{
		{Model: "qwen", Replica: "0", GPUs: []int{0, 1}, Start: t0.Add(2 * time.Second), End: t0.Add(6 * time.Second)},
		{Model: "llava", Replica: "1", GPUs: []int{1}, Start: t0.Add(8 * time.Second), End: t0.Add(20 * time.Second)},
		{Model: "early", GPUs: []int{0}, Start: t0.Add(-5 * time.Second), End: t0},
		{Model: "before", GPUs: []int{0}, Start: t0.Add(-5 * time.Second), End: t0.Add(-time.Second)},
	}
	got := gpu.SummarizeSpans(samples, spans)
	q := got[0] // ticks 3,4,5,6 on GPUs 0 and 1
	if q.GPUSeconds != 8 || q.Samples != 4 || math.Abs(*q.EnergyWh-0.8) > 1e-12 || *q.MeanGPUUtilPercent != 55 ||
		*q.PeakMemUsedBytes != 7<<30 || q.MeanSMActivityPercent != nil || *q.MeanPowerWatts != 105 {
		t.Errorf("qwen span %+v", q)
	}
	l := got[1] // ticks 9, 10 on GPU 1
	if l.GPUSeconds != 12 || l.Samples != 2 || math.Abs(*l.EnergyWh-0.2) > 1e-12 || *l.MeanGPUUtilPercent != 60 || *l.PeakMemUsedBytes != 11<<30 {
		t.Errorf("llava span %+v", l)
	}
	// The tick at t0 reports what ran before it: it belongs to "early",
	// whose energy is unknown (no previous tick) while its load is known.
	if e := got[2]; e.Samples != 1 || e.EnergyWh != nil || *e.MeanGPUUtilPercent != 50 {
		t.Errorf("early span %+v", e)
	}
	if e := got[3]; e.Samples != 0 || e.EnergyWh != nil || e.MeanGPUUtilPercent != nil || e.PeakMemUsedBytes != nil {
		t.Errorf("span before the samples must be unknown, not zero: %+v", e)
	}
}

func TestReadSamplesRoundTrip(t *testing.T) {
	samples := timeline(3, func(g, i int) *float64 { return gpu.Ptr(1.5) }, func(g, i int) *float64 { return nil },
		func(g, i int) *uint64 { return nil })
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, s := range samples {
		enc.Encode(s)
	}
	buf.WriteString(`{"time": "2025-03-01T09:00:03Z", "gpus": [`) // a torn last line
	got, err := gpu.ReadSamples(&buf)
	if err == nil || !strings.Contains(err.Error(), "record 4") {
		t.Errorf("torn log error %v", err)
	}
	if len(got) != 3 || !got[2].Time.Equal(samples[2].Time) || *got[1].GPUs[1].GPUUtilPercent != 1.5 || got[0].GPUs[0].EnergyJoules != nil {
		t.Errorf("read back %+v", got)
	}
}
