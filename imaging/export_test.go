package imaging

import (
	"bytes"
	"image"
)

// SlideImageForTest draws a smooth RGB test slide.
func SlideImageForTest(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := m.PixOffset(x, y)
			m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = uint8(150+x*100/w), uint8(80+y*120/h), uint8(200-(x+y)*60/(w+h)), 255
		}
	}
	return m
}

// DecodePNGFastForTest decodes data on the fast path, its image data
// inflated whole (by libdeflate in a build with the libdeflate tag) or
// streaming.
func DecodePNGFastForTest(data []byte, whole bool) (image.Image, error) {
	mode := inflateStream
	if whole {
		mode = inflateWhole
	}
	return decodePNGFastWith(bytes.NewReader(data), mode)
}
