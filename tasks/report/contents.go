package report

import (
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/score"
)

// Output files, relative to the output directory.
const (
	Table1Markdown = "table1.md"
	Table1CSV      = "table1.csv"
	Table1JSON     = "table1.json"
	CostMarkdown   = "cost.md"
	CostCSV        = "cost.csv"
	CostJSON       = "cost.json"
	DetailMarkdown = "detail.md"
	DetailJSON     = "detail.json"
	HTMLFile       = "report.html"
	PlotsDir       = "plots"
	GPUDir         = "gpu"
)

// Format tags of the JSON files.
const (
	Table1Format = "npcorch-report-table1/1"
	CostFormat   = "npcorch-report-cost/1"
	DetailFormat = "npcorch-report-detail/1"
)

// Report is a run's report, with other runs side by side in the table,
// the score plots and the cost.
type Report struct {
	// Runs are the reported runs; Runs[0] is the base run, whose models the
	// detail and the class plots show.
	Runs   []*Run
	Table  Table
	Cost   Cost
	Detail []ModelDetail
	// figures are the plots in page order.
	figures []figure
	// reg names the tasks and lays out the table, detail and figures.
	reg *tasks.Registry
}

// PaperBaselines are the majority baselines the paper states, printed
// beside the cohort's own.
type PaperBaselines struct {
	L3Pathology        float64 `json:"l3_pathology"`
	TStage             float64 `json:"t_stage"`
	NStage             float64 `json:"n_stage"`
	CarePathPathology  float64 `json:"carepath_pathology"`
	CarePathT3Constant float64 `json:"carepath_t3_constant"`
}

func paperBaselines() PaperBaselines {
	return PaperBaselines{score.PaperL3PathologyMajority, score.PaperTMajority, score.PaperNMajority,
		score.PaperCarePathPathologyMajority, score.PaperCarePathT3Constant}
}

// notMeasured is what the cost tables print for a GPU figure the run did
// not measure: never a 0 that looks real.
const notMeasured = "not measured"

// notReported is what the cost tables print for a token figure the
// engine did not report (cached tokens without
// --enable-prompt-tokens-details), which is not 0.
const notReported = "not reported"
