package imaging

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// DICOM transfer syntaxes the Go reader decodes itself; every other goes
// to the ExternalDecoder (dcmtk, GDCM: decompressorFor).
const (
	syntaxJPEGBaseline = "1.2.840.10008.1.2.4.50" // 8-bit, through image/jpeg
	sopClassDICOMDIR   = "1.2.840.10008.1.3.10"
)

var nativeSyntaxes = map[string]bool{
	dicomfile.ImplicitVRLittleEndian:         true,
	dicomfile.ExplicitVRLittleEndian:         true,
	dicomfile.DeflatedExplicitVRLittleEndian: true,
	dicomfile.ExplicitVRBigEndian:            true,
}

// dicomHeader is what the reader needs from one DICOM file.
type dicomHeader struct {
	syntax                  string
	modality                string
	series, description     string
	seriesNumber            int
	rows, cols              int
	bitsAllocated, bitsStor int
	signed                  bool
	// inverted is MONOCHROME1: the lowest value is shown white.
	inverted         bool
	samples, frames  int
	slope, intercept float64
	window           Window
	orientation      [6]float64
	position         [3]float64
	spacing          [2]float64
	thickness        float64
	instance         int
	frameOfReference string
}

func intOr(f *dicomfile.File, t dicomfile.Tag, def int) int {
	if v, ok := f.Int(t); ok {
		return v
	}
	return def
}

// readDICOMHeader reads and checks the header of a single-frame grayscale
// slice.
func readDICOMHeader(f *dicomfile.File) (dicomHeader, error) {
	h := dicomHeader{slope: 1, syntax: f.Syntax}
	h.modality = f.String(dicomfile.Modality)
	h.series = f.String(dicomfile.SeriesInstanceUID)
	h.description = f.String(dicomfile.SeriesDescription)
	h.seriesNumber = intOr(f, dicomfile.SeriesNumber, 0)
	h.rows = intOr(f, dicomfile.Rows, 0)
	h.cols = intOr(f, dicomfile.Columns, 0)
	h.bitsAllocated = intOr(f, dicomfile.BitsAllocated, 16)
	h.bitsStor = intOr(f, dicomfile.BitsStored, h.bitsAllocated)
	h.signed = intOr(f, dicomfile.PixelRepresentation, 0) == 1
	h.samples = intOr(f, dicomfile.SamplesPerPixel, 1)
	h.frames = intOr(f, dicomfile.NumberOfFrames, 1)
	if v := f.Floats(dicomfile.RescaleSlope); len(v) > 0 && v[0] != 0 {
		h.slope = v[0]
	}
	if v := f.Floats(dicomfile.RescaleIntercept); len(v) > 0 {
		h.intercept = v[0]
	}
	c, w := f.Floats(dicomfile.WindowCenter), f.Floats(dicomfile.WindowWidth)
	if len(c) > 0 && len(w) > 0 && w[0] >= 1 {
		h.window = Window{Center: c[0], Width: w[0]}
	}
	o := f.Floats(dicomfile.ImageOrientationPatient)
	p := f.Floats(dicomfile.ImagePositionPatient)
	sp := f.Floats(dicomfile.PixelSpacing)
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
	if v := f.Floats(dicomfile.SliceThickness); len(v) > 0 {
		h.thickness = v[0]
	}
	h.instance = intOr(f, dicomfile.InstanceNumber, 0)
	h.frameOfReference = f.String(dicomfile.FrameOfReferenceUID)
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
	if hb, ok := f.Int(dicomfile.HighBit); ok && hb != h.bitsStor-1 {
		return h, fmt.Errorf("high bit %d with %d bits stored: only pixels stored in the low bits (high bit %d) are supported", hb, h.bitsStor, h.bitsStor-1)
	}
	switch pi := strings.TrimSpace(f.String(dicomfile.PhotometricInterpretation)); pi {
	case "", "MONOCHROME2":
	case "MONOCHROME1":
		h.inverted = true
	default:
		return h, fmt.Errorf("photometric interpretation %s: only grayscale slices (MONOCHROME1, MONOCHROME2) are supported", pi)
	}
	return h, nil
}

// parseDICOM reads a whole file.
func parseDICOM(data []byte) (*dicomfile.File, error) {
	f, err := dicomfile.Parse(data)
	if errors.Is(err, dicomfile.ErrNotDICOM) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("corrupt or truncated DICOM: %w", err)
	}
	return f, nil
}

// scanDICOMHeader reads the header of the file name, up to its pixel
// data.
func scanDICOMHeader(fsys fs.FS, name string) (*dicomfile.File, error) {
	fh, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	f, err := dicomfile.ScanHeader(io.LimitReader(fh, maxInputFileBytes))
	if errors.Is(err, dicomfile.ErrNotDICOM) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("corrupt or truncated DICOM: %w", err)
	}
	return f, nil
}

