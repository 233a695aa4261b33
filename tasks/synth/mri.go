package synth

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// Slice geometry of the phantom series. Every series has 5 mm slices with
// 5 mm spacing and a square field of view of fieldOfView mm.
const (
	fieldOfView   = 230.0
	sliceSpacing  = 5.0
	axialSlices   = 26  // z from 42.5 mm above the nasopharynx down to -82.5 mm
	coronalSlices = 23  // y from -62.5 mm (anterior) to 47.5 mm (posterior)
	sagittalSlice = 15  // x from -35 mm (right) to 35 mm (left)
	t2Offset      = 1.5 // T2_Ax slices lie this far above the T1 ones
)

// The series of each plane, in the order they are written; the first axial
// one is the reference for coverage.
var (
	axialSequences    = [...]string{imaging.SeqT1Ax, imaging.SeqT2Ax, imaging.SeqT1CAx}
	coronalSequences  = [...]string{imaging.SeqT1Cor, imaging.SeqT1CCorFS}
	sagittalSequences = [...]string{imaging.SeqT1Sag, imaging.SeqT1CSag}
	// cardSequences are the four sequences a structure card shows (the
	// rows of the 4×3 card); findings carry boxes on these.
	cardSequences = [...]string{imaging.SeqT1Ax, imaging.SeqT2Ax, imaging.SeqT1CAx, imaging.SeqT1CCorFS}
)

// The three planes.
const (
	axial    = "axial"
	coronal  = "coronal"
	sagittal = "sagittal"
)

// orientation returns the orientation of a plane: the row cosines, then the
// column cosines (DICOM ImageOrientationPatient).
func orientation(plane string) [6]float64 {
	switch plane {
	case coronal:
		return [6]float64{1, 0, 0, 0, 0, -1}
	case sagittal:
		return [6]float64{0, 1, 0, 0, 0, -1}
	default:
		return [6]float64{1, 0, 0, 0, 1, 0}
	}
}

// axesOf returns the axes of an axis-aligned orientation.
func axesOf(o [6]float64) axes {
	var a axes
	for i := range 3 {
		if o[i] != 0 {
			a.row, a.rowSign = i, o[i]
		}
		if o[3+i] != 0 {
			a.col, a.colSign = i, o[3+i]
		}
	}
	a.normal = 3 - a.row - a.col
	return a
}

// contrastOf returns the weighting of a sequence.
func contrastOf(seq string) contrast {
	switch seq {
	case imaging.SeqT2Ax:
		return contrastT2
	case imaging.SeqT1CAx, imaging.SeqT1CSag:
		return contrastT1C
	case imaging.SeqT1CCorFS:
		return contrastT1CFS
	default:
		return contrastT1
	}
}

// seriesDir returns the folder name of a sequence ("T1+C_COR_FS" →
// "t1c_cor_fs").
func seriesDir(seq string) string {
	return strings.ToLower(strings.ReplaceAll(seq, "+", ""))
}

// frameUID returns a deterministic DICOM UID under the 2.25 (UUID-derived)
// root for one frame of reference.
func frameUID(seed int64, id, plane string) string {
	return fmt.Sprintf("2.25.%d", hash64(fmt.Sprint(seed), id, plane))
}

