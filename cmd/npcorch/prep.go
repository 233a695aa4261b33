package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/prep"
	"github.com/npcorch/npcorch/tasks/campaign"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/prepare"
)

func newPrepCmd() *cobra.Command {
	var (
		opt      prepare.Options
		overview int
	)
	cmd := &cobra.Command{
		Use:   "prep --data DIR --out DIR",
		Short: "Prepare the benchmark images (plane groups, panels, cards, pages, overviews)",
		Long: `prep reads a raw dataset (DIR/dataset.json, MRI series folders, pathology
slides) and writes every image the NPCBench tasks send, as lossless PNG, with
OUT/manifest.json listing each file's sha256 and each image that could not
be made (and why). Work is cached by content: a rerun skips finished images
and an interrupted run resumes. Exit status: 0 when every image was made,
1 when some could not be or dataset.json has problems (each is listed), 130
when interrupted.`,
		Args:    cobra.NoArgs,
		PreRunE: refuseOutOfRange(flagRange{"workers", 0, "give 1 or more, or 0 for all cores"}),
		RunE: func(cmd *cobra.Command, args []string) error {
			opt.Tasks = campaign.Benchmark()
			opt.Params = imaging.DefaultParams()
			opt.Params.Overview = overview
			opt.Progress = cmd.ErrOrStderr()
			_, rep, err := prepare.Run(cmd.Context(), opt)
			if errors.Is(err, prep.ErrInterrupted) {
				return err // images cut short by the interrupt are not failures
			}
			if rep != nil {
				printPrepReport(cmd, rep)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "prep: %d images in %s/%s (%d written, %d cached, %d failed)\n",
				rep.Outputs, opt.Out, dataset.PreparedName, rep.Written, rep.Cached, len(rep.Errors))
			var fails []error
			if len(rep.Errors) > 0 {
				fails = append(fails, fmt.Errorf("%d images could not be made; see the errors above", len(rep.Errors)))
			}
			if len(rep.Problems) > 0 {
				fails = append(fails, fmt.Errorf("%d problems in the dataset; see them above (the images they do not concern were made)", len(rep.Problems)))
			}
			return errors.Join(fails...)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.Dataset, "data", "", "raw dataset folder holding dataset.json (required)")
	f.StringVar(&opt.Out, "out", "", "output folder for the PNGs and manifest.json (required)")
	f.IntVar(&opt.Workers, "workers", 0, "concurrent renders (0 = all cores)")
	f.BoolVar(&opt.Strict, "strict", false, "stop at the first image that cannot be made")
	f.IntVar(&overview, "overview-size", imaging.DefaultParams().Overview, "longest side of pathology overviews, px")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// printPrepReport writes what prep found on stderr: the dataset's
// problems, planning's warnings, each failed image, and hints.
func printPrepReport(cmd *cobra.Command, rep *prepare.Report) {
	w := cmd.ErrOrStderr()
	for _, p := range rep.Problems {
		fmt.Fprintln(w, "dataset problem:", p)
	}
	for _, s := range rep.Warnings {
		fmt.Fprintln(w, "warning:", s)
	}
	for _, e := range rep.Errors {
		fmt.Fprintln(w, "error:", e)
	}
	for _, h := range rep.Hints {
		fmt.Fprintln(w, "hint:", h)
	}
}