// scannedSlice is a slice file's name in its folder and its header.
type scannedSlice struct {
	name string
	h    dicomHeader
}

// groupBySeries groups slices by SeriesInstanceUID, in order of first
// appearance.
func groupBySeries(found []scannedSlice) []*seriesFiles {
	var out []*seriesFiles
	for _, sc := range found {
		i := slices.IndexFunc(out, func(s *seriesFiles) bool { return s.uid == sc.h.series })
		if i < 0 {
			i = len(out)
			out = append(out, &seriesFiles{uid: sc.h.series, description: sc.h.description, number: sc.h.seriesNumber})
		}
		out[i].files = append(out[i].files, sc.name)
	}
	return out
}

// seriesFiles are the files of one SeriesInstanceUID in a folder.
type seriesFiles struct {
	uid, description string
	number           int
	files            []string
}

// describeSeries names the series of a folder for a user choosing one.
func describeSeries(all []*seriesFiles) string {
	parts := make([]string, len(all))
	for i, s := range all {
		uid := s.uid
		if uid == "" {
			uid = "(no SeriesInstanceUID)"
		}
		parts[i] = fmt.Sprintf("%s %q (series number %d, %d files, e.g. %s)", uid, s.description, s.number, len(s.files), s.files[0])
	}
	return strings.Join(parts, "; ")
}

// ReadDICOMSeries reads a folder of single-frame DICOM MR slices: geometry
// from the headers (read up to the pixel data, checked for one series,
// one frame of reference, one orientation and modality MR), pixels
// decoded on demand with rescale and windowing. Files without the DICOM
// preamble are read; files that are not DICOM at all, and a DICOMDIR,
// are skipped and listed in Series.Skipped.
func ReadDICOMSeries(fsys fs.FS, dir, sequence string, opt ReadOptions) (*Series, error) {
	names, err := folderFiles(fsys, dir)
	if err != nil {
		return nil, err
	}
	src := dicomSource{fsys: fsys, dir: dir, name: dir, sequence: sequence, opt: opt, skipOthers: true}
	return src.read(names, "the folder holds", "keep one folder per series (move the others out, or list each in dataset.json with its own sequence)")
}

// ReadDICOMFiles reads one series of single-frame DICOM MR slices listed
// file by file (paths relative to the root of fsys), as a folder is read
// by ReadDICOMSeries, except that every file listed must be a DICOM slice
// of the series: one that is missing or not DICOM is an error naming it.
// The series is named in errors by the folder its files share and their
// number.
func ReadDICOMFiles(fsys fs.FS, files []string, sequence string, opt ReadOptions) (*Series, error) {
	name := ListedSeriesName(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("series %s: no files listed", name)
	}
	for _, f := range files {
		if !fs.ValidPath(f) || f == "." {
			return nil, fmt.Errorf("series %s: file %q must be a relative path inside the dataset", name, f)
		}
	}
	src := dicomSource{fsys: fsys, name: name, sequence: sequence, opt: opt}
	return src.read(files, "its files hold", "list the files of one series only")
}

// ListedSeriesName names a series listed file by file: the folder its
// files share (".", the dataset root, when none) and how many there are.
func ListedSeriesName(files []string) string {
	return fmt.Sprintf("%s (%d listed files)", CommonDir(files), len(files))
}

// CommonDir is the deepest folder the slash-separated files share ("."
// for none).
func CommonDir(files []string) string {
	common := ""
	for i, f := range files {
		d := path.Dir(f)
		if i == 0 {
			common = d
			continue
		}
		for common != "." && d != common && !strings.HasPrefix(d, common+"/") {
			common = path.Dir(common)
		}
	}
	if common == "" {
		return "."
	}
	return common
}

// dicomSource is one DICOM series to read: its files are names relative
// to dir in fsys.
type dicomSource struct {
	fsys      fs.FS
	dir, name string // name names the series in errors
	sequence  string
	opt       ReadOptions
	// skipOthers skips files that are not DICOM, and a DICOMDIR, instead
	// of refusing them.
	skipOthers bool
}

