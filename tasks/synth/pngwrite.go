package synth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"sync"

	"github.com/klauspost/compress/zlib"
)

// pngEncoder writes lossless PNGs of the image types synth draws
// (*image.Gray, *image.Gray16, *image.Paletted) several times faster than
// image/png: every row uses filter type None, which suits noisy phantoms
// and flat palettes as well as the adaptive filters do, and the IDAT stream
// is compressed by github.com/klauspost/compress's zlib at BestSpeed
// (image/png offers no way to choose the compressor). Any PNG decoder reads
// the result; tests decode it with image/png. It keeps a pool of zlib
// writers and is safe for concurrent use.
type pngEncoder struct {
	writers sync.Pool // of *zlib.Writer
}

// pngSignature starts every PNG file.
const pngSignature = "\x89PNG\r\n\x1a\n"

// PNG colour types (PNG specification, section 11.2.2).
const (
	pngGreyscale = 0
	pngTruecolor = 2
	pngIndexed   = 3
)

// encode returns img as PNG bytes: greyscale for Gray and Gray16, indexed
// colour for Paletted.
func (e *pngEncoder) encode(img image.Image) ([]byte, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	switch m := img.(type) {
	case *image.Gray:
		return e.write(w, h, 8, pngGreyscale, nil, func(y int) []byte { return m.Pix[y*m.Stride : y*m.Stride+w] })
	case *image.Gray16:
		// Gray16 holds big-endian samples, as PNG does.
		return e.write(w, h, 16, pngGreyscale, nil, func(y int) []byte { return m.Pix[y*m.Stride : y*m.Stride+2*w] })
	case *image.Paletted:
		if len(m.Palette) == 0 || len(m.Palette) > 256 {
			return nil, fmt.Errorf("png: palette of %d colours; want 1..256", len(m.Palette))
		}
		var plte []byte
		for _, c := range m.Palette {
			r, g, bl, _ := c.RGBA()
			plte = append(plte, byte(r>>8), byte(g>>8), byte(bl>>8))
		}
		return e.write(w, h, 8, pngIndexed, plte, func(y int) []byte { return m.Pix[y*m.Stride : y*m.Stride+w] })
	}
	return nil, fmt.Errorf("png: cannot write a %T; draw into *image.Gray, *image.Gray16 or *image.Paletted", img)
}

// encodeRGB returns a paletted image as a truecolour (8-bit RGB) PNG, as
// scanners and slide viewers write them, expanding one row at a time.
func (e *pngEncoder) encodeRGB(m *image.Paletted) ([]byte, error) {
	var lut [256][3]byte
	for i, c := range m.Palette {
		if i == len(lut) {
			return nil, fmt.Errorf("png: palette of %d colours; want 1..256", len(m.Palette))
		}
		r, g, b, _ := c.RGBA()
		lut[i] = [3]byte{byte(r >> 8), byte(g >> 8), byte(b >> 8)}
	}
	w, h := m.Rect.Dx(), m.Rect.Dy()
	row := make([]byte, 3*w)
	return e.write(w, h, 8, pngTruecolor, nil, func(y int) []byte {
		for x, idx := range m.Pix[y*m.Stride : y*m.Stride+w] {
			copy(row[3*x:], lut[idx][:])
		}
		return row
	})
}

// write assembles a PNG from its rows, each given by row(y).
func (e *pngEncoder) write(w, h int, depth, colorType byte, plte []byte, row func(y int) []byte) ([]byte, error) {
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("png: empty %d×%d image", w, h)
	}
	var idat bytes.Buffer
	idat.Grow(h * (len(row(0)) + 1) / 2)
	zw, _ := e.writers.Get().(*zlib.Writer)
	if zw == nil {
		var err error
		if zw, err = zlib.NewWriterLevel(&idat, zlib.BestSpeed); err != nil {
			return nil, fmt.Errorf("png: %w", err)
		}
	} else {
		zw.Reset(&idat)
	}
	defer e.writers.Put(zw)
	filterNone := []byte{0}
	for y := range h {
		if _, err := zw.Write(filterNone); err != nil {
			return nil, fmt.Errorf("png: %w", err)
		}
		if _, err := zw.Write(row(y)); err != nil {
			return nil, fmt.Errorf("png: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("png: %w", err)
	}

	var out bytes.Buffer
	out.Grow(idat.Len() + len(plte) + 64)
	out.WriteString(pngSignature)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = depth, colorType // compression, filter, interlace: 0
	writeChunk(&out, "IHDR", ihdr[:])
	if plte != nil {
		writeChunk(&out, "PLTE", plte)
	}
	writeChunk(&out, "IDAT", idat.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes(), nil
}

// writeChunk appends one PNG chunk: length, type, data, CRC of type and data.
func writeChunk(out *bytes.Buffer, kind string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	out.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(kind))
	crc.Write(data)
	out.WriteString(kind)
	out.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	out.Write(n[:])
}
