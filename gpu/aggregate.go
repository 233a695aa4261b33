package gpu

import (
	"math"
	"slices"
	"time"
)

// Stat summarises one quantity over a window: the mean, minimum and maximum
// of the readings that were known, and how many there were.
type Stat struct {
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	N    int     `json:"n"`
}

// acc accumulates known readings into a Stat.
type acc struct {
	sum, min, max float64
	n             int
}

func (a *acc) add(v float64) {
	if a.n == 0 || v < a.min {
		a.min = v
	}
	if a.n == 0 || v > a.max {
		a.max = v
	}
	a.sum += v
	a.n++
}

func addPtr[T int | uint64 | float64](a *acc, v *T) {
	if v != nil {
		a.add(float64(*v))
	}
}

// stat returns nil when no reading was known: never a zero that looks real.
func (a acc) stat() *Stat {
	if a.n == 0 {
		return nil
	}
	return &Stat{Mean: a.sum / float64(a.n), Min: a.min, Max: a.max, N: a.n}
}

// GPUWindow summarises one GPU over one window of samples.
type GPUWindow struct {
	GPU     int       `json:"gpu"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Samples int       `json:"samples"`
	// Each Stat is nil when no sample in the window knew the value.
	GPUUtilPercent    *Stat `json:"gpu_util_pct"`
	MemUtilPercent    *Stat `json:"mem_util_pct"`
	SMActivityPercent *Stat `json:"sm_active_pct"`
	MemUsedBytes      *Stat `json:"mem_used_bytes"`
	PowerWatts        *Stat `json:"power_w"`
	TemperatureC      *Stat `json:"temp_c"`
	SMClockMHz        *Stat `json:"sm_clock_mhz"`
	// EnergyJoules sums the per-tick energy of the window's samples; nil
	// when none was known.
	EnergyJoules *float64 `json:"energy_j"`
}

// windowAcc accumulates one GPUWindow.
type windowAcc struct {
	w                                                GPUWindow
	util, memUtil, sm, memUsed, power, temp, smClock acc
	energy                                           float64
	energyKnown                                      bool
}

func (a *windowAcc) add(g GPUSample) {
	a.w.Samples++
	addPtr(&a.util, g.GPUUtilPercent)
	addPtr(&a.memUtil, g.MemUtilPercent)
	addPtr(&a.sm, g.SMActivityPercent)
	addPtr(&a.memUsed, g.MemUsedBytes)
	addPtr(&a.power, g.PowerWatts)
	addPtr(&a.temp, g.TemperatureC)
	addPtr(&a.smClock, g.SMClockMHz)
	if g.EnergyJoules != nil {
		a.energy += *g.EnergyJoules
		a.energyKnown = true
	}
}

func (a *windowAcc) done() GPUWindow {
	w := a.w
	w.GPUUtilPercent, w.MemUtilPercent, w.SMActivityPercent = a.util.stat(), a.memUtil.stat(), a.sm.stat()
	w.MemUsedBytes, w.PowerWatts, w.TemperatureC, w.SMClockMHz = a.memUsed.stat(), a.power.stat(), a.temp.stat(), a.smClock.stat()
	if a.energyKnown {
		w.EnergyJoules = Ptr(a.energy)
	}
	return w
}

// Windows summarises samples per GPU over consecutive windows of the given
// width, starting at the first sample's time; width <= 0 makes one window
// spanning all samples. Samples must be in time order. The result is
// ordered by window, then GPU; windows without samples are left out.
func Windows(samples []Sample, width time.Duration) []GPUWindow {
	if len(samples) == 0 {
		return nil
	}
	t0, tEnd := samples[0].Time, samples[len(samples)-1].Time
	type key struct{ window, gpu int }
	accs := map[key]*windowAcc{}
	for _, s := range samples {
		k := 0
		start, end := t0, tEnd
		if width > 0 {
			k = int(s.Time.Sub(t0) / width)
			start = t0.Add(time.Duration(k) * width)
			end = start.Add(width)
		}
		for _, g := range s.GPUs {
			a := accs[key{k, g.Index}]
			if a == nil {
				a = &windowAcc{w: GPUWindow{GPU: g.Index, Start: start, End: end}}
				accs[key{k, g.Index}] = a
			}
			a.add(g)
		}
	}
	keys := make([]key, 0, len(accs))
	for k := range accs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.window != b.window {
			return a.window - b.window
		}
		return a.gpu - b.gpu
	})
	out := make([]GPUWindow, len(keys))
	for i, k := range keys {
		out[i] = accs[k].done()
	}
	return out
}

// Span is the time a model replica served on a set of GPUs: from engine
// ready to engine stopped, as the launcher records it.
type Span struct {
	Model   string    `json:"model"`
	Replica string    `json:"replica"`
	GPUs    []int     `json:"gpus"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
}

