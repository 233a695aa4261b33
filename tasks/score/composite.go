package score

import (
	"fmt"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
)

// Card is how a benchmark's answers are scored across tasks and shown: the
// endpoints computed over several tasks, the score table, the notes under
// it and the report's recall figures. A family builds one and hands it to
// its registry (tasks.Benchmark.Scoring); CardOf gets it back.
type Card struct {
	// Composites are the endpoints computed over several tasks' answers,
	// in scoring order.
	Composites []*Composite
	// Table lists the columns of the score table (the paper's Table 1).
	Table []Column
	// Notes are lines printed under the score table.
	Notes []string
	// Recall lists the report's per-class recall figures.
	Recall []RecallPlot
}

// RecallPlot is a report figure of per-class recall for every model: of
// the class table keyed Table (a task key, or a key a composite's Tables
// gives).
type RecallPlot struct {
	File, Title, Table string
}

// Check checks the card against its registry: every composite has a name
// and a Score function and reads known tasks, every column a Pick function.
func (c *Card) Check(known func(where string, keys ...string) error) error {
	for _, cp := range c.Composites {
		if cp.Name == "" || cp.Score == nil {
			return fmt.Errorf("task registry: composite %q needs a name and a Score function", cp.Name)
		}
		if err := known("composite "+cp.Name, cp.Tasks...); err != nil {
			return err
		}
	}
	for _, col := range c.Table {
		if col.Pick == nil {
			return fmt.Errorf("task registry: table column %s has no Pick function", col.Name)
		}
	}
	return nil
}

// CardOf returns the card a registry carries; an empty one when it
// carries none (each task is then scored alone).
func CardOf(reg *tasks.Registry) *Card {
	if reg != nil {
		if c, ok := reg.Scoring().(*Card); ok && c != nil {
			return c
		}
	}
	return &Card{}
}

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
	Score      *TaskScore
}

// FailureTally counts the failed extractions of one task or answer field.
type FailureTally struct {
	Name     string
	Failures []FailureCount
}

// Figure is a bar chart of several scores per model.
type Figure struct {
	File, Title, Caption string
	// Series names the scores Scores returns, one bar each.
	Series []string
	// Scores returns a model's scores, in Series order; nil when the
	// model has none.
	Scores func(mr *ModelResults) []*Score
}

// reads reports whether the run has items of any task the composite reads.
func (e *Composite) reads(byTask map[string][]tasks.Item) bool {
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
	Pick func(m ModelResults) (s *Score, complete bool)
	// Majority returns the cohort's majority-class baseline as a model's
	// results carry it; nil for columns without one.
	Majority func(m ModelResults) *Baseline
	// Random returns what a uniformly random answer scores on the column's
	// endpoint (Class "random"); nil for columns without one.
	Random func(m ModelResults) *Baseline
}

// TaskColumn is the column of a task scored alone: its accuracy, beside
// its cohort's majority baseline.
func TaskColumn(name, level, task string) Column {
	return Column{Name: name, Level: level,
		Pick: func(m ModelResults) (*Score, bool) {
			if ts := m.Task(task); ts != nil {
				return ts.Accuracy, ts.Complete
			}
			return nil, true
		},
		Majority: func(m ModelResults) *Baseline {
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
	idx      journal.Outcomes
	judges   map[string][]string
	reg      *tasks.Registry
	byTask   map[string][]tasks.Item
	patients map[string]*dataset.Patient
	get      func(tasks.Item, int) outcome
	opt      Options
}

// Items returns the run's items of a task, in run order.
func (a *Answers) Items(task string) []tasks.Item { return a.byTask[task] }

// Content returns the model's answer to an item; notRun is true when the
// item has no answer.
func (a *Answers) Content(it tasks.Item) (content string, notRun bool) {
	o := a.get(it, 0)
	return o.content(), o.notRun
}

// Units returns a task's items as scored units: the gold label, the
// answer the task extracts, and whether the item ran or is excluded.
func (a *Answers) Units(task string) ([]Unit, error) {
	t, err := a.reg.Task(task)
	if err != nil {
		return nil, err
	}
	if t.Answer == nil {
		return nil, fmt.Errorf("task %s extracts no closed answer to score", task)
	}
	its := a.byTask[task]
	units := make([]Unit, len(its))
	for i, it := range its {
		content, notRun := a.Content(it)
		units[i] = Unit{Patient: it.Patient, Item: it.ID, Group: it.Group, Tags: it.Tags, Gold: it.Gold.Label,
			Pred: t.Answer(it, content), NotRun: notRun, Excluded: it.Excluded}
		if it.Question != nil {
			units[i].Chance = it.Question.Chance()
		}
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
func (a *Answers) Options() Options { return a.opt }

// outcome is one (item, repeat) as the scorer sees it.
type outcome struct {
	rec    *journal.Record
	notRun bool
}

func (o outcome) content() string {
	if o.rec == nil || o.rec.Answer == nil {
		return ""
	}
	return o.rec.Answer.Content
}
