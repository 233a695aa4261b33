package npcbench

import (
	"slices"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// LRevShuffled is the L5 history control's order-only condition: the full
// history with every time marker, its complete lines shuffled within their
// sections (the paper's C.4: "The order-only condition instead shuffles
// complete lines within their original sections, retaining every time
// marker."); checkpoint, question, options and output allowance as l_rev.
// Compared with l_rev as full history minus shuffled.
const LRevShuffled = "l_rev_shuffled"

func lRevShuffled() *tasks.Task {
	return &tasks.Task{
		Key: LRevShuffled, Level: "L5", Title: "Longitudinal revision, shuffled-order control (L5, A4)",
		Cohort:      dataset.CohortLongitudinal,
		Prompt:      LRev,
		Control:     true,
		Build:       func(b *tasks.Builder) { buildCheckpoints(b, shuffledHistory) },
		Answer:      answerChoice,
		ScoredAlone: true,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: choiceAnswers(boxedStyle)},
		Paper:       lRevMix,
	}
}

// shuffledHistory is the full history with each section's lines in an
// order drawn from the item id and the section: the same every run, and
// never the original order when the section's lines can be reordered.
func shuffledHistory(id string, records []dataset.HistoryRecord) []tasks.HistorySection {
	out := fullHistory(id, records)
	for i := range out {
		lines := out[i].Lines
		shuffled := slices.Clone(lines)
		r := shuffleSeed(id, out[i].Title)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if slices.Equal(shuffled, lines) && len(lines) > 1 {
			shuffled = append(shuffled[1:], shuffled[0]) // a shuffle that moved nothing: rotate
		}
		out[i].Lines = shuffled
	}
	return out
}
