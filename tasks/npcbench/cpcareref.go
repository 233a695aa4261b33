package npcbench

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// CPCareRefFindings is the L6 image-evidence control's replacement: the
// same control questions with the patient's REFERENCE pathology, T stage
// and invaded structures in place of the model's own; the supplied N/M
// and stage fields stay. Compared with cp_care_own_findings as reference
// minus own findings.
const CPCareRefFindings = "cp_care_ref_findings"

func cpCareRefFindings(st *configs.Structures) *tasks.Task {
	return &tasks.Task{
		Key: CPCareRefFindings, Level: "L6", Title: "CarePath control: reference image findings (L6, A13)",
		Cohort:      dataset.CohortCareControl,
		Prompt:      CPCare,
		Control:     true,
		ImageLevel:  true,
		Build:       func(b *tasks.Builder) { buildControlCare(b, withReference(st)) },
		Answer:      answerCare,
		ScoredAlone: true,
		Prior:       suppliedOnly,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: careAnswers},
		Paper:       controlMix,
	}
}