// SpanSummary is what a [Span] cost and how busy it kept its GPUs.
type SpanSummary struct {
	Span
	// GPUSeconds is the GPUs held times the span's length.
	GPUSeconds float64 `json:"gpu_seconds"`
	// Samples counts the sampler ticks inside the span.
	Samples int `json:"samples"`
	// EnergyWh is the energy the span's GPUs used, from the driver's
	// counters; nil when no tick inside the span knew it.
	EnergyWh *float64 `json:"energy_wh"`
	// MeanGPUUtilPercent and MeanSMActivityPercent average over the span's
	// GPUs and ticks; nil when unknown.
	MeanGPUUtilPercent    *float64 `json:"mean_gpu_util_pct"`
	MeanSMActivityPercent *float64 `json:"mean_sm_active_pct"`
	MeanPowerWatts        *float64 `json:"mean_power_w"`
	// PeakMemUsedBytes is the most memory used on any one of the span's
	// GPUs during the span.
	PeakMemUsedBytes *uint64 `json:"peak_mem_used_bytes"`
}

// SummarizeSpans summarises each span from the samples whose time falls in
// (Start, End]: a tick reports the period that ends at its time, so the
// tick at Start belongs to what ran before.
func SummarizeSpans(samples []Sample, spans []Span) []SpanSummary {
	out := make([]SpanSummary, len(spans))
	for i, sp := range spans {
		sum := SpanSummary{Span: sp, GPUSeconds: float64(len(sp.GPUs)) * sp.End.Sub(sp.Start).Seconds()}
		var util, sm, power acc
		var energyJ float64
		energyKnown := false
		var peak *uint64
		for _, s := range samples {
			if !s.Time.After(sp.Start) || s.Time.After(sp.End) {
				continue
			}
			sum.Samples++
			for _, g := range s.GPUs {
				if !slices.Contains(sp.GPUs, g.Index) {
					continue
				}
				addPtr(&util, g.GPUUtilPercent)
				addPtr(&sm, g.SMActivityPercent)
				addPtr(&power, g.PowerWatts)
				if g.EnergyJoules != nil {
					energyJ += *g.EnergyJoules
					energyKnown = true
				}
				if g.MemUsedBytes != nil && (peak == nil || *g.MemUsedBytes > *peak) {
					peak = Ptr(*g.MemUsedBytes)
				}
			}
		}
		if energyKnown {
			sum.EnergyWh = Ptr(energyJ / 3600)
		}
		sum.MeanGPUUtilPercent, sum.MeanSMActivityPercent, sum.MeanPowerWatts = mean(util), mean(sm), mean(power)
		sum.PeakMemUsedBytes = peak
		out[i] = sum
	}
	return out
}

func mean(a acc) *float64 {
	if s := a.stat(); s != nil && !math.IsNaN(s.Mean) {
		return &s.Mean
	}
	return nil
}

// Totals summarises a stream of samples per GPU over the whole stream, in
// constant memory; the monitor uses it for its closing summary. The zero
// value is ready to use.
type Totals struct {
	accs  map[int]*windowAcc
	order []int
}

// Add folds one sample in.
func (t *Totals) Add(s Sample) {
	if t.accs == nil {
		t.accs = map[int]*windowAcc{}
	}
	for _, g := range s.GPUs {
		a := t.accs[g.Index]
		if a == nil {
			a = &windowAcc{w: GPUWindow{GPU: g.Index, Start: s.Time}}
			t.accs[g.Index] = a
			t.order = append(t.order, g.Index)
			slices.Sort(t.order)
		}
		a.w.End = s.Time
		a.add(g)
	}
}

// GPUs returns one window per GPU seen, in index order.
func (t *Totals) GPUs() []GPUWindow {
	out := make([]GPUWindow, 0, len(t.order))
	for _, i := range t.order {
		out = append(out, t.accs[i].done())
	}
	return out
}
