package extract

import (
	"testing"
)

var sequenceClasses = []string{"T1_Ax", "T2_Ax", "T1+C_Ax", "T1_COR", "T1_SAG", "T1+C_SAG", "T1+C_COR_FS"}

// want is an expected label: a value, or a failure kind.
type want struct {
	value string
	kind  FailureKind
}

func (w want) check(t *testing.T, in string, got Label) {
	t.Helper()
	switch {
	case w.value != "" && !got.Is(w.value):
		t.Errorf("input %q:\n got %+v (failure %v)\nwant value %q", in, got, got.Failure, w.value)
	case w.value == "" && (got.Failure == nil || got.Failure.Kind != w.kind):
		t.Errorf("input %q:\n got %+v (failure %v)\nwant failure %q", in, got, got.Failure, w.kind)
	case got.OK() == (got.Failure != nil):
		t.Errorf("input %q: label %+v must hold exactly one of value and failure", in, got)
	}
}

func ok(v string) want       { return want{value: v} }
func bad(k FailureKind) want { return want{kind: k} }

func TestSequence(t *testing.T) {
	cases := []struct {
		in   string
		want want
	}{
		{`\boxed{B}`, ok("T2_Ax")},
		{"  \\boxed{ C }\n", ok("T1+C_Ax")},
		{`\boxed{\text{G}}`, ok("T1+C_COR_FS")},
		{`$\boxed{\textbf{D}}$`, ok("T1_COR")},
		{`\boxed{c}`, ok("T1+C_Ax")},
		{`\boxed{T1+C_SAG}`, ok("T1+C_SAG")},
		{`\boxed{B. T2_Ax}`, ok("T2_Ax")},
		{`\boxed{(E)}`, ok("T1_SAG")},
		// The box beats letters discussed in reasoning.
		{"The fat suppression suggests G, but the plane looks like A or B. Comparing C...\n\\boxed{F}", ok("T1+C_SAG")},
		{"Option A is unlikely; option B fits.\nFinal answer: \\boxed{B}", ok("T2_Ax")},
		// The same box twice is one answer; two different boxes conflict.
		{`\boxed{A} ... so again \boxed{A}`, ok("T1_Ax")},
		{`\boxed{A} or maybe \boxed{B}`, bad(Conflicting)},
		{`\boxed{A or B}`, bad(Conflicting)},
		{`\boxed{H}`, bad(OutOfCategory)},
		{`\boxed{T2 FLAIR}`, bad(OutOfCategory)},
		// Labelled answers.
		{"Answer: C", ok("T1+C_Ax")},
		{"Final answer: C", ok("T1+C_Ax")},
		{"**Final Answer:** (D)", ok("T1_COR")},
		{"The answer is E.", ok("T1_SAG")},
		{"The correct option is G", ok("T1+C_COR_FS")},
		{"Bright CSF and axial plane; A is wrong because fat is bright.\nAnswer: B", ok("T2_Ax")},
		// A labelled final answer beats a plain labelled one.
		{"Answer: A might fit.\nFinal answer: B", ok("T2_Ax")},
		{"Final answer: A\nFinal answer: B", bad(Conflicting)},
		{"Answer: A or B", bad(Conflicting)},
		{"Answer: T1+C_COR_FS", ok("T1+C_COR_FS")},
		{"FINAL ANSWER: c", ok("T1+C_Ax")},
		{"The final answer is (B).", ok("T2_Ax")},
		{"**Final Answer**\n: B", ok("T2_Ax")},
		{"To answer this, compare T1 and T2 signal: CSF is bright, so B fits best.", bad(Unparseable)},
		{"答案：D", ok("T1_COR")},
		{"The answer is a tough call between several planes.", bad(OutOfCategory)},
		// Standalone options.
		{"B", ok("T2_Ax")},
		{"**B**", ok("T2_Ax")},
		{"(F)", ok("T1+C_SAG")},
		{"B.", ok("T2_Ax")},
		{"T2_Ax", ok("T2_Ax")},
		{"t1+c cor fs", ok("T1+C_COR_FS")},
		{"C. T1+C_Ax", ok("T1+C_Ax")},
		{"Option D", ok("T1_COR")},
		{"The image shows a sagittal plane with contrast.\nF", ok("T1+C_SAG")},
		{"A\nB", bad(Conflicting)},
		{"C. T1_Ax", bad(Unparseable)}, // letter and name disagree
		// Letters only in reasoning: no guess.
		{"It is probably a T2 axial image, so I lean towards B.", bad(Unparseable)},
		{"A sagittal view is seen.", bad(Unparseable)},
		{"H", bad(OutOfCategory)},
		{"", bad(Empty)},
		{"   \n\t", bad(Empty)},
		// Leftover reasoning.
		{"<think>Could be A. Or C.</think>\n\\boxed{D}", ok("T1_COR")},
		{"Looks like A at first...</think>B", ok("T2_Ax")},
		{"<think>Comparing A with B, the answer", bad(Empty)},
		{"\\boxed{C}<think>wait, maybe", ok("T1+C_Ax")},
	}
	for _, c := range cases {
		c.want.check(t, c.in, Sequence(c.in, sequenceClasses))
	}
}

