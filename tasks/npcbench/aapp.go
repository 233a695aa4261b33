package npcbench

import (
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// AApp is L2 atomic guideline application (prompt A2): a short vignette
// and a question on it, answered with an option letter (the letters of
// every correct option for a multiple-select item, credited only when the
// set is complete). Its main score is the group-macro mean over the four
// capability groups (Eq. A1). The paper: 185 questions (84, 30, 44, 27),
// one multiple-select.
const AApp = "a_app"

func aApp() *tasks.Task {
	return &tasks.Task{
		Key: AApp, Level: "L2", Title: "Rule application (L2, A2)",
		Cohort:      dataset.CohortApplication,
		Build:       buildAApp,
		Answer:      answerChoice,
		ScoredAlone: true,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: choiceAnswers(labelledStyle)},
		Paper:       schedule.RequestMix{Requests: 185, TextTokens: 450, MaxTokens: 1024},
	}
}

// buildAApp makes one item per vignette, in its capability group; each
// vignette is a cluster of its own.
func buildAApp(b *tasks.Builder) {
	for i := range b.Raw().Application {
		q := &b.Raw().Application[i]
		addChoice(b, b.ItemID(q.ID), q.ID, &q.Choice, q.Context, q.Group)
	}
}

// aAppColumn is Table 1's A-App.: the group-macro mean.
func aAppColumn() score.Column {
	return choiceColumn("A-App.", "L2", AApp,
		func(ts *score.TaskScore) *score.Score { return ts.GroupMacro },
		func(e score.Endpoints) *float64 { return e.GroupMacro })
}
