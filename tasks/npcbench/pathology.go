package npcbench

import (
	"fmt"
	"strconv"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/score"
)

// Pathology is L3 pathology (prompt A5): one whole-slide overview, answered
// 0 or 1 (nasopharyngeal carcinoma or not). The paper's cohort: 69 cases.
const Pathology = "pathology"

func pathology() *tasks.Task {
	return &tasks.Task{
		Key: Pathology, Level: "L3", Title: "Pathology (L3, A5)",
		Cohort:      dataset.CohortPathology,
		Images:      []string{dataset.KindOverview},
		Build:       buildOverview,
		Answer:      answerPathology,
		Classes:     score.PathologyClasses(),
		ScoredAlone: true,
		Sim:         tasks.Sim{Marker: "whole-slide pathology overview", Answers: pathologyAnswers},
		Paper:       planeGroup.mix(schedule.RequestMix{Requests: 69, MinImages: 1, MaxImages: 1, TextTokens: 300, MaxTokens: 1024}),
	}
}

// buildOverview makes one item per patient: the pathology overview, the
// slide's label its gold answer.
func buildOverview(b *tasks.Builder) {
	for p, pp := range b.Patients() {
		id := b.ItemID(p.ID)
		if p.Pathology == nil || pp.Overview == nil {
			b.Problem(id, "the patient has no pathology overview; add a slide to dataset.json or drop the patient from the cohort")
			continue
		}
		if p.Pathology.Label != 0 && p.Pathology.Label != 1 {
			b.Problem(id, fmt.Sprintf("pathology label %d is not 0 or 1", p.Pathology.Label))
			continue
		}
		b.Add(tasks.Item{ID: id, Patient: p.ID, Images: []dataset.Image{*pp.Overview},
			Gold: tasks.Gold{Label: strconv.Itoa(p.Pathology.Label)}})
	}
}

func answerPathology(_ tasks.Item, content string) extract.Label { return extract.Pathology(content) }

// pathologyAnswers: the other label is wrong; the constant policy says 1.
func pathologyAnswers(it tasks.Item) tasks.SimAnswers {
	other := "0"
	if it.Gold.Label == "0" {
		other = "1"
	}
	return tasks.SimAnswers{Right: it.Gold.Label, Wrong: []string{other}, Constant: "1"}
}
