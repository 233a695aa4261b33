package npcbench

import (
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// GMem is L1 guideline memory (prompt A1): a guideline question, answered
// with an option letter; item accuracy, and accuracy per source (CSCO,
// NCCN or both). The paper: 250 questions (80 CSCO-only, 17 NCCN-only, 153
// both).
const GMem = "g_mem"

func gMem() *tasks.Task {
	return &tasks.Task{
		Key: GMem, Level: "L1", Title: "Guideline memory (L1, A1)",
		Cohort:      dataset.CohortGuideline,
		Build:       buildGMem,
		Answer:      answerChoice,
		ScoredAlone: true,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: choiceAnswers(plainStyle)},
		Paper:       schedule.RequestMix{Requests: 250, TextTokens: 250, MaxTokens: 1024},
	}
}

// buildGMem makes one item per guideline question, grouped by its source;
// each question is a cluster of its own.
func buildGMem(b *tasks.Builder) {
	for i := range b.Raw().Guideline {
		q := &b.Raw().Guideline[i]
		addChoice(b, b.ItemID(q.ID), q.ID, &q.Choice, "", q.Source)
	}
}

// gMemColumn is Table 1's G-Mem.: item accuracy.
func gMemColumn() score.Column {
	return choiceColumn("G-Mem.", "L1", GMem, microAccuracy, microBaseline)
}
