// Package report turns a finished run directory into the reports people
// read: the cross-model table in the layout of the NPCBench paper's Table 1
// (Markdown, CSV, JSON), per-model diagnostics, cost per model and task,
// and one self-contained HTML page with PNG plots.
//
// A run directory holds scores.json (score.Results, written by `npcorch
// score`), journal/MODEL/TASK.jsonl and, when the GPU sampler ran,
// gpu/samples.jsonl and gpu/spans.json, and speeds.json when the campaign
// measured its engines' speeds. Write reads them and writes into
// an output directory:
//
//	table1.md, table1.csv, table1.json   cross-model table (runs side by side with --compare)
//	cost.md, cost.csv, cost.json         requests, tokens, latency percentiles, GPU-seconds, energy, measured speeds
//	detail.md, detail.json               per-model confusion matrices, class diagnostics, slow and failed items
//	report.html                          everything above with the plots inlined as data URIs
//	plots/*.png                          the plots (gonum.org/v1/plot)
//	gpu/                                 the gpu package's utilization report, when samples exist
//
// The same inputs give the same bytes in every file: nothing reads the
// clock, every list is sorted, and PNG encoding is deterministic.
//
// This package only reads a run: it never rescores (scores come from
// scores.json, which package tasks recomputes from the journal), never
// writes into the run directory except the output directory it is given,
// and starts no engine and touches no GPU.
package report
