package score

import (
	"fmt"
	"reflect"
	"testing"
)

// The paper (Appendix C.2.1): "Micro accuracy weights each scored item
// equally; group macro weights each group equally." The issue asks that
// group macro be resampled within groups: a group never drops out of a
// draw, so a one-item group that is wrong caps every draw at half.
func TestGroupMacroIsResampledWithinGroups(t *testing.T) {
	us := []Unit{{Patient: "q00", Item: "q00", Group: "small", Gold: "A", Pred: answer("B")}}
	for i := 1; i < 20; i++ {
		id := fmt.Sprintf("q%02d", i)
		us = append(us, Unit{Patient: id, Item: id, Group: "large", Gold: "A", Pred: answer("A")})
	}
	ts, err := Classify(us, nil, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkScore(t, "group macro", ts.GroupMacro, 0+1, 2)
	iv := ts.GroupMacro.Bootstrap
	if iv == nil || iv.Method != MethodGroupBootstrap || !near(iv.Lower, 50) || !near(iv.Upper, 50) {
		t.Errorf("group-macro interval %+v, want [50, 50] by %s: each draw keeps both groups and their sizes", iv, MethodGroupBootstrap)
	}
	checkScore(t, "micro", ts.Accuracy, 19, 20)
}

func TestSlicesScoreEachGroupAndTag(t *testing.T) {
	us := []Unit{
		{Patient: "p1", Item: "a", Group: "g1", Tags: []string{"x", "y"}, Gold: "A", Pred: answer("A")},
		{Patient: "p1", Item: "b", Group: "g1", Tags: []string{"y"}, Gold: "B", Pred: answer("A")},
		{Patient: "p2", Item: "a", Group: "g2", Gold: "A", Pred: answer("A")},
		{Patient: "p2", Item: "b", Group: "g2", Tags: []string{"x"}, Gold: "A", Pred: answer("A"), NotRun: true},
	}
	ts, err := Classify(us, nil, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts.Groups) != 2 || ts.Groups[0].Name != "g1" || ts.Groups[1].Name != "g2" {
		t.Fatalf("groups %+v, want g1 and g2", ts.Groups)
	}
	checkScore(t, "g1", ts.Groups[0].Accuracy, 1, 2)
	checkScore(t, "g2 (its not-run unit left out)", ts.Groups[1].Accuracy, 1, 1)
	if len(ts.Tags) != 2 || ts.Tags[0].Name != "x" || ts.Tags[1].Name != "y" || ts.Tags[0].Units != 1 || ts.Tags[1].Units != 2 {
		t.Fatalf("tags %+v, want x (1 unit) and y (2 units)", ts.Tags)
	}
	checkScore(t, "tag x", ts.Tags[0].Accuracy, 1, 1)
	checkScore(t, "tag y", ts.Tags[1].Accuracy, 1, 2)
}

// Hand-worked: p1 has a 4-option item (gold A) and a 3-option
// multiple-select item (gold A,B), p2 a 2-option item (gold B).
func TestChanceBaselinesHandWorked(t *testing.T) {
	us := []Unit{
		{Patient: "p1", Item: "1", Group: "g1", Gold: "A", Pred: answer("A"), Chance: 0.25},
		{Patient: "p1", Item: "2", Group: "g1", Gold: "A,B", Pred: answer("A"), Chance: 1.0 / 7},
		{Patient: "p2", Item: "3", Group: "g2", Gold: "B", Pred: answer("B"), Chance: 0.5},
	}
	ts, err := Classify(us, nil, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := ts.Chance
	if c == nil {
		t.Fatal("no chance baselines")
	}
	// Majority: A, A,B and B once each; the tie goes to A. Right on item 1 only.
	m := c.Majority
	if m.Class != "A" || !near(m.Accuracy, 100.0/3) {
		t.Errorf("majority %+v, want class A at 33.3", m)
	}
	checkPercent(t, "majority group macro", m.GroupMacro, 25)
	checkPercent(t, "majority patient macro", m.PatientMacro, 25)
	checkPercent(t, "majority all-correct", m.AllCorrect, 0)
	r := c.Random
	if !near(r.Accuracy, 100*(0.25+1.0/7+0.5)/3) {
		t.Errorf("random accuracy %.4f", r.Accuracy)
	}
	checkPercent(t, "random group macro", r.GroupMacro, 100*((0.25+1.0/7)/2+0.5)/2)
	checkPercent(t, "random patient macro", r.PatientMacro, 100*((0.25+1.0/7)/2+0.5)/2)
	checkPercent(t, "random all-correct", r.AllCorrect, 100*(0.25/7+0.5)/2)

	// A baseline is the cohort's: the same whichever items the model left
	// not run (p2's only item here; scored alone, it would leave p2 out and
	// make the majority A on 2 of 2).
	us[2].NotRun = true
	if ts, _ := Classify(us, nil, Options{Seed: 1}); !reflect.DeepEqual(ts.Chance, c) {
		t.Errorf("with an item not run the baselines changed: %+v, want %+v", ts.Chance, c)
	}
	us[2].NotRun, us[0].Excluded = false, true
	if ts, _ := Classify(us, nil, Options{Seed: 1}); ts.Chance.Majority.Class != "A,B" || !near(ts.Chance.Majority.Accuracy, 50) {
		t.Errorf("an excluded item is not in the cohort: majority %+v, want A,B (the tie's first) at 50", ts.Chance.Majority)
	}
	us[0].Excluded = false

	us[1].Chance = 0
	if ts, _ := Classify(us, nil, Options{Seed: 1}); ts.Chance != nil {
		t.Error("a unit without its chance: the baselines must be absent, not guessed")
	}
}
