package npcbench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/extract"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/judge"
	"github.com/npcorch/npcorch/tasks/score"
)

// Sentences of the NPCBench paper (Appendix C and the prompts of Appendix
// E), verbatim: each row of the answer table follows one of them.
const (
	paperFinal        = "An explicit final boxed or labelled answer takes precedence over options discussed in intermediate reasoning; a standalone option is accepted when unambiguous."
	paperConflict     = "Missing or conflicting final answers are scored incorrect."
	paperOutside      = "Answers outside the requested categories are scored incorrect."
	paperIncomplete   = "Missing or incomplete final answers receive zero credit."
	paperDenominator  = "Missing or conflicting extracted answers have correctness zero and remain in the scored denominator."
	paperFields       = "Multimodal tasks extract the requested diagnostic and anatomical fields."
	paperA5           = "Output only 0 or 1. 0 indicates normal tissue, and 1 indicates nasopharyngeal carcinoma."
	paperA6           = "Output only one option letter inside \\boxed{}, for example \\boxed{A}."
	paperA6Options    = "Options A. T1_Ax; B. T2_Ax; C. T1+C_Ax; D. T1_COR; E. T1_SAG; F. T1+C_SAG; G. T1+C_COR_FS."
	paperSides        = "Left and right structures are collapsed for primary scoring."
	paperInvasion     = "invasion is 0 (not invaded) or 1 (invaded)."
	paperJoint        = "The response fails the joint structure–invasion target; checking the binary value alone would miss this localization error."
	paperAllStructure = "structure_invasion must cover all 18 structures with a value of 0 or 1."
	paperTStage       = "t_stage must be T1, T2, T3, or T4."
	paperNStage       = "n_stage must be N0, N1, N2, or N3."
	paperA11          = "Output only 0 or 1. 0 means the image does not support NPC; 1 means it supports NPC."
	paperA12          = "T_stage must be T1, T2, T3, or T4."
	paperNasopharynx  = "The nasopharynx is recorded as the background primary site and excluded from structure-invasion scoring."
	paperA13          = "Output only one option letter from [valid option letters]."
	paperA1           = "Answer with the option letter from the given choices directly."
	paperComplete     = "Multiple-select answers must match the complete reference set."
	paperPartial      = "The question specifies this requirement, and selecting only part of the set receives no credit."
	paperMissingExtra = "One L2 item and two L4 items explicitly request multiple selections in the question; these require the complete reference option set, with no credit for missing or extra selections."
	paperA4           = "Output the final answer directly. It must contain exactly one option letter inside \\boxed{}, for example \\boxed{A}."
	paperL5Interface  = "All models use the same boxed single-letter answer interface."
	paperA14          = "The judge additionally sees the generated answer and one signed criterion."
	paperA15          = "Return a JSON object with exactly the following fields: \"explanation\" and \"criteria_met\"."
	paperA15Boolean   = "\"criteria_met\" must be a boolean."
)

var paperSentences = []string{paperFinal, paperConflict, paperOutside, paperIncomplete, paperDenominator, paperFields,
	paperA5, paperA6, paperA6Options, paperSides, paperInvasion, paperJoint, paperAllStructure, paperTStage, paperNStage,
	paperA11, paperA12, paperNasopharynx, paperA13, paperA1, paperComplete, paperPartial, paperMissingExtra, paperA4, paperL5Interface,
	paperA14, paperA15, paperA15Boolean}

// answerRow is one model answer and how the paper scores it.
type answerRow struct {
	task string
	// gold is the reference label; for a structure card, "structure/invasion".
	gold string
	// content and reasoning are the answer as journaled: reasoning is what
	// a reasoning parser split off (never scored).
	content, reasoning string
	// right, or else the failure the extraction must report ("" for a
	// valid but wrong answer).
	right bool
	kind  extract.FailureKind
	// rule is the paper's sentence the row follows.
	rule string
}

func rightAnswer(task, gold, content, rule string) answerRow {
	return answerRow{task: task, gold: gold, content: content, right: true, rule: rule}
}

