package score_test

import (
	"fmt"

	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/score"
)

// From raw model text to a scored task: extract, pair with gold, classify.
func ExampleClassify() {
	classes := []string{"T1_Ax", "T2_Ax", "T1+C_Ax", "T1_COR", "T1_SAG", "T1+C_SAG", "T1+C_COR_FS"}
	answers := []struct{ patient, gold, raw string }{
		{"p1", "T2_Ax", "CSF is bright, so not A.\n\\boxed{B}"},
		{"p2", "T1_SAG", "Final answer: E"},
		{"p3", "T1+C_Ax", "A or C, hard to say."}, // two options, no final answer: conflicting, wrong
	}
	var units []score.Unit
	for i, a := range answers {
		units = append(units, score.Unit{
			Patient: a.patient,
			Item:    fmt.Sprint(i),
			Gold:    a.gold,
			Pred:    extract.Sequence(a.raw, classes),
		})
	}
	units = append(units, score.Unit{Patient: "p4", Item: "3", Gold: "T1_Ax", NotRun: true})
	ts, err := score.Classify(units, classes, score.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("accuracy %.1f%% (%v/%d), not run %d, complete %v, failures %v\n",
		ts.Accuracy.Percent, ts.Accuracy.Numerator, ts.Accuracy.Denominator, ts.NotRun, ts.Complete, ts.Failures)
	// Output: accuracy 66.7% (2/3), not run 1, complete false, failures [{conflicting 1}]
}
