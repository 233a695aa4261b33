package npcbench

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// TGroups is L3 T staging from plane groups (prompt A9): a patient's 44–79
// ordered plane groups in one request (sub-sampled for small contexts),
// answered like TCards. The paper: 300 patients.
const TGroups = "t_groups"

func tGroups(st *configs.Structures) *tasks.Task {
	return &tasks.Task{
		Key: TGroups, Level: "L3", Title: "T stage from plane groups (L3, A9)",
		Cohort: dataset.CohortTGroups,
		Images: []string{dataset.KindTGroups},
		Build: func(b *tasks.Builder) {
			buildStaging(b, st, func(pp *dataset.PreparedPatient) ([]dataset.Image, []string) { return planeGroups(pp.TGroups) })
		},
		Answer:      answerTStage(st),
		Classes:     score.TClasses(),
		ScoredAlone: true,
		Sim:         tasks.Sim{Marker: "output the patient-level T stage", Answers: stagingAnswers(st, false)},
		Paper:       planeGroup.mix(schedule.RequestMix{Requests: 300, MinImages: 44, MaxImages: 79, TextTokens: 800, MaxTokens: 8192}),
	}
}
