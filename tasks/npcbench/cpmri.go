package npcbench

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// CPMRI is the CarePath episode's MRI staging (L6, prompt A12): the ten
// 4-row MRI pages in one request, answered by the AJCC 9th edition with the
// structures' invasion, the involved structures and T_stage. Its answer is
// the t_p of Strict and is written into the care questions; the paper:
// 100 patients.
const CPMRI = "cp_mri"

func cpMRI(st *configs.Structures) *tasks.Task {
	return &tasks.Task{
		Key: CPMRI, Level: "L6", Title: "CarePath MRI T stage (L6, A12)",
		Cohort:  dataset.CohortCarePath,
		Edition: "ninth",
		Images:  []string{dataset.KindPage},
		Build: func(b *tasks.Builder) {
			buildStaging(b, st, func(pp *dataset.PreparedPatient) ([]dataset.Image, []string) { return pp.Pages, nil })
		},
		Answer:  answerTStage(st),
		Classes: score.TClasses(),
		Sim:     tasks.Sim{Marker: "MRI panels from the same NPC patient", Answers: stagingAnswers(st, true)},
		Paper:   cardPage.mix(schedule.RequestMix{Requests: 100, MinImages: 10, MaxImages: 10, TextTokens: 1000, MaxTokens: 1024}),
	}
}
