package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/tasks/importer"
)

// maxListed bounds the problems and notes printed; the report file has
// them all.
const maxListed = 50

func newImportCmd() *cobra.Command {
	var opt importer.Options
	cmd := &cobra.Command{
		Use:   "import --dicom DIR --labels FILE --out DIR [--review FILE]",
		Short: "Make a dataset from a DICOM export (PACS, CD) and a labels sheet",
		Long: `import reads the headers of every file under --dicom (any names, DICOMDIR
honoured, files that are not DICOM skipped and counted), groups them by
patient, study and series, classifies each MR series (weighting, contrast,
fat suppression, plane), fills NPCBench's seven sequence slots per patient,
joins the labels sheet (CSV or XLSX: patient_id, t_stage, n_stage, and
optionally cohorts, t_from, t_to, n_from, n_to) and writes OUT/dataset.json,
OUT/review.csv (every series, its class and why, and the slot chosen) and
OUT/import-report.txt.

Edit the slot column of review.csv and run import again with --review: the
edited choices win. Exit status: 0 when everything is resolved; 1 when
something is not (each problem is listed, and the files are written so that
you can resolve it in the review), or when the input is bad (nothing is
written); 130 when interrupted. See docs/dataset.md.`,
		Args:    cobra.NoArgs,
		PreRunE: refuseOutOfRange(flagRange{"workers", 0, "give 1 or more, or 0 for all cores"}),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, err := importer.Import(cmd.Context(), opt)
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			list(stderr, "note", res.Notes, opt.Out)
			problems := make([]string, len(res.Problems))
			for i, p := range res.Problems {
				problems[i] = p.String()
			}
			list(stderr, "unresolved", problems, opt.Out)
			fmt.Fprintln(cmd.OutOrStdout(), importer.Summary(res))
			fmt.Fprintf(cmd.OutOrStdout(), "import: %s (%d linked, %d copied in this run); wrote %s, %s and %s\n", res.Placement, res.Linked, res.Copied,
				filepath.Join(opt.Out, importer.DatasetName), filepath.Join(opt.Out, importer.ReviewName), filepath.Join(opt.Out, importer.ReportName))
			if len(res.Problems) > 0 {
				return fmt.Errorf("%d unresolved problems (above, and in %s): set the slots in %s and run import again with --review %s, or fix the labels sheet",
					len(res.Problems), filepath.Join(opt.Out, importer.ReportName), filepath.Join(opt.Out, importer.ReviewName), filepath.Join(opt.Out, importer.ReviewName))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opt.DICOM, "dicom", "", "folder of the DICOM export (required)")
	f.StringVar(&opt.Labels, "labels", "", "labels sheet, CSV or XLSX (required)")
	f.StringVar(&opt.Out, "out", "", "dataset folder to write (required; created if missing)")
	f.StringVar(&opt.Review, "review", "", "an edited review table (review.csv) whose slots win")
	f.StringVar(&opt.Name, "name", "", "the dataset's name (default: the base name of --out)")
	f.IntVar(&opt.Workers, "workers", 0, "concurrent header reads (0 = all cores)")
	for _, name := range []string{"dicom", "labels", "out"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// list prints lines with a prefix, at most maxListed of them.
func list(w io.Writer, prefix string, lines []string, out string) {
	for i, l := range lines {
		if i == maxListed {
			fmt.Fprintf(w, "%s: … %d more in %s\n", prefix, len(lines)-i, filepath.Join(out, importer.ReportName))
			return
		}
		fmt.Fprintf(w, "%s: %s\n", prefix, l)
	}
}
