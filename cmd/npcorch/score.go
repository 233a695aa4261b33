package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/tasks/campaign"
)

func newScoreCmd() *cobra.Command {
	var run string
	var strict bool
	cmd := &cobra.Command{
		Use:   "score --run DIR [--strict]",
		Short: "Recompute every score of a run from its journal and the dataset alone",
		Long: `Recompute every score of a run from RUN/run.json, the journal and the dataset,
with no GPU and no engine, and write scores.json, scores.csv and scores.md.
The same journal and dataset always give the same bytes.

Journal lines that cannot be used as written — a torn last line, a corrupt
or invalid record, a record in the wrong file, a request answered twice,
records of models, tasks, items or repeats the run does not have — are each
printed on stderr with file, line and what was done, and counted in the
score files. With --strict any such problem makes the command fail after
writing the score files. Problems in the dataset (a bad label, an item
that cannot be built) are printed on stderr as run prints them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run == "" {
				return fmt.Errorf("score: give the run directory with --run")
			}
			res, problems, err := campaign.ScoreDir(run)
			if err != nil {
				return err
			}
			problems.Report(cmd.ErrOrStderr())
			jr := res.JournalProblems
			if jr != nil {
				for _, p := range jr.Problems {
					fmt.Fprintf(cmd.ErrOrStderr(), "journal problem: %v\n", p)
				}
			}
			if err := res.WriteMarkdown(cmd.OutOrStdout()); err != nil {
				return err
			}
			if jr != nil && strict {
				return fmt.Errorf("score --strict: the journal of %s has %s, listed above; the score files were written without those lines", run, jr.Summary())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run directory (holds run.json and journal/)")
	cmd.Flags().BoolVar(&strict, "strict", false, "fail (exit status 1) when the journal has any problem")
	return cmd
}
