package tasks

import (
	"fmt"

	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// Composite is an endpoint computed over the answers of several tasks (T
// stage over both presentations, the anatomical panel, a CarePath
// episode), registered beside the tasks, and what reports show of it.
type Composite struct {
	// Name says what the composite scores ("t_stage").
	Name string
	// Tasks are the tasks whose answers it reads; it scores a model when
	// any of them has items in the run.
	Tasks []string
	// Score scores one model's answers into the model's results.
	Score func(a *Answers, mr *ModelResults) error
	// Tables returns the class tables it adds to a model's detail.
	Tables func(mr *ModelResults) []ClassTable
	// Failures returns its failed extractions, by answer field.
	Failures func(mr *ModelResults) []FailureTally
	// Figure is the report's bar chart of its scores (nil: none).
	Figure *Figure
}

// ClassTable is a closed-answer score with the key and title reports give
// it.
type ClassTable struct {
	Key, Title string
	Score      *score.TaskScore
}

// FailureTally counts the failed extractions of one task or answer field.
type FailureTally struct {
	Name     string
	Failures []score.FailureCount
}

// Figure is a bar chart of several scores per model.
type Figure struct {
	File, Title, Caption string
	// Series names the scores Scores returns, one bar each.
	Series []string
	// Scores returns a model's scores, in Series order; nil when the
	// model has none.
	Scores func(mr *ModelResults) []*score.Score
}

// reads reports whether the run has items of any task the composite reads.
func (e *Composite) reads(byTask map[string][]Item) bool {
	for _, t := range e.Tasks {
		if len(byTask[t]) > 0 {
			return true
		}
	}
	return false
}

// Column is one column of the score table (the paper's Table 1).
type Column struct {
	Name  string
	Level string
	// Pick returns the column's score of a model (nil when not run) and
	// whether every item it counts was run.
	Pick func(m ModelResults) (s *score.Score, complete bool)
	// Majority returns the cohort's majority-class baseline as a model's
	// results carry it; nil for columns without one.
	Majority func(m ModelResults) *score.Baseline
}

// TaskColumn is the column of a task scored alone: its accuracy, beside
// its cohort's majority baseline.
func TaskColumn(name, level, task string) Column {
	return Column{Name: name, Level: level,
		Pick: func(m ModelResults) (*score.Score, bool) {
			if ts := m.Task(task); ts != nil {
				return ts.Accuracy, ts.Complete
			}
			return nil, true
		},
		Majority: func(m ModelResults) *score.Baseline {
			if ts := m.Task(task); ts != nil {
				return ts.Majority
			}
			return nil
		}}
}

// Answers is one model's answers to a run's items, as scorers read them:
// the first repeat of each item.
type Answers struct {
	model    string
	idx      answerIndex
	judges   map[string][]string
	reg      *Registry
	byTask   map[string][]Item
	patients map[string]*dataset.Patient
	get      func(Item, int) outcome
	opt      score.Options
}

// Items returns the run's items of a task, in run order.
func (a *Answers) Items(task string) []Item { return a.byTask[task] }

// Content returns the model's answer to an item; notRun is true when the
// item has no answer.
func (a *Answers) Content(it Item) (content string, notRun bool) {
	o := a.get(it, 0)
	return o.content(), o.notRun
}

// Units returns a task's items as scored units: the gold label, the
// answer the task extracts, and whether the item ran or is excluded.
func (a *Answers) Units(task string) ([]score.Unit, error) {
	t, err := a.reg.Task(task)
	if err != nil {
		return nil, err
	}
	if t.Answer == nil {
		return nil, fmt.Errorf("task %s extracts no closed answer to score", task)
	}
	its := a.byTask[task]
	units := make([]score.Unit, len(its))
	for i, it := range its {
		content, notRun := a.Content(it)
		units[i] = score.Unit{Patient: it.Patient, Item: it.ID, Gold: it.Gold.Label, Pred: t.Answer(it, content),
			NotRun: notRun, Excluded: it.Excluded}
	}
	return units, nil
}

// Patient returns a patient of the dataset.
func (a *Answers) Patient(id string) (*dataset.Patient, error) {
	if p, ok := a.patients[id]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("patient %s is not in the dataset", id)
}

// Options are the scoring options (seed, interval level, draws).
func (a *Answers) Options() score.Options { return a.opt }
