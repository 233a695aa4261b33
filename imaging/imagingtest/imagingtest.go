// Package imagingtest writes small, deterministic MRI series and slides
// for tests and benchmarks of package imaging and imaging/prep: axial
// T1/T2/T1+C, coronal T1/T1+C FS and sagittal series of synthetic slices,
// as PNG slices with series.json sidecars or as DICOM files, and H&E-like
// slide images.
//
// It owns nothing but the files it writes into the folder it is given. It
// knows no dataset format (a raw dataset around these series is written by
// tasks/dataset/datasettest) and is not a simulator of anatomy (that is
// `npcorch synth`).
package imagingtest

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"

	"github.com/npcorch/npcorch/imaging"
)

// Options shapes the generated series.
type Options struct {
	// AxialSlices and CoronalSlices per series (defaults 24 and 16).
	AxialSlices, CoronalSlices int
	// Size is the slice side in pixels (default 256).
	Size int
	// SixteenBit writes 16-bit slices instead of 8-bit.
	SixteenBit bool
}

func (o *Options) defaults() {
	if o.AxialSlices <= 0 {
		o.AxialSlices = 24
	}
	if o.CoronalSlices <= 0 {
		o.CoronalSlices = 16
	}
	if o.Size <= 0 {
		o.Size = 256
	}
}

// Geometry of the generated series.
var (
	AxialOrientation    = [6]float64{1, 0, 0, 0, 1, 0}  // normal +z
	CoronalOrientation  = [6]float64{1, 0, 0, 0, 0, -1} // normal +y
	SagittalOrientation = [6]float64{0, 1, 0, 0, 0, -1} // normal −x
)

// AxialThickness and CoronalThickness are the slice thicknesses, mm; axial
// slices sit at z = −60 + 3k, coronal at y = −40 + 4k.
const (
	AxialThickness   = 3.0
	CoronalThickness = 4.0
	FrameOfReference = "1.2.826.0.1.3680043.8.498.1"
)

// T2Shift is how far the T2 axial slices sit from the T1 ones, mm (less
// than half the thickness, so every T1 slice still has a T2 partner).
const T2Shift = 0.6

// SeriesPlan describes one generated series.
type SeriesPlan struct {
	Sequence    string
	Orientation [6]float64
	Thickness   float64
	// Position of slice k.
	Position func(k int) [3]float64
	Slices   int
}

// Plans returns the six series of a generated patient.
func Plans(o Options) []SeriesPlan {
	o.defaults()
	ax := func(shift float64) func(int) [3]float64 {
		return func(k int) [3]float64 { return [3]float64{-100, -100, -60 + AxialThickness*float64(k) + shift} }
	}
	co := func(k int) [3]float64 { return [3]float64{-100, -40 + CoronalThickness*float64(k), 60} }
	sa := func(k int) [3]float64 { return [3]float64{30 - 4*float64(k), -100, 60} }
	return []SeriesPlan{
		{imaging.SeqT1Ax, AxialOrientation, AxialThickness, ax(0), o.AxialSlices},
		{imaging.SeqT2Ax, AxialOrientation, AxialThickness, ax(T2Shift), o.AxialSlices},
		{imaging.SeqT1CAx, AxialOrientation, AxialThickness, ax(0), o.AxialSlices},
		{imaging.SeqT1Cor, CoronalOrientation, CoronalThickness, co, o.CoronalSlices},
		{imaging.SeqT1CCorFS, CoronalOrientation, CoronalThickness, co, o.CoronalSlices},
		{imaging.SeqT1CSag, SagittalOrientation, 4, sa, o.CoronalSlices},
	}
}

// Slice draws slice k of a sequence: a disc whose texture depends on the
// sequence, the slice and the patient, on black, with a bright marker
// square whose column encodes k.
func Slice(seqIndex, k, patient, size int, sixteen bool) image.Image {
	g := image.NewGray(image.Rect(0, 0, size, size))
	g16 := image.NewGray16(image.Rect(0, 0, size, size))
	c := float64(size) / 2
	rad := float64(size) * 0.42
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			dx, dy := float64(x)-c, float64(y)-c
			v := 0
			if dx*dx+dy*dy < rad*rad {
				v = 60 + (x*3+y*5+k*17+seqIndex*40+patient*11)%150 + int(40*math.Sin(float64(x+y)/9))
			}
			mx := 10 + (k*7)%(size-30)
			if x >= mx && x < mx+8 && y >= 8 && y < 16 {
				v = 250
			}
			if v < 0 {
				v = 0
			}
			if v > 255 {
				v = 255
			}
			g.Pix[y*g.Stride+x] = uint8(v)
			g16.SetGray16(x, y, color.Gray16{Y: uint16(v*200 + (x+y)%97)})
		}
	}
	if sixteen {
		return g16
	}
	return g
}

// WriteSeries writes series si (an index into Plans) of patient p into
// the folder root/rel: PNG slices with a series.json sidecar listing them
// in a shuffled order (readers sort), or, with dicom, DICOM files
// (DICOMSeries). It returns the sidecar's metadata (for DICOM: without
// slices).
func WriteSeries(root, rel string, o Options, p, si int, dicom bool) (imaging.SeriesMeta, error) {
	o.defaults()
	sp := Plans(o)[si]
	dir := filepath.Join(root, filepath.FromSlash(rel))
	meta := imaging.SeriesMeta{Sequence: sp.Sequence, FrameOfReference: FrameOfReference,
		Orientation: sp.Orientation, PixelSpacing: [2]float64{0.9, 0.9}, SliceThickness: sp.Thickness}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return meta, err
	}
	if dicom {
		for k, sl := range DICOMSeries(o, p, si) {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("IM%04d", k+1)), sl.Encode(), 0o644); err != nil {
				return meta, err
			}
		}
		return meta, nil
	}
	for k := 0; k < sp.Slices; k++ {
		name := fmt.Sprintf("s%03d.png", k+1)
		if err := WritePNG(filepath.Join(dir, name), Slice(si, k, p, o.Size, o.SixteenBit)); err != nil {
			return meta, err
		}
		meta.Slices = append(meta.Slices, imaging.SliceMeta{File: name, Instance: k + 1, Position: sp.Position(k)})
	}
	// Shuffle the listing order deterministically: readers sort.
	for i := range meta.Slices {
		j := (i*7 + 3) % len(meta.Slices)
		meta.Slices[i], meta.Slices[j] = meta.Slices[j], meta.Slices[i]
	}
	data, _ := json.MarshalIndent(meta, "", " ")
	return meta, os.WriteFile(filepath.Join(dir, imaging.SidecarName), data, 0o644)
}

// SlideImage draws an H&E-like RGB test slide.
func SlideImage(w, h, seed int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := (x*x/7 + y*3 + seed*29 + (x*y)%131) % 256
			i := m.PixOffset(x, y)
			m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = uint8(200+v%56), uint8(90+v%120), uint8(160+v%90), 255
		}
	}
	return m
}

// WritePNG writes m to the file name as a PNG (best speed).
func WritePNG(name string, m image.Image) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(f, m); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
