package schedule

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/npcorch/npcorch/launcher/placement"
)

// Seconds is a time in seconds since the campaign began; JSON carries the
// number, text output "2h05m".
type Seconds float64

// secs converts d to Seconds, rounded to the millisecond.
func secs(d time.Duration) Seconds { return Seconds(d.Round(time.Millisecond).Seconds()) }

// String writes the time as "2h05m", "12m30s" or "45s".
func (s Seconds) String() string { return fmtDur(time.Duration(float64(s) * float64(time.Second))) }

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, sec := int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, sec)
	}
	return fmt.Sprintf("%ds", sec)
}

// WaveKind says why a wave was started.
type WaveKind string

// Wave kinds.
const (
	WaveStart    WaveKind = "start"     // a model's first replicas
	WaveRetry    WaveKind = "retry"     // replicas after a failed start, elsewhere
	WaveScaleOut WaveKind = "scale-out" // extra replicas on GPUs that would idle
)

// Wave is one placement decision: replicas of one model started together.
type Wave struct {
	ID       int      `json:"id"`
	Model    string   `json:"model"`
	Kind     WaveKind `json:"kind"`
	TP       int      `json:"tp"`
	Replicas int      `json:"replicas"`
	// APIServers is each replica's API server processes.
	APIServers int     `json:"api_servers"`
	GPUs       [][]int `json:"gpus"`
	// Start is when the engines were asked to start, Ready when the last of
	// them was ready, End when the last was stopped (GPUs free again).
	Start Seconds `json:"start_s"`
	Ready Seconds `json:"ready_s,omitempty"`
	End   Seconds `json:"end_s,omitempty"`
	// Throughput is the GPUs' in A800-equivalents; TokensPerS the
	// estimated rate, image preprocessing included.
	Throughput float64 `json:"throughput"`
	TokensPerS float64 `json:"tokens_per_s"`
	// Failed counts replicas of the wave that failed.
	Failed int `json:"failed,omitempty"`

	endLeft int
}

// EngineFailure is one engine that failed to start or died for good.
type EngineFailure struct {
	Model   string    `json:"model"`
	Replica ReplicaID `json:"replica"`
	Index   int       `json:"index"`
	TP      int       `json:"tp"`
	GPUs    []int     `json:"gpus"`
	At      Seconds   `json:"at_s"`
	Err     string    `json:"error"`
}

