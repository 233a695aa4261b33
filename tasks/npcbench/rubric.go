package npcbench

import (
	"fmt"

	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

// rubric is O1's score (Eq. A7-A8) of a model's consultations under each
// judge that judged them, from the judges' journalled verdicts.
func rubric() *score.Composite {
	return &score.Composite{Name: "rubric", Tasks: []string{O1}, Score: scoreRubric}
}

func scoreRubric(a *score.Answers, mr *score.ModelResults) error {
	judgeTask, judges := a.Judges(O1)
	for _, judge := range judges {
		var items []score.JudgedItem
		for _, it := range a.Items(O1) {
			items = append(items, a.Judged(judgeTask, judge, it))
		}
		s, err := score.O1(items, dataset.ConsultTags(), a.Options())
		if err != nil {
			return fmt.Errorf("judge %s: %w", judge, err)
		}
		mr.Rubric = append(mr.Rubric, score.RubricResult{Judge: judge, Score: s})
	}
	return nil
}

// rubricColumn is O1's column: the score under the first judge (by name).
func rubricColumn() score.Column {
	return score.Column{Name: "Rubric", Level: "O1", Pick: func(m score.ModelResults) (*score.Score, bool) {
		if len(m.Rubric) == 0 {
			return nil, true
		}
		return m.Rubric[0].Score.Score, m.Rubric[0].Score.Complete
	}}
}
