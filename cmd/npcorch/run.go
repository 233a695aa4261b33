package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/campaign"
)

func newRunCmd() *cobra.Command {
	var (
		file   string
		resume bool
		repeat int
		out    string
	)
	cmd := &cobra.Command{
		Use:   "run -c CAMPAIGN",
		Short: "Run a campaign: plan, launch engines, stream every item into the journal, score",
		Long: `Run a campaign file: place its models on the node's GPUs, start and supervise
their engines, send every item of every task (images as the prepared files'
own bytes), append each answer to the journal, then score.

A crashed or interrupted run continues with --resume: only the requests the
journal lacks are sent, and re-running a finished campaign sends nothing.`,
		Example: `  npcorch run -c configs/campaigns/a800-sxm-8.yaml
  npcorch run -c my-campaign.yaml --resume
  npcorch run -c my-campaign.yaml --repeat 3 --out runs/reliability`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("run: give a campaign file with -c (examples in configs/campaigns/)")
			}
			c, err := configs.LoadCampaign(file, nil)
			if err != nil {
				return err
			}
			if repeat > 0 {
				c.Repeat = repeat
			}
			if out != "" {
				c.Dataset.Raw, c.Dataset.Prepared = c.Path(c.Dataset.Raw), c.Path(c.Dataset.Prepared)
				c.Output, c.Dir = out, "."
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			o, err := campaign.Run(cmd.Context(), campaign.Options{Campaign: c, Self: []string{self}, Resume: resume,
				Out: cmd.OutOrStdout(), Log: cmd.ErrOrStderr(), Progress: cmd.ErrOrStderr()})
			if o != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "\nrun directory: %s\n", o.RunDir)
			}
			if err != nil && cmd.Context().Err() != nil {
				return fmt.Errorf("interrupted; every engine was stopped and the journal kept: continue with `npcorch run -c %s --resume`", file)
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "campaign", "c", "", "campaign file (YAML)")
	cmd.Flags().BoolVar(&resume, "resume", false, "continue a run whose directory already holds a journal")
	cmd.Flags().IntVar(&repeat, "repeat", 0, "send every request k times (repeated-run reliability); overrides the campaign")
	cmd.Flags().StringVar(&out, "out", "", "run directory; overrides the campaign's output")
	return cmd
}
