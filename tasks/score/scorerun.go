package score

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
)

// RunModel is a model of a run and the tasks it was asked (a text-only
// model is asked none that needs images); nil Tasks means every task of
// the run. Only the items of its tasks count for it: scored, and missing
// when unanswered.
type RunModel struct {
	Name  string
	Tasks []string
}

// RunModels are models asked every task of the run.
func RunModels(names ...string) []RunModel {
	out := make([]RunModel, len(names))
	for i, n := range names {
		out[i] = RunModel{Name: n}
	}
	return out
}

// asks reports whether the model was asked task.
func (m RunModel) asks(task string) bool { return m.Tasks == nil || slices.Contains(m.Tasks, task) }

// ScoreRun scores every model of a run. items are the campaign's items (from
// BuildItems with the same registry), models the models in campaign order
// with the tasks each was asked.
func ScoreRun(reg *tasks.Registry, campaign string, raw *dataset.Raw, items []tasks.Item, j *journal.State,
	models []RunModel, repeats int, opt Options) (*Results, error) {
	if repeats < 1 {
		repeats = 1
	}
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	judges := judgesOf(reg, j)
	res := &Results{Format: ResultsFormat, Campaign: campaign, Options: opt, Repeats: repeats,
		JournalProblems: newJournalReport(CheckJournal(reg, j, items, names, repeats)), reg: reg}
	idx := j.Outcomes()
	patients := map[string]*dataset.Patient{}
	for i := range raw.Patients {
		patients[raw.Patients[i].ID] = &raw.Patients[i]
	}
	for _, it := range items {
		if _, err := reg.Task(it.Task); err != nil {
			return nil, fmt.Errorf("score item %s: %w", it.ID, err)
		}
	}
	for _, m := range models {
		var its []tasks.Item
		byTask := map[string][]tasks.Item{}
		for _, it := range items {
			if m.asks(it.Task) {
				its = append(its, it)
				byTask[it.Task] = append(byTask[it.Task], it)
			}
		}
		a := &Answers{model: m.Name, idx: idx, judges: judges, reg: reg, byTask: byTask, patients: patients, get: getter(idx, m.Name), opt: opt}
		mr, err := scoreModel(a, m.Name, its, idx, repeats)
		if err != nil {
			return nil, fmt.Errorf("score %s: %w", m.Name, err)
		}
		res.Models = append(res.Models, *mr)
	}
	res.Unjudged = unjudged(reg, models, items, idx, judges, repeats)
	cal, err := calibrate(reg, items, idx, judges, opt)
	if err != nil {
		return nil, err
	}
	res.Judges = cal
	return res, nil
}

// CheckJournal is the journal's check (journal.State.Check) against the
// run's items and models, and against what the judges of its judge tasks
// may have judged: their answers at every rung of JudgeAttempts.
func CheckJournal(reg *tasks.Registry, j *journal.State, items []tasks.Item, models []string, repeats int) []journal.Problem {
	checked, known := append(slices.Clone(items), judgeCheckItems(reg, items, j, models)...), slices.Clone(models)
	for _, js := range judgesOf(reg, j) {
		known = append(known, js...)
	}
	taskOf := make(map[string]string, len(checked))
	for _, it := range checked {
		taskOf[it.ID] = it.Task
	}
	return j.Check(taskOf, known, repeats)
}

// answered reports whether the journal holds an answer of a model's
// repeat of an item.
func answered(idx journal.Outcomes, model, item string, repeat int) bool {
	_, ok := idx.Answered(model, item, repeat)
	return ok
}

// getter returns a model's outcome of an (item, repeat).
func getter(idx journal.Outcomes, model string) func(tasks.Item, int) outcome {
	return func(it tasks.Item, rep int) outcome {
		if rec, ok := idx.Answered(model, it.ID, rep); ok {
			return outcome{rec: &rec}
		}
		return outcome{notRun: true}
	}
}

func scoreModel(a *Answers, model string, items []tasks.Item, idx journal.Outcomes, repeats int) (*ModelResults, error) {
	mr := &ModelResults{Model: model}
	countOutcomes(mr, items, idx, repeats)
	if err := scoreAlone(a, mr); err != nil {
		return nil, err
	}
	for _, c := range CardOf(a.reg).Composites {
		if !c.reads(a.byTask) {
			continue
		}
		if err := c.Score(a, mr); err != nil {
			return nil, fmt.Errorf("%s: %w", c.Name, err)
		}
	}
	if repeats > 1 {
		rel, err := reliability(a, repeats)
		if err != nil {
			return nil, err
		}
		mr.Reliability = rel
	}
	return mr, nil
}

