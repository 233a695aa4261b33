package main

import (
	"fmt"
	"os"
	"path/filepath"

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
		watch  liveFlags
	)
	cmd := &cobra.Command{
		Use:   "run -c CAMPAIGN",
		Short: "Run a campaign: plan, launch engines, stream every item into the journal, score",
		Long: `Run a campaign file: place its models on the node's GPUs, start and supervise
their engines, send every item of every task (images as the prepared files'
own bytes), append each answer to the journal, then score.

A crashed or interrupted run continues with --resume: only the requests the
journal lacks are sent, and re-running a finished campaign sends nothing.
--resume refuses a folder that holds no run, and keeps the repeats and seed
the run was started with (RUN/run.json): a --repeat, or a repeat: or seed:
in the campaign file, that says otherwise is refused. A run folder is held
by one run at a time: a second run (or ` + "`npcorch score`" + `) on it is refused,
naming the process that holds it. Relative paths in the campaign
file are relative to the file; --out is relative to the current folder.

--listen serves a live page of the run (state, progress, engines, GPUs, the
plan against what happened, ETA), Prometheus metrics at /metrics and the same
state as JSON at /api/status (docs/live.md). It listens on loopback unless
the address names another interface; then a token is required, read from
--token-file or the environment variable NPCORCH_LIVE_TOKEN (never from the
command line, which other users can read). Without --listen, ` + "`npcorch status`" + `
shows the same summary from the run folder.

Exit status: 0 when every request is answered; 3 when the run went to its
end but some requests are not run (the summary groups them by reason);
130 when interrupted (SIGINT/SIGTERM); 1 for any other error.`,
		Example: `  npcorch run -c configs/campaigns/a800-sxm-8.yaml
  npcorch run -c my-campaign.yaml --resume
  npcorch run -c my-campaign.yaml --repeat 3 --out runs/reliability
  npcorch run -c my-campaign.yaml --listen 9410          # then open http://localhost:9410/
  NPCORCH_LIVE_TOKEN=... npcorch run -c my-campaign.yaml --listen 0.0.0.0:9410`,
		Args:    cobra.NoArgs,
		PreRunE: refuseOutOfRange(flagRange{"repeat", 1, "give 1 or more, or leave it out for the campaign's repeat"}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return fmt.Errorf("run: give a campaign file with -c (examples in configs/campaigns/)")
			}
			c, err := configs.LoadCampaign(file, nil)
			if err != nil {
				return err
			}
			if out != "" {
				if err := setOutput(c, out); err != nil {
					return err
				}
			}
			self, err := os.Executable()
			if err != nil {
				return err
			}
			ln, err := watch.listen(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			o, err := campaign.Run(cmd.Context(), campaign.Options{Campaign: c, Self: []string{self}, Resume: resume, Repeat: repeat,
				Out: cmd.OutOrStdout(), Log: cmd.ErrOrStderr(), Progress: cmd.ErrOrStderr(), Live: ln})
			if o != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "\nrun directory: %s\n", o.RunDir)
			}
			if err != nil && cmd.Context().Err() != nil {
				return &interruptedError{fmt.Sprintf("interrupted; every engine was stopped and the journal kept: continue with `%s`", campaign.ResumeCommand(file, out, c.Repeat))}
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&file, "campaign", "c", "", "campaign file (YAML)")
	cmd.Flags().BoolVar(&resume, "resume", false, "continue a run whose directory already holds a journal")
	cmd.Flags().IntVar(&repeat, "repeat", 0, "send every request k times (repeated-run reliability); overrides the campaign")
	cmd.Flags().StringVar(&out, "out", "", "run directory; overrides the campaign's output")
	watch.add(cmd)
	return cmd
}

// setOutput points the campaign's run directory at out, given on the
// command line and so relative to the current folder; every other path of
// the campaign file stays relative to the file.
func setOutput(c *configs.Campaign, out string) error {
	a, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("run: --out %s: %w", out, err)
	}
	c.Output = a
	return nil
}
