package npcbench

import (
	"strings"

	"github.com/npcorch/npcorch/tasks/extract"
)

// secondContactRows are answers written the way open-weight models answer
// (Qwen and DeepSeek-R1 with <think>, HuatuoGPT-o1's "## Thinking … ##
// Final Response", Lingshu's and InternVL's terse or markdown answers, in
// English, Chinese and both), one group per defect class of issue 25
// ("Reading answers"). Each group holds rows that the extractor before it
// read against the paper's rule.
func secondContactRows() []answerRow {
	rows := chineseRows()
	rows = append(rows, setRemarkRows()...)
	rows = append(rows, pluralLabelRows()...)
	rows = append(rows, standaloneRows()...)
	rows = append(rows, pathologyRemarkRows()...)
	rows = append(rows, huatuoRows()...)
	return append(rows, decisionRows()...)
}

// chineseRows: Chinese labels (答案, 最终答案, 正确答案, 选择, 选项 with
// 是/为/：/:), "B选项", Chinese connectives in sets, and 最终答案 with the
// standing of "Final answer".
func chineseRows() []answerRow {
	const none = extract.FailureKind("")
	return []answerRow{
		rightAnswer(GMem, "B", "答案是B", paperFinal),
		rightAnswer(GMem, "B", "根据指南，局部晚期鼻咽癌推荐诱导化疗后同期放化疗。\n\n答案为B", paperFinal),
		rightAnswer(GMem, "B", "正确答案是：B", paperFinal),
		rightAnswer(GMem, "B", "**正确答案：B**\n\n解析：A项仅适用于I期病例，C项和D项不符合指南推荐。", paperFinal),
		rightAnswer(GMem, "B", "选项B", paperFinal),
		rightAnswer(GMem, "B", "B选项", paperFinal),
		rightAnswer(GMem, "B", "**B选项**：诱导化疗+同期放化疗", paperFinal),
		rightAnswer(GMem, "B", "我的选择是：B", paperFinal),
		rightAnswer(GMem, "B", "【答案】B\n【解析】局部晚期鼻咽癌推荐诱导化疗后同期放化疗。", paperFinal),
		rightAnswer(GMem, "B", "答：B", paperFinal),
		rightAnswer(GMem, "B", "答案：选项B（诱导化疗后同期放化疗）", paperFinal),
		rightAnswer(GMem, "B", "最终答案是 **B**", paperFinal),
		rightAnswer(AApp, "B", "<think>\n好的，患者为T3N2M0，属于局部晚期。A是早期方案，不合适。\n</think>\n\n答案应该是B。", paperFinal),
		rightAnswer(CPlan, "D", "综合考虑患者的肾功能（肌酐清除率45 mL/min），顺铂不宜继续使用。\n\n正确答案为D", paperFinal),
		rightAnswer(CPCare, "B", "<think>\nC单纯放疗对N2病变治疗不足。\n</think>\n\n答案：B（诱导化疗后同期放化疗）", paperFinal),
		rightAnswer(Sequence, "T1+C_Ax", "该图像为轴位增强T1序列，脂肪未抑制，可见强化。\n\n答案：C", paperA6Options),
		rightAnswer(Pathology, "1", "镜下可见异型上皮细胞巢。\n\n答案为1", paperFinal),
		rightAnswer(LRev, "C", "最终答案：C", paperFinal),
		rightAnswer(LRev, "C", "<think>复查MRI提示部分缓解。</think>\n\n**最终答案：** C", paperFinal),
		wrongAnswer(LRev, "C", "\\boxed{A}\n\n不过再结合患者的复查结果，应继续原方案。\n\n最终答案：C", extract.Conflicting, paperConflict),
		wrongAnswer(LRev, "C", "最终答案：A\n最终答案：C", extract.Conflicting, paperConflict),
		wrongAnswer(GMem, "B", "答案：A和B", extract.Conflicting, paperConflict),
		wrongAnswer(GMem, "B", "答案是B或C", extract.Conflicting, paperConflict),
		wrongAnswer(GMem, "B", "答案是E", extract.OutOfCategory, paperOutside),
		wrongAnswer(GMem, "B", "答案：C", none, paperA1),
		rightAnswer(AApp, "A,D", "最终答案：A和D", paperComplete),
		rightAnswer(AApp, "A,C", "答案：A、C", paperComplete),
		rightAnswer(AApp, "A,C", "正确答案为A与C", paperComplete),
		rightAnswer(AApp, "A,C", "答案是A及C", paperComplete),
		rightAnswer(AApp, "A,C", "答案：A，C", paperComplete),
		rightAnswer(AApp, "A,C", "答案：A以及C", paperComplete),
		rightAnswer(AApp, "A,C", "答案：A选项和C选项", paperComplete),
		rightAnswer(AApp, "A,C,D", "答案为ACD。", paperComplete),
		rightAnswer(CPlan, "B,D", "<think>B和D都符合。</think>\n最终答案：**B、D**", paperComplete),
		wrongAnswer(AApp, "A,C", "最终答案：A", none, paperPartial),
		wrongAnswer(AApp, "A,C", "答案：A、B、C", none, paperMissingExtra),
		wrongAnswer(AApp, "A,C", "答案：A或C", extract.Conflicting, paperConflict),
		wrongAnswer(AApp, "A,C", "\\boxed{A,C}\n最终答案：A", extract.Conflicting, paperConflict),
	}
}