// ModelPlan is one model's line in the plan.
type ModelPlan struct {
	Model        string      `json:"model"`
	Status       ModelStatus `json:"status"`
	Requests     int         `json:"requests"`
	PromptTokens int64       `json:"prompt_tokens"`
	OutputTokens int64       `json:"output_tokens"`
	Images       int64       `json:"images"`
	// Work is in token equivalents (prompt + DecodeCost × output).
	Work float64 `json:"work"`
	// Best is the highest-throughput placement on the idle node, e.g.
	// "TP2×4"; Single the best single engine.
	Best   string `json:"best,omitempty"`
	Single string `json:"single,omitempty"`
	// Start, WorkEnd and End: first engine asked to start, last request
	// done, last engine stopped.
	Start   Seconds `json:"start_s"`
	WorkEnd Seconds `json:"work_end_s,omitempty"`
	End     Seconds `json:"end_s,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// Plan is a campaign schedule, simulated or as it happened.
type Plan struct {
	Node  string `json:"node"`
	GPUs  int    `json:"gpus"`
	Waves []Wave `json:"waves"`
	// Models are in scheduling priority order, then the rest.
	Models   []ModelPlan `json:"models"`
	Makespan Seconds     `json:"makespan_s"`
	// LowerBound, Naive and Sequential: see Bounds.
	LowerBound Seconds `json:"lower_bound_s"`
	Naive      Seconds `json:"naive_s"`
	Sequential Seconds `json:"sequential_s"`
	// Ratio is Makespan / LowerBound; Speedup is Naive / Makespan and
	// SpeedupSequential Sequential / Makespan.
	Ratio             float64               `json:"ratio"`
	Speedup           float64               `json:"speedup"`
	SpeedupSequential float64               `json:"speedup_sequential"`
	Failures          []EngineFailure       `json:"failures,omitempty"`
	Rejections        []placement.Rejection `json:"rejections,omitempty"`
	// Replans are the re-plans on measured speeds, Speeds the measured
	// speeds at the end; both are absent when no speed was measured.
	Replans []Replan `json:"replans,omitempty"`
	Speeds  *Speeds  `json:"speeds,omitempty"`
	// Notes say how the plan was chosen, where that is not the usual way
	// (models run one at a time when overlapping them would be slower).
	Notes []string `json:"notes,omitempty"`
}

// Plan reports the schedule so far; after Done it is the whole campaign.
func (s *Scheduler) Plan() *Plan {
	p := &Plan{
		Node: s.cfg.Node.Name, GPUs: len(s.gpus),
		LowerBound: secs(s.bounds.LowerBound), Naive: secs(s.bounds.Naive), Sequential: secs(s.bounds.Sequential),
		Failures: append([]EngineFailure(nil), s.failures...),
		Replans:  s.Replans(), Speeds: s.Speeds(), Notes: slices.Clone(s.notes),
	}
	for _, w := range s.waves {
		w.GPUs = append([][]int(nil), w.GPUs...)
		p.Waves = append(p.Waves, w)
	}
	var makespan time.Duration
	for _, ms := range s.models {
		mp := ModelPlan{
			Model: ms.m.Name, Status: ms.status, Requests: ms.w.Requests,
			PromptTokens: ms.w.PromptTokens, OutputTokens: ms.w.OutputTokens, Images: ms.w.Images, Work: ms.work, Note: ms.note,
		}
		if ms.best.Replicas > 0 {
			mp.Best = fmt.Sprintf("TP%d×%d", ms.best.TP, ms.best.Replicas)
			mp.Single = fmt.Sprintf("TP%d×%d", ms.single.TP, ms.single.Replicas)
		}
		if ms.started {
			mp.Start, mp.WorkEnd, mp.End = secs(ms.start), secs(ms.workEnd), secs(ms.end)
			makespan = max(makespan, ms.end)
		}
		p.Models = append(p.Models, mp)
		for _, r := range ms.rejections {
			if r.Reason != placement.ReasonFreeMemory {
				p.Rejections = append(p.Rejections, r)
			}
		}
	}
	p.Makespan = secs(makespan)
	if makespan > 0 {
		p.Ratio = round3(float64(makespan) / float64(max(s.bounds.LowerBound, 1)))
		p.Speedup = round3(float64(s.bounds.Naive) / float64(makespan))
		p.SpeedupSequential = round3(float64(s.bounds.Sequential) / float64(makespan))
	}
	return p
}

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// WriteText writes the plan as tables people read: the waves, the models,
// the totals and every rejection and failure.
func (p *Plan) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	unit := "GPUs"
	if p.GPUs == 1 {
		unit = "GPU"
	}
	fmt.Fprintf(ew, "node %s, %d %s\n\n", p.Node, p.GPUs, unit)
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WAVE\tMODEL\tKIND\tPLACEMENT\tAPI\tGPUS\tSTART\tREADY\tEND\tTOK/S")
	for _, wv := range p.Waves {
		groups := make([]string, len(wv.GPUs))
		for i, g := range wv.GPUs {
			groups[i] = strings.Trim(strings.ReplaceAll(fmt.Sprint(g), " ", ","), "[]")
		}
		ready, end := "-", "-"
		if wv.Ready > 0 {
			ready = wv.Ready.String()
		}
		if wv.End > 0 {
			end = wv.End.String()
		}
		kind := string(wv.Kind)
		if wv.Failed > 0 {
			kind += fmt.Sprintf(" (%d failed)", wv.Failed)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\tTP%d×%d\t%d\t%s\t%s\t%s\t%s\t%.0f\n", wv.ID, wv.Model, kind, wv.TP, wv.Replicas,
			max(wv.APIServers, 1), strings.Join(groups, " "), wv.Start, ready, end, wv.TokensPerS)
	}
	tw.Flush()
	fmt.Fprintln(ew)
	tw = tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tSTATUS\tREQUESTS\tIMAGES\tPROMPT TOK\tOUTPUT TOK\tBEST\tSINGLE\tSTART\tEND")
	for _, m := range p.Models {
		start, end := "-", "-"
		if m.End > 0 {
			start, end = m.Start.String(), m.End.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", m.Model, m.Status, m.Requests, m.Images, m.PromptTokens,
			m.OutputTokens, dash(m.Best), dash(m.Single), start, end)
	}
	tw.Flush()
	fmt.Fprintf(ew, "\nmakespan     %s\n", p.Makespan)
	fmt.Fprintf(ew, "lower bound  %s  (makespan / lower bound = %.3f)\n", p.LowerBound, p.Ratio)
	fmt.Fprintf(ew, "naive        %s  (one model at a time, one engine each; %.2f× the makespan)\n", p.Naive, p.Speedup)
	fmt.Fprintf(ew, "sequential   %s  (one model at a time, best TP × replicas; %.2f× the makespan)\n", p.Sequential, p.SpeedupSequential)
	for _, n := range p.Notes {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	for _, m := range p.Models {
		if m.Note != "" {
			fmt.Fprintf(ew, "%s %s: %s\n", m.Status, m.Model, m.Note)
		}
	}
	if len(p.Failures) > 0 {
		fmt.Fprintln(ew, "\nengine failures:")
		for _, f := range p.Failures {
			fmt.Fprintf(ew, "  %s  %s TP%d on %s: %s\n", f.At, ReplicaName(f.Model, f.Index), f.TP, placement.GPUList(f.GPUs), f.Err)
		}
	}
	p.writeSpeeds(ew)
	if len(p.Rejections) > 0 {
		fmt.Fprintln(ew, "\nrejected placements:")
		for _, r := range p.Rejections {
			fmt.Fprintf(ew, "  %s\n", r.Message)
		}
	}
	return ew.err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// errWriter keeps the first write error so the text code stays readable.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}
