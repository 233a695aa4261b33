package report

import (
	"sort"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
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
	Scores *tasks.ModelResults `json:"scores,omitempty"`
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
func buildDetail(r *Run) []ModelDetail {
	var out []ModelDetail
	for _, model := range r.models() {
		d := ModelDetail{Model: model, Scores: r.result(model), Extraction: []ExtractionFailures{}, Slowest: []SlowItem{}, NotRun: []NotRunItem{}}
		if d.Scores != nil {
			d.Extraction = extractionFailures(*d.Scores)
		}
		var answered []tasks.Record
		for _, rec := range r.Records {
			if rec.Model != model {
				continue
			}
			if rec.Status == tasks.StatusAnswered && rec.Answer != nil {
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

// extractionFailures lists the failed extractions of every scored task;
// the combined T stage and the panel's direct T repeat t_cards/t_groups
// and are left out.
func extractionFailures(m tasks.ModelResults) []ExtractionFailures {
	out := []ExtractionFailures{}
	add := func(task string, f []score.FailureCount) {
		if len(f) > 0 {
			out = append(out, ExtractionFailures{Task: task, Failures: f})
		}
	}
	for _, t := range m.Tasks {
		add(t.Task, t.Score.Failures)
	}
	if ev := m.Evidence; ev != nil {
		add(configs.TaskCard+" structure", ev.StructureFailures)
		add(configs.TaskCard+" invasion", ev.InvasionFailures)
	}
	if cp := m.CarePath; cp != nil {
		add(configs.TaskCPPathology, cp.Pathology.Failures)
		add(configs.TaskCPMRI, cp.TStage.Failures)
		add(configs.TaskCPCare, cp.CareFailures)
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

// taskTitles name the tasks as the paper does.
var taskTitles = map[string]string{
	configs.TaskPathology:   "Pathology (L3, A5)",
	configs.TaskSequence:    "MRI sequence (L3, A6)",
	configs.TaskTCards:      "T stage from cards (L3, A8)",
	configs.TaskTGroups:     "T stage from plane groups (L3, A9)",
	configs.TaskNGroups:     "N stage (L3, A10)",
	configs.TaskCPPathology: "CarePath pathology (L6, A11)",
	configs.TaskCPMRI:       "CarePath MRI T stage (L6, A12)",
	configs.TaskCPCare:      "CarePath care decisions (L6, A13)",
	configs.TaskCard:        "Structure cards (L3, A7)",
}

func taskTitle(key string) string {
	if t, ok := taskTitles[key]; ok {
		return t
	}
	return key
}

// taskScores lists a model's closed-answer task scores in report order.
func taskScores(m *tasks.ModelResults) []taskScore {
	if m == nil {
		return nil
	}
	var out []taskScore
	for i := range m.Tasks {
		out = append(out, taskScore{m.Tasks[i].Task, taskTitle(m.Tasks[i].Task), &m.Tasks[i].Score})
	}
	if m.TStage != nil {
		out = append(out, taskScore{"t_stage", "T stage, both presentations (T-Stg.)", m.TStage})
	}
	if m.Evidence != nil && m.Evidence.DirectTClasses != nil {
		out = append(out, taskScore{"direct_t", "Direct T on the anatomical panel", m.Evidence.DirectTClasses})
	}
	if m.CarePath != nil {
		out = append(out, taskScore{configs.TaskCPPathology, taskTitle(configs.TaskCPPathology), &m.CarePath.Pathology},
			taskScore{configs.TaskCPMRI, taskTitle(configs.TaskCPMRI), &m.CarePath.TStage})
	}
	return out
}
