package score

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/journal"
)

// ResultsFormat tags scores.json.
const ResultsFormat = "npcorch-scores/1"

// Results are every score of a run, recomputed from the journal and the
// dataset alone. The same journal and dataset give the same bytes.
type Results struct {
	Format   string         `json:"format"`
	Campaign string         `json:"campaign"`
	Options  Options        `json:"options"`
	Repeats  int            `json:"repeats"`
	Models   []ModelResults `json:"models"`
	// JournalProblems are the journal lines scoring could not use as
	// written; absent for a clean journal, so its score files do not change.
	JournalProblems *JournalReport `json:"journal_problems,omitempty"`
	// Judges are the calibration of each judge model of a judge task
	// against physician labels, when the dataset has some.
	Judges []JudgeResults `json:"judges,omitempty"`
	// LeftOut are the dataset's items no request was made of (a bad
	// label, an image prep could not make), each with why: the scores
	// above do not count them. Absent when every item was made.
	LeftOut []LeftOutItem `json:"left_out,omitempty"`
	// Unjudged are the answers of a judged task (O1's consultations) that
	// no judge judged: the journal holds no verdict of its judge task, so
	// the task has no score. Absent when every such answer was judged.
	Unjudged []UnjudgedTask `json:"unjudged,omitempty"`

	// reg lays out the score table; ScoreRun sets it.
	reg *tasks.Registry
}

// LeftOutItem is an item of the dataset that could not be made, and why;
// with Model, an item whose request for that model could not be built
// (an image that changed after prep, an answer its prompt needs that
// will not come), so it was never sent to it.
type LeftOutItem struct {
	Model  string `json:"model,omitempty"`
	Item   string `json:"item"`
	Reason string `json:"reason"`
}

// UnjudgedTask is a judged task whose answers no judge judged.
type UnjudgedTask struct {
	// Task is the judged task (o1), JudgeTask the task that judges it.
	Task      string `json:"task"`
	JudgeTask string `json:"judge_task"`
	// Answered counts each model's answered (item, repeat) pairs of Task.
	Answered []ModelCount `json:"answered"`
}

// ModelCount is a count of one model's.
type ModelCount struct {
	Model string `json:"model"`
	Count int    `json:"count"`
}

// JournalReport is a journal's problems as the score files carry them.
type JournalReport struct {
	// Counts holds how many problems there are of each kind, by kind.
	Counts []ProblemCount `json:"counts"`
	// Problems lists each, in file and line order.
	Problems []journal.Problem `json:"problems"`
}

// ProblemCount counts the journal problems of one kind.
type ProblemCount struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// newJournalReport counts problems; nil when there are none.
func newJournalReport(problems []journal.Problem) *JournalReport {
	if len(problems) == 0 {
		return nil
	}
	counts := map[string]int{}
	for _, p := range problems {
		counts[p.Kind]++
	}
	r := &JournalReport{Problems: problems}
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		r.Counts = append(r.Counts, ProblemCount{Kind: kind, Count: counts[kind]})
	}
	return r
}

// Summary is the counts in words: "2 problems (1 torn_line, 1 unknown_model)".
func (r *JournalReport) Summary() string {
	parts := make([]string, len(r.Counts))
	for i, c := range r.Counts {
		parts[i] = fmt.Sprintf("%d %s", c.Count, c.Kind)
	}
	return fmt.Sprintf("%d problem(s) (%s)", len(r.Problems), strings.Join(parts, ", "))
}

// ModelResults are one model's scores.
type ModelResults struct {
	Model string `json:"model"`
	// Answered, NotRun and Missing count (item, repeat) pairs: answered in
	// the journal, failed for infrastructure reasons, never attempted.
	Answered int `json:"answered"`
	NotRun   int `json:"not_run"`
	Missing  int `json:"missing"`
	// Tasks holds the closed-answer scores of each task scored alone that
	// ran.
	Tasks []TaskResult `json:"tasks"`
	// TStage, Evidence and CarePath hold the scores of the composites of
	// those names (one field per kind of composite score: a new task adds
	// none): T staging over both presentations (the paper's T400), the
	// anatomical-panel diagnostics (cards and A8), the L6 episode.
	TStage   *TaskScore     `json:"t_stage,omitempty"`
	Evidence *EvidenceScore `json:"evidence,omitempty"`
	CarePath *CarePathScore `json:"carepath,omitempty"`
	// Controls are the matched controls' paired comparisons (the L5
	// history and serial controls, the L6 image-evidence and serial
	// controls), in registry order.
	Controls []Comparison `json:"controls,omitempty"`
	// Rubric holds the judged free-text score (O1 ConsultRubrics) under
	// each judge that judged the model's answers.
	Rubric []RubricResult `json:"rubric,omitempty"`
	// Reliability holds repeated-run measures per task (repeats > 1).
	Reliability []TaskReliability `json:"reliability,omitempty"`
}

// Task returns the model's score of a task scored alone, nil when the task
// did not run.
func (m ModelResults) Task(task string) *TaskScore {
	for i := range m.Tasks {
		if m.Tasks[i].Task == task {
			return &m.Tasks[i].Score
		}
	}
	return nil
}

// TaskResult is one task's score.
type TaskResult struct {
	Task  string    `json:"task"`
	Score TaskScore `json:"score"`
}

// RubricResult is a model's rubric score under one judge.
type RubricResult struct {
	Judge string  `json:"judge"`
	Score O1Score `json:"score"`
}

// TaskReliability is one task's repeated-run reliability.
type TaskReliability struct {
	Task        string      `json:"task"`
	Reliability Reliability `json:"reliability"`
}

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
// run, never attempted.
func countOutcomes(mr *ModelResults, items []tasks.Item, idx journal.Outcomes, repeats int) {
	for _, it := range items {
		for rep := 0; rep < repeats; rep++ {

			switch {
			case answered(idx, mr.Model, it.ID, rep):
				mr.Answered++
			case idx.NotRun(mr.Model, it.ID, rep):
				mr.NotRun++
			default:
				mr.Missing++
			}
		}
	}
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

// reliability measures every task with a closed answer over the repeats.
func reliability(a *Answers, repeats int) ([]TaskReliability, error) {
	var out []TaskReliability
	for _, t := range a.reg.Tasks() {
		its := a.byTask[t.Key]
		if len(its) == 0 || t.Answer == nil {
			continue
		}
		var ri []RepeatedItem
		for _, it := range its {
			if it.Excluded {
				continue
			}
			r := RepeatedItem{Patient: it.Patient, Item: it.ID, Gold: it.Gold.Label}
			for rep := 0; rep < repeats; rep++ {
				o := a.get(it, rep)
				r.Attempts = append(r.Attempts, Attempt{Pred: t.Answer(it, o.content()), NotRun: o.notRun})
			}
			ri = append(ri, r)
		}
		rel, err := Repeated(ri, a.opt)
		if err != nil {
			return nil, fmt.Errorf("task %s reliability: %w", t.Key, err)
		}
		out = append(out, TaskReliability{Task: t.Key, Reliability: rel})
	}
	return out, nil
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
