package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
)

func newCalibrateCmd() *cobra.Command {
	var run, campaignFile, out string
	cmd := &cobra.Command{
		Use:   "calibrate --run DIR [-c CAMPAIGN --out FILE]",
		Short: "Show the speeds a run measured, and turn them into registry speeds for the next campaign",
		Long: `Read what a run's engines were measured to do (RUN/speeds.json, rewritten at
every measurement while the run goes and last when it ends) and print it:
per model, the samples, the serving time they cover, the registry's speed
and the estimate (token equivalents per second per A800-equivalent) with its
95 % interval and the mean time to first token; per replica, what it served
per second, images per second and time to first token. Run it on a running
campaign's folder to follow its speeds.

Then print the measured speeds as registry overrides (speed_tokens_per_s),
a models list to put in the next campaign file; with -c CAMPAIGN, write
that campaign with the measured speeds set on its models to --out
(comments and other fields kept; the result is checked to load). Models
whose samples said nothing about their GPUs (held back by image
preprocessing) get no override.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run == "" {
				return fmt.Errorf("calibrate: give the run directory with --run")
			}
			if (campaignFile == "") != (out == "") {
				return fmt.Errorf("calibrate: -c CAMPAIGN and --out FILE go together: the campaign to calibrate and where to write it")
			}
			return calibrate(run, campaignFile, out, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run directory (holds speeds.json)")
	cmd.Flags().StringVarP(&campaignFile, "campaign", "c", "", "campaign file to set the measured speeds on")
	cmd.Flags().StringVar(&out, "out", "", "where to write the calibrated campaign (a new file)")
	return cmd
}

func calibrate(run, campaignFile, out string, stdout, stderr io.Writer) error {
	path := filepath.Join(run, schedule.SpeedsFile)
	sp, err := schedule.ReadSpeeds(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("calibrate: %s has no %s: the run measured no engine yet (the first measurement comes a minute after an engine starts serving)", run, schedule.SpeedsFile)
	}
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := sp.WriteText(stdout); err != nil {
		return err
	}
	speeds, measured := map[string]configs.MeasuredSpeed{}, sp.Calibrated()
	for _, m := range sp.Models {
		if v, ok := measured[m.Model]; ok {
			speeds[m.Model] = configs.MeasuredSpeed{TokensPerS: v, Note: fmt.Sprintf("measured in %s: %.2f× the registry's %.0f (95 %% %.2f–%.2f, %d samples)",
				filepath.Base(filepath.Clean(run)), m.Factor, m.RegistryTokensPerS, m.Low, m.High, m.Samples)}
		} else {
			fmt.Fprintf(stderr, "calibrate: %s: no sample measured its GPUs (its image preprocessing held it back); it keeps its registry speed\n", m.Model)
		}
	}
	if len(speeds) == 0 {
		return fmt.Errorf("calibrate: %s measured no model's GPUs; nothing to calibrate", path)
	}
	if campaignFile == "" {
		text, err := configs.SpeedOverrides(speeds)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "\nregistry overrides for the next campaign's models list (or: npcorch calibrate --run %s -c CAMPAIGN --out FILE):\n%s", run, text)
		return nil
	}
	return writeCalibrated(campaignFile, out, speeds, stdout, stderr)
}

// writeCalibrated writes campaignFile with the measured speeds set to
// out, a new file, once the result loads.
func writeCalibrated(campaignFile, out string, speeds map[string]configs.MeasuredSpeed, stdout, stderr io.Writer) error {
	data, err := os.ReadFile(campaignFile)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	text, set, absent, err := configs.ApplySpeeds(campaignFile, data, speeds)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	for _, m := range absent {
		fmt.Fprintf(stderr, "calibrate: %s was measured but %s does not run it; left out\n", m, campaignFile)
	}
	dir := filepath.Dir(campaignFile)
	if filepath.Dir(out) != dir {
		fmt.Fprintf(stderr, "calibrate: %s is not beside %s; the campaign's relative paths stay relative to its own folder\n", out, campaignFile)
	}
	if _, err := configs.ParseCampaign(out, dir, text, nil); err != nil {
		return fmt.Errorf("calibrate: the calibrated campaign does not load (%w); %s is unchanged and nothing was written", err, campaignFile)
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("calibrate: %w (give a new file with --out)", err)
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	fmt.Fprintf(stdout, "\n%s: %s with the measured speeds of %v\n", out, campaignFile, set)
	return nil
}
