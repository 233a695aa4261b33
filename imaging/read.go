package imaging

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io/fs"
	"path"
	"strings"
	"sync"
)

// SidecarName is the file beside PNG/JPEG slices that holds SeriesMeta.
const SidecarName = "series.json"

// maxSidecarBytes bounds series.json.
const maxSidecarBytes = 8 << 20

// SliceSource decodes slice i of a series (in SeriesMeta.Slices order) into
// 8-bit grayscale.
type SliceSource interface {
	Slice(ctx context.Context, i int) (*image.Gray, error)
}

// Series is one MRI series: its geometry, slices sorted along the slice
// normal, and its pixels.
type Series struct {
	// Meta has Slices sorted along the normal (SortSlices).
	Meta SeriesMeta
	// Dir names the series in errors (its folder, relative to the dataset).
	Dir string
	// Source decodes the slices.
	Source SliceSource
	// Files are the input files behind each slice, in Meta.Slices order
	// (relative to the dataset root); cache keys hash them.
	Files []string
	// Sidecar is the series.json path ("" for DICOM series).
	Sidecar string
	// Skipped lists the files of a DICOM series folder that are not DICOM
	// slices (other files, a DICOMDIR), by name; hidden files are not
	// listed.
	Skipped []string
	// Tiles, when set, shares resized tiles between the outputs that show
	// the same slice (Series.Tile); nil resizes for every output.
	Tiles *TileCache
}

// Slice decodes slice i, with the series named in any error.
func (s *Series) Slice(ctx context.Context, i int) (*image.Gray, error) {
	if i < 0 || i >= len(s.Meta.Slices) {
		return nil, fmt.Errorf("series %s: slice %d out of range (series has %d slices)", s.Dir, i, len(s.Meta.Slices))
	}
	return s.Source.Slice(ctx, i)
}

// ParseSidecar parses and validates a series.json sidecar: a known
// sequence, an orientation with a normal, positive spacing, at least one
// slice, local file names, unique instances. Slices are returned sorted
// along the normal.
func ParseSidecar(data []byte) (SeriesMeta, error) {
	var m SeriesMeta
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return SeriesMeta{}, fmt.Errorf("parse %s: %w", SidecarName, err)
	}
	if err := ValidateMeta(m); err != nil {
		return SeriesMeta{}, err
	}
	if err := SortSlices(&m); err != nil {
		return SeriesMeta{}, err
	}
	return m, nil
}

// ValidateMeta checks the geometry of a series.
func ValidateMeta(m SeriesMeta) error {
	known := false
	for _, s := range Sequences {
		known = known || s == m.Sequence
	}
	if !known {
		return fmt.Errorf("series: unknown sequence %q (want one of %s)", m.Sequence, strings.Join(Sequences, ", "))
	}
	if _, err := m.Normal(); err != nil {
		return err
	}
	if !(m.PixelSpacing[0] > 0 && m.PixelSpacing[1] > 0) || m.PixelSpacing[0] > 1e3 || m.PixelSpacing[1] > 1e3 {
		return fmt.Errorf("series %s: pixel spacing %v must be two positive numbers of mm", m.Sequence, m.PixelSpacing)
	}
	if m.SliceThickness < 0 || m.SliceThickness > 1e3 {
		return fmt.Errorf("series %s: slice thickness %v mm is out of range", m.Sequence, m.SliceThickness)
	}
	if len(m.Slices) == 0 {
		return fmt.Errorf("series %s: no slices", m.Sequence)
	}
	seen := make(map[int]bool, len(m.Slices))
	for _, s := range m.Slices {
		if !fs.ValidPath(s.File) || s.File == "." || strings.Contains(s.File, "\\") {
			return fmt.Errorf("series %s: slice file %q must be a plain relative path inside the series folder", m.Sequence, s.File)
		}
		if seen[s.Instance] {
			return fmt.Errorf("series %s: instance %d appears twice", m.Sequence, s.Instance)
		}
		seen[s.Instance] = true
		for _, p := range s.Position {
			if p != p || p > 1e6 || p < -1e6 {
				return fmt.Errorf("series %s: slice %s has position %v out of range", m.Sequence, s.File, s.Position)
			}
		}
	}
	return nil
}

// ReadOptions configures the series readers.
type ReadOptions struct {
	Limits Limits
	// External decompresses DICOM transfer syntaxes the Go reader does not
	// decode; nil means none (such files fail with a *MissingToolError).
	External ExternalDecoder
	// Tiles, when set, becomes every series' Tiles, and the series then
	// keep no decoded slices: the tile cache keeps what several outputs
	// reuse, and a slice is decoded again only for a tile made again.
	// Without it, each series decodes a slice once and keeps it for its
	// lifetime.
	Tiles *TileCache
}

