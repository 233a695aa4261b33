package score

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/npcorch/npcorch/tasks/extract"
)

// cohort builds one unit per patient: counts[k] patients of classes[k],
// every one answered with pred.
func cohort(classes []string, counts []int, pred func(gold string, i int) string) []Unit {
	var us []Unit
	n := 0
	for k, c := range classes {
		for range counts[k] {
			id := fmt.Sprintf("p%03d", n)
			us = append(us, unit(id, id, c, pred(c, n)))
			n++
		}
	}
	return us
}

func TestClassDiagnosticsHandWorked(t *testing.T) {
	// gold A A A B B C, answered A A B B (failed) A; class D has no support.
	classes := []string{"A", "B", "C", "D"}
	units := []Unit{
		unit("p1", "1", "A", "A"), unit("p2", "2", "A", "A"), unit("p3", "3", "A", "B"),
		unit("p4", "4", "B", "B"), unit("p5", "5", "B", ""), unit("p6", "6", "C", "A"),
	}
	ts, err := Classify(units, classes, Options{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	checkScore(t, "accuracy", ts.Accuracy, 3, 6)
	// Mean recall over the three classes with support: (2/3 + 1/2 + 0)/3.
	checkScore(t, "balanced", ts.Balanced, 2.0/3+0.5, 3)
	a, b, c, d := ts.Classes[0], ts.Classes[1], ts.Classes[2], ts.Classes[3]
	checkPercent(t, "recall A", a.Recall, 200.0/3)
	checkPercent(t, "precision A", a.Precision, 200.0/3) // C→A is a false positive
	checkPercent(t, "F1 A", a.F1, 100*4.0/6)
	checkPercent(t, "recall B", b.Recall, 50) // the failure is a false negative
	checkPercent(t, "precision B", b.Precision, 50)
	checkPercent(t, "F1 B", b.F1, 50)
	checkPercent(t, "recall C", c.Recall, 0)
	if c.Precision != nil {
		t.Errorf("precision C = %v, want absent (nothing predicted C)", *c.Precision)
	}
	checkPercent(t, "F1 C", c.F1, 0)
	if d.Recall != nil || d.Precision != nil || d.F1 != nil || d.Support != 0 {
		t.Errorf("class D without support or predictions: %+v, want every ratio absent", d)
	}
	wantCM := [][]int{{2, 1, 0, 0, 0}, {0, 1, 0, 0, 1}, {1, 0, 0, 0, 0}, {0, 0, 0, 0, 0}}
	if got, _ := json.Marshal(ts.Confusion.Counts); string(got) != mustJSON(wantCM) {
		t.Errorf("confusion %s, want %s", got, mustJSON(wantCM))
	}
	if ts.Confusion.Columns[4] != InvalidColumn {
		t.Errorf("last column %q, want %q", ts.Confusion.Columns[4], InvalidColumn)
	}
	if len(ts.Failures) != 1 || ts.Failures[0].Kind != extract.Unparseable || ts.Failures[0].Count != 1 {
		t.Errorf("failures %+v, want one unparseable", ts.Failures)
	}
	// One unit per patient: micro accuracy gets an exact interval, and
	// patient-level metrics would repeat it, so they are absent.
	if ts.Accuracy.Exact == nil || ts.PatientMacro != nil || ts.AllCorrect != nil {
		t.Errorf("single-unit patients: exact %v, patient macro %v, all correct %v", ts.Accuracy.Exact, ts.PatientMacro, ts.AllCorrect)
	}
	if m := ts.Majority; m.Class != "A" || m.Count != 3 || !near(m.Percent, 50) || !near(m.Balanced, 100.0/3) {
		t.Errorf("majority %+v, want A 3/6 = 50 %%, balanced 33.3 %%", m)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestConstantPredictorBalancedAccuracy(t *testing.T) {
	// Any constant answer over 4 classes with support has balanced
	// accuracy 1/4, whatever the class sizes (paper C.2.2).
	classes := TClasses()
	for _, counts := range [][]int{{50, 50, 150, 150}, {1, 2, 3, 94}, {10, 10, 10, 10}} {
		for _, constant := range classes {
			us := cohort(classes, counts, func(string, int) string { return constant })
			ts, err := Classify(us, classes, Options{Draws: -1})
			if err != nil {
				t.Fatal(err)
			}
			if !near(ts.Balanced.Percent, 25) {
				t.Errorf("constant %s on %v: balanced %.3f, want 25", constant, counts, ts.Balanced.Percent)
			}
		}
	}
}

func TestPaperMajorityBaselines(t *testing.T) {
	cases := []struct {
		name    string
		classes []string
		counts  []int
		want    float64
		class   string
	}{
		{"L3 pathology 39/69", PathologyClasses(), []int{30, 39}, PaperL3PathologyMajority, "1"},
		{"T cohort 50/50/150/150", TClasses(), []int{50, 50, 150, 150}, PaperTMajority, "T3"},
		{"N cohort 80/160/80/80", NClasses(), []int{80, 160, 80, 80}, PaperNMajority, "N1"},
		{"CarePath pathology 99/100", PathologyClasses(), []int{1, 99}, PaperCarePathPathologyMajority, "1"},
	}
	for _, c := range cases {
		us := cohort(c.classes, c.counts, func(g string, _ int) string { return g })
		m := Majority(us, c.classes)
		if m.Class != c.class || round1(m.Percent) != round1(c.want) {
			t.Errorf("%s: majority %s %.2f %%, want %s %.1f %%", c.name, m.Class, m.Percent, c.class, c.want)
		}
	}
}

func TestConstantT3OnCarePathDistribution(t *testing.T) {
	// A CarePath-like T distribution with 58 T3 of 100: answering T3 for
	// everyone scores 58 %, the paper's constant-T3 baseline.
	classes := TClasses()
	us := cohort(classes, []int{6, 20, 58, 16}, func(string, int) string { return "T3" })
	ts, err := Classify(us, classes, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkScore(t, "constant T3", ts.Accuracy, 58, 100)
	if round1(ts.Accuracy.Percent) != round1(PaperCarePathT3Constant) {
		t.Errorf("constant T3 = %.1f, want %.1f", ts.Accuracy.Percent, PaperCarePathT3Constant)
	}
	if ts.Majority.Class != "T3" || !near(ts.Majority.Percent, ts.Accuracy.Percent) {
		t.Errorf("majority %+v should equal the constant-T3 accuracy", ts.Majority)
	}
	checkPercent(t, "T3 recall", ts.Classes[2].Recall, 100)
	checkPercent(t, "T3 precision", ts.Classes[2].Precision, 58)
}

func TestPatientAndGroupAggregation(t *testing.T) {
	// p1: 2/2 right; p2: 1/3; p3: 0/1. Groups: x = {p1a, p2a, p2b}, y = rest.
	us := []Unit{
		unit("p1", "a", "A", "A"), unit("p1", "b", "B", "B"),
		unit("p2", "a", "A", "A"), unit("p2", "b", "B", "A"), unit("p2", "c", "C", ""),
		unit("p3", "a", "A", "C"),
	}
	for i := range us {
		us[i].Group = "y"
	}
	us[0].Group, us[2].Group, us[3].Group = "x", "x", "x"
	ts, err := Classify(us, nil, Options{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	checkScore(t, "micro", ts.Accuracy, 3, 6)
	checkScore(t, "patient macro", ts.PatientMacro, 1+1.0/3+0, 3)
	checkScore(t, "all correct", ts.AllCorrect, 1, 3)
	// x: p1a right, p2a right, p2b wrong → 2/3; y: p1b right, p2c, p3a wrong → 1/3.
	checkScore(t, "group macro", ts.GroupMacro, 2.0/3+1.0/3, 2)
	if ts.Accuracy.Exact != nil {
		t.Error("items cluster within patients: micro accuracy must not get an exact binomial interval")
	}
	if ts.AllCorrect.Exact == nil {
		t.Error("AllCorrect counts patients: it should get an exact interval")
	}
	if ts.Balanced != nil || ts.Classes != nil || ts.Majority != nil {
		t.Error("no class list: class diagnostics should be absent")
	}
}

func TestNotRunAndExcluded(t *testing.T) {
	us := []Unit{
		unit("p1", "a", "A", "A"), unit("p1", "b", "B", "B"),
		unit("p2", "a", "A", "A"), unit("p2", "b", "B", "B"),
		unit("p3", "a", "A", "B"), unit("p3", "b", "B", "B"),
	}
	us[3].NotRun = true   // p2's second answer never came back
	us[4].Excluded = true // p3's first item is not scored
	ts, err := Classify(us, []string{"A", "B"}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ts.NotRun != 1 || ts.Excluded != 1 || ts.Complete || ts.Units != 4 {
		t.Errorf("not-run %d excluded %d complete %v units %d; want 1, 1, false, 4", ts.NotRun, ts.Excluded, ts.Complete, ts.Units)
	}
	checkScore(t, "micro", ts.Accuracy, 4, 4)
	// p2 leaves the patient-level metrics; p3 is judged on its scored item.
	checkScore(t, "all correct", ts.AllCorrect, 2, 2)
	checkScore(t, "patient macro", ts.PatientMacro, 2, 2)
	// The baseline is the cohort's: p2's unanswered item counts (its gold
	// is known without the model), p3's excluded one does not. Golds A, B,
	// A, B, B: B, 3 of 5.
	if m := ts.Majority; m.Total != 5 || m.Class != "B" || m.Count != 3 || !near(m.Percent, 60) {
		t.Errorf("majority %+v, want B, 3 of the cohort's 5", m)
	}

	// Failed extractions, unlike not-run units, stay in the denominator.
	us[3] = Unit{Patient: "p2", Item: "b", Gold: "B", Pred: failed(extract.Empty)}
	ts, _ = Classify(us, []string{"A", "B"}, Options{Seed: 1})
	checkScore(t, "micro with failure", ts.Accuracy, 4, 5)
	if !ts.Complete {
		t.Error("a failed extraction is not a not-run unit")
	}
}

func TestClassifyRejectsUnknownGold(t *testing.T) {
	_, err := Classify([]Unit{unit("p9", "x", "T5", "T1")}, TClasses(), Options{})
	if err == nil {
		t.Fatal("gold T5 accepted")
	}
	if msg := err.Error(); !bytes.Contains([]byte(msg), []byte("p9")) || !bytes.Contains([]byte(msg), []byte("T5")) {
		t.Errorf("error %q should name the patient and the label", msg)
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var us []Unit
	for p := range 40 {
		for i := range 1 + p%4 {
			gold := TClasses()[rng.IntN(4)]
			pred := gold
			if rng.IntN(3) == 0 {
				pred = TClasses()[rng.IntN(4)]
			}
			us = append(us, unit(fmt.Sprintf("p%02d", p), fmt.Sprint(i), gold, pred))
		}
	}
	run := func(units []Unit, seed uint64) string {
		ts, err := Classify(units, TClasses(), Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return mustJSON(ts)
	}
	a, b := run(us, 42), run(us, 42)
	if a != b {
		t.Fatal("same seed, different results")
	}
	// Input order does not matter: patients are ordered by id.
	shuffled := append([]Unit(nil), us...)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	if c := run(shuffled, 42); c != a {
		t.Error("shuffled input gave different results")
	}
	if c := run(us, 43); c == a {
		t.Error("a different seed gave identical intervals")
	}
	ts, _ := Classify(us, TClasses(), Options{Seed: 42})
	for name, s := range map[string]*Score{"accuracy": ts.Accuracy, "balanced": ts.Balanced, "patient macro": ts.PatientMacro, "all correct": ts.AllCorrect} {
		iv := s.Bootstrap
		if iv == nil || iv.Draws != DefaultDraws || iv.Lower > s.Percent || iv.Upper < s.Percent || iv.Lower >= iv.Upper {
			t.Errorf("%s %.2f: bootstrap %+v should be a proper interval around it from %d draws", name, s.Percent, iv, DefaultDraws)
		}
	}
}
