package npcbench

import (
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// CPPathology is the CarePath episode's pathology (L6, prompt A11): the
// patient's overview, answered 0 or 1. Its answer is the d_p of Strict and
// is written into the episode's care questions; the paper: 100 patients.
const CPPathology = "cp_pathology"

func cpPathology() *tasks.Task {
	return &tasks.Task{
		Key: CPPathology, Level: "L6", Title: "CarePath pathology (L6, A11)",
		Cohort:  dataset.CohortCarePath,
		Images:  []string{dataset.KindOverview},
		Build:   buildOverview,
		Answer:  answerPathology,
		Classes: score.PathologyClasses(),
		Sim:     tasks.Sim{Marker: "supports a diagnosis of nasopharyngeal carcinoma", Answers: pathologyAnswers},
		Paper:   planeGroup.mix(schedule.RequestMix{Requests: 100, MinImages: 1, MaxImages: 1, TextTokens: 600, MaxTokens: 1024}),
	}
}
