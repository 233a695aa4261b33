package score

import (
	"strings"
	"testing"
)

func pairKey(u Unit) string { return u.Patient + "/" + u.Item }

// The paper (C.2.3, Eq. A6): "u = Σ 1{a(0) = 0, a(1) = 1} and v = Σ 1{a(0)
// = 1, a(1) = 0} … ∆ = 100(u − v)/M, Φ = 100(u + v)/M"; and (Eq. A5) the
// image-label comparison "compares within-patient care accuracies".
func TestCompareHandWorked(t *testing.T) {
	base := []Unit{
		unit("p1", "a", "A", "A"), unit("p1", "b", "B", "A"), unit("p1", "c", "A", "A"),
		unit("p2", "a", "A", "A"),
		unit("p3", "a", "A", "B"), unit("p3", "b", "B", "A"),
	}
	treat := []Unit{
		unit("p1", "a", "A", "A"), unit("p1", "b", "B", "B"), unit("p1", "c", "A", "B"),
		unit("p2", "a", "A", "C"),
		unit("p3", "a", "A", "C"), unit("p3", "b", "B", "C"),
		unit("p4", "a", "A", "A"), // asked under the treatment only
	}
	base[2].Excluded, treat[2].Excluded = true, true
	c, err := Compare("history", "l_rev_snapshot", "l_rev", base, treat, pairKey, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if c.Units != 5 || c.Patients != 3 || c.Unmatched != 1 || !c.Complete {
		t.Errorf("units %d patients %d unmatched %d complete %v; want 5, 3, 1, true", c.Units, c.Patients, c.Unmatched, c.Complete)
	}
	if c.Corrected != 1 || c.Harmed != 1 || !near(c.Flip, 40) {
		t.Errorf("u = %d, v = %d, Φ = %.2f; want 1, 1, 40", c.Corrected, c.Harmed, c.Flip)
	}
	checkScore(t, "micro baseline", c.Micro.Baseline, 2, 5)
	checkScore(t, "micro treatment", c.Micro.Treatment, 2, 5)
	if !near(c.Micro.Difference, 100*float64(c.Corrected-c.Harmed)/float64(c.Units)) {
		t.Errorf("micro Δ %.3f is not 100(u−v)/M", c.Micro.Difference)
	}
	checkScore(t, "patient macro baseline", c.PatientMacro.Baseline, 0.5+1+0, 3)
	checkScore(t, "patient macro treatment", c.PatientMacro.Treatment, 1+0+0, 3)
	if !near(c.PatientMacro.Difference, 100*(1-1.5)/3) {
		t.Errorf("patient-macro Δ %.3f, want %.3f", c.PatientMacro.Difference, 100*(1-1.5)/3)
	}
	checkScore(t, "all-correct baseline", c.AllCorrect.Baseline, 1, 3)
	checkScore(t, "all-correct treatment", c.AllCorrect.Treatment, 1, 3)
	if c.Better != 1 || c.Worse != 1 || c.Same != 1 {
		t.Errorf("B/W/S %d/%d/%d, want 1/1/1", c.Better, c.Worse, c.Same)
	}
	for name, p := range map[string]Paired{"micro": c.Micro, "macro": c.PatientMacro, "all": c.AllCorrect} {
		iv := p.Interval
		if iv == nil || iv.Method != MethodBootstrap || iv.Lower > p.Difference+1e-9 || iv.Upper < p.Difference-1e-9 {
			t.Errorf("%s: interval %+v does not hold the difference %.2f", name, iv, p.Difference)
		}
	}
}

// A unit not run under either condition leaves its patient out of the
// patient endpoints and marks the comparison incomplete; the patient's
// other units still count in the micro endpoint.
func TestCompareLeavesOutPatientsWithNotRunUnits(t *testing.T) {
	base := []Unit{unit("p1", "a", "A", "A"), unit("p1", "b", "B", "B"), unit("p2", "a", "A", "B")}
	treat := []Unit{unit("p1", "a", "A", "A"), unit("p1", "b", "B", "B"), unit("p2", "a", "A", "A")}
	treat[1].NotRun = true
	c, err := Compare("x", "b", "t", base, treat, pairKey, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if c.Complete || c.Units != 2 {
		t.Errorf("complete %v, units %d; want incomplete over 2 units", c.Complete, c.Units)
	}
	checkScore(t, "all-correct baseline (p2 only)", c.AllCorrect.Baseline, 0, 1)
	checkScore(t, "all-correct treatment (p2 only)", c.AllCorrect.Treatment, 1, 1)
	if _, err := Compare("x", "b", "t", append(base, base[0]), treat, pairKey, Options{}); err == nil || !strings.Contains(err.Error(), "p1/a appears twice under b") {
		t.Errorf("a unit twice: %v", err)
	}
}
