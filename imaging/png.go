package imaging

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"io"
	"sync"

	"github.com/klauspost/compress/zlib"
)

// PNGLevel is the zlib level EncodePNG uses: klauspost's level 1 (its
// fastest Lempel-Ziv level). It changes the bytes, not the pixels, so it is
// part of the preparation parameters.
const PNGLevel = zlib.BestSpeed

// pngSignature starts every PNG file.
const pngSignature = "\x89PNG\r\n\x1a\n"

// PNG colour types (PNG specification, section 11.2.2).
const (
	pngGray      = 0
	pngTruecolor = 2
	pngIndexed   = 3
	pngGrayAlpha = 4
	pngRGBA      = 6
)

// idatSize is the size of every IDAT chunk but the last, so the chunking
// (and so the bytes) never depends on write sizes.
const idatSize = 256 << 10

// PNGEncoder writes lossless PNGs of the image types npcorch draws, with
// the zlib stream compressed by github.com/klauspost/compress at PNGLevel
// (about twice as fast as compress/zlib; image/png offers no way to choose
// the compressor):
//   - *image.Gray: 8-bit grayscale;
//   - *image.Gray16: 16-bit grayscale;
//   - *image.Paletted: indexed colour, or 8-bit RGB with Truecolor;
//   - an opaque *image.RGBA or a *BoxedGray: 8-bit RGB (alpha is dropped).
//
// Other types are refused. The output is deterministic: the same image
// and options give the same bytes. The zero value is ready to use; an
// encoder keeps a pool of zlib writers and is safe for concurrent use, so
// share one (by pointer) between workers.
type PNGEncoder struct {
	// Unfiltered writes every row with filter type None instead of the
	// filter with the smallest sum of absolute values (image/png's rule).
	// It encodes several times faster; on noisy images the files are
	// about as small.
	Unfiltered bool
	// Truecolor writes *image.Paletted as 8-bit RGB, as scanners and slide
	// viewers write pathology images, instead of indexed colour.
	Truecolor bool

	writers sync.Pool // of *zlib.Writer
}

// EncodePNG writes m as a lossless PNG with adaptive filters (a zero
// PNGEncoder); prep's outputs are made this way.
func EncodePNG(w io.Writer, m image.Image) error {
	var e PNGEncoder
	return e.Encode(w, m)
}

// pngImage is what the encoder needs of an image: its header fields and
// its rows, one at a time, as PNG samples.
type pngImage struct {
	width, height int
	depth, ctype  byte
	bpp           int // bytes a pixel, at least 1
	palette       []byte
	row           func(y int) []byte
}

func pngSource(m image.Image, truecolor bool) (pngImage, error) {
	b := m.Bounds()
	p := pngImage{width: b.Dx(), height: b.Dy(), depth: 8}
	if p.width <= 0 || p.height <= 0 || p.width > 1<<24 || p.height > 1<<24 {
		return p, fmt.Errorf("encode png: invalid size %dx%d", p.width, p.height)
	}
	w := p.width
	switch im := m.(type) {
	case *image.Gray:
		p.ctype, p.bpp = pngGray, 1
		p.row = func(y int) []byte {
			o := im.PixOffset(b.Min.X, b.Min.Y+y)
			return im.Pix[o : o+w]
		}
	case *image.Gray16:
		// Gray16 holds big-endian samples, as PNG does.
		p.ctype, p.bpp, p.depth = pngGray, 2, 16
		p.row = func(y int) []byte {
			o := im.PixOffset(b.Min.X, b.Min.Y+y)
			return im.Pix[o : o+2*w]
		}
	case *image.Paletted:
		if len(im.Palette) == 0 || len(im.Palette) > 256 {
			return p, fmt.Errorf("encode png: palette of %d colours (want 1..256)", len(im.Palette))
		}
		var lut [256][3]byte
		for i, c := range im.Palette {
			r, g, bl, _ := c.RGBA()
			lut[i] = [3]byte{byte(r >> 8), byte(g >> 8), byte(bl >> 8)}
		}
		if !truecolor {
			p.ctype, p.bpp = pngIndexed, 1
			for _, c := range lut[:len(im.Palette)] {
				p.palette = append(p.palette, c[:]...)
			}
			p.row = func(y int) []byte {
				o := im.PixOffset(b.Min.X, b.Min.Y+y)
				return im.Pix[o : o+w]
			}
			break
		}
		p.ctype, p.bpp = pngTruecolor, 3
		buf := make([]byte, 3*w)
		p.row = func(y int) []byte {
			o := im.PixOffset(b.Min.X, b.Min.Y+y)
			for x, idx := range im.Pix[o : o+w] {
				copy(buf[3*x:3*x+3], lut[idx][:])
			}
			return buf
		}
	case *BoxedGray:
		p.ctype, p.bpp = pngTruecolor, 3
		buf := make([]byte, 3*w)
		p.row = func(y int) []byte {
			im.rgbRow(buf, y)
			return buf
		}
	case *image.RGBA:
		p.ctype, p.bpp = pngTruecolor, 3
		buf := make([]byte, 3*w)
		p.row = func(y int) []byte {
			o := im.PixOffset(b.Min.X, b.Min.Y+y)
			src := im.Pix[o : o+4*w]
			for x := 0; x < w; x++ {
				buf[3*x], buf[3*x+1], buf[3*x+2] = src[4*x], src[4*x+1], src[4*x+2]
			}
			return buf
		}
	default:
		return p, fmt.Errorf("encode png: unsupported image type %T (want *image.Gray, *image.Gray16, *image.Paletted, *image.RGBA or *imaging.BoxedGray)", m)
	}
	return p, nil
}

