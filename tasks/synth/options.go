package synth

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// Options says what to generate. DefaultOptions gives the default dataset;
// zero sizes and worker counts take the defaults noted, while patient
// counts are taken as given.
type Options struct {
	// Out is the folder to create; it must not exist or be empty, unless
	// Overwrite is set and it holds a dataset.
	Out string
	// Seed decides every label and pixel; 0 is a valid seed.
	Seed int64
	// Patients is the number of L3 patients P01.. (0..99; default 8).
	Patients int
	// CarePath is the number of CarePath patients C01.. (0..99; default 4).
	CarePath int
	// Guideline and Application are the numbers of L1 guideline questions
	// G001.. and L2 vignettes A001.. (0..200; defaults 30 and 24).
	Guideline, Application int
	// Planning is the number of L4 patient groups CP01.., one to three
	// questions each (0..99; default 12).
	Planning int
	// Longitudinal is the number of L5 trajectories L01.., one to five
	// checkpoints each in the paper's proportions (0..99; default 12).
	Longitudinal int
	// Consultations is the number of O1 consultation cases O01.. (0..99;
	// default 2), two questions each.
	Consultations int
	// ImageSize is the width and height of an MRI slice in pixels (default
	// 256, 64..1024); the field of view stays 230 mm.
	ImageSize int
	// SlideWidth and SlideHeight are the pathology slide's size in pixels
	// (default 2000×1500, 200..8000 each).
	SlideWidth, SlideHeight int
	// Workers is the number of images drawn at once (default GOMAXPROCS).
	Workers int
	// Overwrite replaces an existing dataset in Out (a folder holding a
	// dataset.json); any other non-empty folder is refused.
	Overwrite bool
	// Structures is the anatomical panel (default configs.DefaultStructures).
	Structures *configs.Structures
}

// DefaultOptions returns the options of the default dataset in out.
func DefaultOptions(out string) Options {
	return Options{Out: out, Seed: 1, Patients: 8, CarePath: 4, Guideline: 30, Application: 24, Planning: 12, Longitudinal: 12,
		Consultations: 2, ImageSize: 256, SlideWidth: 2000, SlideHeight: 1500}
}

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	def := DefaultOptions(o.Out)
	setDefault := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setDefault(&o.ImageSize, def.ImageSize)
	setDefault(&o.SlideWidth, def.SlideWidth)
	setDefault(&o.SlideHeight, def.SlideHeight)
	setDefault(&o.Workers, runtime.GOMAXPROCS(0))
	if o.Structures == nil {
		o.Structures = configs.DefaultStructures()
	}
	if strings.TrimSpace(o.Out) == "" {
		return o, errors.New("no output folder given; pass --out DIR")
	}
	for _, c := range []struct {
		name      string
		v, lo, hi int
	}{
		{"patients", o.Patients, 0, 99},
		{"carepath patients", o.CarePath, 0, 99},
		{"guideline questions", o.Guideline, 0, 200},
		{"application vignettes", o.Application, 0, 200},
		{"planning patient groups", o.Planning, 0, 99},
		{"longitudinal trajectories", o.Longitudinal, 0, 99},
		{"consultations", o.Consultations, 0, 99},
		{"image size", o.ImageSize, 64, 1024},
		{"slide width", o.SlideWidth, 200, 8000},
		{"slide height", o.SlideHeight, 200, 8000},
		{"workers", o.Workers, 1, 256},
	} {
		if c.v < c.lo || c.v > c.hi {
			return o, fmt.Errorf("%s is %d; choose %d..%d", c.name, c.v, c.lo, c.hi)
		}
	}
	if o.Patients+o.CarePath+o.textItems() == 0 {
		return o, errors.New("nothing asked for; set patients, carepath patients or a text level's items to at least 1")
	}
	return o, nil
}

// textItems counts the text levels' items asked for.
func (o Options) textItems() int { return o.Guideline + o.Application + o.Planning + o.Longitudinal }