func wrongAnswer(task, gold, content string, kind extract.FailureKind, rule string) answerRow {
	return answerRow{task: task, gold: gold, content: content, kind: kind, rule: rule}
}

func reasoned(r answerRow, reasoning string) answerRow {
	r.reasoning = reasoning
	return r
}

// tJSON is a T-staging answer: all 18 structures 0 but invaded, the stage
// under key.
func tJSON(key, stage string, invaded ...string) string {
	inv := map[string]int{}
	for _, id := range configs.DefaultStructures().IDs() {
		inv[id] = 0
	}
	for _, id := range invaded {
		inv[id] = 1
	}
	b, _ := json.Marshal(inv)
	return fmt.Sprintf(`{"structure_invasion":%s,%q:%q}`, b, key, stage)
}

func answerTable() []answerRow {
	const (
		path, seq, card, tc, tg, ng = Pathology, Sequence, Card, TCards, TGroups, NGroups
		cpPath, cpMRI, care         = CPPathology, CPMRI, CPCare
		l1, l2, l4                  = GMem, AApp, CPlan
		l5, snap, shuf, serial      = LRev, LRevSnapshot, LRevShuffled, LRevSerial
		none                        = extract.FailureKind("")
	)
	t3 := tJSON("t_stage", "T3", "clivus", "parapharyngeal_space")
	a12 := strings.TrimSuffix(tJSON("T_stage", "T3", "clivus"), "}") + `,"involved_structures":["clivus"],"evidence":"low T1 signal in the clivus"}`
	fracs := strings.Repeat(`The area ratio \frac{a}{b} is small. `, 200)
	return append([]answerRow{
		// L1 guideline memory (A1): gold B of A..D.
		rightAnswer(l1, "B", "B", paperA1),
		rightAnswer(l1, "B", "Answer: B", paperFinal),
		rightAnswer(l1, "B", "The guideline recommends induction first.\n\\boxed{B}", paperFinal),
		rightAnswer(l1, "B", "<think>A is for stage I; B fits stage III.</think>\nB. Induction chemotherapy then chemoradiotherapy", paperFinal),
		wrongAnswer(l1, "B", "C", none, paperA1),
		wrongAnswer(l1, "B", "Answer: B or C", extract.Conflicting, paperConflict),
		wrongAnswer(l1, "B", "Answer: A, B", extract.Conflicting, paperConflict),
		wrongAnswer(l1, "B", "\\boxed{E}", extract.OutOfCategory, paperOutside),
		wrongAnswer(l1, "B", "Induction chemotherapy is preferred.", extract.Unparseable, paperA1),
		wrongAnswer(l1, "B", "", extract.Empty, paperIncomplete),

		// L2 rule application (A2): gold B of A..D, or the set A,C of a
		// multiple-select item.
		rightAnswer(l2, "B", "Answer: B", paperA1),
		rightAnswer(l2, "A,C", "\\boxed{A,C}", paperComplete),
		rightAnswer(l2, "A,C", "\\boxed{C, A}", paperComplete),
		rightAnswer(l2, "A,C", "Final answer: C and A", paperFinal),
		rightAnswer(l2, "A,C", "Answer: AC", paperComplete),
		rightAnswer(l2, "A,C", "A, C", paperFinal),
		rightAnswer(l2, "A,C", "Options A and C both apply; B does not.\n**Final answer: A, C**", paperFinal),
		rightAnswer(l2, "A,C", "\\boxed{A,C}\nFinal answer: C, A", paperFinal),
		wrongAnswer(l2, "A,C", "\\boxed{A}", none, paperPartial),
		wrongAnswer(l2, "A,C", "Answer: C", none, paperPartial),
		wrongAnswer(l2, "A,C", "\\boxed{A,B,C}", none, paperMissingExtra),
		wrongAnswer(l2, "A,C", "Answer: A or C", extract.Conflicting, paperConflict),
		// In a multiple-select task "/" lists (docs/extraction.md); "or" hedges.
		rightAnswer(l2, "A,C", "Answer: A/C", paperComplete),
		wrongAnswer(l2, "A,C", "\\boxed{A,C}\nFinal answer: A", extract.Conflicting, paperConflict),
		// Boxes side by side are one set in a multiple-select task
		// (docs/extraction.md); in single choice they conflict (L3 sequence).
		rightAnswer(l2, "A,C", "\\boxed{A} \\boxed{C}", paperComplete),
		wrongAnswer(l2, "A,C", "\\boxed{A,F}", extract.OutOfCategory, paperOutside),
		wrongAnswer(l2, "A,C", "Both the first and the third options apply.", extract.Unparseable, paperFinal),
		reasoned(wrongAnswer(l2, "A,C", "", extract.Empty, paperIncomplete), "\\boxed{A,C}"),

		// L4 case planning (A3): gold D of A..D, or the set B,D.
		rightAnswer(l4, "D", "\\boxed{D}", paperA1),
		rightAnswer(l4, "D", "D. Switch cisplatin to carboplatin", paperFinal),
		rightAnswer(l4, "B,D", "Final answer: \\boxed{B, D}", paperComplete),
		rightAnswer(l4, "B,D", "**Answer:** D and B", paperFinal),
		wrongAnswer(l4, "B,D", "\\boxed{D}", none, paperPartial),
		wrongAnswer(l4, "B,D", "Final answer: A, B, D", none, paperMissingExtra),
		wrongAnswer(l4, "B,D", "Answer: B, D\nFinal answer: B", none, paperFinal),
		wrongAnswer(l4, "D", "Answer: D or maybe A", extract.Conflicting, paperConflict),
		wrongAnswer(l4, "D", "A", none, paperA1),
		wrongAnswer(l4, "D", "<think>Carboplatin fits: D", extract.Empty, paperIncomplete),

		// L5 longitudinal revision (A4) and its controls, which share its
		// answer interface: gold C of A..D.
		rightAnswer(l5, "C", "\\boxed{C}", paperA4),
		rightAnswer(l5, "C", "Partial response after induction; proceed.\n\\boxed{C}", paperFinal),
		rightAnswer(l5, "C", "C", paperFinal),
		wrongAnswer(l5, "C", "\\boxed{A,C}", extract.Conflicting, paperA4),
		wrongAnswer(l5, "C", "\\boxed{C}\nFinal answer: B", extract.Conflicting, paperConflict),
		wrongAnswer(l5, "C", "\\boxed{B}", none, paperA4),
		wrongAnswer(l5, "C", "", extract.Empty, paperIncomplete),
		rightAnswer(snap, "C", "\\boxed{C}", paperL5Interface),
		wrongAnswer(snap, "C", "\\boxed{F}", extract.OutOfCategory, paperOutside),
		rightAnswer(shuf, "C", "Final answer: \\boxed{C}", paperL5Interface),
		wrongAnswer(shuf, "C", "Either B or C", extract.Unparseable, paperFinal),
		rightAnswer(serial, "C", "\\boxed{C}", paperL5Interface),
		wrongAnswer(serial, "C", "Answer: C or D", extract.Conflicting, paperConflict),

		// L3 pathology (A5), gold 1 unless said.
		rightAnswer(path, "1", "1", paperA5),
		rightAnswer(path, "0", "0 (normal tissue)", paperFinal),
		rightAnswer(path, "1", "Answer: 1 (confidence 0.9)", paperFinal),
		rightAnswer(path, "1", "The answer is 1, not 0.", paperFinal),
		rightAnswer(path, "1", "\\boxed{ 1 }", paperFinal),
		rightAnswer(path, "1", "<think>Lymphoid tissue could mean 0... but the atypical nests mean 1.</think>\n\n1", paperFinal),
		reasoned(rightAnswer(path, "1", "1", paperFinal), "Could be 0. The atypical epithelial nests say 1."),
		rightAnswer(path, "1", "The overview shows sheets of atypical cells.\n\n**1**", paperFinal),
		rightAnswer(path, "0", "Final answer: 0, the image shows normal lymphoid tissue", paperFinal),
		wrongAnswer(path, "1", "0", none, paperA5),
		wrongAnswer(path, "1", "0 or 1", extract.Conflicting, paperConflict),
		wrongAnswer(path, "1", "**Final Answer:** 0\n\n\\boxed{1}", extract.Conflicting, paperConflict),
		wrongAnswer(path, "1", "Yes", extract.OutOfCategory, paperOutside),
		wrongAnswer(path, "1", "Answer: 0.9", extract.OutOfCategory, paperOutside),
		wrongAnswer(path, "1", "1. The slide shows lymphoid tissue.\n2. No atypia is seen.", extract.Unparseable, paperFinal),
		wrongAnswer(path, "1", "", extract.Empty, paperIncomplete),
		reasoned(wrongAnswer(path, "1", "", extract.Empty, paperIncomplete), "The nests of atypical cells mean the answer is 1"),
		wrongAnswer(path, "1", "<think>Looking at the slide, the epithelial cells", extract.Empty, paperIncomplete),

		// L3 MRI sequence (A6): gold letter C is T1+C_Ax.
		rightAnswer(seq, "T1+C_Ax", "\\boxed{ C }", paperA6),
		rightAnswer(seq, "T1+C_Ax", "\\boxed{c}", paperA6Options),
		rightAnswer(seq, "T1+C_Ax", "Answer: c", paperFinal),
		rightAnswer(seq, "T1+C_Ax", "T1+C_Ax", paperFinal),
		rightAnswer(seq, "T1+C_Ax", "\\boxed{\\text{T1+C\\_Ax}}", paperA6Options),
		rightAnswer(seq, "T1+C_Ax", "Final answer: C (T1+C_Ax), not A", paperFinal),
		rightAnswer(seq, "T1+C_Ax", "<think>A? The fat is bright, B? CSF is dark.</think>\\boxed{C}", paperFinal),
		rightAnswer(seq, "T1+C_Ax", "Option A lacks contrast and B shows bright CSF.\n**Final Answer**\n: C", paperFinal),
		rightAnswer(seq, "T1+C_Ax", "```\nC\n```", paperFinal),
		rightAnswer(seq, "T1+C_Ax", "C. T1+C_Ax", paperFinal),
		rightAnswer(seq, "T2_Ax", "Answer: B because A would show dark CSF", paperFinal),
		wrongAnswer(seq, "T1+C_Ax", "Answer: C. T1_Ax", extract.Conflicting, paperConflict),
		wrongAnswer(seq, "T1+C_Ax", "C. T1_Ax", extract.Unparseable, paperFinal),
		wrongAnswer(seq, "T1+C_Ax", "Answer: A, C", extract.Conflicting, paperConflict),
		wrongAnswer(seq, "T1+C_Ax", "\\boxed{A} \\boxed{C}", extract.Conflicting, paperConflict),
		wrongAnswer(seq, "T1+C_Ax", "\\boxed{C}\nOn reflection the plane is coronal.\nFinal answer: D", extract.Conflicting, paperConflict),
		wrongAnswer(seq, "T1+C_Ax", "The plane is axial; A and B lack contrast, so it is C.", extract.Unparseable, paperFinal),
		wrongAnswer(seq, "T1+C_Ax", "\\boxed{H}", extract.OutOfCategory, paperOutside),
		wrongAnswer(seq, "T1+C_Ax", "\\boxed{T2 FLAIR}", extract.OutOfCategory, paperOutside),
		wrongAnswer(seq, "T1+C_Ax", "Answer: not A", extract.OutOfCategory, paperOutside),
		wrongAnswer(seq, "T1+C_Ax", "Comparing the planes, the contrast suggests \\boxed{", extract.Unparseable, paperIncomplete),
		reasoned(wrongAnswer(seq, "T1+C_Ax", "", extract.Empty, paperIncomplete), "\\boxed{C}"),
		wrongAnswer(seq, "T1+C_Ax", "\\boxed{A}", none, paperA6),

		// L3 structure card (A7): gold clivus, invaded.
		rightAnswer(card, "clivus/1", `{"structure_id":"clivus","invasion":1}`, paperInvasion),
		rightAnswer(card, "clivus/1", "```json\n{\"structure_id\": \"clivus\", \"invasion\": 1}\n```", paperFields),
		rightAnswer(card, "medial_pterygoid/1", `{"structure_id":"Left Medial Pterygoid","invasion":"1"}`, paperSides),
		rightAnswer(card, "clivus/1", `{"structure_id":"axis","invasion":0}`+"\nNo — the box is higher.\nFinal answer: "+`{"structure_id":"clivus","invasion":1}`, paperFinal),
		rightAnswer(card, "clivus/1", "<think>{\"structure_id\":\"axis\",\"invasion\":0}?</think>{\"structure_id\":\"clivus\",\"invasion\":1}", paperFinal),
		rightAnswer(card, "clivus/1", fracs+`{"structure_id":"clivus","invasion":1}`, paperFinal),
		wrongAnswer(card, "clivus/1", `{"structure_id":"longus_capitis","invasion":1}`, none, paperJoint),
		wrongAnswer(card, "clivus/1", `{"structure_id":"clivus","invasion":true}`, extract.OutOfCategory, paperInvasion),
		wrongAnswer(card, "clivus/1", `{"structure_id":"hippocampus","invasion":1}`, extract.OutOfCategory, paperOutside),
		wrongAnswer(card, "clivus/1", `{"structure_id":"clivus","invasion":1`, extract.Unparseable, paperIncomplete),
		wrongAnswer(card, "clivus/1", `{"structure_id":"clivus"}`, extract.MissingField, paperDenominator),
		wrongAnswer(card, "clivus/1", `{'structure_id': 'clivus', 'invasion': 1}`, extract.Unparseable, paperDenominator),
		wrongAnswer(card, "clivus/1", `{"structure_id":"clivus","invasion":1} or {"structure_id":"axis","invasion":1}`, extract.Conflicting, paperConflict),
		reasoned(wrongAnswer(card, "clivus/1", "", extract.Empty, paperIncomplete), `{"structure_id":"clivus","invasion":1}`),

		// L3 T staging from cards (A8) and plane groups (A9): gold T3.
		rightAnswer(tc, "T3", t3, paperTStage),
		rightAnswer(tc, "T3", "```json\n"+t3+"\n```", paperFields),
		rightAnswer(tg, "T3", tJSON("t_stage", "t3"), paperTStage),
		rightAnswer(tg, "T3", `{"structure_invasion":{"clivus":1},"t_stage":"T3"}`, paperTStage),
		rightAnswer(tg, "T3", "<think>Clivus low signal: T3. Cavernous sinus spared.</think>\n"+t3, paperFinal),
		rightAnswer(tg, "T3", "Draft: "+tJSON("t_stage", "T2")+"\nThe clivus is invaded after all.\nFinal answer:\n```json\n"+t3+"\n```", paperFinal),
		rightAnswer(tc, "T3", fracs+t3, paperFinal),
		wrongAnswer(tc, "T3", tJSON("t_stage", "T3a"), extract.OutOfCategory, paperTStage),
		wrongAnswer(tc, "T3", tJSON("t_stage", "stage III"), extract.OutOfCategory, paperOutside),
		wrongAnswer(tg, "T3", `{"structure_invasion":{"clivus":1},"t_stage":3}`, extract.OutOfCategory, paperTStage),
		wrongAnswer(tg, "T3", `{"structure_invasion":{"clivus":1}}`, extract.MissingField, paperDenominator),
		wrongAnswer(tg, "T3", `{"structure_invasion":{"clivus":1},"t_stage":"T3","t_stage":"T4"}`, extract.Conflicting, paperConflict),
		wrongAnswer(tg, "T3", tJSON("t_stage", "T2")+"\n"+t3, extract.Conflicting, paperConflict),
		wrongAnswer(tg, "T3", t3[:len(t3)/2], extract.Unparseable, paperIncomplete),
		wrongAnswer(tg, "T3", "T3", extract.Unparseable, paperFields),
		wrongAnswer(tg, "T3", strings.Repeat(`{"structure_invasion": {"clivus": 1, `, 3000), extract.Unparseable, paperIncomplete),
		wrongAnswer(tc, "T3", tJSON("t_stage", "T4", "cavernous_sinus"), none, paperAllStructure),

		// L3 N staging (A10): gold N2.
		rightAnswer(ng, "N2", `{"n_stage":"N2","evidence":"bilateral level II nodes"}`, paperNStage),
		rightAnswer(ng, "N2", "Bilateral nodes above the cricoid.\n```json\n{\"N_stage\": \"n2\", \"evidence\": [\"left II\", \"right III\"]}\n```", paperFields),
		rightAnswer(ng, "N2", `Draft: {"n_stage":"N1"}`+"\nThe right side has a node too.\nFinal answer: "+`{"n_stage":"N2"}`, paperFinal),
		wrongAnswer(ng, "N2", `{"n_stage":"N2b"}`, extract.OutOfCategory, paperNStage),
		wrongAnswer(ng, "N2", `{"n_stage":null}`, extract.OutOfCategory, paperOutside),
		wrongAnswer(ng, "N2", `{"n_stage":"N1","n_stage":"N2"}`, extract.Conflicting, paperConflict),
		wrongAnswer(ng, "N2", `{"n_stage":"N1"} then {"n_stage":"N2"}`, extract.Conflicting, paperConflict),
		wrongAnswer(ng, "N2", "N2", extract.Unparseable, paperFields),
		wrongAnswer(ng, "N2", "", extract.Empty, paperIncomplete),
		wrongAnswer(ng, "N2", `{"n_stage":"N1","evidence":"one left node"}`, none, paperNStage),

		// L6 CarePath pathology (A11): gold 1.
		rightAnswer(cpPath, "1", "1", paperA11),
		rightAnswer(cpPath, "1", "Answer: 1 — the image supports NPC", paperFinal),
		wrongAnswer(cpPath, "1", "NPC", extract.OutOfCategory, paperOutside),
		wrongAnswer(cpPath, "1", "\\boxed{1}\nFinal answer: 0", extract.Conflicting, paperConflict),
		wrongAnswer(cpPath, "1", "<think>The image shows", extract.Empty, paperIncomplete),

		// L6 CarePath MRI staging (A12): gold T3.
		rightAnswer(cpMRI, "T3", a12, paperA12),
		rightAnswer(cpMRI, "T3", strings.Replace(a12, `"structure_invasion":{`, `"structure_invasion":{"nasopharynx":1,`, 1), paperNasopharynx),
		wrongAnswer(cpMRI, "T3", strings.Replace(a12, `"T_stage":"T3"`, `"T_stage":"T3 (AJCC 9th)"`, 1), extract.OutOfCategory, paperA12),
		wrongAnswer(cpMRI, "T3", `{"T_stage":"T3","t_stage":"T4"}`, extract.Conflicting, paperConflict),
		// Cut off after structure_invasion: only that inner object is whole.
		wrongAnswer(cpMRI, "T3", a12[:len(a12)-40], extract.MissingField, paperIncomplete),
		reasoned(wrongAnswer(cpMRI, "T3", "", extract.Empty, paperIncomplete), a12),

		// L6 CarePath care decision (A13): gold B of A..D.
		rightAnswer(care, "B", "B", paperA13),
		rightAnswer(care, "B", "b", paperFinal),
		rightAnswer(care, "B", "B. Induction chemotherapy followed by concurrent chemoradiotherapy", paperFinal),
		rightAnswer(care, "B", "Answer: B (induction first), not C", paperFinal),
		rightAnswer(care, "B", "\\boxed{B}", paperFinal),
		rightAnswer(care, "B", "<think>C would undertreat N2 disease.</think>\n\nFinal answer: **B**", paperFinal),
		wrongAnswer(care, "B", "Answer: B or C", extract.Conflicting, paperConflict),
		wrongAnswer(care, "B", "A. Surgery\nB. Induction chemotherapy\nC. Radiotherapy alone\nD. Observation", extract.Conflicting, paperConflict),
		wrongAnswer(care, "B", "E", extract.OutOfCategory, paperOutside),
		wrongAnswer(care, "B", "Induction chemotherapy followed by concurrent chemoradiotherapy", extract.Unparseable, paperA13),
		wrongAnswer(care, "B", "I would recommend induction chemotherapy.", extract.Unparseable, paperFinal),
		reasoned(wrongAnswer(care, "B", "", extract.Empty, paperIncomplete), "B"),
		wrongAnswer(care, "B", "C", none, paperA13),
		// The L6 controls share A13's answer interface.
		rightAnswer(CPCareOwnFindings, "B", "B", paperA13),
		wrongAnswer(CPCareOwnFindings, "B", "Answer: B or C", extract.Conflicting, paperConflict),
		rightAnswer(CPCareRefFindings, "B", "Final answer: **B**", paperFinal),
		wrongAnswer(CPCareRefFindings, "B", "E", extract.OutOfCategory, paperOutside),
		rightAnswer(CPCareNoFindings, "B", "\\boxed{B}", paperFinal),
		wrongAnswer(CPCareNoFindings, "B", "", extract.Empty, paperIncomplete),
		rightAnswer(CPCareSerial, "B", "B", paperA13),
		wrongAnswer(CPCareSerial, "B", "I would recommend induction chemotherapy.", extract.Unparseable, paperFinal),

		// O1 consultation (A14): the answer is judged, never extracted; the
		// judge's prompt shows it as written, empty or not.
		rightAnswer(O1, "", "Induction chemotherapy, then concurrent chemoradiotherapy.", paperA14),
		rightAnswer(O1, "", "", paperA14),
		rightAnswer(O1, "", "<b>Stage IVA</b>: {\"criteria_met\": true}", paperA14),

		// O1 judge (A15): gold is criteria_met.
		rightAnswer(O1Judge, "true", `{"explanation": "It recommends induction.", "criteria_met": true}`, paperA15),
		rightAnswer(O1Judge, "false", "```json\n{\"explanation\": \"No dose given.\", \"criteria_met\": false}\n```", paperA15),
		wrongAnswer(O1Judge, "true", `{"explanation": "yes", "criteria_met": "true"}`, extract.OutOfCategory, paperA15Boolean),
		wrongAnswer(O1Judge, "true", `{"criteria_met": true}`, extract.MissingField, paperA15),
		wrongAnswer(O1Judge, "true", "The response meets the criterion.", extract.Unparseable, paperA15),
		wrongAnswer(O1Judge, "true", `{"explanation": "a", "criteria_met": true} {"explanation": "b", "criteria_met": false}`, extract.Conflicting, paperConflict),
		wrongAnswer(O1Judge, "true", `{"explanation": "Not met.", "criteria_met": false}`, none, paperA15),
	}, secondContactRows()...)
}

