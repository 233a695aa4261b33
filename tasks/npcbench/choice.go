package npcbench

import (
	"slices"
	"strings"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/score"
)

// What the closed-choice tasks (L1, L2, L4, L5) share: items from the
// dataset's choices, the answer extraction, simulated answers and Table 1
// columns.

// choiceItem is the item of a dataset choice, or why it cannot be one.
func choiceItem(id, patient string, c *dataset.Choice, clinical, group string) (tasks.Item, string) {
	if reason := c.Check(); reason != "" {
		return tasks.Item{}, reason
	}
	return tasks.Item{ID: id, Patient: patient, Gold: tasks.Gold{Label: c.Gold()},
		Question: tasks.NewQuestion(c, clinical), Group: group, Tags: c.Tags}, ""
}

// addChoice adds the item of a dataset choice, or reports why it cannot.
func addChoice(b *tasks.Builder, id, patient string, c *dataset.Choice, clinical, group string) {
	it, reason := choiceItem(id, patient, c, clinical, group)
	if reason != "" {
		b.Problem(id, reason)
		return
	}
	b.Add(it)
}

// answerChoice extracts a closed-choice answer: one option letter, or the
// set of options of a multiple-select question (a partial set is another
// set, and wrong).
func answerChoice(it tasks.Item, content string) extract.Label {
	if it.Question == nil {
		return extract.Label{Failure: &extract.Failure{Kind: extract.Unparseable, Detail: "item " + it.ID + " has no question"}}
	}
	if it.Question.Multiple {
		return extract.Choices(content, it.Question.Letters())
	}
	return extract.Choice(content, it.Question.Letters())
}

// answerStyle writes a set of letters as a model might: "B", "Answer: B",
// `\boxed{B}`.
type answerStyle func(letters []string) string

func plainStyle(letters []string) string    { return strings.Join(letters, ", ") }
func labelledStyle(letters []string) string { return "Answer: " + strings.Join(letters, " and ") }
func boxedStyle(letters []string) string    { return `\boxed{` + strings.Join(letters, ",") + `}` }

// choiceAnswers are a closed-choice item's simulated answers: the
// reference in the given style; every other option wrong, and for a
// multiple-select item also each partial set and each set with one option
// too many; the constant policy answers the first option.
func choiceAnswers(style answerStyle) func(tasks.Item) tasks.SimAnswers {
	return func(it tasks.Item) tasks.SimAnswers {
		letters := it.Question.Letters()
		gold := strings.Split(it.Gold.Label, ",")
		a := tasks.SimAnswers{Right: style(gold), Constant: letters[0]}
		for _, l := range letters {
			if !slices.Equal(gold, []string{l}) {
				a.Wrong = append(a.Wrong, style([]string{l}))
			}
		}
		if it.Question.Multiple {
			for i := range gold {
				if len(gold) > 1 {
					a.Wrong = append(a.Wrong, style(slices.Delete(slices.Clone(gold), i, i+1)))
				}
			}
			for _, l := range letters {
				if !slices.Contains(gold, l) {
					a.Wrong = append(a.Wrong, style(inOrder(letters, append(slices.Clone(gold), l))))
				}
			}
		}
		return a
	}
}

// inOrder returns set's letters in option order.
func inOrder(letters, set []string) []string {
	var out []string
	for _, l := range letters {
		if slices.Contains(set, l) {
			out = append(out, l)
		}
	}
	return out
}

// choiceColumn is the Table 1 column of a closed-choice task's endpoint,
// beside the majority-answer and random baselines of the same endpoint.
func choiceColumn(name, level, task string, endpoint func(*score.TaskScore) *score.Score, baseline func(score.Endpoints) *float64) score.Column {
	base := func(m score.ModelResults, pick func(*score.ChanceBaselines) (score.Endpoints, string)) *score.Baseline {
		ts := m.Task(task)
		if ts == nil || ts.Chance == nil {
			return nil
		}
		e, class := pick(ts.Chance)
		v := baseline(e)
		if v == nil {
			return nil
		}
		return &score.Baseline{Class: class, Percent: *v}
	}
	return score.Column{Name: name, Level: level,
		Pick: func(m score.ModelResults) (*score.Score, bool) {
			if ts := m.Task(task); ts != nil {
				return endpoint(ts), ts.Complete
			}
			return nil, true
		},
		Majority: func(m score.ModelResults) *score.Baseline {
			return base(m, func(c *score.ChanceBaselines) (score.Endpoints, string) { return c.Majority, c.Majority.Class })
		},
		Random: func(m score.ModelResults) *score.Baseline {
			return base(m, func(c *score.ChanceBaselines) (score.Endpoints, string) { return c.Random, "random" })
		}}
}

func microAccuracy(ts *score.TaskScore) *score.Score { return ts.Accuracy }
func microBaseline(e score.Endpoints) *float64       { return &e.Accuracy }
