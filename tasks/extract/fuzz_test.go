package extract

import (
	"testing"

	"github.com/npcorch/npcorch/configs"
)

var fuzzSeeds = []string{
	"", "B", `\boxed{C}`, `\boxed{`, `\boxed{{{}`, "Answer: A or B", "Final answer: **D**",
	"<think>x</think>1", "</think><think>", `{"structure_id":"clivus","invasion":1}`,
	`{"structure_invasion":{"left_cavernous_sinus":1},"t_stage":"T4"}`, `{"n_stage":"N2"}`,
	"{{{{\"a\":{\"b\":", `{"structure_invasion":{"clivus":1,"clivus":0},"T_stage":"t3","involved_structures":"clivus, orbit"}`,
	"\xff\xfe{\"n_stage\":\"N\u0131\"}", "0 or 1", "A. x\nB. y",
	"Answer: 1 (confidence 0.9)", "Answer: C (T1+C_Ax), not A", "\\boxed{B}\nFinal answer: D", "Final answer: $\\boxed{\\boxed{A}}$",
	"Draft {\"n_stage\":\"N1\"}\nFinal answer:\n```json\n{\"n_stage\":\"N2\"}\n```", "Answer: 0.9", "Answer: B or maybe C",
	`\boxed{A,C}`, "Final answer: C and A", "Answer: A/C", "AC", "a, c", "Options: A 和 C", "\boxed{A,C}\nFinal answer: A",
	// The grammar of issue 25: Chinese labels and connectives, remarks
	// after a set, plural labels, words that begin with an option letter,
	// HuatuoGPT-o1's sections, full width, stage spellings, box runs.
	"答案是B", "正确答案为：C", "最终答案：A和D", "B选项", "选项B", "我的选择是：B", "答案：A、C。B为禁忌", "答案：A以及",
	"\\boxed{A}\n最终答案：C", "Final answer: A, C, D. E is contraindicated here.", "Final answer: B, D (A is reserved for",
	"A + C + D", "A+C+", "+A", "Final answers: A, C, D", "The correct answers are A, C and D.", "D-dimer was 4.2 mg/L",
	"C-reactive protein", "A-", "-A", "B. Radiotherapy alone would undertreat\nSo I'd go with C", "1 (confidence: 0.85)",
	"0.", ".0", "## Thinking\nThe answer is A?\n## Final Response\n\nD", "## Thinking", "## Final Response", "#final response\n",
	"答案：Ｃ", "１", "\\boxed{A}\\boxed{C}\\boxed{D}", "$\\boxed{A}$, $\\boxed{C}$ and \\boxed{", "A/C/D", "((A), (C", "(A)",
	`{"n_stage":"Stage N1"}`, `{"n_stage":"cN2"}`, `{"t_stage":"c T 3","structure_invasion":{}}`, `{"T_stage":"Ｔ３"}`,
	"答案是\xe7\xad", "\u00a0A\u3000和\u3000C", "ǅ", "Ａ+Ｃ", "ﬁnal answer: A",
}

// checkLabel holds a label to the package's contract: exactly one of a
// value from allowed and a failure with a kind.
func checkLabel(t *testing.T, in string, l Label, allowed func(string) bool) {
	t.Helper()
	if l.OK() == (l.Failure != nil) {
		t.Fatalf("%q: label %+v must hold exactly one of value and failure", in, l)
	}
	if l.OK() && !allowed(l.Value) {
		t.Fatalf("%q: value %q is not an allowed category", in, l.Value)
	}
	if l.Failure != nil && l.Failure.Kind == "" {
		t.Fatalf("%q: failure without a kind", in)
	}
}

func in(list ...string) func(string) bool {
	return func(v string) bool { return contains(list, v) }
}

func addSeeds(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
}

func FuzzPathology(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw string) {
		checkLabel(t, raw, Pathology(raw), in("0", "1"))
	})
}

func FuzzSequence(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw string) {
		checkLabel(t, raw, Sequence(raw, sequenceClasses), in(sequenceClasses...))
	})
}

func FuzzCare(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw string) {
		checkLabel(t, raw, Care(raw, []string{"A", "B", "C"}), in("A", "B", "C"))
	})
}

// FuzzChoices: a multiple-select answer is a set of the options, each
// once, in option order, or a failure.
func FuzzChoices(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw string) {
		checkLabel(t, raw, Choices(raw, []string{"A", "B", "C", "D"}),
			in("A", "B", "C", "D", "A,B", "A,C", "A,D", "B,C", "B,D", "C,D", "A,B,C", "A,B,D", "A,C,D", "B,C,D", "A,B,C,D"))
	})
}

func FuzzStructureCard(f *testing.F) {
	addSeeds(f)
	s := configs.DefaultStructures()
	f.Fuzz(func(t *testing.T, raw string) {
		c := StructureCard(raw, s)
		checkLabel(t, raw, c.Structure, in(s.IDs()...))
		checkLabel(t, raw, c.Invasion, in("0", "1"))
	})
}

func FuzzTStaging(f *testing.F) {
	addSeeds(f)
	s := configs.DefaultStructures()
	f.Fuzz(func(t *testing.T, raw string) {
		st := TStaging(raw, s)
		checkLabel(t, raw, st.TStage, in("T1", "T2", "T3", "T4"))
		if len(st.Invasion) != len(s.List) {
			t.Fatalf("%q: %d invasion labels, want %d", raw, len(st.Invasion), len(s.List))
		}
		for i, l := range st.Invasion {
			if l.Structure != s.List[i].ID {
				t.Fatalf("%q: label %d is for %q, want %q", raw, i, l.Structure, s.List[i].ID)
			}
			checkLabel(t, raw, l.Label, in("0", "1"))
		}
		for _, id := range st.Involved {
			if _, ok := s.Get(id); !ok {
				t.Fatalf("%q: involved %q is no structure", raw, id)
			}
		}
	})
}

// FuzzWords: the words of any text are non-empty, in order, apart, and
// inside it.
func FuzzWords(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw string) {
		prev := 0
		for _, w := range wordSpans(raw) {
			if w.start < prev || w.end <= w.start || w.end > len(raw) {
				t.Fatalf("%q: word [%d,%d) after %d", raw, w.start, w.end, prev)
			}
			prev = w.end
		}
		if word, rest, found := firstWord(raw); found && len(rest) >= len(raw)-len(word)+1 {
			t.Fatalf("%q: first word %q leaves %q", raw, word, rest)
		}
	})
}

func FuzzNStage(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, raw string) {
		checkLabel(t, raw, NStage(raw).NStage, in("N0", "N1", "N2", "N3"))
	})
}
