package extract

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestWordsSplitChineseAndKeepCompounds: Chinese is written without
// spaces, so each Han character is a word; a hyphenated compound and a
// decimal number are one word, so "D-dimer" is not option D and "0.85" is
// not option 0.
func TestWordsSplitChineseAndKeepCompounds(t *testing.T) {
	for in, want := range map[string][]string{
		"答案是B":                      {"答", "案", "是", "B"},
		"A和D":                       {"A", "和", "D"},
		"D-dimer was 4.2 mg/L":      {"D-dimer", "was", "4.2", "mg", "L"},
		"1 (confidence: 0.85)":      {"1", "confidence", "0.85"},
		"C. T1+C_Ax":                {"C", "T1+C_Ax"},
		"A + C + D":                 {"A", "C", "D"},
		"A+C+D":                     {"A+C+D"},
		"B选项 - not A-":              {"B", "选", "项", "not", "A"},
		"\xff\xfeB":                 {"B"},
		"1.":                        {"1"},
		"so I'd go with C-reactive": {"so", "I", "d", "go", "with", "C-reactive"},
		"D-二聚体":                     {"D-二", "聚", "体"},
		"C反应蛋白":                     {"C", "反", "应", "蛋", "白"},
	} {
		if got := answerTokens(in); !slices.Equal(got, want) {
			t.Errorf("answerTokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHuatuoFinalResponse: HuatuoGPT-o1 answers "## Thinking … ## Final
// Response …"; the Final Response is its final answer and the Thinking is
// reasoning, like a <think> block (the paper: "An explicit final boxed or
// labelled answer takes precedence over options discussed in intermediate
// reasoning").
func TestHuatuoFinalResponse(t *testing.T) {
	t.Log(ruleFinal, ruleIncomplete)
	for _, c := range []struct {
		in   string
		want want
	}{
		{"## Thinking\n\nThe answer is A? No.\n\n## Final Response\n\nD", ok("T1_COR")},
		{"## Thinking\nAnswer: A\n### **Final Response**\nB", ok("T2_Ax")},
		{"## Thinking\nAnswer: A\n## Final Response:\n\\boxed{B}", ok("T2_Ax")},
		{"## Final Response\nA\n## Final Response\nB", ok("T2_Ax")}, // the last section
		{"## Thinking\n\nThe plane is coronal, so the answer is D", bad(Empty)},
		{"## Thinking\nB\n## Final Response\n", bad(Empty)},
		// Prose that names a final response is no heading.
		{"The final response is B.\nAnswer: C", ok("T1+C_Ax")},
		{"Thinking aloud: A.\nAnswer: C", ok("T1+C_Ax")},
		{"<think>## Thinking</think>\nAnswer: C", ok("T1+C_Ax")},
	} {
		c.want.check(t, c.in, Sequence(c.in, sequenceClasses))
	}
}

// TestStageSpellings: where the paper is silent ("t_stage must be T1, T2,
// T3, or T4"), spellings of the same category are it; another category or
// another classification is out of category (docs/extraction.md).
func TestStageSpellings(t *testing.T) {
	for _, c := range []struct {
		in   string
		want want
	}{
		{"T3", ok("T3")}, {"t3", ok("T3")}, {"cT3", ok("T3")}, {"T 3", ok("T3")}, {" Stage T3 ", ok("T3")},
		{"Ｔ３", ok("T3")}, {"c T 3", ok("T3")},
		{"T3a", bad(OutOfCategory)}, {"pT3", bad(OutOfCategory)}, {"ycT3", bad(OutOfCategory)},
		{"stage III", bad(OutOfCategory)}, {"T5", bad(OutOfCategory)}, {"cT", bad(OutOfCategory)}, {"Stage", bad(OutOfCategory)},
	} {
		raw, _ := json.Marshal(c.in)
		c.want.check(t, c.in, stage(raw, "t_stage", 'T', '1', '4'))
	}
	for in, w := range map[string]want{"Stage N1": ok("N1"), "cN2": ok("N2"), "N 1": ok("N1"), "N0": ok("N0"), "N4": bad(OutOfCategory), "N2b": bad(OutOfCategory)} {
		raw, _ := json.Marshal(in)
		w.check(t, in, stage(raw, "n_stage", 'N', '0', '3'))
	}
}

// TestFullWidthIsASCII: full-width letters, digits and punctuation, as an
// IME types them in Chinese text, are their ASCII forms (NFKC).
func TestFullWidthIsASCII(t *testing.T) {
	for in, w := range map[string]want{
		"答案：Ｃ":       ok("T1+C_Ax"),
		"\\boxed{Ｃ}": ok("T1+C_Ax"),
		"Ｆｉｎａｌ ａｎｓｗｅｒ：Ｄ": ok("T1_COR"),
		"（Ｅ）": ok("T1_SAG"),
		"Ｈ":   bad(OutOfCategory),
	} {
		w.check(t, in, Sequence(in, sequenceClasses))
	}
	ok("1").check(t, "１", Pathology("１"))
	ok("A,C").check(t, "答案：Ａ、Ｃ", Choices("答案：Ａ、Ｃ", []string{"A", "B", "C", "D"}))
}

// TestSetEndsWithItsPhrase: the set a multiple-select answer gives ends
// where the answer phrase ends; the paper gives "no credit for missing or
// extra selections", so an extra must be the model's selection, not a
// letter of its remark.
func TestSetEndsWithItsPhrase(t *testing.T) {
	letters := []string{"A", "B", "C", "D", "E"}
	for in, w := range map[string]want{
		"Final answer: A, C, D. E is contraindicated here.":          ok("A,C,D"),
		"Final answer: B, D (A is reserved for stage I)":             ok("B,D"),
		"Final answer: A and C (B is not indicated)":                 ok("A,C"),
		"Final answer: (A), (C)":                                     ok("A,C"),
		"A + C + D":                                                  ok("A,C,D"),
		"Final answer: A, C: both are standard":                      ok("A,C"),
		"Final answer: A、C。E为禁忌":                                     ok("A,C"),
		"Final answer: A | C":                                        bad(Conflicting),
		"Final answer: A or C (E is contraindicated)":                bad(Conflicting),
		"Final answer: A, F":                                         bad(OutOfCategory),
		"\\boxed{A} and \\boxed{C}":                                  ok("A,C"),
		"\\boxed{A} \\boxed{C} \\boxed{A}":                           ok("A,C"),
		"\\boxed{A}. Then \\boxed{C}":                                bad(Conflicting),
		"Final answer: A, C. E is contraindicated.\nFinal answer: C": bad(Conflicting),
	} {
		w.check(t, in, Choices(in, letters))
	}
}

// TestStandaloneOnlyWhenUnambiguous: "a standalone option is accepted when
// unambiguous". An option line stands unless the model goes on to
// conclude with another option; a remark that sets another option against
// it, or names the same one, leaves it standing.
func TestStandaloneOnlyWhenUnambiguous(t *testing.T) {
	t.Log(ruleFinal)
	letters := []string{"A", "B", "C", "D"}
	for in, w := range map[string]want{
		"B. Induction chemotherapy\nThis is better than C":         ok("B"),
		"B. Induction chemotherapy\nScreen for hepatitis B":        ok("B"),
		"B. 诱导化疗\n而不是C":                                            ok("B"),
		"B. 诱导化疗\n优于C":                                             ok("B"),
		"B. Induction chemotherapy\nSo the best choice would be C": bad(Unparseable),
		"B\nOn reflection I'd go with C":                           bad(Unparseable),
		"B. Induction chemotherapy\nSo I'd go with C\nC":           ok("C"),
		"A\nB":                bad(Conflicting),
		"D-dimer 4.2 mg/L\nB": ok("B"),
		"B. Radiotherapy alone would undertreat\nSo I'd go with C\nAnswer: B": ok("B"),
	} {
		w.check(t, in, Care(in, letters))
	}
}
