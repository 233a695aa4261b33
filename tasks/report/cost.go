package report

import (
	"math"
	"slices"
	"sort"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/journal"
)

// Cost is what each model's requests took, from the journal, and what its
// GPUs used, from the gpu spans where the sampler ran.
type Cost struct {
	// Tasks has one row per run, model and task, then a row per run and
	// model with Task "all".
	Tasks []TaskCost `json:"tasks"`
	// GPU has one row per run and model.
	GPU []GPUCost `json:"gpu"`
	// Speeds has one row per run and model its engines were measured
	// on (the run's speeds.json); none when no run has that file.
	Speeds []SpeedCost `json:"speeds,omitempty"`
}

// SpeedCost is what one model's engines were measured to do in one run:
// the scheduler's estimate (token equivalents per second per
// A800-equivalent) against the registry's, with its 95 % interval, and
// what each replica served.
type SpeedCost struct {
	Run string `json:"run"`
	schedule.ModelSpeed
}

// AllTasks is the Task of a model's total cost row.
const AllTasks = "all"

// TaskCost is the request cost of one model on one task.
type TaskCost struct {
	Run   string `json:"run"`
	Model string `json:"model"`
	Task  string `json:"task"`
	// Requests counts journal records (answered and not run); Attempts
	// sums their attempts, retries included.
	Requests int `json:"requests"`
	Answered int `json:"answered"`
	NotRun   int `json:"not_run"`
	Attempts int `json:"attempts"`
	// Tokens as the engine reported them for answered requests.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// CachedTokens is nil ("not reported", never 0) unless the engine
	// reported cached prompt tokens for every answered request: a vLLM
	// started without --enable-prompt-tokens-details reports none.
	CachedTokens *int `json:"cached_tokens"`
	// WorkTokens are prompt tokens not served from cache plus completion
	// tokens (inference.Usage.WorkTokens); nil when CachedTokens is.
	WorkTokens *int `json:"work_tokens"`
	// TTFT, TPOT and E2E are client-side latency percentiles over answered
	// requests, in milliseconds. TPOT leaves out answers of one token.
	TTFT Percentiles `json:"ttft_ms"`
	TPOT Percentiles `json:"tpot_ms"`
	E2E  Percentiles `json:"e2e_ms"`
}

// Percentiles are the 50th, 90th and 99th percentiles of N values, by
// linear interpolation between order statistics (numpy's default, as `vllm
// bench serve` reports them); nil when N is 0.
type Percentiles struct {
	N   int      `json:"n"`
	P50 *float64 `json:"p50,omitempty"`
	P90 *float64 `json:"p90,omitempty"`
	P99 *float64 `json:"p99,omitempty"`
}

// GPUCost is what one model's engine spans cost on the GPUs.
type GPUCost struct {
	Run   string `json:"run"`
	Model string `json:"model"`
	// Spans counts the model's replica spans.
	Spans int `json:"spans"`
	// GPUSeconds is the GPUs held times each span's length; nil when the
	// run recorded no span for the model ("not measured", never 0).
	GPUSeconds *float64 `json:"gpu_seconds"`
	// EnergyWh is the energy the spans' GPUs used, from the driver's
	// counters; nil when the sampler did not run or never knew it.
	EnergyWh *float64 `json:"energy_wh"`
	// MeanGPUUtilPercent averages NVML utilization over the spans' GPUs
	// and ticks, weighted by ticks; nil when unknown.
	MeanGPUUtilPercent *float64 `json:"mean_gpu_util_pct"`
	// PeakMemUsedBytes is the most memory any one of the model's GPUs
	// used; nil when unknown.
	PeakMemUsedBytes *uint64 `json:"peak_mem_used_bytes"`
}

// percentiles computes Percentiles of values (which it sorts).
func percentiles(values []float64) Percentiles {
	p := Percentiles{N: len(values)}
	if len(values) == 0 {
		return p
	}
	sort.Float64s(values)
	at := func(q float64) *float64 {
		h := q * float64(len(values)-1)
		i := int(math.Floor(h))
		v := values[len(values)-1]
		if i+1 < len(values) {
			v = values[i] + (h-float64(i))*(values[i+1]-values[i])
		}
		return &v
	}
	p.P50, p.P90, p.P99 = at(0.50), at(0.90), at(0.99)
	return p
}

// costAcc accumulates one TaskCost.
type costAcc struct {
	row             TaskCost
	cached, work    int
	unreported      bool // an answered request lacked cached tokens
	ttft, tpot, e2e []float64
}

