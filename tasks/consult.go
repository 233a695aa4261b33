package tasks

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/journal"
)

// O1 ConsultRubrics: free-text consultations (prompt A14), judged
// criterion by criterion by a judge model (prompt A15). A generation item
// carries its case, question and rubric; a judge's item carries one
// response and one criterion. Judge items are not built from the dataset
// but from the journal: one per answered consultation and criterion
// (JudgeItems), and one more per verdict that could not be read, up the
// ladder of JudgeAttempts (JudgeRetries). Each attempt is an item of its
// own, so each is journalled.

// Consult is an O1 item's content.
type Consult struct {
	// CaseID names the case (the cluster O1's intervals resample).
	CaseID   string   `json:"case_id"`
	Case     string   `json:"case"`
	Question string   `json:"question"`
	Tags     []string `json:"tags,omitempty"`
	// Criteria are the question's rubric, on a generation item.
	Criteria []dataset.Criterion `json:"criteria,omitempty"`
	// Audit are the physician-labelled responses to the question, which
	// the judges judge too (for calibration).
	Audit []dataset.AuditResponse `json:"audit,omitempty"`
	// Judged, on a judge's item, is what it judges.
	Judged *Judged `json:"judged,omitempty"`
}

// Judged is one (response, criterion) a judge's item asks about.
type Judged struct {
	// Generator is the model that wrote the response, or AuditGenerator
	// for a physician-labelled response (Audit its id).
	Generator string `json:"generator"`
	Audit     string `json:"audit,omitempty"`
	// Item is the generation item's id.
	Item      string            `json:"item"`
	Response  string            `json:"response"`
	Criterion dataset.Criterion `json:"criterion"`
	// Attempt is the rung of JudgeAttempts this item is.
	Attempt int `json:"attempt"`
}

// AuditGenerator is the Generator of a physician-labelled response.
const AuditGenerator = "physician-audit"

// JudgeAttempt is one rung of the judge's ladder: its output allowance
// (0: the judge model's own max_tokens for the task) and whether the
// answer is constrained to the verdict's JSON schema.
type JudgeAttempt struct {
	MaxTokens int
	Schema    bool
}

// JudgeAttempts are the paper's: "An incomplete or invalid judgment is
// retried with an 8,192-token allowance and then with JSON-schema
// constrained decoding".
func JudgeAttempts() []JudgeAttempt {
	return []JudgeAttempt{{}, {MaxTokens: 8192}, {MaxTokens: 8192, Schema: true}}
}

// SignedCriterion is the rubric item as prompt A15 shows it: its type
// (POSITIVE REQUIREMENT or NEGATIVE ERROR CRITERION), its points, and its
// text.
func SignedCriterion(c dataset.Criterion) string {
	if c.Positive() {
		return fmt.Sprintf("[POSITIVE REQUIREMENT, +%s points] %s", strconv.FormatFloat(c.Weight, 'f', -1, 64), c.Text)
	}
	return fmt.Sprintf("[NEGATIVE ERROR CRITERION, %s error, -%d points] %s", c.Kind, dataset.Deduction(c.Kind), c.Text)
}

// JudgeItemID is the id of the judge's item for a response and criterion
// at an attempt: "JUDGETASK/GENERATOR/ITEM-WITHOUT-ITS-TASK/CRITERION",
// with "#retryN" for attempt N > 0.
func JudgeItemID(judgeTask string, j *Judged) string {
	gen := j.Generator
	if j.Audit != "" {
		gen += "/" + j.Audit
	}
	_, rest, _ := strings.Cut(j.Item, "/")
	id := strings.Join([]string{judgeTask, gen, rest, j.Criterion.ID}, "/")
	if j.Attempt > 0 {
		id += "#retry" + strconv.Itoa(j.Attempt)
	}
	return id
}

// judgeItem is the judge's item of a response to gen and one criterion.
func judgeItem(judgeTask string, gen Item, j Judged) Item {
	c := *gen.Consult
	c.Criteria, c.Audit, c.Judged = nil, nil, &j
	return Item{ID: JudgeItemID(judgeTask, &j), Task: judgeTask, Patient: gen.Patient, Consult: &c}
}

// JudgeItems are the first-attempt items of a judge task: for each
// generation item of the task it judges, each physician-labelled
// response, and each generator's answered response (repeat 0) in the
// journal, one item per criterion. Generation items without an answer
// yet have none.
func JudgeItems(judge *Task, items []Item, st *journal.State, generators []string) []Item {
	idx := indexAnswers(st)
	var out []Item
	for _, it := range items {
		if it.Task != judge.Judges || it.Consult == nil {
			continue
		}
		var responses []Judged
		for _, a := range it.Consult.Audit {
			responses = append(responses, Judged{Generator: AuditGenerator, Audit: a.ID, Response: a.Response})
		}
		for _, g := range generators {
			if rec, ok := idx.answered[itemRepeat{g, it.ID, 0}]; ok {
				responses = append(responses, Judged{Generator: g, Response: rec.Answer.Content})
			}
		}
		for _, r := range responses {
			for _, c := range it.Consult.Criteria {
				j := r
				j.Item, j.Criterion = it.ID, c
				out = append(out, judgeItem(judge.Key, it, j))
			}
		}
	}
	return out
}

// JudgeRetries are the next attempts of the judge's items whose verdict,
// journalled by the judge model, could not be read: the same item one
// rung up JudgeAttempts. An item not answered (yet), or already at the
// last rung, has none; a verdict still unreadable there is kept as such.
func JudgeRetries(judgeItems []Item, st *journal.State, judge string) []Item {
	idx := indexAnswers(st)
	last := len(JudgeAttempts()) - 1
	var out []Item
	for _, it := range judgeItems {
		j := it.Consult.Judged
		rec, ok := idx.answered[itemRepeat{judge, it.ID, 0}]
		if !ok || j.Attempt >= last || extract.JudgeVerdict(rec.Answer.Content).OK() {
			continue
		}
		next := *j
		next.Attempt++
		c := *it.Consult
		c.Judged = &next
		out = append(out, Item{ID: JudgeItemID(it.Task, &next), Task: it.Task, Patient: it.Patient, Consult: &c})
	}
	return out
}
