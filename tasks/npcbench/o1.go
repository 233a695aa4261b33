package npcbench

import (
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/judge"
)

// O1 is O1 ConsultRubrics' consultation (prompt A14): a free-text answer
// to a clinical question about a case, judged criterion by criterion by
// the judge task O1Judge. The paper: 103 questions over 42 cases; "2,048
// tokens for local generators, 16,384 for API ones".
const O1 = "o1"

// O1Judge is O1's criterion judge (prompt A15): one request per (answer,
// criterion), answered with a JSON verdict. The paper: "GPT-OSS-120B
// with greedy decoding, medium reasoning effort", 1,726 criteria per
// generator; an invalid judgment is retried with 8,192 tokens, then with
// JSON-schema-constrained decoding (tasks.JudgeAttempts).
const O1Judge = "o1judge"

// judgePromptMarker is a phrase of prompt A15 no other prompt has.
const judgePromptMarker = "You are evaluating an answer in a nasopharyngeal carcinoma clinical consultation benchmark."

func o1() *tasks.Task {
	return &tasks.Task{
		Key: O1, Level: "O1", Title: "ConsultRubrics (O1, A14)",
		Cohort: dataset.CohortConsult,
		Build:  buildConsult,
		Sim:    tasks.Sim{Recognise: wholePrompt, Answers: consultAnswers, More: judgeEntries},
		Paper:  schedule.RequestMix{Requests: 103, TextTokens: 900, MaxTokens: 2048},
	}
}

// buildConsult makes one item per consultation question:
// "o1/CASE/QUESTION", the case its patient.
func buildConsult(b *tasks.Builder) {
	for _, c := range b.Consultations() {
		for _, q := range c.Questions {
			b.Add(tasks.Item{ID: b.ItemID(c.ID, q.ID), Patient: c.ID, Consult: &tasks.Consult{
				CaseID: c.ID, Case: c.Case, Question: q.Question, Tags: q.Tags, Criteria: q.Criteria, Audit: q.Audit}})
		}
	}
}

// Statement is what the simulated generator says to meet a positive
// requirement, or to make the error of an error criterion: the
// criterion's id in parentheses, then its text. A response meets the
// criterion (as the simulated judge reads it) when it holds the statement.
func Statement(c dataset.Criterion) string { return "(" + c.ID + ") " + c.Text }

// consultAnswers: one part per criterion, a right one for each positive
// requirement (said with the policy's probability) and a wrong one for
// each error criterion (said with the complement).
func consultAnswers(it tasks.Item) tasks.SimAnswers {
	var parts []simkey.Part
	for _, c := range it.Consult.Criteria {
		parts = append(parts, simkey.Part{ID: c.ID, Text: Statement(c), Right: c.Positive()})
	}
	return tasks.SimAnswers{Parts: parts, Constant: "Please refer the patient to a multidisciplinary tumour board."}
}

// judgeEntries are the judge's sim-key entries of a consultation item, one
// per criterion: a request shows the item's case and question and the
// criterion signed; the verdict is on the response it shows.
func judgeEntries(it tasks.Item) []simkey.Item {
	var out []simkey.Item
	for _, c := range it.Consult.Criteria {
		out = append(out, judgeEntry(it, c))
	}
	return out
}

func judgeEntry(it tasks.Item, c dataset.Criterion) simkey.Item {
	return simkey.Item{
		ID:       judge.ItemID(O1Judge, &tasks.Judged{Item: it.ID, Criterion: c}),
		Contains: "Rubric Item:\n" + tasks.SignedCriterion(c) + "\n",
		Also:     []string{judgePromptMarker, "Case:\n" + it.Consult.Case + "\n", "Question:\n" + it.Consult.Question + "\nAssistant Response:"},
		Verdict:  &simkey.Verdict{Claim: Statement(c), From: "Assistant Response:\n", To: "\nRubric Item:\n"},
	}
}