// setRemarkRows: a multiple-select set ends where the answer phrase ends;
// a remark after it neither joins nor voids it ("no credit for missing or
// extra selections": the extra must be the model's).
func setRemarkRows() []answerRow {
	const none = extract.FailureKind("")
	return []answerRow{
		rightAnswer(AApp, "A,C,D", "Final answer: A, C, D. B is contraindicated here.", paperMissingExtra),
		rightAnswer(AApp, "B,D", "Final answer: B, D (A is reserved for stage I disease)", paperMissingExtra),
		rightAnswer(AApp, "A,C", "Final answer: A and C (B is not indicated without nodal disease)", paperMissingExtra),
		rightAnswer(AApp, "A,C,D", "A + C + D", paperComplete),
		rightAnswer(AApp, "A,C,D", "**Final answer:** A+C+D", paperComplete),
		rightAnswer(AApp, "A,C,D", "Final answer: A, C, D — B is contraindicated", paperMissingExtra),
		rightAnswer(CPlan, "B,D", "**Answer:** B and D: B because the nodes persist, and D since cisplatin is now contraindicated; A is too early.", paperMissingExtra),
		rightAnswer(CPlan, "B,D", "Final answer: (B), (D)", paperComplete),
		rightAnswer(AApp, "A,C", "答案：A和C（B不适用于无淋巴结转移的患者）", paperMissingExtra),
		rightAnswer(AApp, "A,C", "答案：A、C。 B is contraindicated after induction.", paperMissingExtra),
		wrongAnswer(AApp, "A,C,D", "Final answer: A, C. D is also reasonable.", none, paperPartial),
		wrongAnswer(AApp, "A,C", "Final answer: A, B, C (B for symptom control)", none, paperMissingExtra),
		wrongAnswer(AApp, "A,C", "Final answer: A or C (both defensible)", extract.Conflicting, paperConflict),
		rightAnswer(GMem, "B", "Final answer: B (A is reserved for stage I disease)", paperFinal),
	}
}

// pluralLabelRows: "Final answers:" and "The correct answers are" label a
// set as their singular twins do.
func pluralLabelRows() []answerRow {
	const none = extract.FailureKind("")
	return []answerRow{
		rightAnswer(AApp, "A,C,D", "Final answers: A, C, D", paperComplete),
		rightAnswer(AApp, "A,C,D", "The correct answers are A, C and D.", paperComplete),
		rightAnswer(CPlan, "B,D", "After induction the nodes persist.\n\n**Final Answers:** B and D", paperComplete),
		rightAnswer(AApp, "A,C", "The answers are A and C.", paperComplete),
		rightAnswer(AApp, "A,C,D", "The correct options are **A**, **C**, and **D**.", paperComplete),
		rightAnswer(AApp, "A,C", "Options A and B look similar; the correct answers are A and C.", paperComplete),
		wrongAnswer(GMem, "B", "The options are A. Surgery, B. Induction chemotherapy, C. Radiotherapy alone, D. Observation.\n\nInduction chemotherapy is the standard.", extract.Unparseable, paperFinal),
		wrongAnswer(AApp, "A,C", "\\boxed{A,C}\nFinal answers: A, B", extract.Conflicting, paperConflict),
		wrongAnswer(AApp, "A,C", "The correct answers are A, B and C.", none, paperMissingExtra),
		wrongAnswer(GMem, "B", "The correct answers are B and C.", extract.Conflicting, paperConflict),
	}
}