func TestPathology(t *testing.T) {
	cases := []struct {
		in   string
		want want
	}{
		{"1", ok("1")},
		{"0", ok("0")},
		{"0\n", ok("0")},
		{"**1**", ok("1")},
		{`\boxed{1}`, ok("1")},
		{"The overview shows nests of atypical epithelial cells.\n\n1", ok("1")},
		{"Answer: 0", ok("0")},
		{`{"answer": 1}`, ok("1")},
		{"0 (normal tissue)", ok("0")},
		{"1 - nasopharyngeal carcinoma", ok("1")},
		{"0 or 1", bad(Conflicting)},
		{"1\n0", bad(Conflicting)},
		// A numbered list is not an answer.
		{"1. The slide shows lymphoid tissue.\n2. No atypia.", bad(Unparseable)},
		{"Yes", bad(OutOfCategory)},
		{"NPC", bad(OutOfCategory)},
		{"2", bad(OutOfCategory)},
		{`\boxed{yes}`, bad(OutOfCategory)},
		{"The image supports nasopharyngeal carcinoma.", bad(Unparseable)},
		{"", bad(Empty)},
	}
	for _, c := range cases {
		c.want.check(t, c.in, Pathology(c.in))
	}
}

func TestCare(t *testing.T) {
	letters := []string{"A", "B", "C", "D"}
	cases := []struct {
		in   string
		want want
	}{
		{"C", ok("C")},
		{"C. Concurrent chemoradiotherapy", ok("C")},
		{"B) Induction chemotherapy followed by CCRT", ok("B")},
		{"Answer: D", ok("D")},
		{"Given N2 disease and T3, induction is preferred.\n\nFinal answer: **B**", ok("B")},
		{`\boxed{A}`, ok("A")},
		{"A. Surgery\nB. Radiotherapy alone\nC. CCRT\nD. Observation", bad(Conflicting)},
		{"E", bad(OutOfCategory)},
		{"Answer: E", bad(OutOfCategory)},
		{"I would recommend radiotherapy alone.", bad(Unparseable)},
		{"a", ok("A")},
	}
	for _, c := range cases {
		c.want.check(t, c.in, Care(c.in, letters))
	}
	// The valid letters come from the item: E is valid when offered.
	ok("E").check(t, "E", Care("E", []string{"A", "B", "C", "D", "E"}))
}

func TestFailureNamesField(t *testing.T) {
	l := Care("", []string{"A"})
	if l.Failure == nil || l.Failure.Field != "care" {
		t.Fatalf("Care(\"\") = %+v, want an empty failure naming field care", l)
	}
	if msg := l.Failure.Error(); msg == "" {
		t.Fatal("failure has no message")
	}
}
