package npcbench

import (
	"fmt"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/score"
)

// NGroups is L3 N staging (prompt A10): a patient's plane groups from the
// skull base to the sternoclavicular joint in one request, answered with
// the N stage and its evidence. The paper: 400 patients.
const NGroups = "n_groups"

func nGroups() *tasks.Task {
	return &tasks.Task{
		Key: NGroups, Level: "L3", Title: "N stage (L3, A10)",
		Cohort:      dataset.CohortNGroups,
		Images:      []string{dataset.KindNGroups},
		Build:       buildNStaging,
		Answer:      func(_ tasks.Item, content string) extract.Label { return extract.NStage(content).NStage },
		Classes:     score.NClasses(),
		ScoredAlone: true,
		Sim:         tasks.Sim{Marker: "Determine the N stage", Answers: nAnswers},
		Paper:       planeGroup.mix(schedule.RequestMix{Requests: 400, MinImages: 44, MaxImages: 79, TextTokens: 800, MaxTokens: 8192}),
	}
}

// buildNStaging makes one item per patient: the N-range plane groups, the
// patient's N stage the gold answer.
func buildNStaging(b *tasks.Builder) {
	for p, pp := range b.Patients() {
		id := b.ItemID(p.ID)
		imgs, planes := planeGroups(pp.NGroups)
		if len(imgs) == 0 {
			b.Problem(id, "no N-range plane groups were prepared")
			continue
		}
		if !validLabel(p.NStage, "N0", "N1", "N2", "N3") {
			b.Problem(id, fmt.Sprintf("N stage %q is not N0..N3", p.NStage))
			continue
		}
		b.Add(tasks.Item{ID: id, Patient: p.ID, Images: imgs, Planes: planes, Gold: tasks.Gold{Label: p.NStage}})
	}
}

// nAnswers: every other N stage is wrong; the constant policy says N1.
func nAnswers(it tasks.Item) tasks.SimAnswers {
	var wrong []string
	for _, n := range score.NClasses() {
		if n != it.Gold.Label {
			wrong = append(wrong, nJSON(n))
		}
	}
	return tasks.SimAnswers{Right: "```json\n" + nJSON(it.Gold.Label) + "\n```", Wrong: wrong, Constant: nJSON("N1")}
}

func nJSON(n string) string {
	return fmt.Sprintf(`{"n_stage":%q,"evidence":"simulated nodal assessment"}`, n)
}
