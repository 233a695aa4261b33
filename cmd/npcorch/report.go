package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/tasks/campaign"
	"github.com/npcorch/npcorch/tasks/report"
)

func newReportCmd() *cobra.Command {
	var runDir, outDir string
	var compare []string
	cmd := &cobra.Command{
		Use:   "report --run DIR [--compare DIR ...] [--out DIR]",
		Short: "Write the tables, cost and HTML report of a scored run",
		Long: `report reads a scored run directory (scores.json, the journal and, when the
GPU sampler ran, gpu/samples.jsonl and gpu/spans.json) and writes:

  table1.md/.csv/.json  the cross-model table in the layout of the paper's Table 1
  cost.md/.csv/.json    requests, tokens, TTFT/TPOT percentiles, GPU-seconds, energy
  detail.md/.json       confusion matrices, class diagnostics, slowest and not-run items
  report.html           one self-contained page with every table and plot
  plots/, gpu/          the PNG plots and the GPU utilization report

With --compare, the other runs appear beside the base run, model by model,
with their differences marked. Run 'npcorch score --run DIR' first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runDir == "" {
				return fmt.Errorf("report: give the run directory with --run DIR")
			}
			if outDir == "" {
				outDir = filepath.Join(runDir, "report")
			}
			if err := report.Write(campaign.Benchmark(), runDir, compare, outDir); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "report written to %s (open %s)\n", outDir, filepath.Join(outDir, report.HTMLFile))
			return nil
		},
	}
	cmd.Flags().StringVar(&runDir, "run", "", "run directory to report (holds scores.json)")
	cmd.Flags().StringArrayVar(&compare, "compare", nil, "other run directories to put side by side (repeatable)")
	cmd.Flags().StringVar(&outDir, "out", "", "output directory (default RUN/report)")
	return cmd
}
