package npcbench

import (
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// CPCareNoFindings is the L6 image-evidence control without image
// evidence: the control questions with no pathology, T stage or invaded
// structures at all, the supplied fields kept. Compared with
// cp_care_own_findings as no findings minus own findings.
const CPCareNoFindings = "cp_care_no_findings"

func cpCareNoFindings() *tasks.Task {
	return &tasks.Task{
		Key: CPCareNoFindings, Level: "L6", Title: "CarePath control: no image findings (L6, A13)",
		Cohort:      dataset.CohortCareControl,
		Prompt:      CPCare,
		Control:     true,
		ImageLevel:  true,
		Build:       func(b *tasks.Builder) { buildControlCare(b, withoutFindings) },
		Answer:      answerCare,
		ScoredAlone: true,
		Prior:       suppliedOnly,
		Sim:         tasks.Sim{Recognise: wholePrompt, Answers: careAnswers},
		Paper:       controlMix,
	}
}
