//go:build openslide

package imaging

/*
#cgo pkg-config: openslide
#include <stdlib.h>
#include <stdint.h>
#include <openslide.h>
*/
import "C"

import (
	"fmt"
	"image"
	"image/color"
	"strconv"
	"unsafe"
)

// OpenSlideAvailable reports whether this build reads whole-slide images
// through OpenSlide (build tag openslide).
const OpenSlideAvailable = true

// openSlide is a whole-slide image opened with libopenslide.
type openSlide struct {
	osr  *C.openslide_t
	path string
}

// OpenWholeSlide opens a whole-slide image (SVS, NDPI, pyramidal TIFF...)
// with OpenSlide. ok is false, with no error, when OpenSlide does not
// recognise the format (the caller then reads it as a plain image).
func OpenWholeSlide(path string) (s Slide, ok bool, err error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	if C.openslide_detect_vendor(cpath) == nil {
		return nil, false, nil
	}
	osr := C.openslide_open(cpath)
	if osr == nil {
		return nil, false, nil
	}
	if msg := C.openslide_get_error(osr); msg != nil {
		e := C.GoString(msg)
		C.openslide_close(osr)
		return nil, true, fmt.Errorf("openslide %s: %s", path, e)
	}
	return &openSlide{osr: osr, path: path}, true, nil
}

func (s *openSlide) LevelDimensions() []image.Point {
	n := int(C.openslide_get_level_count(s.osr))
	out := make([]image.Point, 0, max(n, 0))
	for i := 0; i < n; i++ {
		var w, h C.int64_t
		C.openslide_get_level_dimensions(s.osr, C.int32_t(i), &w, &h)
		out = append(out, image.Pt(int(w), int(h)))
	}
	return out
}

func (s *openSlide) LevelDownsamples() []float64 {
	n := int(C.openslide_get_level_count(s.osr))
	out := make([]float64, 0, max(n, 0))
	for i := 0; i < n; i++ {
		out = append(out, float64(C.openslide_get_level_downsample(s.osr, C.int32_t(i))))
	}
	return out
}

// maxLevelPixels bounds a level read whole (1 GiB of RGBA).
const maxLevelPixels = 1 << 28

func (s *openSlide) ReadLevel(level int) (image.Image, error) {
	dims := s.LevelDimensions()
	if level < 0 || level >= len(dims) {
		return nil, fmt.Errorf("openslide %s: no level %d", s.path, level)
	}
	w, h := dims[level].X, dims[level].Y
	if w <= 0 || h <= 0 || int64(w)*int64(h) > maxLevelPixels {
		return nil, fmt.Errorf("openslide %s: level %d is %dx%d, too large to read whole: %w", s.path, level, w, h, ErrTooLarge)
	}
	buf := make([]uint32, w*h)
	C.openslide_read_region(s.osr, (*C.uint32_t)(unsafe.Pointer(&buf[0])), 0, 0, C.int32_t(level), C.int64_t(w), C.int64_t(h))
	if msg := C.openslide_get_error(s.osr); msg != nil {
		return nil, fmt.Errorf("openslide %s: read level %d: %s", s.path, level, C.GoString(msg))
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i, v := range buf {
		a := uint8(v >> 24)
		r, g, b := uint8(v>>16), uint8(v>>8), uint8(v)
		switch a {
		case 0:
			r, g, b = 0, 0, 0
		case 255:
		default: // un-premultiply as openslide-python's argb2rgba does
			r = uint8(255 * uint32(r) / uint32(a))
			g = uint8(255 * uint32(g) / uint32(a))
			b = uint8(255 * uint32(b) / uint32(a))
		}
		out.Pix[4*i], out.Pix[4*i+1], out.Pix[4*i+2], out.Pix[4*i+3] = r, g, b, a
	}
	return out, nil
}

func (s *openSlide) Background() color.RGBA {
	bg := color.RGBA{255, 255, 255, 255}
	key := C.CString("openslide.background-color")
	defer C.free(unsafe.Pointer(key))
	if v := C.openslide_get_property_value(s.osr, key); v != nil {
		if n, err := strconv.ParseUint(C.GoString(v), 16, 32); err == nil {
			bg = color.RGBA{uint8(n >> 16), uint8(n >> 8), uint8(n), 255}
		}
	}
	return bg
}

func (s *openSlide) Close() error {
	if s.osr != nil {
		C.openslide_close(s.osr)
		s.osr = nil
	}
	return nil
}
