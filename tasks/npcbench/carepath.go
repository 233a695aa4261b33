package npcbench

import (
	"fmt"
	"sort"

	"github.com/npcorch/npcorch/tasks/score"
)

// CarePath names the L6 episode's three tasks in a campaign's task list.
const CarePath = "carepath"

// carePath is the L6 episode's endpoint (Eq. 1, A2, A3): Care over the
// decisions, All-care and Strict over the patients, and the pathology and
// T-stage class tables; named like the family of its three tasks.
func carePath() *score.Composite {
	return &score.Composite{
		Name:  CarePath,
		Tasks: []string{CPPathology, CPMRI, CPCare},
		Score: scoreCarePath,
		Tables: func(mr *score.ModelResults) []score.ClassTable {
			if mr.CarePath == nil {
				return nil
			}
			return []score.ClassTable{{Key: CPPathology, Title: "CarePath pathology (L6, A11)", Score: &mr.CarePath.Pathology},
				{Key: CPMRI, Title: "CarePath MRI T stage (L6, A12)", Score: &mr.CarePath.TStage}}
		},
		Failures: func(mr *score.ModelResults) []score.FailureTally {
			if mr.CarePath == nil {
				return nil
			}
			cp := mr.CarePath
			return []score.FailureTally{{Name: CPPathology, Failures: cp.Pathology.Failures},
				{Name: CPMRI, Failures: cp.TStage.Failures}, {Name: CPCare, Failures: cp.CareFailures}}
		},
		Figure: &score.Figure{File: "carepath_care_strict.png", Title: "L6 CarePath: Care, All-care and Strict",
			Caption: "Care (decision-weighted), All-care (every care answer of a patient right) and Strict (pathology, T stage and all care right) per model, as in the paper's Fig. 6a.",
			Series:  []string{"Care", "All-care", "Strict"},
			Scores: func(mr *score.ModelResults) []*score.Score {
				if mr.CarePath == nil {
					return nil
				}
				return []*score.Score{mr.CarePath.Care, mr.CarePath.AllCare, mr.CarePath.Strict}
			}},
	}
}

// scoreCarePath scores each patient's episode. A run that asked no care
// decision (the L6 controls alone, which ask cp_pathology and cp_mri for
// the own-findings condition) has no episode to score, as Strict needs
// every care answer: its pathology and T-stage answers are scored as tasks
// of their own instead.
func scoreCarePath(a *score.Answers, mr *score.ModelResults) error {
	if len(a.Items(CPCare)) == 0 {
		return scoreFindingsAlone(a, mr)
	}
	list, err := episodes(a)
	if err != nil {
		return err
	}
	cp, err := score.CarePath(list, a.Options())
	if err != nil {
		return err
	}
	mr.CarePath = &cp
	return nil
}

// scoreFindingsAlone scores the CarePath pathology and T-stage answers of
// a run without care decisions, each by its classes.
func scoreFindingsAlone(a *score.Answers, mr *score.ModelResults) error {
	for _, t := range []struct {
		key     string
		classes []string
	}{{CPPathology, score.PathologyClasses()}, {CPMRI, score.TClasses()}} {
		if len(a.Items(t.key)) == 0 {
			continue
		}
		units, err := a.Units(t.key)
		if err != nil {
			return err
		}
		ts, err := score.Classify(units, t.classes, a.Options())
		if err != nil {
			return fmt.Errorf("%s: %w", t.key, err)
		}
		mr.Tasks = append(mr.Tasks, score.TaskResult{Task: t.key, Score: ts})
	}
	return nil
}

// episodes gathers each patient's pathology, MRI and care units, in
// patient id order.
func episodes(a *score.Answers) ([]score.Episode, error) {
	eps := map[string]*score.Episode{}
	var order []string
	ep := func(id string) *score.Episode {
		if e, ok := eps[id]; ok {
			return e
		}
		e := &score.Episode{Patient: id}
		eps[id] = e
		order = append(order, id)
		return e
	}
	for _, task := range []string{CPPathology, CPMRI, CPCare} {
		units, err := a.Units(task)
		if err != nil {
			return nil, err
		}
		for _, u := range units {
			switch e := ep(u.Patient); task {
			case CPPathology:
				e.Pathology = u
			case CPMRI:
				e.TStage = u
			default:
				e.Care = append(e.Care, u)
			}
		}
	}
	sort.Strings(order)
	list := make([]score.Episode, len(order))
	for i, id := range order {
		list[i] = *eps[id]
	}
	return list, nil
}

// careColumn is Table 1's L6 Care.
func careColumn() score.Column {
	return score.Column{Name: "Care", Level: "L6", Pick: func(m score.ModelResults) (*score.Score, bool) {
		if m.CarePath == nil {
			return nil, true
		}
		return m.CarePath.Care, m.CarePath.Complete
	}}
}

// strictColumn is Table 1's L6 Strict.
func strictColumn() score.Column {
	return score.Column{Name: "Strict", Level: "L6", Pick: func(m score.ModelResults) (*score.Score, bool) {
		if m.CarePath == nil {
			return nil, true
		}
		return m.CarePath.Strict, m.CarePath.Complete
	}}
}