// Encode writes m as a PNG to w.
func (e *PNGEncoder) Encode(w io.Writer, m image.Image) error {
	src, err := pngSource(m, e.Truecolor)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := &chunkWriter{w: bw}
	if _, err := bw.WriteString(pngSignature); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(src.width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(src.height))
	ihdr[8], ihdr[9] = src.depth, src.ctype // compression, filter, interlace: 0
	cw.chunk("IHDR", ihdr[:])
	if src.palette != nil {
		cw.chunk("PLTE", src.palette)
	}
	idat := &idatWriter{cw: cw, buf: make([]byte, 0, idatSize)}
	zw, _ := e.writers.Get().(*zlib.Writer)
	if zw == nil {
		if zw, err = zlib.NewWriterLevel(idat, PNGLevel); err != nil {
			return fmt.Errorf("encode png: %w", err)
		}
	} else {
		zw.Reset(idat)
	}
	defer e.writers.Put(zw)
	if err := writeRows(zw, src, e.Unfiltered); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	idat.flush()
	cw.chunk("IEND", nil)
	if cw.err != nil {
		return fmt.Errorf("encode png: %w", cw.err)
	}
	return bw.Flush()
}

// writeRows writes the filtered rows of src into the zlib stream.
func writeRows(zw io.Writer, src pngImage, unfiltered bool) error {
	rowLen := src.width * src.bpp
	if unfiltered {
		line := make([]byte, rowLen+1) // line[0] = 0: filter type None
		for y := 0; y < src.height; y++ {
			copy(line[1:], src.row(y))
			if _, err := zw.Write(line); err != nil {
				return err
			}
		}
		return nil
	}
	prev := make([]byte, rowLen)
	var cand [5][]byte
	for i := range cand {
		cand[i] = make([]byte, rowLen+1)
	}
	for y := 0; y < src.height; y++ {
		cur := src.row(y)
		f := filterRow(&cand, cur, prev, src.bpp)
		if _, err := zw.Write(cand[f]); err != nil {
			return err
		}
		copy(prev, cur)
	}
	return nil
}

type chunkWriter struct {
	w   io.Writer
	err error
}

func (c *chunkWriter) chunk(name string, data []byte) {
	if c.err != nil {
		return
	}
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(data)))
	copy(hdr[4:], name)
	crc := crc32.Update(crc32.ChecksumIEEE(hdr[4:8]), crc32.IEEETable, data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc)
	for _, p := range [][]byte{hdr[:], data, tail[:]} {
		if _, err := c.w.Write(p); err != nil {
			c.err = err
			return
		}
	}
}

// idatWriter cuts the zlib stream into IDAT chunks of idatSize bytes.
type idatWriter struct {
	cw  *chunkWriter
	buf []byte
}

func (w *idatWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := min(cap(w.buf)-len(w.buf), len(p))
		w.buf = append(w.buf, p[:room]...)
		p = p[room:]
		if len(w.buf) == cap(w.buf) {
			w.flush()
		}
	}
	return n, w.cw.err
}

func (w *idatWriter) flush() {
	if len(w.buf) > 0 {
		w.cw.chunk("IDAT", w.buf)
		w.buf = w.buf[:0]
	}
}
