package npcbench

import (
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// O1Judge is O1's criterion judge (prompt A15): one request per (answer,
// criterion), answered with a JSON verdict. The paper: "GPT-OSS-120B
// with greedy decoding, medium reasoning effort", 1,726 criteria per
// generator; an invalid judgment is retried with 8,192 tokens, then with
// JSON-schema-constrained decoding (tasks.JudgeAttempts).
const O1Judge = "o1judge"

// judgePromptMarker is a phrase of prompt A15 no other prompt has.
const judgePromptMarker = "You are evaluating an answer in a nasopharyngeal carcinoma clinical consultation benchmark."

func o1Judge() *tasks.Task {
	return &tasks.Task{
		Key: O1Judge, Level: "O1", Title: "ConsultRubrics judge (O1, A15)",
		Cohort:      dataset.CohortConsult,
		Judges:      O1,
		JudgeEffort: "medium",
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: judgeAnswers},
		Paper:       schedule.RequestMix{Requests: 1726, TextTokens: 2600, MaxTokens: 2048},
	}
}

// judgeAnswers: the verdict on whether the item's response holds the
// statement of its criterion.
func judgeAnswers(it tasks.Item) tasks.SimAnswers {
	e := judgeEntry(it, it.Consult.Judged.Criterion)
	return tasks.SimAnswers{Verdict: e.Verdict}
}
