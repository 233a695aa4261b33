package score

import (
	"fmt"
	"math"
	"testing"

	"github.com/npcorch/npcorch/tasks/extract"
)

// answer is a valid prediction; failed a failed extraction.
func answer(v string) extract.Label { return extract.Label{Value: v} }

func failed(kind extract.FailureKind) extract.Label {
	return extract.Label{Failure: &extract.Failure{Kind: kind, Detail: "test"}}
}

// unit builds a unit; pred "" is an unparseable answer.
func unit(patient, item, gold, pred string) Unit {
	u := Unit{Patient: patient, Item: item, Gold: gold, Pred: answer(pred)}
	if pred == "" {
		u.Pred = failed(extract.Unparseable)
	}
	return u
}

// near compares percentages to 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// round1 rounds to one decimal, as the paper prints.
func round1(x float64) string { return fmt.Sprintf("%.1f", x) }

func checkScore(t *testing.T, name string, s *Score, num float64, den int) {
	t.Helper()
	if s == nil {
		t.Errorf("%s: absent, want %v/%d", name, num, den)
		return
	}
	if !near(s.Numerator, num) || s.Denominator != den || !near(s.Percent, 100*num/float64(den)) {
		t.Errorf("%s = %v/%d (%.4f%%), want %v/%d (%.4f%%)", name, s.Numerator, s.Denominator, s.Percent, num, den, 100*num/float64(den))
	}
	for _, iv := range []*Interval{s.Bootstrap, s.Exact} {
		if iv != nil && !(iv.Lower <= s.Percent+1e-9 && s.Percent <= iv.Upper+1e-9) {
			t.Errorf("%s: %s interval [%.3f, %.3f] does not contain the estimate %.3f", name, iv.Method, iv.Lower, iv.Upper, s.Percent)
		}
	}
}

func checkPercent(t *testing.T, name string, got *float64, want float64) {
	t.Helper()
	if got == nil || !near(*got, want) {
		t.Errorf("%s = %v, want %.4f", name, got, want)
	}
}
