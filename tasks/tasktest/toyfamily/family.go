// Package toyfamily is a benchmark family made to prove that a family is
// one package beside the others (docs/architecture.md, "Adding a benchmark
// family"): a closed question (ToyChoice, one option letter per pathology
// overview, scored alone) and a free-text question judged criterion by
// criterion (ToyConsult, judged by ToyJudge through package tasks/judge and
// scored by a composite of its own Card). It imports only the contract
// (package tasks) and the shared rooms (judge, score, extract, dataset),
// and nothing imports it but its test: a real family would be named once
// more, in the campaign's registry list.
package toyfamily

import (
	"embed"
	"fmt"
	"io/fs"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/judge"
	"github.com/npcorch/npcorch/tasks/score"
)

// The family's task keys.
const (
	ToyChoice  = "toy_choice"
	ToyConsult = "toy_consult"
	ToyJudge   = "toy_judge"
)

//go:embed prompts/*.tmpl
var prompts embed.FS

// Prompts are the family's prompt templates, one per task, in folder
// "prompts" (tasks.LoadPrompts(Prompts(), "prompts", reg)).
func Prompts() fs.FS { return prompts }

// Registry is the family's tasks and how their answers are scored.
func Registry(st *configs.Structures) *tasks.Registry {
	return tasks.MustRegistry(tasks.Benchmark{Structures: st,
		Tasks: []*tasks.Task{choice(), consult(), judgeTask()},
		Scoring: &score.Card{
			Composites: []*score.Composite{{Name: "toy_rubric", Tasks: []string{ToyConsult}, Score: scoreRubric}},
			Table:      []score.Column{score.TaskColumn("Choice", "T1", ToyChoice), rubricColumn()},
		}})
}

// choice is the closed question: the overview of a pathology patient,
// "B" for a carcinoma and "A" for normal tissue.
func choice() *tasks.Task {
	return &tasks.Task{
		Key: ToyChoice, Level: "T1", Title: "Toy closed question",
		Cohort: dataset.CohortPathology, Images: []string{dataset.KindOverview},
		Build: func(b *tasks.Builder) {
			for p, pp := range b.Patients() {
				if p.Pathology == nil || pp.Overview == nil {
					b.Problem(b.ItemID(p.ID), "the patient has no pathology overview")
					continue
				}
				gold := map[int]string{0: "A", 1: "B"}[p.Pathology.Label]
				b.Add(tasks.Item{ID: b.ItemID(p.ID), Patient: p.ID, Images: []dataset.Image{*pp.Overview}, Gold: tasks.Gold{Label: gold}})
			}
		},
		Answer:      func(_ tasks.Item, content string) extract.Label { return extract.Care(content, []string{"A", "B"}) },
		Classes:     []string{"A", "B"},
		ScoredAlone: true,
		Sim: tasks.Sim{Marker: "Toy family, closed question.", Answers: func(it tasks.Item) tasks.SimAnswers {
			wrong := map[string]string{"A": "B", "B": "A"}[it.Gold.Label]
			return tasks.SimAnswers{Right: "Answer: " + it.Gold.Label, Wrong: []string{"Answer: " + wrong}, Constant: "A"}
		}},
		Paper: schedule.RequestMix{Requests: 10, MinImages: 1, MaxImages: 1, TextTokens: 100, MaxTokens: 16},
	}
}

// consult is the free-text question: one item per question of each
// consultation case; its answer is judged, never extracted.
func consult() *tasks.Task {
	return &tasks.Task{
		Key: ToyConsult, Level: "T2", Title: "Toy free-text question",
		Cohort: dataset.CohortConsult,
		Build: func(b *tasks.Builder) {
			for _, c := range b.Consultations() {
				for _, q := range c.Questions {
					b.Add(tasks.Item{ID: b.ItemID(c.ID, q.ID), Patient: c.ID, Consult: &tasks.Consult{
						CaseID: c.ID, Case: c.Case, Question: q.Question, Tags: q.Tags, Criteria: q.Criteria}})
				}
			}
		},
		Sim:   tasks.Sim{Recognise: wholePrompt, Answers: consultAnswers, More: judgeEntries},
		Paper: schedule.RequestMix{Requests: 5, TextTokens: 300, MaxTokens: 256},
	}
}

// judgeTask judges ToyConsult's answers, one request per (answer,
// criterion).
func judgeTask() *tasks.Task {
	return &tasks.Task{
		Key: ToyJudge, Level: "T2", Title: "Toy judge",
		Cohort: dataset.CohortConsult,
		Judges: ToyConsult,
		Sim: tasks.Sim{Recognise: wholePrompt, Answers: func(it tasks.Item) tasks.SimAnswers {
			return tasks.SimAnswers{Verdict: judgeEntry(it, it.Consult.Judged.Criterion).Verdict}
		}},
		Paper: schedule.RequestMix{Requests: 10, TextTokens: 400, MaxTokens: 256},
	}
}

func wholePrompt(_ tasks.Item, prompt string) string { return prompt }

// Statement is what the simulated model says to meet a criterion: its id
// in parentheses, then its text.
func Statement(c dataset.Criterion) string { return "(" + c.ID + ") " + c.Text }

// consultAnswers: a right part per positive requirement, a wrong one per
// error criterion.
func consultAnswers(it tasks.Item) tasks.SimAnswers {
	var parts []simkey.Part
	for _, c := range it.Consult.Criteria {
		parts = append(parts, simkey.Part{ID: c.ID, Text: Statement(c), Right: c.Positive()})
	}
	return tasks.SimAnswers{Parts: parts, Constant: "I cannot say."}
}

// judgeEntries are the judge's sim-key entries of a consultation item.
func judgeEntries(it tasks.Item) []simkey.Item {
	var out []simkey.Item
	for _, c := range it.Consult.Criteria {
		out = append(out, judgeEntry(it, c))
	}
	return out
}

func judgeEntry(it tasks.Item, c dataset.Criterion) simkey.Item {
	return simkey.Item{
		ID:       judge.ItemID(ToyJudge, &tasks.Judged{Item: it.ID, Criterion: c}),
		Contains: "Criterion:\n" + tasks.SignedCriterion(c) + "\n",
		Also:     []string{"Toy family judge.", "Case:\n" + it.Consult.Case + "\n", "Question:\n" + it.Consult.Question + "\nResponse:"},
		Verdict:  &simkey.Verdict{Claim: Statement(c), From: "Response:\n", To: "\nCriterion:\n"},
	}
}

// scoreRubric scores the judged answers under each judge, as O1 does
// (score.O1: points met over points possible, errors deducted).
func scoreRubric(a *score.Answers, mr *score.ModelResults) error {
	judgeKey, judges := a.Judges(ToyConsult)
	for _, jm := range judges {
		var items []score.JudgedItem
		for _, it := range a.Items(ToyConsult) {
			items = append(items, a.Judged(judgeKey, jm, it))
		}
		s, err := score.O1(items, nil, a.Options())
		if err != nil {
			return fmt.Errorf("judge %s: %w", jm, err)
		}
		mr.Rubric = append(mr.Rubric, score.RubricResult{Judge: jm, Score: s})
	}
	return nil
}

// rubricColumn is the judged question's column: its score under the first
// judge.
func rubricColumn() score.Column {
	return score.Column{Name: "Free text", Level: "T2", Pick: func(m score.ModelResults) (*score.Score, bool) {
		if len(m.Rubric) == 0 {
			return nil, true
		}
		return m.Rubric[0].Score.Score, m.Rubric[0].Score.Complete
	}}
}
