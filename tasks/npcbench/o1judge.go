package npcbench

import (
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

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