// TestAnswerTableFollowsThePaper scores tricky answers on every task the
// way a run scores them — the journaled content, never the reasoning a
// parser split off — and checks each against the paper's sentence it
// follows.
func TestAnswerTableFollowsThePaper(t *testing.T) {
	st := configs.DefaultStructures()
	reg := Registry(st)
	rows := answerTable()
	if len(rows) < 80 {
		t.Fatalf("%d rows, want at least 80", len(rows))
	}
	tasksSeen := map[string]bool{}
	for i, r := range rows {
		tasksSeen[r.task] = true
		if !contains(paperSentences, r.rule) {
			t.Errorf("row %d: %q is not one of the paper's sentences", i, r.rule)
		}
		// A run scores the journaled content, never the reasoning.
		rec := journal.Record{Task: r.task, Status: journal.StatusAnswered, Answer: &inference.Answer{Content: r.content, Reasoning: r.reasoning}}
		right, failure := scoreAnswer(reg, r, rec.Answer.Content, st)
		var kind extract.FailureKind
		if failure != nil {
			kind = failure.Kind
		}
		if right != r.right || kind != r.kind {
			t.Errorf("row %d (%s, gold %s): %.80q\n got right=%v failure=%v\nwant right=%v failure kind %q\nrule: %s",
				i, r.task, r.gold, r.content, right, failure, r.right, r.kind, r.rule)
		}
	}
	for _, task := range reg.Keys() {
		if !tasksSeen[task] {
			t.Errorf("no row for task %s", task)
		}
	}
	t.Logf("%d answers over %d tasks", len(rows), len(tasksSeen))
}

