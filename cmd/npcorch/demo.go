package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/campaign"
	"github.com/npcorch/npcorch/tasks/prepare"
	"github.com/npcorch/npcorch/tasks/report"
	"github.com/npcorch/npcorch/tasks/synth"
)

func newDemoCmd() *cobra.Command {
	var (
		out    string
		seed   int64
		resume bool
	)
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a whole L1–L6 campaign on a generated dataset with simulated engines (no GPU needed)",
		Long: `Run the embedded demo end to end: generate a small synthetic NPCBench-shaped
dataset, prepare its images, plan four models on a fake 8×A800 node (the real
GPUs when NVML finds some), launch npcorch's simulated engines as real child
processes (one model with two replicas), run every level (L1 guideline
memory, L2 application, the L3 image tasks, L4 case planning, L5
longitudinal revision, the L6 CarePath episodes; not the matched controls)
and O1's consultations (judged criterion by criterion by a simulated
GPT-OSS-120B once the first model's answers exist), score, and print the
whole Table 1.

Everything lands in --out: data/ (raw dataset), prep/ (prepared images and
manifest), run/ (journal, engine logs, scores.md/.csv/.json). Two runs with
the same seed write byte-identical score files.

Exit status: 0 when every request is answered; 3 when some are not run (the
summary groups them by reason); 130 when interrupted; 1 for any other error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := runDemo(cmd.Context(), out, seed, resume, cmd.OutOrStdout(), cmd.ErrOrStderr())
			if err != nil && cmd.Context().Err() != nil {
				return &interruptedError{fmt.Sprintf("demo interrupted; every engine was stopped and what was done kept: continue with `npcorch demo --out %s --seed %d --resume`",
					campaign.ShellQuote(out), seed)}
			}
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "npcorch-demo", "folder for the dataset, prepared images and run")
	cmd.Flags().Int64Var(&seed, "seed", 1, "seed of the dataset and of the simulated answers")
	cmd.Flags().BoolVar(&resume, "resume", false, "continue an interrupted demo in --out")
	return cmd
}

func runDemo(ctx context.Context, out string, seed int64, resume bool, stdout, stderr io.Writer) error {
	start := time.Now()
	data, prepDir := filepath.Join(out, "data"), filepath.Join(out, "prep")
	if _, err := os.Stat(filepath.Join(data, "dataset.json")); err != nil || !resume {
		opt := synth.DefaultOptions(data)
		opt.Seed, opt.Overwrite = seed, true
		if _, err := synth.Generate(ctx, opt); err != nil {
			return fmt.Errorf("demo: generate the dataset: %w", err)
		}
		fmt.Fprintf(stderr, "demo: dataset generated in %s (%.1fs)\n", data, time.Since(start).Seconds())
	}
	t := time.Now()
	_, rep, err := prepare.Run(ctx, prepare.Options{Tasks: campaign.Benchmark(), Dataset: data, Out: prepDir, Progress: stderr})
	if err != nil {
		return fmt.Errorf("demo: prepare the images: %w", err)
	}
	if len(rep.Errors) > 0 {
		return fmt.Errorf("demo: %d images could not be prepared; first: %v", len(rep.Errors), rep.Errors[0])
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("demo: the generated dataset has %d problems; first: %v", len(rep.Problems), rep.Problems[0])
	}
	fmt.Fprintf(stderr, "demo: images prepared in %s (%.1fs)\n", prepDir, time.Since(t).Seconds())

	src, err := configs.Defaults.ReadFile("campaigns/demo.yaml")
	if err != nil {
		return err
	}
	c, err := configs.ParseCampaign("demo.yaml (embedded)", out, src, nil)
	if err != nil {
		return err
	}
	c.Seed = seed
	if node, err := nvml.Open(gpu.NodeSpec{Kind: gpu.NodeAuto}); err == nil {
		if inv, err := node.Inventory(ctx); err == nil && len(inv.GPUs) > 0 {
			c.Node = "nvml"
			fmt.Fprintf(stderr, "demo: NVML found %d GPUs; planning on them (engines are still simulated)\n", len(inv.GPUs))
		}
		node.Close()
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// The simulated engines load in well under a second: short lifecycle
	// delays keep the demo fast and still exercise every stage.
	timing := launcher.Timing{NoProgress: time.Minute, HardCap: 3 * time.Minute, Grace: 5 * time.Second,
		RestartBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second, StallCheck: 2 * time.Second, StallWindow: 30 * time.Second}
	// A fresh demo starts from an empty run folder (Fresh, once the
	// folder's lock is held): answers left by a demo with another seed
	// must not mix into this one's journal.
	// --resume continues the demo wherever it was cut: a demo cut while
	// it generated or prepared its data has no run yet, and starts it.
	resume = resume && campaign.Begun(c.Path(c.Output))
	o, err := campaign.Run(ctx, campaign.Options{Campaign: c, Self: []string{self}, Resume: resume, Fresh: !resume,
		Out: stdout, Log: io.Discard, Progress: stderr, Timing: timing})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := report.Write(campaign.Benchmark(), o.RunDir, nil, ""); err != nil {
		return fmt.Errorf("demo: report: %w", err)
	}
	fmt.Fprintf(stdout, "\nrun directory: %s (scores.md/.csv/.json, report/report.html, journal/, engines/) — %.1fs in all\n",
		o.RunDir, time.Since(start).Seconds())
	return nil
}
