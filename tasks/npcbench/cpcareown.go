package npcbench

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// CPCareOwnFindings is the L6 image-evidence control's baseline: the
// control cohort's care questions with the model's OWN pathology, T stage
// and invaded structures, as cp_care writes them.
const CPCareOwnFindings = "cp_care_own_findings"

func cpCareOwnFindings(st *configs.Structures) *tasks.Task {
	return &tasks.Task{
		Key: CPCareOwnFindings, Level: "L6", Title: "CarePath control: own image findings (L6, A13)",
		Cohort:      dataset.CohortCareControl,
		Prompt:      CPCare,
		Control:     true,
		Build:       func(b *tasks.Builder) { buildControlCare(b, asked) },
		Answer:      answerCare,
		ScoredAlone: true,
		After:       []string{CPPathology, CPMRI},
		Needs:       careNeeds,
		Prior:       ownPrior(st),
		Sim:         tasks.Sim{Recognise: careText, Answers: careAnswers},
		Paper:       controlMix,
	}
}