// countOutcomes counts the model's (item, repeat) pairs: answered, not
// run (and why: the reason of the pair's last not-run record), never
// attempted.
func countOutcomes(mr *ModelResults, items []tasks.Item, idx journal.Outcomes, repeats int) {
	why := map[string]int{}
	for _, it := range items {
		for rep := 0; rep < repeats; rep++ {
			rec, notRun := idx.LastNotRun(mr.Model, it.ID, rep)
			switch {
			case answered(idx, mr.Model, it.ID, rep):
				mr.Answered++
			case notRun:
				mr.NotRun++
				why[journal.NotRunReason(rec)]++
			default:
				mr.Missing++
			}
		}
	}
	for r, n := range why {
		mr.NotRunReasons = append(mr.NotRunReasons, ReasonCount{Reason: r, Count: n})
	}
	slices.SortFunc(mr.NotRunReasons, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Reason, b.Reason))
	})
}

// scoreAlone scores each task scored on its own that ran, in registry
// order.
func scoreAlone(a *Answers, mr *ModelResults) error {
	for _, t := range a.reg.Tasks() {
		if !t.ScoredAlone || len(a.byTask[t.Key]) == 0 {
			continue
		}
		units, err := a.Units(t.Key)
		if err != nil {
			return err
		}
		ts, err := Classify(units, t.Classes, a.opt)
		if err != nil {
			return fmt.Errorf("task %s: %w", t.Key, err)
		}
		mr.Tasks = append(mr.Tasks, TaskResult{Task: t.Key, Score: ts})
	}
	return nil
}

// reliability measures, over the repeats, every task with a closed answer
// and each graded field of a task whose answer is several labels.
func reliability(a *Answers, repeats int) ([]TaskReliability, error) {
	var out []TaskReliability
	for _, t := range a.reg.Tasks() {
		its := a.byTask[t.Key]
		if len(its) == 0 {
			continue
		}
		for _, g := range graded(t) {
			tr := TaskReliability{Task: t.Key, Field: g.Name}
			rel, err := Repeated(repeatedItems(a, its, g, repeats), a.opt)
			if err != nil {
				return nil, fmt.Errorf("task %s reliability: %w", tr.Name(), err)
			}
			tr.Reliability = rel
			out = append(out, tr)
		}
	}
	return out, nil
}

// graded are the labels a task's answers are graded on over repeats: the
// closed answer against Gold.Label (a field without a name), else its
// Graded fields.
func graded(t *tasks.Task) []tasks.GradedField {
	if t.Answer != nil {
		return []tasks.GradedField{{Gold: func(it tasks.Item) string { return it.Gold.Label }, Answer: t.Answer}}
	}
	return t.Graded
}

// repeatedItems are the items not excluded, each with the label g reads
// from every repeat's answer.
func repeatedItems(a *Answers, its []tasks.Item, g tasks.GradedField, repeats int) []RepeatedItem {
	var ri []RepeatedItem
	for _, it := range its {
		if it.Excluded {
			continue
		}
		r := RepeatedItem{Patient: it.Patient, Item: it.ID, Gold: g.Gold(it)}
		for rep := 0; rep < repeats; rep++ {
			o := a.get(it, rep)
			r.Attempts = append(r.Attempts, Attempt{Pred: g.Answer(it, o.content()), NotRun: o.notRun})
		}
		ri = append(ri, r)
	}
	return ri
}

// unjudged lists each judged task whose answers the journal holds but no
// judge judged (a campaign without judges), with each model's count.
func unjudged(reg *tasks.Registry, models []RunModel, items []tasks.Item, idx journal.Outcomes, judges map[string][]string, repeats int) []UnjudgedTask {
	var out []UnjudgedTask
	for _, jt := range reg.Tasks() {
		if jt.Judges == "" || len(judges[jt.Key]) > 0 {
			continue
		}
		u := UnjudgedTask{Task: jt.Judges, JudgeTask: jt.Key}
		for _, m := range models {
			n := 0
			for _, it := range items {
				for rep := 0; rep < repeats; rep++ {
					if it.Task == jt.Judges && answered(idx, m.Name, it.ID, rep) {
						n++
					}
				}
			}
			if n > 0 {
				u.Answered = append(u.Answered, ModelCount{Model: m.Name, Count: n})
			}
		}
		if len(u.Answered) > 0 {
			out = append(out, u)
		}
	}
	return out
}