// source returns src as a series source: kept decoded when no tile
// cache keeps the tiles instead.
func (opt ReadOptions) source(src SliceSource, n int) SliceSource {
	if opt.Tiles != nil {
		return src
	}
	return newMemo(src, n)
}

// ReadSeries reads the series in folder dir of fsys: a series.json sidecar
// with PNG/JPEG slices, or, without a sidecar, DICOM files. sequence is the
// class the dataset gives; a sidecar naming another class is an error.
func ReadSeries(fsys fs.FS, dir, sequence string, opt ReadOptions) (*Series, error) {
	if !fs.ValidPath(dir) {
		return nil, fmt.Errorf("series %q: path must be relative and stay inside the dataset", dir)
	}
	data, err := readLimited(fsys, path.Join(dir, SidecarName), maxSidecarBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return ReadDICOMSeries(fsys, dir, sequence, opt)
	}
	if err != nil {
		return nil, fmt.Errorf("series %s: %w", dir, err)
	}
	m, err := ParseSidecar(data)
	if err != nil {
		return nil, fmt.Errorf("series %s: %w", dir, err)
	}
	if sequence != "" && m.Sequence != sequence {
		return nil, fmt.Errorf("series %s: %s says sequence %q but the dataset lists it as %q", dir, SidecarName, m.Sequence, sequence)
	}
	s := &Series{Meta: m, Dir: dir, Sidecar: path.Join(dir, SidecarName)}
	for _, sl := range m.Slices {
		s.Files = append(s.Files, path.Join(dir, sl.File))
	}
	s.Source = opt.source(&fileSlices{fsys: fsys, files: s.Files, max: opt.Limits.MaxSlicePixels}, len(m.Slices))
	s.Tiles = opt.Tiles
	return s, nil
}

func readLimited(fsys fs.FS, name string, max int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	if st.Size() > max {
		return nil, fmt.Errorf("%s is %d bytes, over the limit of %d: %w", name, st.Size(), max, ErrTooLarge)
	}
	buf := bytes.NewBuffer(make([]byte, 0, st.Size()+1))
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// maxInputFileBytes bounds any single input file read into memory.
const maxInputFileBytes = 2 << 30

// fileSlices decodes PNG/JPEG slice files.
type fileSlices struct {
	fsys  fs.FS
	files []string
	max   int64
}

func (f *fileSlices) Slice(_ context.Context, i int) (*image.Gray, error) {
	name := f.files[i]
	data, err := readLimited(f.fsys, name, maxInputFileBytes)
	if err != nil {
		return nil, fmt.Errorf("slice %s: %w (is the slice missing? check series.json)", name, err)
	}
	m, err := DecodeImage(data, f.max)
	if err != nil {
		return nil, fmt.Errorf("slice %s: %w", name, err)
	}
	return ToGray8(m), nil
}

// memo decodes each slice once and shares it between the outputs of a
// patient; it is safe for concurrent use.
type memo struct {
	src  SliceSource
	once []sync.Once
	img  []*image.Gray
	errs []error
}

func newMemo(src SliceSource, n int) *memo {
	return &memo{src: src, once: make([]sync.Once, n), img: make([]*image.Gray, n), errs: make([]error, n)}
}

func (m *memo) Slice(ctx context.Context, i int) (*image.Gray, error) {
	m.once[i].Do(func() { m.img[i], m.errs[i] = m.src.Slice(ctx, i) })
	return m.img[i], m.errs[i]
}

// MemorySeries builds a series from slices already in memory (tests,
// synthetic data). The meta's slices are sorted and imgs reordered with
// them; imgs[i] belongs to meta.Slices[i] as given.
func MemorySeries(meta SeriesMeta, imgs []*image.Gray) (*Series, error) {
	if len(imgs) != len(meta.Slices) {
		return nil, fmt.Errorf("series %s: %d images for %d slices", meta.Sequence, len(imgs), len(meta.Slices))
	}
	if err := ValidateMeta(meta); err != nil {
		return nil, err
	}
	byInst := make(map[int]*image.Gray, len(imgs))
	for i, s := range meta.Slices {
		byInst[s.Instance] = imgs[i]
	}
	m := meta
	m.Slices = append([]SliceMeta(nil), meta.Slices...)
	if err := SortSlices(&m); err != nil {
		return nil, err
	}
	mem := make(memSlices, len(imgs))
	for i, s := range m.Slices {
		mem[i] = byInst[s.Instance]
	}
	return &Series{Meta: m, Dir: m.Sequence, Source: mem}, nil
}

type memSlices []*image.Gray

func (m memSlices) Slice(_ context.Context, i int) (*image.Gray, error) { return m[i], nil }
