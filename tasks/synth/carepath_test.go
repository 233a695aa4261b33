package synth

import "testing"

func TestOverallStage(t *testing.T) {
	// AJCC/UICC 9th edition, M0.
	want := map[[2]int]string{
		{1, 0}: "I", {2, 0}: "I", {3, 0}: "II", {4, 0}: "IVA",
		{1, 1}: "II", {2, 1}: "II", {3, 1}: "III", {4, 1}: "IVA",
		{1, 2}: "III", {2, 2}: "III", {3, 2}: "III", {4, 2}: "IVA",
		{1, 3}: "IVA", {2, 3}: "IVA", {3, 3}: "IVA", {4, 3}: "IVA",
	}
	for tn, w := range want {
		if got := overallStage(tn[0], tn[1]); got != w {
			t.Errorf("overallStage(T%d, N%d) = %s, want %s", tn[0], tn[1], got, w)
		}
	}
}
