package imaging

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"io/fs"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/suyashkumar/dicom"
	"github.com/suyashkumar/dicom/pkg/frame"
	"github.com/suyashkumar/dicom/pkg/tag"
)

// Transfer syntaxes the Go reader decodes itself.
var nativeSyntaxes = map[string]bool{
	"1.2.840.10008.1.2":      true, // implicit VR little endian
	"1.2.840.10008.1.2.1":    true, // explicit VR little endian
	"1.2.840.10008.1.2.2":    true, // explicit VR big endian
	"1.2.840.10008.1.2.4.50": true, // JPEG baseline (8-bit, via image/jpeg)
}

// dicomHeader is what the reader needs from one DICOM file.
type dicomHeader struct {
	syntax                  string
	rows, cols              int
	bitsAllocated, bitsStor int
	signed                  bool
	samples, frames         int
	slope, intercept        float64
	window                  Window
	orientation             [6]float64
	position                [3]float64
	spacing                 [2]float64
	thickness               float64
	instance                int
	frameOfReference        string
}

// parseDICOM runs the DICOM parser and turns its panics on hostile input
// into errors.
func parseDICOM(data []byte, skipPixels bool) (ds dicom.Dataset, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt DICOM (parser failed: %v)", r)
		}
	}()
	var opts []dicom.ParseOption
	if skipPixels {
		opts = append(opts, dicom.SkipPixelData())
	}
	ds, err = dicom.Parse(bytes.NewReader(data), int64(len(data)), nil, opts...)
	if err != nil {
		return ds, fmt.Errorf("corrupt or truncated DICOM: %w", err)
	}
	return ds, nil
}

func elemStrings(ds *dicom.Dataset, t tag.Tag) []string {
	e, err := ds.FindElementByTag(t)
	if err != nil || e.Value == nil {
		return nil
	}
	switch v := e.Value.GetValue().(type) {
	case []string:
		out := make([]string, 0, len(v))
		for _, s := range v {
			// Multi-valued strings may arrive as one backslash-joined value.
			for _, p := range strings.Split(s, "\\") {
				out = append(out, strings.TrimSpace(strings.Trim(p, "\x00")))
			}
		}
		return out
	case []int:
		out := make([]string, len(v))
		for i, n := range v {
			out[i] = strconv.Itoa(n)
		}
		return out
	case []float64:
		out := make([]string, len(v))
		for i, f := range v {
			out[i] = strconv.FormatFloat(f, 'g', -1, 64)
		}
		return out
	}
	return nil
}

func elemFloats(ds *dicom.Dataset, t tag.Tag) []float64 {
	var out []float64
	for _, s := range elemStrings(ds, t) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		out = append(out, f)
	}
	return out
}

func elemInt(ds *dicom.Dataset, t tag.Tag, def int) int {
	f := elemFloats(ds, t)
	if len(f) == 0 || f[0] < math.MinInt32 || f[0] > math.MaxInt32 {
		return def
	}
	return int(f[0])
}

func readDICOMHeader(ds *dicom.Dataset) (dicomHeader, error) {
	h := dicomHeader{slope: 1, samples: 1, frames: 1}
	if s := elemStrings(ds, tag.TransferSyntaxUID); len(s) > 0 {
		h.syntax = s[0]
	}
	h.rows = elemInt(ds, tag.Rows, 0)
	h.cols = elemInt(ds, tag.Columns, 0)
	h.bitsAllocated = elemInt(ds, tag.BitsAllocated, 16)
	h.bitsStor = elemInt(ds, tag.BitsStored, h.bitsAllocated)
	h.signed = elemInt(ds, tag.PixelRepresentation, 0) == 1
	h.samples = elemInt(ds, tag.SamplesPerPixel, 1)
	h.frames = elemInt(ds, tag.NumberOfFrames, 1)
	if f := elemFloats(ds, tag.RescaleSlope); len(f) > 0 && f[0] != 0 {
		h.slope = f[0]
	}
	if f := elemFloats(ds, tag.RescaleIntercept); len(f) > 0 {
		h.intercept = f[0]
	}
	c, w := elemFloats(ds, tag.WindowCenter), elemFloats(ds, tag.WindowWidth)
	if len(c) > 0 && len(w) > 0 && w[0] >= 1 {
		h.window = Window{Center: c[0], Width: w[0]}
	}
	o := elemFloats(ds, tag.ImageOrientationPatient)
	p := elemFloats(ds, tag.ImagePositionPatient)
	sp := elemFloats(ds, tag.PixelSpacing)
	if len(o) != 6 || len(p) != 3 {
		return h, fmt.Errorf("missing ImageOrientationPatient or ImagePositionPatient: npcorch needs both to order and match slices")
	}
	copy(h.orientation[:], o)
	copy(h.position[:], p)
	if len(sp) == 2 {
		copy(h.spacing[:], sp)
	} else {
		h.spacing = [2]float64{1, 1}
	}
	if f := elemFloats(ds, tag.SliceThickness); len(f) > 0 {
		h.thickness = f[0]
	}
	h.instance = elemInt(ds, tag.InstanceNumber, 0)
	if s := elemStrings(ds, tag.FrameOfReferenceUID); len(s) > 0 {
		h.frameOfReference = s[0]
	}
	if h.rows <= 0 || h.cols <= 0 {
		return h, fmt.Errorf("rows %d × columns %d: not an image", h.rows, h.cols)
	}
	if h.samples != 1 {
		return h, fmt.Errorf("%d samples per pixel: only grayscale MRI slices are supported", h.samples)
	}
	if h.frames != 1 {
		return h, fmt.Errorf("%d frames: only single-frame slices are supported (split enhanced multi-frame files with dcmtk first)", h.frames)
	}
	if h.bitsAllocated != 8 && h.bitsAllocated != 16 {
		return h, fmt.Errorf("%d bits allocated: want 8 or 16", h.bitsAllocated)
	}
	if h.bitsStor <= 0 || h.bitsStor > h.bitsAllocated {
		h.bitsStor = h.bitsAllocated
	}
	return h, nil
}

