package npcbench

import (
	"strings"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// CPCareSerial is the L6 serial control: a control patient's questions
// asked as one conversation with the reference image findings, each after
// the earlier questions and the model's own answers to them (persistent
// interaction). Compared with cp_care_ref_findings (stateless) as serial
// minus stateless; the paper reports its all-care difference.
const CPCareSerial = "cp_care_serial"

func cpCareSerial(st *configs.Structures) *tasks.Task {
	mix := controlMix
	mix.TextTokens += 800 // the earlier questions and answers it replays
	return &tasks.Task{
		Key: CPCareSerial, Level: "L6", Title: "CarePath control: serial conversation (L6, A13)",
		Cohort:      dataset.CohortCareControl,
		Control:     true,
		ImageLevel:  true,
		Build:       func(b *tasks.Builder) { buildSerialCare(b, withReference(st)) },
		Answer:      answerCare,
		ScoredAlone: true,
		After:       []string{CPCareSerial},
		Needs:       earlierTurns,
		Prior:       suppliedOnly,
		Sim:         tasks.Sim{Recognise: decisionPoint, Answers: careAnswers},
		Paper:       mix,
	}
}

// buildSerialCare makes the control items as buildControlCare does, each
// question of a patient a turn after the patient's earlier ones.
func buildSerialCare(b *tasks.Builder, edit questionEdit) {
	for _, its := range controlItems(b, edit) {
		var earlier []tasks.Item
		for i, it := range its {
			it.Earlier = append([]tasks.Item(nil), earlier...)
			added, ok := b.Add(it)
			if !ok {
				for _, rest := range its[i+1:] {
					b.Problem(rest.ID, "its conversation lacks the earlier question "+it.ID)
				}
				break
			}
			earlier = append(earlier, added)
		}
	}
}

// decisionPoint recognises a serial turn by its own question, from its
// "Decision point" on: the prior lines before it vary by turn, and the
// earlier turns it replays are recognised apart.
func decisionPoint(it tasks.Item, prompt string) string {
	if i := strings.LastIndex(prompt, "Decision point"); i >= 0 {
		return prompt[i:]
	}
	return it.Care.Question
}
