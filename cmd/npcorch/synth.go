package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/tasks/synth"
)

func newSynthCmd() *cobra.Command {
	opt := synth.DefaultOptions("")
	clinicareOnly := false
	cmd := &cobra.Command{
		Use:   "synth --out DIR [--seed N] [--patients N] [--carepath N]",
		Short: "Write a small deterministic synthetic NPCBench-shaped dataset",
		Long: `synth writes a synthetic dataset in npcorch's raw format: for every patient
seven MRI series (PNG slices with series.json sidecars), structure boxes and
invasion labels, T and N stages, a pathology slide, and for CarePath patients
an episode of clinical context and care questions with reference answers;
and the text levels' closed-choice questions with their reference answers.
Everything is drawn from --seed: the same flags give byte-identical files.
No real patient data is involved.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if clinicareOnly {
				return synthClinicare(opt.Out, opt.Seed, opt.Overwrite, cmd.OutOrStdout())
			}
			start := time.Now()
			// Resolve --out first: replacing a dataset replaces its folder.
			out, err := filepath.Abs(opt.Out)
			if err != nil {
				return err
			}
			opt.Out = out
			raw, err := synth.Generate(cmd.Context(), opt)
			if err != nil {
				return err
			}
			st, err := synth.Measure(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "synth: %d patients, %d images, %.1f MB in %s (seed %d, %s)\n",
				len(raw.Patients), st.Images, float64(st.Bytes)/1e6, opt.Out, opt.Seed, time.Since(start).Round(10*time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Out, "out", "", "folder to write the dataset to (created; must be new or empty)")
	f.Int64Var(&opt.Seed, "seed", opt.Seed, "seed of every label and pixel")
	f.IntVar(&opt.Patients, "patients", opt.Patients, "number of L3 patients (P01..)")
	f.IntVar(&opt.CarePath, "carepath", opt.CarePath, "number of CarePath patients (C01..)")
	f.IntVar(&opt.Guideline, "guideline", opt.Guideline, "number of L1 guideline questions (G001..)")
	f.IntVar(&opt.Application, "application", opt.Application, "number of L2 vignettes (A001..)")
	f.IntVar(&opt.Planning, "planning", opt.Planning, "number of L4 patient groups (CP01..), one to three questions each")
	f.IntVar(&opt.Longitudinal, "longitudinal", opt.Longitudinal, "number of L5 trajectories (L01..), one to five checkpoints each")
	f.IntVar(&opt.Consultations, "consultations", opt.Consultations, "number of O1 consultation cases (O01..), two questions each")
	f.IntVar(&opt.ImageSize, "image-size", opt.ImageSize, "MRI slice width and height in pixels")
	f.IntVar(&opt.SlideWidth, "slide-width", opt.SlideWidth, "pathology slide width in pixels")
	f.IntVar(&opt.SlideHeight, "slide-height", opt.SlideHeight, "pathology slide height in pixels")
	f.IntVar(&opt.Workers, "workers", 0, "images drawn at once (default: number of CPUs)")
	f.BoolVar(&opt.Overwrite, "force", false, "replace an existing dataset in --out")
	f.BoolVar(&clinicareOnly, "clinicare", false, "write the CliniCARE-Bench corpus instead: MIMIC-IV-shaped records, cases and planted truth (docs/clinicare.md)")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