// ReadDICOMSeries reads a folder of single-frame DICOM MR slices: geometry
// from the headers (checked for one frame of reference and one
// orientation), pixels decoded on demand with rescale and windowing.
func ReadDICOMSeries(fsys fs.FS, dir, sequence string, opt ReadOptions) (*Series, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("series %s: %w (a series folder holds series.json with PNG/JPEG slices, or DICOM files)", dir, err)
	}
	meta := SeriesMeta{Sequence: sequence}
	var files []string
	var first bool = true
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		name := path.Join(dir, e.Name())
		data, err := readLimited(fsys, name, maxInputFileBytes)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", dir, err)
		}
		if !looksLikeDICOM(data) {
			continue
		}
		ds, err := parseDICOM(data, true)
		if err != nil {
			return nil, fmt.Errorf("dicom %s: %w", name, err)
		}
		h, err := readDICOMHeader(&ds)
		if err != nil {
			return nil, fmt.Errorf("dicom %s: %w", name, err)
		}
		if int64(h.rows)*int64(h.cols) > opt.Limits.MaxSlicePixels {
			return nil, fmt.Errorf("dicom %s: %dx%d pixels, over the limit of %d: %w", name, h.cols, h.rows, opt.Limits.MaxSlicePixels, ErrTooLarge)
		}
		if first {
			first = false
			meta.FrameOfReference, meta.Orientation, meta.PixelSpacing, meta.SliceThickness = h.frameOfReference, h.orientation, h.spacing, h.thickness
		} else {
			if h.frameOfReference != meta.FrameOfReference {
				return nil, fmt.Errorf("dicom %s: frame of reference %q differs from the series' %q: the folder mixes series", name, h.frameOfReference, meta.FrameOfReference)
			}
			for i := range h.orientation {
				if math.Abs(h.orientation[i]-meta.Orientation[i]) > 1e-3 {
					return nil, fmt.Errorf("dicom %s: orientation %v differs from the series' %v: the folder mixes series", name, h.orientation, meta.Orientation)
				}
			}
		}
		files = append(files, name)
		meta.Slices = append(meta.Slices, SliceMeta{File: e.Name(), Instance: h.instance, Position: h.position})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("series %s: no %s and no DICOM files found", dir, SidecarName)
	}
	if err := ValidateMeta(meta); err != nil {
		return nil, fmt.Errorf("series %s: %w", dir, err)
	}
	byFile := make(map[string]int, len(files))
	for i, s := range meta.Slices {
		byFile[s.File] = i
	}
	if err := SortSlices(&meta); err != nil {
		return nil, fmt.Errorf("series %s: %w", dir, err)
	}
	s := &Series{Meta: meta, Dir: dir}
	for _, sl := range meta.Slices {
		s.Files = append(s.Files, files[byFile[sl.File]])
	}
	src := &dicomSlices{fsys: fsys, files: s.Files, ext: opt.External}
	s.Source = opt.source(src, len(s.Files))
	s.Tiles = opt.Tiles
	return s, nil
}

func looksLikeDICOM(data []byte) bool {
	return len(data) >= 132 && string(data[128:132]) == "DICM"
}

// dicomSlices decodes DICOM slices on demand.
type dicomSlices struct {
	fsys  fs.FS
	files []string
	ext   ExternalDecoder
}

