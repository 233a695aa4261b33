package npcbench

import (
	"github.com/npcorch/npcorch/tasks/score"
)

// TStage is T staging over both presentations, cards (A8) and plane groups
// (A9): the paper's T-Stg. column over its 400-patient T cohort.
const TStage = "t_stage"

func tStage() *score.Composite {
	return &score.Composite{
		Name:  TStage,
		Tasks: []string{TCards, TGroups},
		Score: func(a *score.Answers, mr *score.ModelResults) error {
			var units []score.Unit
			for _, task := range []string{TCards, TGroups} {
				u, err := a.Units(task)
				if err != nil {
					return err
				}
				units = append(units, u...)
			}
			ts, err := score.Classify(units, score.TClasses(), a.Options())
			if err != nil {
				return err
			}
			mr.TStage = &ts
			return nil
		},
		Tables: func(mr *score.ModelResults) []score.ClassTable {
			if mr.TStage == nil {
				return nil
			}
			return []score.ClassTable{{Key: TStage, Title: "T stage, both presentations (T-Stg.)", Score: mr.TStage}}
		},
	}
}

// tStageColumn is Table 1's T-Stg.
func tStageColumn() score.Column {
	return score.Column{Name: "T-Stg.", Level: "L3",
		Pick: func(m score.ModelResults) (*score.Score, bool) {
			if m.TStage == nil {
				return nil, true
			}
			return m.TStage.Accuracy, m.TStage.Complete
		},
		Majority: func(m score.ModelResults) *score.Baseline {
			if m.TStage == nil {
				return nil
			}
			return m.TStage.Majority
		}}
}