// read scans the headers of names and builds the series; holds and fix
// word the error for files of several series.
func (src dicomSource) read(names []string, holds, fix string) (*Series, error) {
	found, skipped, err := src.scan(names)
	if err != nil {
		return nil, err
	}
	if series := groupBySeries(found); len(series) > 1 {
		return nil, fmt.Errorf("series %s: %s %d DICOM series, and dataset.json lists it as one %s series: %s; %s",
			src.name, holds, len(series), src.sequence, describeSeries(series), fix)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("series %s: no %s and no DICOM files found", src.name, SidecarName)
	}
	meta := SeriesMeta{Sequence: src.sequence}
	for i, sc := range found {
		h := sc.h
		if i == 0 {
			meta.FrameOfReference, meta.Orientation, meta.PixelSpacing, meta.SliceThickness = h.frameOfReference, h.orientation, h.spacing, h.thickness
		} else if err := sameGeometry(h, meta); err != nil {
			return nil, fmt.Errorf("dicom %s: %w", path.Join(src.dir, sc.name), err)
		}
		meta.Slices = append(meta.Slices, SliceMeta{File: sc.name, Instance: h.instance, Position: h.position})
	}
	if err := ValidateMeta(meta); err != nil {
		return nil, fmt.Errorf("series %s: %w", src.name, err)
	}
	if err := SortSlices(&meta); err != nil {
		return nil, fmt.Errorf("series %s: %w", src.name, err)
	}
	s := &Series{Meta: meta, Dir: src.name, Skipped: skipped, Tiles: src.opt.Tiles}
	for _, sl := range meta.Slices {
		s.Files = append(s.Files, path.Join(src.dir, sl.File))
	}
	s.Source = src.opt.source(&dicomSlices{fsys: src.fsys, files: s.Files, ext: src.opt.External}, len(s.Files))
	return s, nil
}