func (d *dicomSlices) Slice(ctx context.Context, i int) (*image.Gray, error) {
	name := d.files[i]
	data, err := readLimited(d.fsys, name, maxInputFileBytes)
	if err != nil {
		return nil, fmt.Errorf("dicom %s: %w", name, err)
	}
	g, err := DecodeDICOMSlice(ctx, data, d.ext)
	if err != nil {
		return nil, fmt.Errorf("dicom %s: %w", name, err)
	}
	return g, nil
}

// DecodeDICOMSlice decodes one single-frame grayscale DICOM slice to 8
// bits: stored values (signed when PixelRepresentation is 1, masked to
// BitsStored) go through RescaleSlope/Intercept, then through the file's
// first VOI window, or a percentile window when the file has none.
// Transfer syntaxes the Go reader cannot decode go to ext (dcmtk); with ext
// nil they fail with an error that says to install dcmtk.
func DecodeDICOMSlice(ctx context.Context, data []byte, ext ExternalDecoder) (*image.Gray, error) {
	if !looksLikeDICOM(data) {
		return nil, fmt.Errorf("not a DICOM file (no DICM preamble)")
	}
	hds, err := parseDICOM(data, true)
	if err != nil {
		return nil, err
	}
	h, err := readDICOMHeader(&hds)
	if err != nil {
		return nil, err
	}
	if int64(h.rows)*int64(h.cols)*int64(h.bitsAllocated/8) > int64(len(data)) && nativeSyntaxes[h.syntax] && h.syntax != "1.2.840.10008.1.2.4.50" {
		return nil, fmt.Errorf("header declares %dx%d pixels but the file has only %d bytes: truncated", h.cols, h.rows, len(data))
	}
	if !nativeSyntaxes[h.syntax] {
		if ext == nil {
			return nil, fmt.Errorf("transfer syntax %s is not decodable by the Go reader; install dcmtk (Debian: apt-get install dcmtk) so npcorch can use dcmj2pnm/dcml2pnm", h.syntax)
		}
		m, err := ext.DecodeDICOM(ctx, data, h.syntax, h.window)
		if err != nil {
			return nil, err
		}
		return ToGray8(m), nil
	}
	ds, err := parseDICOM(data, false)
	if err != nil {
		return nil, err
	}
	pe, err := ds.FindElementByTag(tag.PixelData)
	if err != nil {
		return nil, fmt.Errorf("no pixel data")
	}
	info, ok := pe.Value.GetValue().(dicom.PixelDataInfo)
	if !ok || len(info.Frames) == 0 || info.Frames[0] == nil {
		return nil, fmt.Errorf("no readable pixel frame")
	}
	f := info.Frames[0]
	if f.Encapsulated {
		m, err := safeFrameImage(f)
		if err != nil {
			return nil, fmt.Errorf("decode JPEG frame: %w", err)
		}
		return ToGray8(m), nil
	}
	nf, err := f.GetNativeFrame()
	if err != nil {
		return nil, fmt.Errorf("pixel frame: %w", err)
	}
	if nf.Rows() != h.rows || nf.Cols() != h.cols || nf.SamplesPerPixel() != 1 {
		return nil, fmt.Errorf("pixel frame is %dx%dx%d, header says %dx%dx1", nf.Cols(), nf.Rows(), nf.SamplesPerPixel(), h.cols, h.rows)
	}
	n := h.rows * h.cols
	vals := make([]float64, n)
	mask := uint32(1)<<uint(h.bitsStor) - 1
	signBit := uint32(1) << uint(h.bitsStor-1)
	conv := func(u uint32) float64 {
		u &= mask
		v := int64(u)
		if h.signed && u&signBit != 0 {
			v -= int64(mask) + 1
		}
		return float64(v)*h.slope + h.intercept
	}
	switch raw := nf.RawDataSlice().(type) {
	case []uint16:
		if len(raw) < n {
			return nil, fmt.Errorf("pixel data has %d values, want %d", len(raw), n)
		}
		for i := 0; i < n; i++ {
			vals[i] = conv(uint32(raw[i]))
		}
	case []uint8:
		if len(raw) < n {
			return nil, fmt.Errorf("pixel data has %d values, want %d", len(raw), n)
		}
		for i := 0; i < n; i++ {
			vals[i] = conv(uint32(raw[i]))
		}
	default:
		return nil, fmt.Errorf("unsupported pixel data type %T", raw)
	}
	win := h.window
	if win.Width == 0 {
		win = PercentileWindow(vals)
	}
	return ApplyWindow(vals, h.cols, h.rows, win), nil
}

func safeFrameImage(f *frame.Frame) (m image.Image, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("corrupt frame: %v", r)
		}
	}()
	return f.GetImage()
}
