package extract

import (
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// The paper's answer-extraction rule (Appendix C, "Computing resources and
// generation settings", "Answer extraction"), quoted as the tests below
// follow it.
const (
	ruleFinal      = "An explicit final boxed or labelled answer takes precedence over options discussed in intermediate reasoning; a standalone option is accepted when unambiguous."
	ruleConflict   = "Missing or conflicting final answers are scored incorrect."
	ruleOutside    = "Answers outside the requested categories are scored incorrect."
	ruleIncomplete = "Missing or incomplete final answers receive zero credit."
)

// TestLabelledAnswerWithARemarkIsThatAnswer: a labelled answer followed by
// a remark is that answer; only a second option given as an answer (a
// list, "or", a name that disagrees) makes it conflicting.
func TestLabelledAnswerWithARemarkIsThatAnswer(t *testing.T) {
	t.Log(ruleFinal)
	for _, c := range []struct {
		in   string
		want want
	}{
		{"Answer: 1 (confidence 0.9)", ok("1")},
		{"Final answer: 0 (normal lymphoid tissue; confidence 0.8)", ok("0")},
		{"Answer: 1, not 0: the nests of atypical cells support NPC", ok("1")},
		{"The answer is 1 with high confidence.", ok("1")},
		{"Answer: 0 or 1", bad(Conflicting)},
		{"Answer: 1/0", bad(Conflicting)},
		{"Answer: 0.9", bad(OutOfCategory)}, // a probability is not option 0
	} {
		c.want.check(t, c.in, Pathology(c.in))
	}
	for _, c := range []struct {
		in   string
		want want
	}{
		{"Answer: C (T1+C_Ax), not A", ok("T1+C_Ax")},
		{"Answer: B because A would show dark CSF", ok("T2_Ax")},
		{"Final answer: **E** — sagittal, no contrast; F is ruled out", ok("T1_SAG")},
		{"Answer: C (T1_Ax)", bad(Conflicting)}, // letter and name disagree
		{"Answer: C. T1_Ax", bad(Conflicting)},
		{"Answer: A, C", bad(Conflicting)},
		{"Answer: A and C", bad(Conflicting)},
		{"Answer: B or maybe C", bad(Conflicting)},
		{"Answer: B (or possibly C)", bad(Conflicting)},
		{"Answer: A is wrong", bad(OutOfCategory)},
	} {
		c.want.check(t, c.in, Sequence(c.in, sequenceClasses))
	}
	ok("B").check(t, "care remark", Care("Answer: B (induction chemotherapy first), not C", []string{"A", "B", "C", "D"}))
}

// TestBoxedAndLabelledFinalAnswersHaveEqualStanding: a final \boxed{} and
// a "Final answer:" label are both the model's final word; two that differ
// conflict, and either beats a plainer label or reasoning.
func TestBoxedAndLabelledFinalAnswersHaveEqualStanding(t *testing.T) {
	t.Log(ruleFinal, ruleConflict)
	for _, c := range []struct {
		in   string
		want want
	}{
		{"Looks axial with contrast: \\boxed{B}\nOn reflection the plane is coronal.\nFinal answer: D", bad(Conflicting)},
		{"Final answer: D\n\\boxed{B}", bad(Conflicting)},
		{"\\boxed{B}\nFinal answer: \\boxed{B}", ok("T2_Ax")},
		{"Final answer: $\\boxed{B}$", ok("T2_Ax")},
		{"\\boxed{B}\nFinal answer: B (T2_Ax)", ok("T2_Ax")},
		{"\\boxed{T2 FLAIR}\nFinal answer: B", bad(Conflicting)},
		{"\\boxed{B}\nAnswer: D was my first thought", ok("T2_Ax")},
		{"Answer: A\nFinal answer: B", ok("T2_Ax")},
	} {
		c.want.check(t, c.in, Sequence(c.in, sequenceClasses))
	}
}

// TestLabelledFinalJSONBeatsADraft: on the JSON tasks an object labelled as
// the final answer beats draft objects in the reasoning; drafts alone, or
// two final objects, still conflict.
func TestLabelledFinalJSONBeatsADraft(t *testing.T) {
	t.Log(ruleFinal, ruleConflict)
	s := configs.DefaultStructures()
	draft := `Draft: {"n_stage":"N1","evidence":"one left node"}` + "\nChecking the right side as well...\n"
	for _, c := range []struct {
		in   string
		want want
	}{
		{draft + `Final answer: {"n_stage":"N2","evidence":"bilateral nodes"}`, ok("N2")},
		{draft + "**Final Answer:**\n```json\n{\"n_stage\": \"N2\"}\n```", ok("N2")},
		{draft + "Final answer:\n> {\"n_stage\": \"N2\"}", ok("N2")},
		{`Final answer: {"n_stage":"N2"}` + "\nRestating: " + `{"n_stage":"N1"}`, ok("N2")},
		{draft + `Answer: {"n_stage":"N2"}`, ok("N2")},
		{draft + `{"n_stage":"N2"}`, bad(Conflicting)},
		{draft + `Final answer: the stage follows {"n_stage":"N2"}`, bad(Conflicting)},
		{`Final answer: {"n_stage":"N1"}` + "\n" + `Final answer: {"n_stage":"N2"}`, bad(Conflicting)},
		{`Final answer: {"n_stage":"N2"}` + "\n" + `Final answer: {"evidence":"x","n_stage":"N2"}`, bad(Conflicting)},
		{`Final answer: {"n_stage":"N2"} ` + "\nFinal answer: " + `{"n_stage": "N2"}`, ok("N2")},
	} {
		c.want.check(t, c.in, NStage(c.in).NStage)
	}
	card := `{"structure_id":"axis","invasion":0}` + "\nNo — the box is higher.\nFinal answer: " + `{"structure_id":"clivus","invasion":1}`
	got := StructureCard(card, s)
	ok("clivus").check(t, card, got.Structure)
	ok("1").check(t, card, got.Invasion)
}
