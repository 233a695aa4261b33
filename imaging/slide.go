package imaging

import (
	"bufio"
	"errors"
	"fmt"
	"image"
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
	f, err := fsys.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", rel)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(headerPrefix)
	if _, _, err := CheckHeader(head, maxPixels); err != nil {
		return nil, err
	}
	m, _, err := image.Decode(br)
	if err != nil {
		return nil, fmt.Errorf("decode: %w (the file is truncated or corrupt)", err)
	}
	return m, nil
}
