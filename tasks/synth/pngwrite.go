package synth

import (
	"bytes"
	"image"
	"sync"

	"github.com/npcorch/npcorch/imaging"
)

// pngEncoder writes synth's lossless PNGs through imaging.PNGEncoder,
// npcorch's one PNG writer (github.com/klauspost/compress zlib at
// imaging.PNGLevel), with every row unfiltered: on noisy phantoms and flat
// palettes that is as small as adaptive filtering and several times
// faster. MRI slices are *image.Gray or *image.Gray16; slides are drawn as
// *image.Paletted and written as 8-bit RGB, as scanners write them. The
// zero value is ready to use and safe for concurrent use; the output is
// deterministic.
type pngEncoder struct {
	once      sync.Once
	gray, rgb imaging.PNGEncoder
}

func (e *pngEncoder) init() {
	e.once.Do(func() {
		e.gray.Unfiltered = true
		e.rgb.Unfiltered, e.rgb.Truecolor = true, true
	})
}

// encode returns img as PNG bytes: grayscale for Gray and Gray16, indexed
// colour for Paletted.
func (e *pngEncoder) encode(img image.Image) ([]byte, error) {
	e.init()
	var buf bytes.Buffer
	if err := e.gray.Encode(&buf, img); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeRGB returns a paletted image as a truecolour (8-bit RGB) PNG.
func (e *pngEncoder) encodeRGB(m *image.Paletted) ([]byte, error) {
	e.init()
	var buf bytes.Buffer
	if err := e.rgb.Encode(&buf, m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
