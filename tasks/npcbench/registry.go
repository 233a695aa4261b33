package npcbench

import (
	"fmt"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/score"
)

// Registry returns NPCBench's tasks over the base structures st: the L1,
// L2, L4 and L5 text tasks, the L3 tasks, the L6 CarePath episode, the
// matched controls of L5 and L6, O1's consultations and their judge, the
// composites scored across them, and the paper's Table 1. Tasks are built, sent and reported in the order
// listed here.
func Registry(st *configs.Structures) *tasks.Registry {
	return tasks.MustRegistry(tasks.Benchmark{
		Structures: st,
		Tasks: []*tasks.Task{
			gMem(), aApp(),
			pathology(), sequence(), card(st), tCards(st), tGroups(st), nGroups(),
			cPlan(),
			lRev(), lRevSnapshot(), lRevShuffled(), lRevSerial(),
			cpPathology(), cpMRI(st), cpCare(st),
			cpCareOwnFindings(st), cpCareRefFindings(st), cpCareNoFindings(), cpCareSerial(st),
			o1(), o1Judge(),
		},
		Families: []tasks.Family{
			{Name: CarePath, Tasks: []string{CPPathology, CPMRI, CPCare}},
			{Name: LRevControls, Tasks: []string{LRev, LRevSnapshot, LRevShuffled, LRevSerial}},
			{Name: CarePathControls, Tasks: []string{CPPathology, CPMRI, CPCareOwnFindings, CPCareRefFindings, CPCareNoFindings, CPCareSerial}},
		},
		Scoring: &score.Card{Composites: []*score.Composite{tStage(), evidence(st), carePath(), lRevControls(), carePathControls(), rubric()},
			Table: []score.Column{
				gMemColumn(), aAppColumn(),
				score.TaskColumn("Path.", "L3", Pathology), tStageColumn(), score.TaskColumn("N-Stg.", "L3", NGroups),
				score.TaskColumn("Seq.", "L3", Sequence), structureColumn(), cPlanColumn(), lRevColumns()[0], lRevColumns()[1], careColumn(), strictColumn(), rubricColumn(),
			},
			Notes: []string{fmt.Sprintf("Paper baselines: L3 pathology majority %.1f %%, T majority %.1f %%, N majority %.1f %%, CarePath pathology %.0f %%, CarePath constant T3 %.0f %%.",
				score.PaperL3PathologyMajority, score.PaperTMajority, score.PaperNMajority, score.PaperCarePathPathologyMajority, score.PaperCarePathT3Constant)},
			Recall: []score.RecallPlot{
				{File: "recall_t_stage.png", Title: "T stage (T-Stg.)", Table: TStage},
				{File: "recall_n_stage.png", Title: "N stage", Table: NGroups},
				{File: "recall_sequence.png", Title: "MRI sequence", Table: Sequence},
			},
		}})
}
