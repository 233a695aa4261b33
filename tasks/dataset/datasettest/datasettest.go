// Package datasettest writes small, deterministic raw datasets (the format
// of package dataset) for tests and benchmarks of prep: per patient the
// six series of package imagingtest (PNG slices with sidecars, or DICOM),
// two structure findings with boxes on the card sequences, coverage
// ranges, T and N stages and an optional pathology slide.
//
// It owns nothing but the files it writes into the folder it is given; it
// is not a simulator of anatomy (that is `npcorch synth`).
package datasettest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/imagingtest"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// Options shapes a generated dataset.
type Options struct {
	// Series shapes every patient's series (imagingtest's defaults apply).
	Series imagingtest.Options
	// Patients is the number of patients (default 1).
	Patients int
	// SlideSize is the pathology slide's width (height is 2/3 of it); 0
	// writes no slide.
	SlideSize int
	// Cohorts of every patient (default: all six).
	Cohorts []string
	// DICOM writes every series as a folder of DICOM files
	// (imagingtest.DICOMSeries) instead of PNG slices with a series.json
	// sidecar.
	DICOM bool
}

func (o *Options) defaults() {
	if o.Patients <= 0 {
		o.Patients = 1
	}
	if o.Series.AxialSlices <= 0 {
		o.Series.AxialSlices = 24
	}
	if o.Series.CoronalSlices <= 0 {
		o.Series.CoronalSlices = 16
	}
	if o.Cohorts == nil {
		o.Cohorts = []string{dataset.CohortPathology, dataset.CohortSequence, dataset.CohortCards,
			dataset.CohortTGroups, dataset.CohortNGroups, dataset.CohortCarePath}
	}
}

// FrameOfReference is the frame of reference of every generated series.
const FrameOfReference = imagingtest.FrameOfReference

// Write generates a dataset under dir (dataset.json at its root) and
// returns it. Patients are P001, P002...; patient k's series live in
// Pk/mri/<sequence>, its slide in Pk/slide.png.
func Write(dir string, o Options) (*dataset.Raw, error) {
	o.defaults()
	raw := &dataset.Raw{Format: dataset.RawFormat, Name: "imagingtest", Seed: 1}
	for p := 0; p < o.Patients; p++ {
		pat, err := writePatient(dir, o, p)
		if err != nil {
			return nil, err
		}
		raw.Patients = append(raw.Patients, pat)
	}
	data, _ := json.MarshalIndent(raw, "", " ")
	if err := os.WriteFile(filepath.Join(dir, dataset.RawName), data, 0o644); err != nil {
		return nil, err
	}
	return raw, nil
}

func writePatient(dir string, o Options, p int) (dataset.Patient, error) {
	pid := fmt.Sprintf("P%03d", p+1)
	pat := dataset.Patient{ID: pid, Cohorts: o.Cohorts, TStage: "T3", NStage: "N1",
		Coverage: dataset.Coverage{T: dataset.Range{From: -45, To: 0}, N: dataset.Range{From: -60, To: 9}}}
	for si, sp := range imagingtest.Plans(o.Series) {
		rel := filepath.ToSlash(filepath.Join(pid, "mri", sp.Sequence))
		if _, err := imagingtest.WriteSeries(dir, rel, o.Series, p, si, o.DICOM); err != nil {
			return pat, err
		}
		pat.Series = append(pat.Series, dataset.SeriesRef{Sequence: sp.Sequence, Dir: rel})
	}
	pat.Structures = findings(o.Series)
	if o.SlideSize > 0 {
		rel := filepath.ToSlash(filepath.Join(pid, "slide.png"))
		if err := imagingtest.WritePNG(filepath.Join(dir, rel), imagingtest.SlideImage(o.SlideSize, o.SlideSize*2/3, p)); err != nil {
			return pat, err
		}
		pat.Pathology = &dataset.Slide{File: rel, Label: p % 2}
	}
	return pat, nil
}

// findings are a patient's two findings, parapharyngeal space left (not
// invaded) and right (invaded), each with five boxes per card sequence
// around the middle slice, largest on it.
func findings(so imagingtest.Options) []dataset.Finding {
	var out []dataset.Finding
	for fi, side := range []string{"left", "right"} {
		f := dataset.Finding{Structure: "parapharyngeal_space", Side: side, Invasion: fi}
		for _, seq := range imaging.CardSequences {
			n := so.AxialSlices
			if seq == imaging.SeqT1CCorFS {
				n = so.CoronalSlices
			}
			centre := n/2 + fi
			for d := -2; d <= 2; d++ {
				half := 30 - 8*abs(d)
				x0 := 60 + 80*fi
				f.Boxes = append(f.Boxes, dataset.Box{Sequence: seq, Instance: centre + d + 1,
					X0: x0, Y0: 100, X1: x0 + 2*half, Y1: 100 + half})
			}
		}
		out = append(out, f)
	}
	return out
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
