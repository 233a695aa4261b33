package score

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

func pos(id, section string, w float64, met bool) JudgedCriterion {
	return JudgedCriterion{ID: id, Kind: KindPositive, Section: section, Weight: w, Met: met}
}

func errc(id, kind string, met bool) JudgedCriterion {
	return JudgedCriterion{ID: id, Kind: kind, Met: met}
}

// o1Fixture is six items over three cases, every figure of which the
// tests below derive by hand.
func o1Fixture() []JudgedItem {
	invalid := errc("c2", KindMajor, true)
	invalid.Invalid = "no valid judgment after 3 attempts"
	return []JudgedItem{
		// r = 5 + 2 − 2 = 5 of 10: R = 50; one major.
		{Case: "K1", Item: "i1", Tags: []string{"AE", "Tx"}, Points: 10, Criteria: []JudgedCriterion{
			pos("c1", "core", 5, true), pos("c2", "evidence", 3, false), pos("c3", "conditional", 2, true),
			errc("c4", KindMajor, true), errc("c5", KindMinor, false)}},
		// r = 10 − 2·2 − 1 = 5: R = 50; two majors, one minor.
		{Case: "K1", Item: "i2", Tags: []string{"Dx"}, Points: 10, Criteria: []JudgedCriterion{
			pos("c1", "core", 10, true), errc("c2", KindMajor, true), errc("c3", KindMajor, true), errc("c4", KindMinor, true)}},
		// r = max(0, 0 − 1 − 2) = 0: R = 0.
		{Case: "K2", Item: "i3", Tags: []string{"Tx"}, Points: 4, Criteria: []JudgedCriterion{
			pos("c1", "core", 4, false), errc("c2", KindMinor, true), errc("c3", KindMajor, true)}},
		// A criterion without a valid judgment: not in V.
		{Case: "K2", Item: "i4", Points: 10, Criteria: []JudgedCriterion{pos("c1", "core", 10, true), invalid}},
		// No response: not in V.
		{Case: "K3", Item: "i5", Tags: []string{"Tx"}, Points: 10, Missing: "the response was not run",
			Criteria: []JudgedCriterion{pos("c1", "core", 10, false)}},
		// r = 8 of 10: R = 80; its major not triggered.
		{Case: "K3", Item: "i6", Tags: []string{"AE"}, Points: 10, Criteria: []JudgedCriterion{
			pos("c1", "core", 8, true), pos("c2", "evidence", 2, false), errc("c3", KindMajor, false)}},
	}
}

func pct(t *testing.T, name string, s *Score, want float64) {
	t.Helper()
	if s == nil {
		t.Errorf("%s: no score, want %.4f", name, want)
		return
	}
	if math.Abs(s.Percent-want) > 1e-9 {
		t.Errorf("%s = %.6f, want %.6f", name, s.Percent, want)
	}
}

