package imaging

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // slice and slide decoders
	_ "image/png"
	"math"
	"slices"

	_ "golang.org/x/image/tiff"
)

// Limits bounds the images a reader accepts; they are checked from the
// file header before any pixel is decoded.
type Limits struct {
	// MaxSlicePixels bounds one MRI slice (width × height).
	MaxSlicePixels int64
	// MaxSlidePixels bounds a plain (non-pyramidal) slide image.
	MaxSlidePixels int64
}

// DefaultLimits accepts MRI slices up to 4096×4096 and plain slide images
// up to 20,000×20,000 (a 30,000×30,000 PNG is refused before decoding).
var DefaultLimits = Limits{MaxSlicePixels: 4096 * 4096, MaxSlidePixels: 20000 * 20000}

// ErrTooLarge is wrapped by the readers when a header declares an image
// larger than the limit.
var ErrTooLarge = errors.New("image too large")

// CheckHeader reads only the header of a PNG, JPEG or TIFF image and fails
// when it cannot be parsed or declares more than maxPixels pixels.
func CheckHeader(data []byte, maxPixels int64) (image.Config, string, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return cfg, format, fmt.Errorf("not a readable PNG, JPEG or TIFF header: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return cfg, format, fmt.Errorf("%s header declares an empty %dx%d image", format, cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return cfg, format, fmt.Errorf("%s header declares %dx%d pixels, over the limit of %d pixels: %w", format, cfg.Width, cfg.Height, maxPixels, ErrTooLarge)
	}
	return cfg, format, nil
}

// DecodeImage checks the header against maxPixels, then decodes (PNG
// through DecodePNG).
func DecodeImage(data []byte, maxPixels int64) (image.Image, error) {
	_, format, err := CheckHeader(data, maxPixels)
	if err != nil {
		return nil, err
	}
	var m image.Image
	if format == "png" {
		m, err = DecodePNG(data)
	} else {
		m, _, err = image.Decode(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("decode: %w (the file is truncated or corrupt)", err)
	}
	return m, nil
}

// ToGray8 turns a decoded slice into 8-bit grayscale: 8-bit gray is used as
// it is, 16-bit gray is windowed by percentiles (PercentileWindow), any
// other colour model is converted with image/color's luminance.
func ToGray8(m image.Image) *image.Gray {
	b := m.Bounds()
	switch im := m.(type) {
	case *image.Gray:
		if b.Min == (image.Point{}) {
			return im
		}
		out := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
		for y := 0; y < b.Dy(); y++ {
			copy(out.Pix[y*out.Stride:], im.Pix[im.PixOffset(b.Min.X, b.Min.Y+y):im.PixOffset(b.Max.X, b.Min.Y+y)])
		}
		return out
	case *image.Gray16:
		vals := make([]float64, 0, b.Dx()*b.Dy())
		for y := b.Min.Y; y < b.Max.Y; y++ {
			o := im.PixOffset(b.Min.X, y)
			for x := 0; x < b.Dx(); x++ {
				vals = append(vals, float64(uint16(im.Pix[o+2*x])<<8|uint16(im.Pix[o+2*x+1])))
			}
		}
		return ApplyWindow(vals, b.Dx(), b.Dy(), PercentileWindow(vals))
	}
	out := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			out.Pix[y*out.Stride+x] = color.GrayModel.Convert(m.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
		}
	}
	return out
}

// Window is a linear VOI window in the units of the values it maps.
type Window struct {
	// Lo maps to 0 and Hi to 255 (percentile windows), when Width is 0.
	Lo, Hi float64
	// Center and Width, when Width > 0, are a DICOM window (PS3.3 C.11.2.1.2).
	Center, Width float64
}

// Lower and upper percentiles of a percentile window.
const (
	PercentileLow  = 0.005
	PercentileHigh = 0.995
)

// PercentileWindow returns the window from the 0.5th to the 99.5th
// percentile of vals: with s sorted and N values, Lo = s[floor(0.005(N-1))]
// and Hi = s[ceil(0.995(N-1))].
func PercentileWindow(vals []float64) Window {
	if len(vals) == 0 {
		return Window{Lo: 0, Hi: 1}
	}
	s := append([]float64(nil), vals...)
	slices.Sort(s)
	n := float64(len(s) - 1)
	lo := s[int(math.Floor(PercentileLow*n))]
	hi := s[int(math.Ceil(PercentileHigh*n))]
	return Window{Lo: lo, Hi: hi}
}

// ApplyWindow maps w×h values to 8 bits through win; the result is
// floor(v' + 0.5) clamped to 0..255.
func ApplyWindow(vals []float64, w, h int, win Window) *image.Gray {
	out := image.NewGray(image.Rect(0, 0, w, h))
	m := newWindowMap(win)
	for i, v := range vals {
		out.Pix[i] = m.byte(v)
	}
	return out
}

func clampByte(v float64) uint8 {
	if !(v > 0) {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}