// standaloneRows: "a standalone option is accepted when unambiguous": a
// letter that begins a word is no option, and a quoted option the model
// goes on to conclude against is no answer.
func standaloneRows() []answerRow {
	return []answerRow{
		wrongAnswer(CPCare, "B", "D-dimer was 4.2 mg/L, and CT angiography showed no embolism.", extract.Unparseable, paperFinal),
		wrongAnswer(CPlan, "C", "C-reactive protein was elevated at 48 mg/L.\nThe fever points to infection rather than progression.", extract.Unparseable, paperFinal),
		wrongAnswer(GMem, "A", "A-level evidence supports induction chemotherapy.", extract.Unparseable, paperFinal),
		wrongAnswer(CPCare, "B", "D-二聚体 4.2 mg/L，CT血管造影未见肺栓塞。", extract.Unparseable, paperFinal),
		wrongAnswer(CPlan, "C", "C反应蛋白48 mg/L，发热提示感染而非肿瘤进展。", extract.Unparseable, paperFinal),
		rightAnswer(CPlan, "D", "D\n\nD-dimer and renal function both support switching to carboplatin.", paperFinal),
		rightAnswer(CPCare, "B", "C-reactive protein 48 mg/L.\n\nAnswer: B", paperFinal),
		wrongAnswer(CPCare, "C", "Let me weigh the options.\nB. Radiotherapy alone would undertreat N2 disease.\nInduction adds little for this patient.\nSo I'd go with C", extract.Unparseable, paperFinal),
		wrongAnswer(CPCare, "C", "B. 单纯放疗对N2病变治疗不足。\n综合考虑，我会选择C", extract.Unparseable, paperFinal),
		rightAnswer(CPCare, "C", "B. Radiotherapy alone would undertreat N2 disease.\nC. Concurrent chemoradiotherapy is the standard for T3N2.\nSo I'd go with C", paperFinal),
		rightAnswer(CPCare, "B", "**B. Induction chemotherapy followed by concurrent chemoradiotherapy**\n\nRationale: option C would undertreat N2 disease, and A is not indicated.", paperFinal),
		rightAnswer(GMem, "B", "B. Induction chemotherapy then CCRT\n\nThis follows the guideline for stage III disease.", paperFinal),
		rightAnswer(CPCare, "B", "B. Induction chemotherapy followed by CCRT\n\nThis is preferred over C", paperFinal),
		rightAnswer(CPCare, "B", "B. 诱导化疗后同期放化疗\n\n理由：N2病变需要全身治疗，而不是C", paperFinal),
		rightAnswer(Sequence, "T1+C_Ax", "C. T1+C_Ax\nThe fat is bright and the vessels enhance, so it is not T2_Ax", paperFinal),
		wrongAnswer(CPCare, "B", "A. Surgery\nB. Induction chemotherapy\nC. Radiotherapy alone\nD. Observation\n\nLet me think about which fits.", extract.Conflicting, paperConflict),
	}
}

// pathologyRemarkRows: a 0/1 answer followed by a remark holding a number
// is that answer, labelled or not.
func pathologyRemarkRows() []answerRow {
	return []answerRow{
		rightAnswer(Pathology, "1", "1 (confidence: 0.85)", paperA5),
		rightAnswer(Pathology, "0", "The lymphoid stroma is reactive without atypical epithelium.\n\n0 (confidence 0.7)", paperA5),
		rightAnswer(CPPathology, "1", "**1** (probability of NPC: 0.92)", paperA11),
		rightAnswer(Pathology, "1", "1（置信度：0.85）", paperA5),
		rightAnswer(Pathology, "1", "1 - nasopharyngeal carcinoma (confidence 0.9)", paperA5),
		wrongAnswer(Pathology, "1", "1. The slide shows 0.85 of the area as tumour.\n2. No necrosis.", extract.Unparseable, paperFinal),
	}
}