// TestO1Score derives every O1 endpoint of the fixture by hand. The paper
// (C.5.1): "Each triggered major error deducts two points, and each minor
// error deducts one point." "Deductions accumulate across criteria before
// the item score is floored at zero." "Here V contains items with valid
// judgments for every criterion." "The primary mean weights items
// equally; a clinical-tag score restricts V to items with that tag."
func TestO1Score(t *testing.T) {
	s, err := O1(o1Fixture(), []string{"AE", "Dx", "elderly", "Tx"}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Items != 6 || s.Valid != 4 || s.Cases != 3 || s.Complete {
		t.Errorf("items %d, valid %d, cases %d, complete %v; want 6, 4, 3, false", s.Items, s.Valid, s.Cases, s.Complete)
	}
	wantFell := []ReasonCount{{"no valid judgment after 3 attempts", 1}, {"the response was not run", 1}}
	if !reflect.DeepEqual(s.FellOut, wantFell) {
		t.Errorf("fell out %v, want %v", s.FellOut, wantFell)
	}
	// O1 = (50 + 50 + 0 + 80) / 4.
	pct(t, "O1", s.Score, 45)
	if s.Score.Denominator != 4 {
		t.Errorf("|V| = %d, want 4", s.Score.Denominator)
	}
	// "Averaging first within each case and then across cases": K1 50,
	// K2 0, K3 80.
	pct(t, "case mean", s.CaseMean, (50+0+80)/3.0)
	// Eq. A8: "An item with several errors of the same severity
	// contributes once to this percentage": majors in i1, i2, i3 of 4;
	// minors in i2, i3.
	pct(t, "major rate", s.Major, 75)
	pct(t, "minor rate", s.Minor, 50)
	want := map[string]struct {
		items int
		score float64
	}{"AE": {2, 65}, "Dx": {1, 50}, "Tx": {2, 25}}
	for _, ts := range s.Tags {
		w, ok := want[ts.Tag]
		if !ok {
			if ts.Items != 0 || ts.Score != nil {
				t.Errorf("tag %s: %d items, score %v; want none", ts.Tag, ts.Items, ts.Score)
			}
			continue
		}
		if ts.Items != w.items {
			t.Errorf("tag %s: %d items, want %d", ts.Tag, ts.Items, w.items)
		}
		pct(t, "tag "+ts.Tag, ts.Score, w.score)
	}
	// Fig. 5d: "positive-section rates are the percentage of criteria
	// satisfied, and error-avoidance rates are the percentage of error
	// criteria not triggered. Each criterion counts once in that panel."
	rates := map[string]float64{}
	for _, r := range s.Rates {
		rates[r.Name] = r.Rate.Percent
	}
	wantRates := map[string]float64{"core": 75, "evidence": 0, "conditional": 100, "major": 20, "minor": 100.0 / 3}
	if len(rates) != len(wantRates) {
		t.Errorf("rates %v, want %v", rates, wantRates)
	}
	for k, w := range wantRates {
		if math.Abs(rates[k]-w) > 1e-9 {
			t.Errorf("rate %s = %.4f, want %.4f", k, rates[k], w)
		}
	}
	wantItems := []ItemScore{{"i1", "K1", 5, 50, 1, 0}, {"i2", "K1", 5, 50, 2, 1}, {"i3", "K2", 0, 0, 1, 1}, {"i6", "K3", 8, 80, 0, 0}}
	if !reflect.DeepEqual(s.PerItem, wantItems) {
		t.Errorf("per item %+v, want %+v", s.PerItem, wantItems)
	}
}

// TestO1IntervalsResampleCases: the interval comes from resampling cases
// (three here), contains the estimate, and the same seed gives the same
// bytes.
func TestO1IntervalsResampleCases(t *testing.T) {
	a, err := O1(o1Fixture(), nil, Options{Seed: 3, Draws: 500})
	if err != nil {
		t.Fatal(err)
	}
	iv := a.Score.Bootstrap
	if iv == nil || iv.Lower > a.Score.Percent || iv.Upper < a.Score.Percent || iv.Draws != 500 {
		t.Fatalf("interval %+v around %.2f", iv, a.Score.Percent)
	}
	// A draw of three cases can hold only K3 (R = 80) or only K2 (R = 0):
	// every bound lies in [0, 80].
	if iv.Lower < 0 || iv.Upper > 80+1e-9 || iv.Method != MethodCaseBootstrap {
		t.Errorf("interval %+v outside what case draws can give", iv)
	}
	b, _ := O1(o1Fixture(), nil, Options{Seed: 3, Draws: 500})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("the same inputs and seed gave different results")
	}
}

// TestO1Errors: an item listed twice, or with no positive points, is an
// error naming it.
func TestO1Errors(t *testing.T) {
	its := o1Fixture()
	if _, err := O1(append(its, its[0]), nil, Options{}); err == nil {
		t.Error("an item listed twice was accepted")
	}
	bad := its[0]
	bad.Item, bad.Points = "zero", 0
	if _, err := O1([]JudgedItem{bad}, nil, Options{}); err == nil {
		t.Error("an item with B_i = 0 was accepted")
	}
	s, err := O1(nil, []string{"AE"}, Options{})
	if err != nil || s.Score != nil || s.Major != nil || !s.Complete {
		t.Errorf("no items: %+v, %v", s, err)
	}
}

