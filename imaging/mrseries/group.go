package mrseries

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// group gathers files by patient, study and series UID, checks what prep
// needs of each series and classifies it.
func group(files []foundFile) []*Series {
	type key struct{ patient, study, series string }
	byKey := map[key][]foundFile{}
	var keys []key
	for _, f := range files {
		k := key{f.h.PatientID, f.h.StudyUID, f.h.SeriesUID}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], f)
	}
	out := make([]*Series, 0, len(keys))
	for _, k := range keys {
		out = append(out, newSeries(byKey[k]))
	}
	slices.SortFunc(out, func(a, b *Series) int {
		return cmp.Or(strings.Compare(a.PatientID, b.PatientID), strings.Compare(a.StudyDate, b.StudyDate),
			strings.Compare(a.StudyUID, b.StudyUID), cmp.Compare(a.Number, b.Number), strings.Compare(a.UID, b.UID))
	})
	return out
}

// newSeries builds the series of files (one patient, study and UID).
func newSeries(files []foundFile) *Series {
	slices.SortFunc(files, func(a, b foundFile) int { return strings.Compare(a.path, b.path) })
	h := files[0].h
	s := &Series{PatientID: h.PatientID, PatientName: h.PatientName, StudyUID: h.StudyUID, StudyDate: h.StudyDate,
		StudyDesc: h.StudyDescription, UID: h.SeriesUID, Number: h.SeriesNumber, Modality: h.Modality,
		Description: h.Acquisition.Description, Acquisition: h.Acquisition, Rows: h.Rows, Cols: h.Cols,
		FrameOfReference: h.FrameOfReference}
	var noGeometry, otherFoR, colour int
	instances := map[int]int{}
	positions := map[[3]float64]int{}
	for _, f := range files {
		s.Files = append(s.Files, f.path)
		fh := f.h
		if fh.Orientation == nil || fh.Position == nil {
			noGeometry++
		} else {
			if h.Orientation != nil && !sameOrientation(fh.Orientation, h.Orientation) {
				s.Acquisition.MixedOrientations = true
			}
			positions[[3]float64(fh.Position)]++
		}
		if fh.FrameOfReference != h.FrameOfReference {
			otherFoR++
		}
		if fh.Samples != 1 {
			colour++
		}
		instances[fh.InstanceNumber]++
		if !slices.Contains(s.Syntaxes, fh.Syntax) {
			s.Syntaxes = append(s.Syntaxes, fh.Syntax)
		}
	}
	slices.Sort(s.Syntaxes)
	if s.UID == "" {
		s.Problems = append(s.Problems, "no SeriesInstanceUID")
	}
	if noGeometry > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("%d of %d files lack ImagePositionPatient or ImageOrientationPatient, which order the slices", noGeometry, len(files)))
	}
	if otherFoR > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("%d of %d files have another FrameOfReferenceUID than the first", otherFoR, len(files)))
	}
	if colour > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("%d of %d files are not grayscale (SamplesPerPixel ≠ 1)", colour, len(files)))
	}
	if s.Acquisition.MixedOrientations {
		s.Problems = append(s.Problems, "the slices lie in several orientations")
	}
	if n := repeated(instances); n > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("%d files repeat another file's InstanceNumber", n))
	}
	if n := repeated(positions); n > 0 {
		s.Problems = append(s.Problems, fmt.Sprintf("%d files repeat another file's slice position (several echoes or repeats in one series?)", n))
	}
	s.Class = Classify(s.Acquisition)
	return s
}

// repeated counts the values beyond the first of each key.
func repeated[K comparable](counts map[K]int) int {
	n := 0
	for _, c := range counts {
		n += c - 1
	}
	return n
}

// sameOrientation compares orientations within 1e-3, as prep does.
func sameOrientation(a, b []float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-3 {
			return false
		}
	}
	return true
}
