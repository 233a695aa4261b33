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

// The detail shows each matched control: the endpoints under both
// conditions and the paired difference with its interval (Table A23's
// form: scores, difference, B/W/S).
func TestDetailShowsMatchedControls(t *testing.T) {
	s := func(v float64) *score.Score { return &score.Score{Percent: v} }
	c := score.Comparison{Name: "L6 reference − own findings", Units: 12, Patients: 3, Complete: true,
		Micro:        score.Paired{Baseline: s(50), Treatment: s(75), Difference: 25, Interval: &score.Interval{Lower: 8.3, Upper: 41.7}},
		PatientMacro: score.Paired{Baseline: s(50), Treatment: s(75), Difference: 25},
		AllCorrect:   score.Paired{Baseline: s(0), Treatment: s(33.3), Difference: 33.3},
		Corrected:    4, Harmed: 1, Flip: 41.7, Better: 2, Worse: 0, Same: 1}
	p := &page{}
	controlsTable(p, []score.Comparison{c})
	md := string(p.markdown())
	want := "| L6 reference − own findings | 12 / 3 | 50.0 → 75.0: +25.0 [8.3, 41.7] | 50.0 → 75.0: +25.0 | 0.0 → 33.3: +33.3 | 4/1 (41.7) | 2/0/1 |"
	if !strings.Contains(md, "### Matched controls") || !strings.Contains(md, want) {
		t.Errorf("detail lacks the control row %q:\n%s", want, md)
	}
	p = &page{}
	controlsTable(p, nil)
	if strings.Contains(string(p.markdown()), "Matched controls") {
		t.Errorf("a model without controls gets a section: %q", p.markdown())
	}
}
