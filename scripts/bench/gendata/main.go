// Command gendata writes the benchmark inputs of scripts/bench/run.sh: a
// raw dataset made by package imagingtest for one kind of output, and the
// 7×13 caption font (golang.org/x/image/font/basicfont) as a PNG atlas so
// that prep_python.py draws captions with the same glyphs.
//
// Usage: go run ./scripts/bench/gendata -out DIR -kind groups|cards|overviews -patients N
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
)

func main() {
	out := flag.String("out", "", "output folder")
	kind := flag.String("kind", "groups", "groups, cards or overviews")
	patients := flag.Int("patients", 4, "number of patients")
	slide := flag.Int("slide", 4000, "slide width for overviews, px")
	font := flag.String("font", "", "also write the caption font atlas PNG here")
	flag.Parse()
	if err := run(*out, *kind, *patients, *slide, *font); err != nil {
		fmt.Fprintln(os.Stderr, "gendata:", err)
		os.Exit(1)
	}
}

func run(out, kind string, patients, slide int, font string) error {
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
	o := imagingtest.Options{Patients: patients}
	switch kind {
	case "groups":
		o.Cohorts = []string{dataset.CohortTGroups}
	case "cards":
		o.Cohorts = []string{dataset.CohortCards}
	case "overviews":
		o.Cohorts = []string{dataset.CohortPathology}
		o.SlideSize = slide
		o.AxialSlices, o.CoronalSlices, o.Size = 1, 1, 16
	default:
		return fmt.Errorf("unknown kind %q", kind)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	_, err := imagingtest.Write(filepath.Clean(out), o)
	return err
}
