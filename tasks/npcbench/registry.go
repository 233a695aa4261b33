package npcbench

import (
	"fmt"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/score"
)

// CarePath names the L6 episode's three tasks in a campaign's task list.
const CarePath = "carepath"

// Registry returns NPCBench's tasks over the base structures st: the L3
// tasks, the L6 CarePath episode, the composites scored across them, and
// the paper's Table 1.
// Tasks are built, sent and reported in the order listed here.
func Registry(st *configs.Structures) *tasks.Registry {
	return tasks.MustRegistry(tasks.Benchmark{
		Structures: st,
		Tasks: []*tasks.Task{
			pathology(), sequence(), card(st), tCards(st), tGroups(st), nGroups(),
			cpPathology(), cpMRI(st), cpCare(st), o1(), o1Judge(),
		},
		Families:   []tasks.Family{{Name: CarePath, Tasks: []string{CPPathology, CPMRI, CPCare}}},
		Composites: []*tasks.Composite{tStage(), evidence(st), carePath(), rubric()},
		Table: []tasks.Column{
			tasks.TaskColumn("Path.", "L3", Pathology), tStageColumn(), tasks.TaskColumn("N-Stg.", "L3", NGroups),
			tasks.TaskColumn("Seq.", "L3", Sequence), structureColumn(), careColumn(), strictColumn(), rubricColumn(),
		},
		Notes: []string{fmt.Sprintf("Paper baselines: L3 pathology majority %.1f %%, T majority %.1f %%, N majority %.1f %%, CarePath pathology %.0f %%, CarePath constant T3 %.0f %%.",
			score.PaperL3PathologyMajority, score.PaperTMajority, score.PaperNMajority, score.PaperCarePathPathologyMajority, score.PaperCarePathT3Constant)},
		Recall: []tasks.RecallPlot{
			{File: "recall_t_stage.png", Title: "T stage (T-Stg.)", Table: TStage},
			{File: "recall_n_stage.png", Title: "N stage", Table: NGroups},
			{File: "recall_sequence.png", Title: "MRI sequence", Table: Sequence},
		},
	})
}
