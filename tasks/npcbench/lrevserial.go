package npcbench

import (
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// LRevSerial is the L5 serial-interaction control: a trajectory's
// checkpoints asked as one conversation, each turn bringing the records
// new since the previous decision point and the current findings, after
// the earlier turns and the model's own answers to them (the paper's
// persistent interaction, C.4). Compared with l_rev as serial minus
// packed history.
const LRevSerial = "l_rev_serial"

func lRevSerial() *tasks.Task {
	mix := lRevMix
	mix.TextTokens += 1500 // the earlier turns and answers it replays
	return &tasks.Task{
		Key: LRevSerial, Level: "L5", Title: "Longitudinal revision, serial conversation (L5, A4)",
		Cohort:      dataset.CohortLongitudinal,
		Control:     true,
		Build:       buildSerialCheckpoints,
		Answer:      answerChoice,
		ScoredAlone: true,
		After:       []string{LRevSerial},
		Needs:       earlierTurns,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: choiceAnswers(boxedStyle)},
		Paper:       mix,
	}
}

// buildSerialCheckpoints makes a turn per checkpoint: its history is the
// records since the previous checkpoint (all of them up to the first),
// and its earlier turns the trajectory's previous checkpoints.
func buildSerialCheckpoints(b *tasks.Builder) {
	for i := range b.Raw().Longitudinal {
		t := &b.Raw().Longitudinal[i]
		var earlier []tasks.Item
		for j := range t.Checkpoints {
			added, ok := serialTurn(b, t, j, earlier)
			if !ok {
				// A conversation cannot go on past a turn it lacks.
				for _, c := range t.Checkpoints[j+1:] {
					b.Problem(b.ItemID(t.Patient, c.ID), "its conversation lacks the earlier turn "+t.Checkpoints[j].ID)
				}
				break
			}
			earlier = append(earlier, added)
		}
	}
}

// serialTurn adds the turn of a trajectory's j-th checkpoint after the
// earlier ones.
func serialTurn(b *tasks.Builder, t *dataset.Trajectory, j int, earlier []tasks.Item) (tasks.Item, bool) {
	it, ok := checkpointItem(b, t, j)
	if !ok {
		return it, false
	}
	history := t.History(&t.Checkpoints[j])
	if j > 0 {
		history = history[len(t.History(&t.Checkpoints[j-1])):]
	}
	it.Question.History = fullHistory(it.ID, history)
	it.Earlier = append([]tasks.Item(nil), earlier...)
	return b.Add(it)
}

// earlierTurns are the items a serial turn replays.
func earlierTurns(it tasks.Item) []string {
	ids := make([]string, len(it.Earlier))
	for i, e := range it.Earlier {
		ids[i] = e.ID
	}
	return ids
}
