package imaging

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"io"

	"github.com/klauspost/compress/zlib"
)

// PNGLevel is the zlib level EncodePNG uses: klauspost's level 1 (its
// fastest Lempel-Ziv level). It changes the bytes, not the pixels, so it is
// part of the preparation parameters.
const PNGLevel = zlib.BestSpeed

// EncodePNG writes m as a lossless PNG. *image.Gray becomes an 8-bit
// grayscale PNG, *image.Paletted an indexed PNG, an opaque *image.RGBA an
// 8-bit RGB PNG; other types are refused. Rows use the filter with the
// smallest sum of absolute values (as image/png does) and are compressed
// with github.com/klauspost/compress/zlib, which is about twice as fast as
// compress/zlib at its fastest level. The output is deterministic.
func EncodePNG(w io.Writer, m image.Image) error {
	var (
		colorType byte
		bpp       int
		rowAt     func(y int) []byte
		palette   []byte
	)
	b := m.Bounds()
	width, height := b.Dx(), b.Dy()
	if width <= 0 || height <= 0 || width > 1<<24 || height > 1<<24 {
		return fmt.Errorf("encode png: invalid size %dx%d", width, height)
	}
	switch im := m.(type) {
	case *image.Gray:
		colorType, bpp = 0, 1
		rowAt = func(y int) []byte {
			o := im.PixOffset(b.Min.X, b.Min.Y+y)
			return im.Pix[o : o+width]
		}
	case *image.Paletted:
		if len(im.Palette) == 0 || len(im.Palette) > 256 {
			return fmt.Errorf("encode png: palette of %d colours (want 1..256)", len(im.Palette))
		}
		colorType, bpp = 3, 1
		for _, c := range im.Palette {
			r, g, bl, _ := c.RGBA()
			palette = append(palette, byte(r>>8), byte(g>>8), byte(bl>>8))
		}
		rowAt = func(y int) []byte {
			o := im.PixOffset(b.Min.X, b.Min.Y+y)
			return im.Pix[o : o+width]
		}
	case *image.RGBA:
		colorType, bpp = 2, 3
		buf := make([]byte, width*3)
		rowAt = func(y int) []byte {
			o := im.PixOffset(b.Min.X, b.Min.Y+y)
			src := im.Pix[o : o+width*4]
			for x := 0; x < width; x++ {
				buf[3*x], buf[3*x+1], buf[3*x+2] = src[4*x], src[4*x+1], src[4*x+2]
			}
			return buf
		}
	default:
		return fmt.Errorf("encode png: unsupported image type %T (want *image.Gray, *image.Paletted or *image.RGBA)", m)
	}

	bw := bufio.NewWriterSize(w, 64<<10)
	cw := &chunkWriter{w: bw}
	if _, err := bw.WriteString("\x89PNG\r\n\x1a\n"); err != nil {
		return err
	}
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(height))
	ihdr[8], ihdr[9] = 8, colorType
	cw.chunk("IHDR", ihdr[:])
	if palette != nil {
		cw.chunk("PLTE", palette)
	}
	idat := &idatWriter{cw: cw, buf: make([]byte, 0, 256<<10)}
	zw, err := zlib.NewWriterLevel(idat, PNGLevel)
	if err != nil {
		return err
	}
	rowLen := width * bpp
	prev := make([]byte, rowLen)
	var cand [5][]byte
	for i := range cand {
		cand[i] = make([]byte, rowLen+1)
	}
	for y := 0; y < height; y++ {
		cur := rowAt(y)
		f := filterRow(&cand, cur, prev, bpp)
		if _, err := zw.Write(cand[f]); err != nil {
			return err
		}
		copy(prev, cur)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	idat.flush()
	cw.chunk("IEND", nil)
	if cw.err != nil {
		return fmt.Errorf("encode png: %w", cw.err)
	}
	return bw.Flush()
}

// filterRow writes the five PNG filters of cur into cand and returns the
// index of the one with the smallest sum of absolute (signed) values, as
// image/png does. Each filter runs in its own tight loop.
func filterRow(cand *[5][]byte, cur, prev []byte, bpp int) int {
	n := len(cur)
	none, sub, up, avg, paeth := cand[0][1:n+1], cand[1][1:n+1], cand[2][1:n+1], cand[3][1:n+1], cand[4][1:n+1]
	cand[0][0], cand[1][0], cand[2][0], cand[3][0], cand[4][0] = 0, 1, 2, 3, 4
	prev = prev[:n]
	copy(none, cur)
	sNone := sumAbs(none)
	for i := 0; i < bpp; i++ {
		sub[i] = cur[i]
		avg[i] = cur[i] - prev[i]/2
		paeth[i] = cur[i] - prev[i]
	}
	for i := bpp; i < n; i++ {
		sub[i] = cur[i] - cur[i-bpp]
	}
	sSub := sumAbs(sub)
	for i := 0; i < n; i++ {
		up[i] = cur[i] - prev[i]
	}
	sUp := sumAbs(up)
	for i := bpp; i < n; i++ {
		avg[i] = cur[i] - byte((int(cur[i-bpp])+int(prev[i]))>>1)
	}
	sAvg := sumAbs(avg)
	for i := bpp; i < n; i++ {
		a, b, c := int(cur[i-bpp]), int(prev[i]), int(prev[i-bpp])
		pa, pb, pc := b-c, a-c, a+b-2*c
		pa = (pa ^ (pa >> 63)) - (pa >> 63)
		pb = (pb ^ (pb >> 63)) - (pb >> 63)
		pc = (pc ^ (pc >> 63)) - (pc >> 63)
		pred := c
		if pa <= pb && pa <= pc {
			pred = a
		} else if pb <= pc {
			pred = b
		}
		paeth[i] = cur[i] - byte(pred)
	}
	sPaeth := sumAbs(paeth)
	best, bestSum := 0, sNone
	for i, s := range [4]int{sSub, sUp, sAvg, sPaeth} {
		if s < bestSum {
			best, bestSum = i+1, s
		}
	}
	return best
}

// sumAbs sums the bytes of p read as signed values, in absolute value.
func sumAbs(p []byte) int {
	s := 0
	for _, b := range p {
		v := int(int8(b))
		s += (v ^ (v >> 63)) - (v >> 63)
	}
	return s
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
	crc := crc32.NewIEEE()
	crc.Write(hdr[4:8])
	crc.Write(data)
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], crc.Sum32())
	for _, p := range [][]byte{hdr[:], data, tail[:]} {
		if _, err := c.w.Write(p); err != nil {
			c.err = err
			return
		}
	}
}

// idatWriter cuts the zlib stream into IDAT chunks of a fixed size, so the
// chunking (and so the bytes) never depends on write sizes.
type idatWriter struct {
	cw  *chunkWriter
	buf []byte
}

func (w *idatWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		room := cap(w.buf) - len(w.buf)
		if room > len(p) {
			room = len(p)
		}
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