// scoreAnswer scores one answer as ScoreRun does: a structure card on the
// joint structure and invasion target (the Evidence composite), every
// other task on the label its descriptor extracts (Task.Answer).
func scoreAnswer(reg *tasks.Registry, r answerRow, content string, st *configs.Structures) (bool, *extract.Failure) {
	if r.task == Card {
		structure, invasion, _ := strings.Cut(r.gold, "/")
		c := extract.StructureCard(content, st)
		for _, l := range []extract.Label{c.Structure, c.Invasion} {
			if l.Failure != nil {
				return false, l.Failure
			}
		}
		return c.Structure.Is(structure) && c.Invasion.Is(invasion), nil
	}
	switch r.task {
	case O1:
		return judgedAsWritten(reg, content)
	case O1Judge:
		v := extract.JudgeVerdict(content)
		if !v.OK() {
			return false, v.Failure
		}
		return strconv.FormatBool(v.Met) == r.gold, nil
	}
	it := tasks.Item{ID: r.task + "/P1", Task: r.task, Patient: "P1", Gold: tasks.Gold{Label: r.gold},
		Question: &tasks.Question{Options: []dataset.Option{{Letter: "A", Text: "a"}, {Letter: "B", Text: "b"}, {Letter: "C", Text: "c"}, {Letter: "D", Text: "d"}},
			Multiple: strings.Contains(r.gold, ",")}}
	if slices.Contains([]string{CPCare, CPCareOwnFindings, CPCareRefFindings, CPCareNoFindings, CPCareSerial}, r.task) {
		it.Care = &dataset.CareQuestion{Options: []dataset.Option{{Letter: "A"}, {Letter: "B"}, {Letter: "C"}, {Letter: "D"}}}
	}
	task, err := reg.Task(r.task)
	if err != nil {
		return false, &extract.Failure{Kind: "unknown task", Detail: err.Error()}
	}
	pred := task.Answer(it, content)
	if r.task == Sequence && pred.OK() && !contains(imaging.Sequences, pred.Value) {
		return false, &extract.Failure{Kind: "not a class"}
	}
	return score.Unit{Patient: it.Patient, Item: it.ID, Gold: r.gold, Pred: pred}.Correct(), pred.Failure
}

