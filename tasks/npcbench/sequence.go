package npcbench

import (
	"fmt"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
)

// Sequence is L3 MRI sequence recognition (prompt A6): one 3×3 panel of a
// series, answered with the boxed letter of one of seven sequences. One
// item per series; the paper: 200 panels.
const Sequence = "sequence"

func sequence() *tasks.Task {
	return &tasks.Task{
		Key: Sequence, Level: "L3", Title: "MRI sequence (L3, A6)",
		Cohort:      dataset.CohortSequence,
		Images:      []string{dataset.KindPanel},
		PerImage:    true,
		Build:       buildSequence,
		Answer:      func(_ tasks.Item, content string) extract.Label { return extract.Sequence(content, imaging.Sequences) },
		Classes:     imaging.Sequences,
		ScoredAlone: true,
		Sim:         tasks.Sim{Marker: "sequence-recognition image", Answers: sequenceAnswers},
		Paper:       seqPanel.mix(schedule.RequestMix{Requests: 200, MinImages: 1, MaxImages: 1, TextTokens: 300, MaxTokens: 1024}),
	}
}

// buildSequence makes one item per prepared panel, its series' sequence
// the gold answer.
func buildSequence(b *tasks.Builder) {
	for p, pp := range b.Patients() {
		if len(pp.Panels) == 0 {
			b.Problem(b.ItemID(p.ID), "no sequence panels were prepared")
		}
		for _, panel := range pp.Panels {
			b.Add(tasks.Item{ID: b.ItemID(p.ID, panel.Sequence), Patient: p.ID,
				Images: []dataset.Image{panel.Image}, Gold: tasks.Gold{Label: panel.Sequence}})
		}
	}
}

// sequenceAnswers box the option letter of each sequence; the constant
// policy says A.
func sequenceAnswers(it tasks.Item) tasks.SimAnswers {
	var a tasks.SimAnswers
	for i, s := range imaging.Sequences {
		box := fmt.Sprintf("The slices look like %s.\n\\boxed{%c}", "this sequence", 'A'+i)
		if s == it.Gold.Label {
			a.Right = box
		} else {
			a.Wrong = append(a.Wrong, box)
		}
	}
	a.Constant = `\boxed{A}`
	return a
}
