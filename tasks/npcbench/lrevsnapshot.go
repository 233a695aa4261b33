package npcbench

import (
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// LRevSnapshot is the L5 history control's snapshot condition: the same
// checkpoint, question, options and output allowance as l_rev, but the
// history without its time markers and regrouped by content (the paper's
// C.4: "The snapshot removes relative-day and admission markers, then
// groups the historical records by content."). Compared with l_rev as
// full history minus snapshot.
const LRevSnapshot = "l_rev_snapshot"

func lRevSnapshot() *tasks.Task {
	return &tasks.Task{
		Key: LRevSnapshot, Level: "L5", Title: "Longitudinal revision, snapshot control (L5, A4)",
		Cohort:      dataset.CohortLongitudinal,
		Prompt:      LRev,
		Control:     true,
		Build:       func(b *tasks.Builder) { buildCheckpoints(b, snapshotHistory) },
		Answer:      answerChoice,
		ScoredAlone: true,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: choiceAnswers(boxedStyle)},
		Paper:       lRevMix,
	}
}

// snapshotHistory groups the records by content (their kind, in order of
// first appearance), each without its time marker.
func snapshotHistory(_ string, records []dataset.HistoryRecord) []tasks.HistorySection {
	return sections(records, func(r dataset.HistoryRecord) string { return r.Kind }, func(r dataset.HistoryRecord) string { return r.Text })
}
