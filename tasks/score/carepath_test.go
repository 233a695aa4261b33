package score

import (
	"fmt"
	"strings"
	"testing"
)

func care(patient, item, gold, pred string) Unit { return unit(patient, item, gold, pred) }

func TestCarePathHandWorked(t *testing.T) {
	eps := []Episode{
		// p1: pathology, T and both care answers right → C=1, F=1.
		{Patient: "p1", Pathology: unit("", "path", "1", "1"), TStage: unit("", "t", "T3", "T3"),
			Care: []Unit{care("", "q1", "A", "A"), care("", "q2", "B", "B")}},
		// p2: T wrong, care right → C=1, F=0.
		{Patient: "p2", Pathology: unit("", "path", "1", "1"), TStage: unit("", "t", "T2", "T4"),
			Care: []Unit{care("", "q1", "C", "C")}},
		// p3: images right, one care wrong; an excluded wrong answer is ignored → C=0, F=1.
		{Patient: "p3", Pathology: unit("", "path", "1", "1"), TStage: unit("", "t", "T4", "T4"),
			Care: []Unit{care("", "q1", "A", "A"), care("", "q2", "D", "B"), {Item: "q3", Gold: "A", Pred: answer("B"), Excluded: true}}},
		// p4: failed pathology extraction, care wrong → C=0, F=0.
		{Patient: "p4", Pathology: unit("", "path", "1", ""), TStage: unit("", "t", "T1", "T1"),
			Care: []Unit{care("", "q1", "A", "E")}},
	}
	cs, err := CarePath(eps, Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	checkScore(t, "Care", cs.Care, 4, 6)
	checkScore(t, "AllCare", cs.AllCare, 2, 4)
	checkScore(t, "Strict", cs.Strict, 1, 4)
	checkScore(t, "pathology∧T", cs.PathologyAndT, 2, 4)
	checkScore(t, "care patient macro", cs.CarePatientMacro, 1+1+0.5+0, 4)
	if got := cs.Intersections; got != (Intersections{N11: 1, N10: 1, N01: 1, N00: 1}) {
		t.Errorf("intersections %+v, want one patient in each", got)
	}
	if cs.Decisions != 6 || cs.Excluded != 1 || cs.NotRun != 0 || !cs.Complete || cs.Scored != 4 {
		t.Errorf("counts: decisions %d excluded %d not-run %d complete %v scored %d", cs.Decisions, cs.Excluded, cs.NotRun, cs.Complete, cs.Scored)
	}
	checkScore(t, "pathology", cs.Pathology.Accuracy, 3, 4)
	checkScore(t, "T stage", cs.TStage.Accuracy, 3, 4)
	if cs.Strict.Exact == nil || cs.AllCare.Exact == nil || cs.Care.Exact != nil {
		t.Error("Strict and AllCare count patients (exact interval); Care clusters decisions (bootstrap only)")
	}
	// Strict = 100·n11/P and AllCare = 100·(n11+n10)/P (Eq. A3).
	P := float64(cs.Scored)
	if !near(cs.Strict.Percent, 100*float64(cs.Intersections.N11)/P) ||
		!near(cs.AllCare.Percent, 100*float64(cs.Intersections.N11+cs.Intersections.N10)/P) {
		t.Error("Strict and AllCare disagree with the intersections")
	}
}

// paperCohort builds 100 episodes with 217 care decisions: patients 0–38
// have four decisions and 39–99 one. The last 217−right single-decision
// patients answer their care question wrong; the first `strict` patients
// have pathology and T right, the others a wrong T.
func paperCohort(right, strict int) []Episode {
	var eps []Episode
	for p := range 100 {
		ep := Episode{Patient: fmt.Sprintf("cp%03d", p),
			Pathology: unit("", "path", "1", "1"), TStage: unit("", "t", "T3", "T3")}
		if p >= strict {
			ep.TStage.Pred = answer("T2")
		}
		n := 1
		if p < 39 {
			n = 4
		}
		for j := range n {
			pred := "A"
			if p >= 100-(217-right) {
				pred = "B"
			}
			ep.Care = append(ep.Care, care("", fmt.Sprintf("q%d", j), "A", pred))
		}
		eps = append(eps, ep)
	}
	return eps
}

func TestCarePathPaperFigures(t *testing.T) {
	// Gemini-3.1: Care 195/217 = 89.9 %; Claude-4.6: Strict 23/100, exact
	// 95 % CI 15.2–32.5 %.
	cs, err := CarePath(paperCohort(195, 23), Options{Seed: 20261029})
	if err != nil {
		t.Fatal(err)
	}
	if cs.Decisions != 217 || cs.Scored != 100 {
		t.Fatalf("cohort has %d decisions over %d patients, want 217 over 100", cs.Decisions, cs.Scored)
	}
	checkScore(t, "Care", cs.Care, 195, 217)
	if round1(cs.Care.Percent) != "89.9" {
		t.Errorf("Care = %.3f, want 89.9", cs.Care.Percent)
	}
	checkScore(t, "Strict", cs.Strict, 23, 100)
	if e := cs.Strict.Exact; round1(e.Lower) != "15.2" || round1(e.Upper) != "32.5" {
		t.Errorf("Strict exact CI [%.3f, %.3f], want 15.2–32.5", e.Lower, e.Upper)
	}
}

func TestCarePathNotRun(t *testing.T) {
	eps := []Episode{
		{Patient: "a", Pathology: unit("", "path", "1", "1"), TStage: unit("", "t", "T3", "T3"),
			Care: []Unit{care("", "q1", "A", "A"), {Item: "q2", Gold: "B", NotRun: true}}},
		{Patient: "b", Pathology: unit("", "path", "1", "1"), TStage: unit("", "t", "T3", "T3"),
			Care: []Unit{care("", "q1", "A", "A")}},
		{Patient: "c", Pathology: Unit{Item: "path", Gold: "1", NotRun: true}, TStage: unit("", "t", "T3", "T1"),
			Care: []Unit{care("", "q1", "A", "B")}},
	}
	cs, err := CarePath(eps, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if cs.NotRun != 2 || cs.Complete || cs.Scored != 1 || cs.Patients != 3 {
		t.Errorf("not-run %d complete %v scored %d patients %d; want 2, false, 1, 3", cs.NotRun, cs.Complete, cs.Scored, cs.Patients)
	}
	// Care keeps the decisions that ran: a.q1, b.q1, c.q1.
	checkScore(t, "Care", cs.Care, 2, 3)
	// Patient-level endpoints only over b, the one patient fully run.
	checkScore(t, "Strict", cs.Strict, 1, 1)
	if cs.Intersections.N11+cs.Intersections.N10+cs.Intersections.N01+cs.Intersections.N00 != cs.Scored {
		t.Error("the intersections must partition the scored patients")
	}
	if cs.Pathology.Complete || cs.Pathology.NotRun != 1 {
		t.Errorf("pathology table not-run %d, want 1", cs.Pathology.NotRun)
	}
}

func TestCarePathErrors(t *testing.T) {
	ok := Episode{Patient: "x", Pathology: unit("", "p", "1", "1"), TStage: unit("", "t", "T1", "T1"), Care: []Unit{care("", "q", "A", "A")}}
	allExcluded := ok
	allExcluded.Patient = "y"
	allExcluded.Care = []Unit{{Item: "q", Gold: "A", Excluded: true}}
	badT := ok
	badT.Patient = "z"
	badT.TStage = unit("", "t", "T9", "T1")
	for name, eps := range map[string][]Episode{
		"duplicate": {ok, ok},
		"no scored": {ok, allExcluded},
		"gold T9":   {ok, badT},
	} {
		_, err := CarePath(eps, Options{Draws: -1})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "patient") {
			t.Errorf("%s: error %q should name the patient", name, err)
		}
	}
}
