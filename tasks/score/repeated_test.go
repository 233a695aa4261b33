package score

import (
	"math"
	"testing"

	"github.com/npcorch/npcorch/tasks/extract"
)

func attempts(preds ...string) []Attempt {
	var out []Attempt
	for _, p := range preds {
		switch p {
		case "-":
			out = append(out, Attempt{NotRun: true})
		case "":
			out = append(out, Attempt{Pred: failed(extract.Unparseable)})
		default:
			out = append(out, Attempt{Pred: answer(p)})
		}
	}
	return out
}

func TestRepeatedHandWorked(t *testing.T) {
	items := []RepeatedItem{
		{Patient: "p1", Item: "i1", Gold: "A", Attempts: attempts("A", "A", "A")}, // pass^k, pass@k, agree
		{Patient: "p1", Item: "i2", Gold: "B", Attempts: attempts("B", "C", "B")}, // pass@k
		{Patient: "p2", Item: "i3", Gold: "A", Attempts: attempts("C", "C", "C")}, // agree on a wrong answer
		{Patient: "p3", Item: "i4", Gold: "A", Attempts: attempts("", "", "")},    // failures never agree
		{Patient: "p3", Item: "i5", Gold: "B", Attempts: attempts("B", "-", "B")}, // not gradeable in every attempt
	}
	r, err := Repeated(items, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.K != 3 || r.Items != 4 || r.Dropped != 1 || r.Complete {
		t.Errorf("k %d items %d dropped %d complete %v; want 3, 4, 1, false", r.K, r.Items, r.Dropped, r.Complete)
	}
	want := []float64{50, 25, 50}
	for j := range want {
		if !near(r.PerAttempt[j], want[j]) {
			t.Errorf("attempt %d accuracy %.3f, want %.3f", j+1, r.PerAttempt[j], want[j])
		}
	}
	checkScore(t, "avg@k", r.AvgAtK, 5, 12)
	// SD of 50, 25, 50 with k−1: sqrt(((25/3)² + (50/3)² + (25/3)²)/2).
	wantSD := math.Sqrt((2*(25.0/3)*(25.0/3) + (50.0/3)*(50.0/3)) / 2)
	if !near(r.SD, wantSD) {
		t.Errorf("SD %.4f, want %.4f", r.SD, wantSD)
	}
	checkScore(t, "pass^k", r.PassHatK, 1, 4)
	checkScore(t, "pass@k", r.PassAtK, 2, 4)
	checkScore(t, "agreement", r.Agreement, 2, 4)
}

func TestRepeatedSingleAttemptAndErrors(t *testing.T) {
	r, err := Repeated([]RepeatedItem{{Patient: "p", Item: "i", Gold: "A", Attempts: attempts("A")}}, Options{Draws: -1})
	if err != nil {
		t.Fatal(err)
	}
	if r.SD != 0 || !near(r.PassHatK.Percent, r.PassAtK.Percent) {
		t.Errorf("k = 1: SD %v, pass^1 %v, pass@1 %v; want 0 and pass^1 = pass@1", r.SD, r.PassHatK.Percent, r.PassAtK.Percent)
	}
	if _, err := Repeated([]RepeatedItem{
		{Patient: "p", Item: "i", Gold: "A", Attempts: attempts("A", "A")},
		{Patient: "p", Item: "j", Gold: "A", Attempts: attempts("A")},
	}, Options{}); err == nil {
		t.Error("unequal attempt counts accepted")
	}
	if _, err := Repeated(nil, Options{}); err == nil {
		t.Error("no items accepted")
	}
}
