// Package score owns scores. It computes every NPCBench endpoint (paper Appendix C.2 and
// C.3.3–C.3.4; ../shared/notes/npcbench.md) from gold labels and extracted
// predictions, with patient-cluster bootstrap and exact Clopper–Pearson
// intervals, and the repeated-run reliability measures of CliniCARE-Bench.
//
// Entry points, one per kind of table:
//
//	Classify  one task's units: item-micro, balanced accuracy, per-class
//	          precision/recall/F1, confusion, group-macro, patient-macro,
//	          AllCorrect, the cohort's majority baseline
//	CarePath  L6: Care, AllCare, Strict, pathology∧T and the four patient
//	          intersections n11/n10/n01/n00, with pathology and T tables
//	Evidence  the L3 anatomical panel: card structure, conditional
//	          invasion, joint, Pt.Inv, Complete Inv, Direct T, EG T, and
//	          Oracle-slot, Model-slot and Gold-rule T by the deterministic rule
//	Repeated  k attempts: avg@k ± SD, pass^k, pass@k, agreement
//	O1        ConsultRubrics (Eq. A7, A8): the item-mean and case-mean
//	          scores over V, major and minor error rates, scores per
//	          clinical tag, Fig. 5d's criterion rates, case-cluster intervals
//	Calibrate a judge against physician labels (Eq. A9): agreement,
//	          Cohen's κ, sensitivity, specificity, the confusion table, per
//	          criterion kind, with response-cluster intervals
//
// Rules every entry point keeps:
//
//   - A failed extraction is wrong and stays in every denominator.
//   - A not-run unit (the request never got an answer: an infrastructure
//     failure) is neither right nor wrong. It leaves unit-level
//     denominators, its patient leaves patient-level denominators (a patient
//     cannot be all-correct on questions never asked), and the result says
//     so: NotRun > 0 and Complete == false. A report must show such a score
//     as provisional; re-running the missing units makes it final.
//   - An excluded unit (the dataset's six CarePath exclusions) is carried,
//     counted in Excluded, and never scored.
//   - A ratio with a zero denominator is absent (a nil pointer), never 0 or
//     NaN, so every result marshals to JSON.
//   - Results depend only on the inputs and Options: patients are ordered
//     by id before resampling, sums run in that order, and the bootstrap
//     draws from a PCG generator seeded by Options.Seed. The same inputs give
//     bit-identical JSON.
//
// A run's scores: ScoreRun scores a run from its journal (package
// tasks/journal) and dataset alone into Results — each task scored alone,
// the composites of the benchmark's Card (tasks.Benchmark.Scoring),
// O1's judged rubric and each judge's calibration against the physicians,
// repeated-run reliability, the journal's problems, what was left out or
// left unjudged — and WriteScoreFiles writes scores.json, .csv and .md.
// The Card, which a family builds, says how answers are scored across
// tasks and laid out; the scorer names no task.
//
// The entry points above are pure: they read no journal, dataset or clock,
// and extract nothing from model text (package extract does). They take
// the structure list and the deterministic T rule from configs.Structures.
package score
