package report

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/score"
)

func f(v float64) *float64 { return &v }

// TestRubricTables: the Table 1 page shows O1 under each judge and each
// judge's calibration, when the scores have them.
func TestRubricTables(t *testing.T) {
	res := &score.Results{Format: score.ResultsFormat, Campaign: "o1", Models: []score.ModelResults{{Model: "gen",
		Rubric: []score.RubricResult{{Judge: "GPT-OSS-120B", Score: score.O1Score{Items: 4, Valid: 3, Complete: false,
			Score: &score.Score{Percent: 62.5}, Major: &score.Score{Percent: 25}, FellOut: []score.ReasonCount{{Reason: "not judged", Count: 1}}}}}}},
		Judges: []score.JudgeResults{{Task: "o1judge", Judge: "GPT-OSS-120B", Calibration: &score.Calibration{Labels: 10,
			All:    score.Agreement{N: 10, TP: 4, FP: 1, TN: 3, FN: 2, Kappa: f(0.4), Sensitivity: f(0.667), Percent: &score.Score{Percent: 70}},
			ByKind: []score.KindAgreement{{Kind: "major", Agreement: score.Agreement{N: 2, TP: 1, TN: 1}}}}}}}
	r, err := Build(testRegistry(), []*Run{{Name: "run", Results: res}})
	if err != nil {
		t.Fatal(err)
	}
	md := string(r.tablePage().markdown())
	for _, want := range []string{"O1 ConsultRubrics", "| gen | run | GPT-OSS-120B | 62.5\\* | – | 25.0\\* | – | 3 of 4 | 1: not judged |",
		"Judge calibration", "| GPT-OSS-120B | run | all | 10 | 70.0 | 0.400 | 0.667 | – | 4 | 1 | 3 | 2 |", "| GPT-OSS-120B | run | major | 2 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("table page lacks %q:\n%s", want, md)
		}
	}
	plain := &score.Results{Format: score.ResultsFormat, Campaign: "x", Models: []score.ModelResults{{Model: "m"}}}
	r, err = Build(testRegistry(), []*Run{{Name: "run", Results: plain}})
	if err != nil {
		t.Fatal(err)
	}
	if md := string(r.tablePage().markdown()); strings.Contains(md, "ConsultRubrics") || strings.Contains(md, "calibration") {
		t.Errorf("a run without O1 shows O1 tables:\n%s", md)
	}
}