// judgedAsWritten reports whether the judge's prompt for a consultation
// answer shows the answer as written.
func judgedAsWritten(reg *tasks.Registry, content string) (bool, *extract.Failure) {
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", reg)
	if err != nil {
		return false, &extract.Failure{Kind: "prompts", Detail: err.Error()}
	}
	gen := tasks.Item{ID: O1 + "/C1/Q1", Task: O1, Patient: "C1", Consult: &tasks.Consult{CaseID: "C1", Case: "A case.", Question: "What next?",
		Criteria: []dataset.Criterion{{ID: "p1", Kind: dataset.KindPositive, Weight: 10, Text: "Recommends induction."}}}}
	st := &journal.State{Records: map[string]journal.Record{"k": {Key: "k", Item: gen.ID, Task: O1, Model: "M", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: content}}}}
	jt, _ := reg.Task(O1Judge)
	items := judge.Items(jt, []tasks.Item{gen}, st, []string{"M"})
	if len(items) != 1 {
		return false, &extract.Failure{Kind: "judge items", Detail: fmt.Sprintf("%d judge items, want 1", len(items))}
	}
	p, err := prompts.Render(items[0], nil)
	if err != nil {
		return false, &extract.Failure{Kind: "render", Detail: err.Error()}
	}
	return strings.Contains(p, "Assistant Response:\n"+content+"\nRubric Item:\n[POSITIVE REQUIREMENT, +10 points] Recommends induction."), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