// huatuoRows: HuatuoGPT-o1 writes "## Thinking" then "## Final Response";
// the Final Response is the answer and the Thinking is reasoning, as a
// <think> block is.
func huatuoRows() []answerRow {
	return []answerRow{
		rightAnswer(GMem, "D", "## Thinking\n\nThe guideline for stage IVA... The answer is A? No, wait, A applies to stage I only.\n\n## Final Response\n\nD", paperFinal),
		rightAnswer(CPCare, "B", "## Thinking\n\nAlright, T3N2M0. Answer: C seems tempting, but radiotherapy alone undertreats N2.\n\n## Final Response\n\nThe recommended next step is induction chemotherapy followed by concurrent chemoradiotherapy.\n\n**Answer: B**", paperFinal),
		rightAnswer(LRev, "C", "## Thinking\n\n\\boxed{A} would fit progression, but the MRI shows a partial response.\n\n## Final Response\n\n\\boxed{C}", paperFinal),
		rightAnswer(GMem, "D", "## Thinking\n\n嗯，患者为IVA期……答案：A？不对，A只适用于I期。\n\n## Final Response\n\n答案：D", paperFinal),
		rightAnswer(AApp, "A,C", "## Thinking\n\nFinal answer: B? No — B needs nodal disease.\n\n## Final Response\n\nFinal answer: A and C", paperComplete),
		wrongAnswer(CPlan, "D", "## Thinking\n\nThe creatinine clearance is 45 mL/min, so cisplatin is out. The answer is D", extract.Empty, paperIncomplete),
		wrongAnswer(Pathology, "1", "## Thinking\n\nThe nests of atypical cells mean 1\n\n## Final Response\n\n", extract.Empty, paperIncomplete),
	}
}

// decisionRows: where the paper is silent (docs/extraction.md): full-width
// letters and digits are ASCII; stage spellings cT3, T 3, Stage N1, cN2, N
// 1 are the stage; "A/C/D" and side-by-side boxes are a set in a
// multiple-select task and a conflict in single choice; an unlabelled
// conclusion stays unread.
func decisionRows() []answerRow {
	a12 := strings.TrimSuffix(tJSON("T_stage", "Ｔ３", "clivus"), "}") + `,"involved_structures":["clivus"],"evidence":"clivus"}`
	return []answerRow{
		rightAnswer(GMem, "B", "答案：Ｂ", paperFinal),
		rightAnswer(Pathology, "1", "１", paperA5),
		rightAnswer(Sequence, "T1+C_Ax", "\\boxed{Ｃ}", paperA6),
		rightAnswer(AApp, "A,C", "答案：Ａ、Ｃ", paperComplete),
		rightAnswer(TGroups, "T3", tJSON("t_stage", "cT3", "clivus"), paperTStage),
		rightAnswer(TCards, "T3", tJSON("t_stage", "T 3", "clivus"), paperTStage),
		rightAnswer(CPMRI, "T3", a12, paperA12),
		rightAnswer(NGroups, "N1", `{"n_stage":"Stage N1","evidence":"one left level II node"}`, paperNStage),
		rightAnswer(NGroups, "N2", `{"n_stage":"cN2"}`, paperNStage),
		rightAnswer(NGroups, "N1", `{"n_stage":"N 1"}`, paperNStage),
		wrongAnswer(NGroups, "N2", `{"n_stage":"pN2"}`, extract.OutOfCategory, paperNStage),
		wrongAnswer(TGroups, "T3", tJSON("t_stage", "cT3b"), extract.OutOfCategory, paperTStage),
		rightAnswer(AApp, "A,C,D", "A/C/D", paperComplete),
		rightAnswer(AApp, "A,C,D", "\\boxed{A}\\boxed{C}\\boxed{D}", paperComplete),
		rightAnswer(AApp, "A,C", "Final answer: $\\boxed{A}$, $\\boxed{C}$", paperComplete),
		wrongAnswer(AApp, "A,C", "\\boxed{A}\nOn reflection C applies as well.\n\\boxed{C}", extract.Conflicting, paperConflict),
		wrongAnswer(GMem, "B", "\\boxed{B}\\boxed{C}", extract.Conflicting, paperConflict),
		wrongAnswer(GMem, "B", "Answer: B/C", extract.Conflicting, paperConflict),
		wrongAnswer(GMem, "B", "Induction chemotherapy is the standard here. Therefore B.", extract.Unparseable, paperFinal),
		wrongAnswer(GMem, "B", "综上所述，因此选B。", extract.Unparseable, paperFinal),
		wrongAnswer(AApp, "A,C", "综上，选A和C。", extract.Unparseable, paperFinal),
	}
}
