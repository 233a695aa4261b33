package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/launcher/campaign"
)

func newScoreCmd() *cobra.Command {
	var run string
	cmd := &cobra.Command{
		Use:   "score --run DIR",
		Short: "Recompute every score of a run from its journal and the dataset alone",
		Long: `Recompute every score of a run from RUN/run.json, the journal and the dataset,
with no GPU and no engine, and write scores.json, scores.csv and scores.md.
The same journal and dataset always give the same bytes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run == "" {
				return fmt.Errorf("score: give the run directory with --run")
			}
			res, err := campaign.ScoreDir(run)
			if err != nil {
				return err
			}
			return res.WriteMarkdown(cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run directory (holds run.json and journal/)")
	return cmd
}
