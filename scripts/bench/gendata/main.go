// Command gendata writes the benchmark inputs of scripts/bench/run.sh: a
// raw dataset made by package datasettest for one kind of output, and the
// 7×13 caption font (golang.org/x/image/font/basicfont) as a PNG atlas so
// that prep_python.py draws captions with the same glyphs.
//
// Usage: go run ./scripts/bench/gendata -out DIR -kind groups|cards|overviews|dicom -patients N
//
// Kind dicom writes the plane-group patients as DICOM series instead of
// PNG slices: per patient six series (T1, T2, T1+C axial of -axial slices;
// T1 and T1+C FS coronal and T1+C sagittal of -coronal slices), -size px
// square, 12-bit values in 16 bits, one series in three signed with a
// rescale, one in two with a VOI window (imagingtest.DICOMSeries).
package main

import (
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"

	"golang.org/x/image/font/basicfont"

	"github.com/npcorch/npcorch/imaging/imagingtest"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/dataset/datasettest"
)

func main() {
	out := flag.String("out", "", "output folder")
	kind := flag.String("kind", "groups", "groups, cards or overviews")
	patients := flag.Int("patients", 4, "number of patients")
	slide := flag.Int("slide", 4000, "slide width for overviews, px")
	font := flag.String("font", "", "also write the caption font atlas PNG here")
	size := flag.Int("size", 256, "slice side for groups, cards and dicom, px")
	axial := flag.Int("axial", 24, "slices of each axial series")
	coronal := flag.Int("coronal", 16, "slices of each coronal and sagittal series")
	flag.Parse()
	o := datasettest.Options{Patients: *patients, Series: imagingtest.Options{Size: *size, AxialSlices: *axial, CoronalSlices: *coronal}}
	if err := run(*out, *kind, o, *slide, *font); err != nil {
		fmt.Fprintln(os.Stderr, "gendata:", err)
		os.Exit(1)
	}
}

func run(out, kind string, o datasettest.Options, slide int, font string) error {
	if font != "" {
		f, err := os.Create(font)
		if err != nil {
			return err
		}
		if err := png.Encode(f, basicfont.Face7x13.Mask.(*image.Alpha)); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if out == "" {
		return nil
	}
	switch kind {
	case "groups":
		o.Cohorts = []string{dataset.CohortTGroups}
	case "dicom":
		o.Cohorts, o.DICOM = []string{dataset.CohortTGroups}, true
	case "cards":
		o.Cohorts = []string{dataset.CohortCards}
	case "overviews":
		o.Cohorts = []string{dataset.CohortPathology}
		o.SlideSize = slide
		o.Series.AxialSlices, o.Series.CoronalSlices, o.Series.Size = 1, 1, 16
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	_, err := datasettest.Write(filepath.Clean(out), o)
	return err
}