// folderFiles lists the regular, not hidden files of dir by name.
func folderFiles(fsys fs.FS, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("series %s: %w (a series folder holds series.json with PNG/JPEG slices, or DICOM files)", dir, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// scan reads the header of every file: the slices found, and the names
// of the files skipped (not DICOM, or a DICOMDIR, when src.skipOthers).
// A slice of another modality than MR, or over the limit, is an error.
func (src dicomSource) scan(names []string) (found []scannedSlice, skipped []string, err error) {
	for _, n := range names {
		name := path.Join(src.dir, n)
		f, err := scanDICOMHeader(src.fsys, name)
		other := errors.Is(err, dicomfile.ErrNotDICOM) || err == nil && f.String(dicomfile.MediaStorageSOPClassUID) == sopClassDICOMDIR
		switch {
		case other && src.skipOthers:
			skipped = append(skipped, n)
			continue
		case other && err == nil:
			return nil, nil, fmt.Errorf("dicom %s: a DICOMDIR, listed as a slice of series %s", name, src.name)
		case err != nil:
			return nil, nil, fmt.Errorf("dicom %s: %w", name, err)
		}
		h, err := readDICOMHeader(f)
		if err != nil {
			return nil, nil, fmt.Errorf("dicom %s: %w", name, err)
		}
		if h.modality != "" && h.modality != "MR" {
			return nil, nil, fmt.Errorf("dicom %s: modality %s, not MR: dataset.json lists %s as the %s series, and npcorch reads MR series only; point it at the MR series", name, h.modality, src.name, src.sequence)
		}
		if int64(h.rows)*int64(h.cols) > src.opt.Limits.MaxSlicePixels {
			return nil, nil, fmt.Errorf("dicom %s: %dx%d pixels, over the limit of %d: %w", name, h.cols, h.rows, src.opt.Limits.MaxSlicePixels, ErrTooLarge)
		}
		found = append(found, scannedSlice{n, h})
	}
	return found, skipped, nil
}

// sameGeometry checks a slice against the series' frame of reference and
// orientation.
func sameGeometry(h dicomHeader, meta SeriesMeta) error {
	if h.frameOfReference != meta.FrameOfReference {
		return fmt.Errorf("frame of reference %q differs from the series' %q: the folder mixes series", h.frameOfReference, meta.FrameOfReference)
	}
	for i := range h.orientation {
		if math.Abs(h.orientation[i]-meta.Orientation[i]) > 1e-3 {
			return fmt.Errorf("orientation %v differs from the series' %v: the folder mixes series", h.orientation, meta.Orientation)
		}
	}
	return nil
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
// first VOI window, or a percentile window when the file has none
// (PercentileWindow, ApplyWindow). Uncompressed pixel data is read in
// bulk and mapped through a table of every stored value present; JPEG
// baseline is decoded by image/jpeg and the other compressed transfer
// syntaxes that dcmtk or GDCM decompress (JPEG, JPEG-LS, RLE, JPEG 2000)
// by ext and then decoded as uncompressed, so the same pixels give the
// same bytes whatever the transfer syntax. With ext nil such files fail
// with a *MissingToolError (wrapping ErrNeedsTool) naming the program;
// any other transfer syntax is refused with the list of those read.
func DecodeDICOMSlice(ctx context.Context, data []byte, ext ExternalDecoder) (*image.Gray, error) {
	f, err := parseDICOM(data)
	if err != nil {
		return nil, err
	}
	h, err := readDICOMHeader(f)
	if err != nil {
		return nil, err
	}
	if !f.HasPixelData {
		return nil, fmt.Errorf("no PixelData element (7fe0,0010): the file has a header and no image")
	}
	if max := DefaultLimits.MaxSlicePixels; int64(h.rows)*int64(h.cols) > max {
		return nil, fmt.Errorf("%dx%d pixels, over the limit of %d: %w", h.cols, h.rows, max, ErrTooLarge)
	}
	switch {
	case nativeSyntaxes[h.syntax]:
		if f.Pixels.Encapsulated {
			return nil, fmt.Errorf("transfer syntax %s is uncompressed but the pixel data is encapsulated", h.syntax)
		}
		return decodeNative(h, f.Pixels.Native, f.BigEndian)
	case h.syntax == syntaxJPEGBaseline:
		return decodeJPEGBaseline(h, f.Pixels)
	case ext == nil:
		dc, err := decompressorFor(h.syntax)
		if err != nil {
			return nil, err
		}
		return nil, &MissingToolError{h.syntax, dc.tool, dc.pkg}
	}
	return decodeDecompressed(ctx, data, h, ext)
}

// decodeDecompressed has ext decompress the file and decodes the result
// as any uncompressed file.
func decodeDecompressed(ctx context.Context, data []byte, h dicomHeader, ext ExternalDecoder) (*image.Gray, error) {
	native, err := ext.Decompress(ctx, data, h.syntax)
	if err != nil {
		return nil, err
	}
	nf, err := parseDICOM(native)
	if err != nil {
		return nil, fmt.Errorf("decompressed %s: %w", SyntaxName(h.syntax), err)
	}
	nh, err := readDICOMHeader(nf)
	if err != nil {
		return nil, fmt.Errorf("decompressed %s: %w", SyntaxName(h.syntax), err)
	}
	if !nativeSyntaxes[nh.syntax] || !nf.HasPixelData || nf.Pixels.Encapsulated || nh.rows != h.rows || nh.cols != h.cols {
		return nil, fmt.Errorf("decompressing %s gave transfer syntax %s with %dx%d pixels, want uncompressed %dx%d", SyntaxName(h.syntax), nh.syntax, nh.cols, nh.rows, h.cols, h.rows)
	}
	return decodeNative(nh, nf.Pixels.Native, nf.BigEndian)
}

// decodeJPEGBaseline decodes an 8-bit baseline JPEG frame (its fragments
// joined) and maps its values as decodeNative maps stored values.
func decodeJPEGBaseline(h dicomHeader, px *dicomfile.Pixels) (*image.Gray, error) {
	if len(px.Fragments) == 0 {
		return nil, fmt.Errorf("JPEG baseline pixel data has no fragment")
	}
	frame := bytes.Join(px.Fragments, nil)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(frame))
	if err != nil {
		return nil, fmt.Errorf("decode JPEG frame: %w", err)
	}
	if cfg.Width != h.cols || cfg.Height != h.rows {
		return nil, fmt.Errorf("JPEG frame is %dx%d, header says %dx%d", cfg.Width, cfg.Height, h.cols, h.rows)
	}
	m, err := jpeg.Decode(bytes.NewReader(frame))
	if err != nil {
		return nil, fmt.Errorf("decode JPEG frame: %w", err)
	}
	g, ok := m.(*image.Gray)
	if !ok || g.Rect.Dx() != h.cols || g.Rect.Dy() != h.rows {
		return nil, fmt.Errorf("JPEG frame is %T %dx%d, header says grayscale %dx%d", m, m.Bounds().Dx(), m.Bounds().Dy(), h.cols, h.rows)
	}
	h.bitsAllocated, h.bitsStor = 8, min(h.bitsStor, 8)
	return decodeNative(h, ToGray8(g).Pix, false)
}

// SyntaxName names the compressed transfer syntaxes met in MRI.
func SyntaxName(uid string) string {
	switch uid {
	case "1.2.840.10008.1.2.4.50":
		return "JPEG baseline"
	case "1.2.840.10008.1.2.4.51":
		return "JPEG extended"
	case "1.2.840.10008.1.2.4.57", "1.2.840.10008.1.2.4.70":
		return "JPEG lossless"
	case "1.2.840.10008.1.2.4.80", "1.2.840.10008.1.2.4.81":
		return "JPEG-LS"
	case "1.2.840.10008.1.2.4.90", "1.2.840.10008.1.2.4.91":
		return "JPEG 2000"
	case "1.2.840.10008.1.2.5":
		return "RLE"
	}
	return "a compressed transfer syntax"
}
