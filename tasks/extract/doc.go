// Package extract turns a model's raw final text into a typed NPCBench
// prediction or a typed failure, following the paper's answer-extraction rule
// (Appendix C, "Answer extraction"): an explicit final \boxed{X} or labelled
// final answer beats options discussed in reasoning; a standalone option is
// accepted only when unambiguous; missing, conflicting or out-of-category
// answers are failures, never guesses.
//
// One function per prompt kind:
//
//	Pathology     A5, A11  "0" or "1"
//	Sequence      A6       boxed option letter → sequence class
//	Care          A13      one option letter from the item's valid letters
//	StructureCard A7       {"structure_id", "invasion"}
//	TStaging      A8, A9, A12  {"structure_invasion", "t_stage" | "T_stage", ...}
//	NStage        A10      {"n_stage", "evidence"}
//
// Every function is pure and total: any input, however malformed, yields a
// value (fuzz tests hold it to that). Reasoning left in the text is removed
// first: everything up to the last "</think>", and an unclosed "<think>" with
// all that follows it.
//
// The package owns extraction only. It reads no journal and no dataset,
// compares nothing with gold labels (package score does), and takes structure
// names, their synonyms and left/right collapsing from configs.Structures
// rather than keeping a list of its own.
package extract
