package npcbench

import (
	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// TCards is L3 T staging from structure cards (prompt A8): all 27 cards of
// a patient in one request, answered with the 18 structures' invasion and
// the T stage. The paper: 100 patients, the cards' cohort.
const TCards = "t_cards"

func tCards(st *configs.Structures) *tasks.Task {
	return &tasks.Task{
		Key: TCards, Level: "L3", Title: "T stage from cards (L3, A8)",
		Cohort: dataset.CohortCards,
		Images: []string{dataset.KindCard},
		Build: func(b *tasks.Builder) {
			buildStaging(b, st, func(pp *dataset.PreparedPatient) ([]dataset.Image, []string) {
				imgs := make([]dataset.Image, len(pp.Cards))
				for i, c := range pp.Cards {
					imgs[i] = c.Image
				}
				return imgs, nil
			})
		},
		Answer:      answerTStage(st),
		Classes:     score.TClasses(),
		ScoredAlone: true,
		Sim:         tasks.Sim{Marker: "27 MRI structure cards", Answers: stagingAnswers(st, false)},
		Paper:       cardPage.mix(schedule.RequestMix{Requests: 100, MinImages: 27, MaxImages: 27, TextTokens: 800, MaxTokens: 8192}),
	}
}