// planSeries lays out the seven series of p. Each plane's slice grid is
// shifted by up to 2 mm per patient, so that slices cut the anatomy at
// different levels.
func (p *patient) planSeries(opt Options, r *rand.Rand) {
	delta := fieldOfView / float64(opt.ImageSize)
	half := fieldOfView/2 - delta/2
	o := p.origin
	shift := func() float64 { return r.Float64()*4 - 2 }
	sixteen := imaging.Sequences[r.IntN(len(imaging.Sequences))]

	add := func(seq, plane string, pos func(k int) [3]float64, n int, instance func(k int) int, listing func(n int) []int) {
		s := series{
			dir:      p.id + "/mri/" + seriesDir(seq),
			contrast: contrastOf(seq),
			bits16:   seq == sixteen,
			axes:     axesOf(orientation(plane)),
			slices:   make([]sliceAt, n),
		}
		for k := range n {
			in := instance(k)
			q := pos(k)
			for i := range q {
				q[i] = round2(q[i])
			}
			s.slices[in-1] = sliceAt{instance: in, file: fmt.Sprintf("%04d.png", in), pos: q}
		}
		s.meta = imaging.SeriesMeta{
			Sequence:         seq,
			FrameOfReference: frameUID(opt.Seed, p.id, plane),
			Orientation:      orientation(plane),
			PixelSpacing:     [2]float64{delta, delta},
			SliceThickness:   sliceSpacing,
		}
		for _, in := range listing(n) {
			sl := s.slices[in-1]
			s.meta.Slices = append(s.meta.Slices, imaging.SliceMeta{File: sl.file, Instance: sl.instance, Position: sl.pos})
		}
		p.series = append(p.series, s)
	}
	inOrder := func(n int) []int {
		l := make([]int, n)
		for i := range l {
			l[i] = i + 1
		}
		return l
	}
	// Interleaved acquisition: odd instances, then even ones.
	interleaved := func(n int) []int {
		var l []int
		for in := 1; in <= n; in += 2 {
			l = append(l, in)
		}
		for in := 2; in <= n; in += 2 {
			l = append(l, in)
		}
		return l
	}
	first := func(k int) int { return k + 1 }

	top := o[2] + 42.5 + shift()
	for _, seq := range axialSequences {
		z0, instance, listing := top, first, inOrder
		if seq == imaging.SeqT2Ax {
			// T2 sits slightly higher, is numbered from the feet up and
			// listed in acquisition order, to exercise slice matching.
			z0 += t2Offset
			instance = func(k int) int { return axialSlices - k }
			listing = interleaved
		}
		add(seq, axial, func(k int) [3]float64 {
			return [3]float64{-half, 5 - half, z0 - sliceSpacing*float64(k)}
		}, axialSlices, instance, listing)
	}
	front := o[1] - 62.5 + shift()
	for _, seq := range coronalSequences {
		add(seq, coronal, func(k int) [3]float64 {
			return [3]float64{-half, front + sliceSpacing*float64(k), o[2] - 20 + half}
		}, coronalSlices, first, inOrder)
	}
	right := o[0] - 35 + shift()
	for _, seq := range sagittalSequences {
		add(seq, sagittal, func(k int) [3]float64 {
			return [3]float64{right + sliceSpacing*float64(k), 5 - half, o[2] - 20 + half}
		}, sagittalSlice, first, inOrder)
	}
	// List the series in the option order of the sequence task (A..G).
	slices.SortStableFunc(p.series, func(a, b series) int {
		return slices.Index(imaging.Sequences, a.meta.Sequence) - slices.Index(imaging.Sequences, b.meta.Sequence)
	})
}

// span returns the pixels [i0, i1) along one image axis whose area meets
// the interval [lo, hi] of patient coordinate (mm), for an image axis
// starting at origin with step delta·sign and n pixels.
func span(lo, hi, origin, sign, delta float64, n int) (int, int) {
	a, b := (lo-origin)/(sign*delta), (hi-origin)/(sign*delta)
	if a > b {
		a, b = b, a
	}
	i0 := int(math.Floor(a + 0.5))
	i1 := int(math.Floor(b+0.5)) + 1
	return max(i0, 0), min(i1, n)
}

// section returns the extent of e's cross-section with the slice plane
// through pos, along the row and column axes, and whether they meet.
func section(e ellipsoid, a axes, pos [3]float64) (ulo, uhi, vlo, vhi float64, ok bool) {
	w := pos[a.normal]
	if w < e.lo[a.normal] || w > e.hi[a.normal] {
		return 0, 0, 0, 0, false
	}
	tw := sq((w - e.c[a.normal]) / e.r[a.normal])
	if tw >= 1 {
		return 0, 0, 0, 0, false
	}
	s := math.Sqrt(1 - tw)
	ulo, uhi = max(e.c[a.row]-e.r[a.row]*s, e.lo[a.row]), min(e.c[a.row]+e.r[a.row]*s, e.hi[a.row])
	vlo, vhi = max(e.c[a.col]-e.r[a.col]*s, e.lo[a.col]), min(e.c[a.col]+e.r[a.col]*s, e.hi[a.col])
	return ulo, uhi, vlo, vhi, ulo <= uhi && vlo <= vhi
}

// boxOn returns the pixel box of e's cross-section on one slice.
func boxOn(e ellipsoid, a axes, pos [3]float64, delta float64, n int) (dataset.Box, bool) {
	ulo, uhi, vlo, vhi, ok := section(e, a, pos)
	if !ok {
		return dataset.Box{}, false
	}
	x0, x1 := span(ulo, uhi, pos[a.row], a.rowSign, delta, n)
	y0, y1 := span(vlo, vhi, pos[a.col], a.colSign, delta, n)
	if x1 <= x0 || y1 <= y0 {
		return dataset.Box{}, false
	}
	return dataset.Box{X0: x0, Y0: y0, X1: x1, Y1: y1}, true
}