func (a *costAcc) add(rec journal.Record) {
	a.row.Requests++
	a.row.Attempts += rec.Attempts
	if rec.Status != journal.StatusAnswered || rec.Answer == nil {
		a.row.NotRun++
		return
	}
	a.row.Answered++
	u := rec.Answer.Usage
	a.row.PromptTokens += u.PromptTokens
	a.row.CompletionTokens += u.CompletionTokens
	if w, ok := u.WorkTokens(); ok {
		a.cached += *u.CachedTokens
		a.work += w
	} else {
		a.unreported = true
	}
	tm := rec.Answer.Timing
	a.ttft = append(a.ttft, tm.TTFTms)
	a.e2e = append(a.e2e, tm.E2Ems)
	if tm.TPOTms > 0 {
		a.tpot = append(a.tpot, tm.TPOTms)
	}
}

func (a *costAcc) done() TaskCost {
	r := a.row
	if !a.unreported && r.Answered > 0 {
		cached, work := a.cached, a.work
		r.CachedTokens, r.WorkTokens = &cached, &work
	}
	r.TTFT, r.TPOT, r.E2E = percentiles(a.ttft), percentiles(a.tpot), percentiles(a.e2e)
	return r
}

// buildCost computes the cost rows of every run: tasks in registry order
// as they appear in the journal (unknown ones by name), models in run
// order.
func buildCost(reg *tasks.Registry, runs []*Run) Cost {
	var c Cost
	for _, r := range runs {
		if r.Speeds != nil {
			for _, m := range r.Speeds.Models {
				c.Speeds = append(c.Speeds, SpeedCost{Run: r.Name, ModelSpeed: m})
			}
		}
	}
	for _, r := range runs {
		for _, model := range r.models() {
			byTask := map[string]*costAcc{}
			var order []string
			total := &costAcc{row: TaskCost{Run: r.Name, Model: model, Task: AllTasks}}
			for _, rec := range r.Records {
				if rec.Model != model {
					continue
				}
				a := byTask[rec.Task]
				if a == nil {
					a = &costAcc{row: TaskCost{Run: r.Name, Model: model, Task: rec.Task}}
					byTask[rec.Task] = a
					order = append(order, rec.Task)
				}
				a.add(rec)
				total.add(rec)
			}
			sortTasks(reg.Keys(), order)
			for _, task := range order {
				c.Tasks = append(c.Tasks, byTask[task].done())
			}
			if len(order) > 0 {
				c.Tasks = append(c.Tasks, total.done())
			}
			c.GPU = append(c.GPU, gpuCost(r, model))
		}
	}
	return c
}

// sortTasks orders task keys as the campaign runs them (order), unknown ones last
// by name.
func sortTasks(order, keys []string) {
	rank := func(k string) int {
		if i := slices.Index(order, k); i >= 0 {
			return i
		}
		return math.MaxInt
	}
	sort.SliceStable(keys, func(i, j int) bool {
		ri, rj := rank(keys[i]), rank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
}

// gpuCost sums a model's spans. GPU-seconds come from the spans alone;
// energy, utilization and memory need the sampler.
func gpuCost(r *Run, model string) GPUCost {
	g := GPUCost{Run: r.Name, Model: model}
	var spans []gpu.Span
	for _, sp := range r.Spans {
		if sp.Model == model {
			spans = append(spans, sp)
		}
	}
	g.Spans = len(spans)
	if len(spans) == 0 {
		return g
	}
	var seconds, energy, utilSum float64
	var utilTicks int
	energyKnown := false
	for _, s := range gpu.SummarizeSpans(r.Samples, spans) {
		seconds += s.GPUSeconds
		if s.EnergyWh != nil {
			energy += *s.EnergyWh
			energyKnown = true
		}
		if s.MeanGPUUtilPercent != nil && s.Samples > 0 {
			utilSum += *s.MeanGPUUtilPercent * float64(s.Samples)
			utilTicks += s.Samples
		}
		if s.PeakMemUsedBytes != nil && (g.PeakMemUsedBytes == nil || *s.PeakMemUsedBytes > *g.PeakMemUsedBytes) {
			g.PeakMemUsedBytes = gpu.Ptr(*s.PeakMemUsedBytes)
		}
	}
	g.GPUSeconds = &seconds
	if energyKnown {
		g.EnergyWh = &energy
	}
	if utilTicks > 0 {
		g.MeanGPUUtilPercent = gpu.Ptr(utilSum / float64(utilTicks))
	}
	return g
}
