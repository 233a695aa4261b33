// Package extract turns a model's raw final text into a typed NPCBench
// prediction or a typed failure, following the paper's answer-extraction rule
// (Appendix C, "Answer extraction"): "An explicit final boxed or labelled
// answer takes precedence over options discussed in intermediate reasoning;
// a standalone option is accepted when unambiguous. Missing or conflicting
// final answers are scored incorrect." Read in tiers:
//
//  1. the final answers: every \boxed{X} and every "Final answer: X" (or
//     "Final answers:", 最终答案：X), of equal standing, so two that differ
//     conflict;
//  2. labelled answers: "Answer: X", "The answer is X", "The correct answers
//     are X and Y", 答案是X, 正确答案为X, 选项：X;
//  3. standalone option lines: "C", "**C**", "C. T1+C_Ax", "C选项", when
//     unambiguous: a line that quotes an option is not the answer when a
//     later line of prose concludes with another option.
//
// The first tier that names an option decides. A labelled answer followed
// by a remark is that answer ("1 (confidence 0.9)", "C (T1+C_Ax), not A");
// a second option given as an answer ("A or B", "A, C", "A和B") conflicts.
// A multiple-select set ends where its answer phrase ends ("A, C, D. E is
// contraindicated" is {A, C, D}). Text is read as words (words.go): a Han
// character is a word of its own, "D-dimer" and "0.85" are one word each
// and no option. On the JSON tasks the tiers are objects labelled "Final
// answer", objects labelled "Answer", then every object in the text
// (drafts included). Out-of-category answers are failures too; nothing is
// ever guessed. docs/extraction.md records the decisions taken where the
// paper is silent (full width, stage spellings, "A/C/D", unlabelled
// conclusions, HuatuoGPT-o1's sections) with their reasons.
//
// One function per prompt kind:
//
//	Pathology     A5, A11  "0" or "1"
//	Sequence      A6       boxed option letter → sequence class
//	Care          A13      one option letter from the item's valid letters
//	StructureCard A7       {"structure_id", "invasion"}
//	TStaging      A8, A9, A12  {"structure_invasion", "t_stage" | "T_stage", ...}
//	NStage        A10      {"n_stage", "evidence"}
//	JudgeVerdict  A15      {"explanation", "criteria_met"} (a rubric judge)
//
// Every function is pure and total: any input, however malformed, yields a
// value (fuzz tests hold it to that). Reasoning left in the text is removed
// first: everything up to the last "</think>", an unclosed "<think>" with
// all that follows it, and HuatuoGPT-o1's "## Thinking" section before its
// "## Final Response".
//
// The package owns extraction only. It reads no journal and no dataset,
// compares nothing with gold labels (package score does), and takes structure
// names, their synonyms and left/right collapsing from configs.Structures
// rather than keeping a list of its own.
package extract
