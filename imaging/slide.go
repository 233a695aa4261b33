package imaging

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// ErrNoOpenSlide is returned for whole-slide formats in a build without
// OpenSlide.
var ErrNoOpenSlide = errors.New("built without OpenSlide; rebuild with -tags openslide (Debian: apt-get install libopenslide-dev)")

// wholeSlideOnly are extensions only OpenSlide reads.
var wholeSlideOnly = map[string]bool{".svs": true, ".ndpi": true, ".mrxs": true, ".scn": true, ".vms": true, ".vmu": true, ".bif": true, ".svslide": true}

// ReadSlide opens the slide file rel (a path inside fsys, whose folder on
// disk is rootDir): through OpenSlide when the build has it and the file
// is a whole-slide format, else as a plain PNG/JPEG/TIFF image, refused
// from its header when larger than lim.MaxSlidePixels.
func ReadSlide(fsys fs.FS, rootDir, rel string, lim Limits) (Slide, error) {
	if !fs.ValidPath(rel) {
		return nil, fmt.Errorf("slide %q: path must be relative and stay inside the dataset", rel)
	}
	ext := strings.ToLower(path.Ext(rel))
	if OpenSlideAvailable && rootDir != "" {
		// Open through fsys first: it refuses symlinks leaving the root.
		f, err := fsys.Open(rel)
		if err != nil {
			return nil, fmt.Errorf("slide %s: %w", rel, err)
		}
		f.Close()
		s, ok, err := OpenWholeSlide(filepath.Join(rootDir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("slide %s: %w", rel, err)
		}
		if ok {
			return s, nil
		}
	}
	if wholeSlideOnly[ext] {
		if OpenSlideAvailable && rootDir != "" {
			return nil, fmt.Errorf("slide %s: OpenSlide does not recognise it as a whole-slide image (not a slide, or damaged)", rel)
		}
		return nil, fmt.Errorf("slide %s: %w", rel, ErrNoOpenSlide)
	}
	m, err := decodeSlideFile(fsys, rel, ext, lim.MaxSlidePixels)
	if err != nil {
		if (ext == ".tif" || ext == ".tiff") && !OpenSlideAvailable && !errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("slide %s: %w; if it is a pyramidal whole-slide TIFF: %w", rel, err, ErrNoOpenSlide)
		}
		return nil, fmt.Errorf("slide %s: %w", rel, err)
	}
	return ImageSlide{Image: SlideImage(m)}, nil
}

// headerPrefix is how much of a PNG or JPEG file the header check reads.
const headerPrefix = 1 << 20

// openChecked opens the regular file rel and checks its header against
// maxPixels before anything is decoded; the reader continues from the
// file's start. The caller closes f.
func openChecked(fsys fs.FS, rel string, maxPixels int64) (f fs.File, br *bufio.Reader, format string, err error) {
	f, err = fsys.Open(rel)
	if err != nil {
		return nil, nil, "", err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, "", fmt.Errorf("%s is not a regular file", rel)
	}
	br = bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(headerPrefix)
	if _, format, err = CheckHeader(head, maxPixels); err != nil {
		f.Close()
		return nil, nil, "", err
	}
	return f, br, format, nil
}

// decodeSlideFile checks the header, then decodes. PNG and JPEG are
// decoded streaming from the file, so the compressed bytes are never held
// in memory beside the pixels; TIFF (whose directory may sit at the end)
// is read whole.
func decodeSlideFile(fsys fs.FS, rel, ext string, maxPixels int64) (image.Image, error) {
	if ext != ".png" && ext != ".jpg" && ext != ".jpeg" {
		data, err := readLimited(fsys, rel, maxInputFileBytes)
		if err != nil {
			return nil, err
		}
		return DecodeImage(data, maxPixels)
	}
	f, br, format, err := openChecked(fsys, rel, maxPixels)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m image.Image
	if format == "png" {
		// The first decode reads on from the header; should the fast path
		// fail, image/png reads the file again from its start.
		first := io.NopCloser(br)
		m, err = decodePNG(func() (io.ReadCloser, error) {
			if r := first; r != nil {
				first = nil
				return r, nil
			}
			return fsys.Open(rel)
		})
	} else {
		m, _, err = image.Decode(br)
	}
	if err != nil {
		return nil, fmt.Errorf("decode: %w (the file is truncated or corrupt)", err)
	}
	return m, nil
}

// ReadOverview renders the overview of the slide file rel, longest side
// at most size px: the result of Overview(ReadSlide(...), size), bit for
// bit. A plain PNG slide of the kinds DecodePNG's fast path takes (8-bit
// gray, RGB or RGBA) is shrunk while it is decoded, a row at a time, so
// its full-size pixels are never held in memory (a 4000×2667 slide: 11 MB
// instead of 54 MB). Any other slide, or a PNG that path cannot decode, is
// read with ReadSlide, whose errors then stand.
func ReadOverview(fsys fs.FS, rootDir, rel string, lim Limits, size int) (*image.RGBA, error) {
	if size < 1 {
		return nil, fmt.Errorf("slide %s: overview size %d px: want at least 1", rel, size)
	}
	if fs.ValidPath(rel) && strings.ToLower(path.Ext(rel)) == ".png" {
		if m, err := streamPNGOverview(fsys, rel, lim.MaxSlidePixels, size); err == nil {
			return m, nil
		} else if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("slide %s: %w", rel, err)
		}
	}
	s, err := ReadSlide(fsys, rootDir, rel, lim)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	m, err := Overview(s, size)
	if err != nil {
		return nil, fmt.Errorf("slide %s: %w", rel, err)
	}
	return m, nil
}

// streamPNGOverview is ReadOverview's streaming path: it checks the header
// against maxPixels, then feeds the decoded rows to a thumbnailer: RGB as
// it is, gray and RGBA as opaque RGBA on ImageSlide's white background.
func streamPNGOverview(fsys fs.FS, rel string, maxPixels int64, size int) (*image.RGBA, error) {
	f, br, _, err := openChecked(fsys, rel, maxPixels)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bg := ImageSlide{}.Background()
	var t *thumbnailer
	err = decodePNGRows(br, func(h fastPNG) func(y int, row []byte) {
		if h.ctype == pngTruecolor {
			t = newThumbnailer(h.width, h.height, size, size, 3)
			return func(_ int, row []byte) { t.row(row) }
		}
		t = newThumbnailer(h.width, h.height, size, size, 4)
		rgba := make([]byte, 4*h.width)
		return func(_ int, row []byte) {
			switch h.ctype {
			case pngGray:
				for x, v := range row[:h.width] {
					o := rgba[4*x : 4*x+4 : 4*x+4]
					o[0], o[1], o[2], o[3] = v, v, v, 0xff
				}
			default:
				compositeRow(rgba, row, bg)
			}
			t.row(rgba)
		}
	})
	if err != nil {
		return nil, err
	}
	return t.result(), nil
}