// TestCalibrate derives Eq. A9 by hand: TP 3, FP 1, TN 4, FN 2 of n = 10.
// The paper (D.3): "Observed agreement po, physician-positive rate qH,
// judge-positive rate qJ, chance agreement pe, and Cohen's κ are po =
// (TP + TN)/n, qH = (TP + FN)/n, qJ = (TP + FP)/n, pe = qH qJ + (1 − qH)(1 −
// qJ), κ = (po − pe)/(1 − pe). Sensitivity is TP/(TP + FN), specificity is
// TN/(TN + FP), and balanced agreement is their arithmetic mean."
func TestCalibrate(t *testing.T) {
	var pairs []LabelPair
	add := func(resp, crit, kind string, h, j bool) {
		pairs = append(pairs, LabelPair{Response: resp, Criterion: crit, Kind: kind, Physician: h, Judge: j})
	}
	add("r1", "a", KindPositive, true, true)
	add("r1", "b", KindPositive, true, true)
	add("r1", "c", KindPositive, true, false)
	add("r1", "d", KindMajor, false, false)
	add("r2", "a", KindPositive, true, true)
	add("r2", "b", KindPositive, true, false)
	add("r2", "c", KindMajor, false, true)
	add("r2", "d", KindMinor, false, false)
	add("r3", "a", KindMinor, false, false)
	add("r3", "b", KindMinor, false, false)
	add("r3", "x", KindMajor, true, true)
	pairs[len(pairs)-1].Invalid = "no valid judgment after 3 attempts"
	c, err := Calibrate(pairs, Options{Seed: 1, Draws: 200})
	if err != nil {
		t.Fatal(err)
	}
	a := c.All
	if a.N != 10 || a.TP != 3 || a.FP != 1 || a.TN != 4 || a.FN != 2 || c.Labels != 11 {
		t.Fatalf("table %+v of %d labels", a, c.Labels)
	}
	if len(c.Missing) != 1 || c.Missing[0].Count != 1 {
		t.Errorf("missing %v, want the one invalid pair", c.Missing)
	}
	for name, got := range map[string]*float64{"po": a.Po, "qH": a.QH, "qJ": a.QJ, "kappa": a.Kappa,
		"sensitivity": a.Sensitivity, "specificity": a.Specificity, "balanced": a.Balanced} {
		want := map[string]float64{"po": 0.7, "qH": 0.5, "qJ": 0.4, "kappa": 0.4, "sensitivity": 0.6, "specificity": 0.8, "balanced": 0.7}[name]
		if got == nil || math.Abs(*got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if a.Percent == nil || math.Abs(a.Percent.Percent-70) > 1e-9 || a.Percent.Bootstrap == nil {
		t.Errorf("percent agreement %+v, want 70 with an interval", a.Percent)
	}
	kinds := map[string]Agreement{}
	for _, k := range c.ByKind {
		kinds[k.Kind] = k.Agreement
	}
	// positive: TP 3, FN 2; major: TN 1, FP 1; minor: TN 3.
	if p := kinds[KindPositive]; p.TP != 3 || p.FN != 2 || p.N != 5 || p.Specificity != nil {
		t.Errorf("positive %+v", p)
	}
	if m := kinds[KindMajor]; m.TN != 1 || m.FP != 1 || m.N != 2 || *m.Specificity != 0.5 || m.Sensitivity != nil {
		t.Errorf("major %+v", m)
	}
	if m := kinds[KindMinor]; m.TN != 3 || m.N != 3 || m.Kappa != nil {
		t.Errorf("minor %+v: κ is undefined when every label agrees on one class (pe = 1)", m)
	}
	if _, err := Calibrate(append(pairs, pairs[0]), Options{}); err == nil {
		t.Error("a label given twice was accepted")
	}
}
