package report

import (
	"sort"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/score"
)

// SlowestItems is how many of each model's slowest answered requests the
// detail lists.
const SlowestItems = 10

// ModelDetail is everything the report shows about one model of the base
// run beyond Table 1.
type ModelDetail struct {
	Model string `json:"model"`
	// Scores are the model's scores from scores.json; nil when only the
	// journal knows the model.
	Scores *score.ModelResults `json:"scores,omitempty"`
	// Extraction tallies failed extractions (scored wrong) by task and kind.
	Extraction []ExtractionFailures `json:"extraction_failures"`
	// Slowest are the SlowestItems answered requests with the longest
	// end-to-end latency, slowest first.
	Slowest []SlowItem `json:"slowest"`
	// NotRun lists every request that never got an answer, with its
	// infrastructure failures.
	NotRun []NotRunItem `json:"not_run"`
}

// ExtractionFailures counts one task's (or answer field's) failed
// extractions by kind.
type ExtractionFailures struct {
	Task     string               `json:"task"`
	Failures []score.FailureCount `json:"failures"`
}

// SlowItem is one answered request and how long it took.
type SlowItem struct {
	Task             string  `json:"task"`
	Item             string  `json:"item"`
	Repeat           int     `json:"repeat"`
	E2Ems            float64 `json:"e2e_ms"`
	TTFTms           float64 `json:"ttft_ms"`
	CompletionTokens int     `json:"completion_tokens"`
	FinishReason     string  `json:"finish_reason"`
}

// NotRunItem is one request every attempt of which failed.
type NotRunItem struct {
	Task     string   `json:"task"`
	Item     string   `json:"item"`
	Patient  string   `json:"patient"`
	Repeat   int      `json:"repeat"`
	Attempts int      `json:"attempts"`
	Failures []string `json:"failures"`
}

// buildDetail collects the per-model detail of one run.
func buildDetail(reg *tasks.Registry, r *Run) []ModelDetail {
	var out []ModelDetail
	for _, model := range r.models() {
		d := ModelDetail{Model: model, Scores: r.result(model), Extraction: []ExtractionFailures{}, Slowest: []SlowItem{}, NotRun: []NotRunItem{}}
		if d.Scores != nil {
			d.Extraction = extractionFailures(reg, d.Scores)
		}
		var answered []journal.Record
		for _, rec := range r.Records {
			if rec.Model != model {
				continue
			}
			if rec.Status == journal.StatusAnswered && rec.Answer != nil {
				answered = append(answered, rec)
				continue
			}
			failures := rec.Failures
			if failures == nil {
				failures = []string{}
			}
			d.NotRun = append(d.NotRun, NotRunItem{Task: rec.Task, Item: rec.Item, Patient: rec.Patient, Repeat: rec.Repeat,
				Attempts: rec.Attempts, Failures: failures})
		}
		sort.SliceStable(answered, func(i, j int) bool {
			a, b := answered[i].Answer.Timing.E2Ems, answered[j].Answer.Timing.E2Ems
			if a != b {
				return a > b
			}
			return answered[i].Key < answered[j].Key
		})
		for _, rec := range answered[:min(len(answered), SlowestItems)] {
			d.Slowest = append(d.Slowest, SlowItem{Task: rec.Task, Item: rec.Item, Repeat: rec.Repeat,
				E2Ems: rec.Answer.Timing.E2Ems, TTFTms: rec.Answer.Timing.TTFTms,
				CompletionTokens: rec.Answer.Usage.CompletionTokens, FinishReason: rec.Answer.FinishReason})
		}
		out = append(out, d)
	}
	return out
}

// extractionFailures lists the failed extractions of every task scored
// alone, then of each composite by answer field (the combined T stage and
// the panel's direct T repeat t_cards and t_groups and are left out).
func extractionFailures(reg *tasks.Registry, m *score.ModelResults) []ExtractionFailures {
	out := []ExtractionFailures{}
	add := func(task string, f []score.FailureCount) {
		if len(f) > 0 {
			out = append(out, ExtractionFailures{Task: task, Failures: f})
		}
	}
	for _, t := range m.Tasks {
		add(t.Task, t.Score.Failures)
	}
	for _, c := range score.CardOf(reg).Composites {
		if c.Failures == nil {
			continue
		}
		for _, f := range c.Failures(m) {
			add(f.Name, f.Failures)
		}
	}
	return out
}

// taskScore is one closed-answer task score with the title the report
// gives it.
type taskScore struct {
	Key   string
	Title string
	Score *score.TaskScore
}

// taskTitle is a task's title, or its key when the registry does not know
// it.
func taskTitle(reg *tasks.Registry, key string) string {
	if t, err := reg.Task(key); err == nil && t.Title != "" {
		return t.Title
	}
	return key
}

// taskScores lists a model's closed-answer task scores in report order:
// the tasks scored alone, then the composites' class tables.
func taskScores(reg *tasks.Registry, m *score.ModelResults) []taskScore {
	if m == nil {
		return nil
	}
	var out []taskScore
	for i := range m.Tasks {
		out = append(out, taskScore{m.Tasks[i].Task, taskTitle(reg, m.Tasks[i].Task), &m.Tasks[i].Score})
	}
	for _, c := range score.CardOf(reg).Composites {
		if c.Tables == nil {
			continue
		}
		for _, t := range c.Tables(m) {
			out = append(out, taskScore{t.Key, t.Title, t.Score})
		}
	}
	return out
}