// planBoxes boxes every finding on every slice of the four card sequences
// that cuts its structure. When two slices tie for the largest box, the one
// farther from the structure's centre loses a pixel column, so that the
// card builder's max-area choice is always well-defined.
func (p *patient) planBoxes(size int) error {
	delta := fieldOfView / float64(size)
	for fi := range p.findings {
		f := &p.findings[fi]
		f.boxes = nil
		for _, seq := range cardSequences {
			s, ok := p.seriesOf(seq)
			if !ok {
				return fmt.Errorf("internal error: series %s was not planned", seq)
			}
			var boxes []dataset.Box
			var dist []float64
			for _, sl := range s.slices {
				b, ok := boxOn(f.outline, s.axes, sl.pos, delta, size)
				if !ok {
					continue
				}
				b.Sequence, b.Instance = seq, sl.instance
				boxes = append(boxes, b)
				dist = append(dist, math.Abs(sl.pos[s.axes.normal]-f.outline.c[s.axes.normal]))
			}
			if len(boxes) < 3 {
				return fmt.Errorf("internal error: %s %s crosses %d slices of %s; the phantom layout must give at least 3", f.structure, f.side, len(boxes), seq)
			}
			best := 0
			for i, b := range boxes {
				if b.Area() > boxes[best].Area() || (b.Area() == boxes[best].Area() && dist[i] < dist[best]) {
					best = i
				}
			}
			for i := range boxes {
				if i != best && boxes[i].Area() == boxes[best].Area() {
					if boxes[i].X1-boxes[i].X0 > 1 {
						boxes[i].X1--
					} else {
						boxes[i].Y1--
					}
				}
			}
			f.boxes = append(f.boxes, boxes...)
		}
	}
	return nil
}

// seriesOf returns p's series of a sequence.
func (p *patient) seriesOf(seq string) (*series, bool) {
	for i := range p.series {
		if p.series[i].meta.Sequence == seq {
			return &p.series[i], true
		}
	}
	return nil, false
}

// paint fills labels (size×size, row-major) with the tissue of each pixel
// of the slice through pos: every solid in order, later ones on top.
func paint(labels []tissue, solids []ellipsoid, a axes, pos [3]float64, delta float64, size int) {
	clear(labels)
	for _, e := range solids {
		ulo, uhi, vlo, vhi, ok := section(e, a, pos)
		if !ok {
			continue
		}
		tw := sq((pos[a.normal] - e.c[a.normal]) / e.r[a.normal])
		i0, i1 := span(ulo, uhi, pos[a.row], a.rowSign, delta, size)
		j0, j1 := span(vlo, vhi, pos[a.col], a.colSign, delta, size)
		for j := j0; j < j1; j++ {
			v := pos[a.col] + a.colSign*delta*float64(j)
			if v < e.lo[a.col] || v > e.hi[a.col] {
				continue
			}
			tv := tw + sq((v-e.c[a.col])/e.r[a.col])
			if tv > 1 {
				continue
			}
			row := labels[j*size : (j+1)*size]
			for i := i0; i < i1; i++ {
				u := pos[a.row] + a.rowSign*delta*float64(i)
				if u < e.lo[a.row] || u > e.hi[a.row] {
					continue
				}
				if tv+sq((u-e.c[a.row])/e.r[a.row]) <= 1 {
					row[i] = e.t
				}
			}
		}
	}
}

// noiseTable holds Gaussian noise samples (σ = 3 grey levels, in 1/16
// steps), drawn once per dataset from its seed: indexing it with random
// bits is much cheaper per pixel than drawing a normal variate.
type noiseTable [1 << 16]int16

// newNoiseTable draws the samples of a noise table.
func newNoiseTable(r *rand.Rand) *noiseTable {
	var t noiseTable
	for i := range t {
		t[i] = int16(math.Round(r.NormFloat64() * 3 * 16))
	}
	return &t
}

// renderer draws the images of one dataset; its workers share it.
type renderer struct {
	size  int
	noise *noiseTable
	png   pngEncoder
}

// renderSlice draws one slice of s as a PNG: the tissue map under the
// series' contrast plus Gaussian noise in tissue (air stays black), 8-bit,
// or 12-bit values in a 16-bit image when s.bits16 is set. The noise of
// each slice comes from its own seeded source.
func (rd *renderer) renderSlice(p *patient, s *series, sl sliceAt, noise *rand.Rand) ([]byte, error) {
	size := rd.size
	delta := fieldOfView / float64(size)
	labels := make([]tissue, size*size)
	paint(labels, p.solids, s.axes, sl.pos, delta, size)
	var lv [numTissues]int32
	for t, v := range levels(s.contrast) {
		lv[t] = int32(v) * 16
	}
	var img image.Image
	// Each 64-bit draw indexes the noise table four times.
	var bits uint64
	left := 0
	sample := func(t tissue) int32 {
		if t == air {
			return 0
		}
		if left == 0 {
			bits, left = noise.Uint64(), 4
		}
		k := uint16(bits)
		bits, left = bits>>16, left-1
		return lv[t] + int32(rd.noise[k])
	}
	if s.bits16 {
		g := image.NewGray16(image.Rect(0, 0, size, size))
		for i, t := range labels {
			v := uint16(min(max(sample(t), 0), 4095))
			g.Pix[2*i], g.Pix[2*i+1] = uint8(v>>8), uint8(v)
		}
		img = g
	} else {
		g := image.NewGray(image.Rect(0, 0, size, size))
		for i, t := range labels {
			g.Pix[i] = uint8(min(max((sample(t)+8)>>4, 0), 255))
		}
		img = g
	}
	b, err := rd.png.encode(img)
	if err != nil {
		return nil, fmt.Errorf("encode %s/%s: %w", s.dir, sl.file, err)
	}
	return b, nil
}
