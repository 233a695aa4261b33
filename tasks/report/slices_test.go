package report

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/score"
)

// The detail shows the closed-choice tasks' per-group and per-tag
// accuracies (L1 by guideline source, L2 by capability group) and the
// group-macro mean (L2's main score, Eq. A1) beside item accuracy.
func TestDetailShowsGroupAndTagAccuracy(t *testing.T) {
	pctOf := func(n, d int) *score.Score {
		return &score.Score{Percent: 100 * float64(n) / float64(d), Numerator: float64(n), Denominator: d}
	}
	l2 := &score.TaskScore{Units: 5, Patients: 5, Complete: true, Accuracy: pctOf(3, 5), GroupMacro: &score.Score{Percent: 62.5},
		Groups: []score.Slice{{Name: "initial_management", Units: 4, Accuracy: pctOf(3, 4)}, {Name: "recurrence", Units: 1, Accuracy: pctOf(0, 1)}}}
	l1 := &score.TaskScore{Units: 2, Patients: 2, Complete: true, Accuracy: pctOf(1, 2),
		Tags: []score.Slice{{Name: "CSCO", Units: 2, Accuracy: pctOf(1, 2)}, {Name: "NCCN", Units: 1, Accuracy: pctOf(1, 1)}}}
	p := &page{}
	ts := []taskScore{{"g_mem", "Guideline memory (L1, A1)", l1}, {"a_app", "Rule application (L2, A2)", l2}}
	taskTable(p, ts)
	sliceTables(p, ts)
	md := string(p.markdown())
	for _, want := range []string{
		"| Rule application (L2, A2) | 5 | 5 | 60.0 | – | 62.5 |",
		"Rule application (L2, A2) by group", "| initial_management | 4 | 75.0 |", "| recurrence | 1 | 0.0 |",
		"Guideline memory (L1, A1) by tag", "| CSCO | 2 | 50.0 |", "| NCCN | 1 | 100.0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("detail lacks %q:\n%s", want, md)
		}
	}
}
