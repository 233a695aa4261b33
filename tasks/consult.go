package tasks

import (
	"fmt"
	"strconv"

	"github.com/npcorch/npcorch/tasks/dataset"
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
