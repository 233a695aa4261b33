package score

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks"
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
	// NotRunReasons count the NotRun pairs by why they were not run: the
	// last failure of each in the journal, as NotRunReason words it (a
	// model that was abandoned: "model M is not served: …"), most frequent
	// first. Absent when none was not run.
	NotRunReasons []ReasonCount `json:"not_run_reasons,omitempty"`
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

// TaskReliability is one task's repeated-run reliability; Field names
// the graded label of a task whose answer is several (a structure card's
// "structure", "structure and invasion"), empty for a closed answer.
type TaskReliability struct {
	Task        string      `json:"task"`
	Field       string      `json:"field,omitempty"`
	Reliability Reliability `json:"reliability"`
}

// Name is the row's name in the repeats table: the task, and the graded
// field of a task whose answer is several labels ("card (structure)").
func (t TaskReliability) Name() string {
	if t.Field == "" {
		return t.Task
	}
	return t.Task + " (" + t.Field + ")"
}

// JudgeResults are one judge's calibration against the physicians.
type JudgeResults struct {
	Task        string       `json:"task"`
	Judge       string       `json:"judge"`
	Calibration *Calibration `json:"calibration,omitempty"`
}
