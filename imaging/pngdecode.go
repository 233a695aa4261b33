package imaging

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"image"
	"image/png"
	"io"

	"github.com/klauspost/compress/zlib"

	"github.com/npcorch/npcorch/imaging/internal/kernels"
)

// DecodePNG decodes a PNG as image/png.Decode does: the same image type
// (*image.Gray, *image.RGBA, *image.NRGBA, ...), the same pixels, and an
// error exactly when image/png fails.
//
// Non-interlaced 8-bit grayscale, RGB and RGBA images without a tRNS
// chunk, which is what scanners, slide exporters and npcorch write, take
// a fast path: the zlib stream is inflated by github.com/klauspost/compress
// (about twice as fast as compress/flate), or in one call by libdeflate in
// a build with the libdeflate tag (about three times klauspost), and rows
// are unfiltered in place. Every other PNG, and any PNG the fast path cannot decode, is
// decoded again by image/png, so its verdict and its error stand.
func DecodePNG(data []byte) (image.Image, error) {
	return decodePNG(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// decodePNG is DecodePNG over a source that open reads from its start;
// open is called a second time when image/png must decide.
func decodePNG(open func() (io.ReadCloser, error)) (image.Image, error) {
	r, err := open()
	if err != nil {
		return nil, err
	}
	m, err := decodePNGFast(r)
	r.Close()
	if err == nil {
		return m, nil
	}
	if r, err = open(); err != nil {
		return nil, err
	}
	defer r.Close()
	return png.Decode(r)
}

// inflateMode is how the fast path inflates a PNG's image data.
type inflateMode int

const (
	// inflateStream inflates row by row through klauspost's zlib reader:
	// only two rows are held, so a slide shrunk as it is decoded never
	// holds its full size.
	inflateStream inflateMode = iota
	// inflateWhole reads the image data into memory and inflates it in
	// one call of inflateZlib: libdeflate in a build with the libdeflate
	// tag (about three times klauspost's speed), klauspost otherwise.
	inflateWhole
)

// errNotFast says a PNG is of a kind the fast path leaves to image/png.
var errNotFast = errors.New("png: not a fast-path image")

// fastPNG is the header of a PNG the fast path decodes.
type fastPNG struct {
	width, height int
	ctype         byte
	bpp           int // bytes a pixel: 1 (gray), 3 (RGB), 4 (RGBA)
}

// decodePNGFast decodes a PNG of a kind listed at DecodePNG, stricter than
// image/png (the zlib stream must end exactly with the IDAT data); it
// returns errNotFast, or another error, for anything else.
func decodePNGFast(r io.Reader) (image.Image, error) {
	return decodePNGFastWith(r, defaultInflate)
}

// decodePNGFastWith is decodePNGFast with the image data inflated as mode
// says.
func decodePNGFastWith(r io.Reader, mode inflateMode) (image.Image, error) {
	var m image.Image
	err := decodePNGRowsWith(r, mode, func(h fastPNG) func(y int, row []byte) {
		rect := image.Rect(0, 0, h.width, h.height)
		switch h.ctype {
		case pngGray:
			g := image.NewGray(rect)
			m = g
			return func(y int, row []byte) { copy(g.Pix[y*g.Stride:], row) }
		case pngTruecolor:
			g := image.NewRGBA(rect)
			m = g
			return func(y int, row []byte) { rgbToRGBA(g.Pix[y*g.Stride:y*g.Stride+4*h.width], row) }
		default:
			g := image.NewNRGBA(rect)
			m = g
			return func(y int, row []byte) { copy(g.Pix[y*g.Stride:], row) }
		}
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// rgbToRGBA expands RGB samples to opaque RGBA pixels.
func rgbToRGBA(dst, src []byte) {
	if kernels.Available() {
		done := kernels.ExpandRGB(dst, src)
		dst, src = dst[4*done:], src[3*done:]
	}
	for x := 0; x < len(dst)/4; x++ {
		o := dst[4*x : 4*x+4 : 4*x+4]
		s := src[3*x : 3*x+3 : 3*x+3]
		o[0], o[1], o[2], o[3] = s[0], s[1], s[2], 0xff
	}
}

// decodePNGRows decodes a PNG of a kind listed at DecodePNG, handing each
// unfiltered row (gray, RGB or RGBA samples), top to bottom, to the sink
// that begin returns for the header. It is stricter than image/png (the
// zlib stream must end exactly with the IDAT data) and returns errNotFast,
// or another error, for anything else.
func decodePNGRows(r io.Reader, begin func(fastPNG) func(y int, row []byte)) error {
	return decodePNGRowsWith(r, defaultInflate, begin)
}

// decodePNGRowsWith is decodePNGRows with the image data inflated as mode
// says.
func decodePNGRowsWith(r io.Reader, mode inflateMode, begin func(fastPNG) func(y int, row []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	cr := &chunkReader{r: br, crc: crc32.NewIEEE()}
	var sig [len(pngSignature)]byte
	if _, err := io.ReadFull(br, sig[:]); err != nil || string(sig[:]) != pngSignature {
		return errNotFast
	}
	name, length, err := cr.next()
	if err != nil {
		return err
	}
	if name != "IHDR" || length != 13 {
		return errNotFast
	}
	var ihdr [13]byte
	if err := cr.read(ihdr[:]); err != nil {
		return err
	}
	if err := cr.verify(); err != nil {
		return err
	}
	h := fastPNG{
		width:  int(int32(binary.BigEndian.Uint32(ihdr[0:4]))),
		height: int(int32(binary.BigEndian.Uint32(ihdr[4:8]))),
		ctype:  ihdr[9],
	}
	switch h.ctype {
	case pngGray:
		h.bpp = 1
	case pngTruecolor:
		h.bpp = 3
	case pngRGBA:
		h.bpp = 4
	}
	if h.bpp == 0 || ihdr[8] != 8 || ihdr[10] != 0 || ihdr[11] != 0 || ihdr[12] != 0 ||
		h.width <= 0 || h.height <= 0 || int64(h.width)*int64(h.height) > 1<<40 {
		return errNotFast
	}
	// Ancillary chunks before the image data are skipped; PLTE, tRNS and
	// anything else that could change the result go to image/png.
	for {
		if name, length, err = cr.next(); err != nil {
			return err
		}
		if name == "IDAT" {
			break
		}
		if name[0]&0x20 == 0 || name == "tRNS" {
			return errNotFast
		}
		if err := cr.skip(length); err != nil {
			return err
		}
	}
	if mode == inflateWhole {
		name, length, err = h.decodeIDATWhole(cr, length, begin(h))
	} else {
		err = h.decodeIDAT(cr, length, begin(h))
		if err == nil {
			name, length, err = cr.next()
		}
	}
	if err != nil {
		return err
	}
	// After the image data, as image/png: IDAT and ancillary chunks are
	// skipped (their checksums verified) up to IEND.
	for ; ; name, length, err = cr.next() {
		if err != nil {
			return err
		}
		switch name {
		case "IEND":
			if length != 0 {
				return errors.New("png: bad IEND length")
			}
			return cr.verify()
		case "IHDR", "PLTE", "tRNS":
			return errors.New("png: chunk out of order")
		}
		if err := cr.skip(length); err != nil {
			return err
		}
	}
}

// decodeIDAT inflates and unfilters the image data, which starts with an
// IDAT chunk of the given length, and hands each row to sink.
func (h fastPNG) decodeIDAT(cr *chunkReader, length uint32, sink func(y int, row []byte)) error {
	idat := &idatReader{cr: cr, left: length}
	zbuf := bufio.NewReaderSize(idat, 32<<10) // klauspost's fast path for *bufio.Reader
	zr, err := zlib.NewReader(zbuf)
	if err != nil {
		return fmt.Errorf("png: %w", err)
	}
	defer zr.Close()
	rowLen := h.width * h.bpp
	cur, prev := make([]byte, rowLen+1), make([]byte, rowLen+1)
	for y := 0; y < h.height; y++ {
		if _, err := io.ReadFull(zr, cur); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return errors.New("png: not enough pixel data")
			}
			return fmt.Errorf("png: %w", err)
		}
		if err := unfilter(cur[0], cur[1:], prev[1:], h.bpp); err != nil {
			return err
		}
		sink(y, cur[1:])
		cur, prev = prev, cur
	}
	// The zlib stream must end (its checksum verified) exactly where the
	// IDAT data ends.
	var one [1]byte
	n, err := io.ReadFull(zr, one[:])
	if n != 0 || err != io.EOF {
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return fmt.Errorf("png: %w", err)
		}
		return errors.New("png: too much pixel data")
	}
	if zbuf.Buffered() != 0 || idat.left != 0 {
		return errors.New("png: data after the zlib stream")
	}
	return cr.verify()
}

// wholeBuffer is decodeIDATWhole's memory: the compressed image data and
// the inflated rows of one PNG, tens of megabytes for a slide. It comes
// from allocWhole, outside Go's heap on Linux (on the heap, two workers'
// slides tripled prep's peak memory through the collector's target), and
// goes back with release.
type wholeBuffer struct {
	comp, raw []byte
}

// appendSpace makes room for n more bytes of compressed data, doubling
// as it grows so that a chunk claiming more than the file holds costs no
// more than the file.
func (b *wholeBuffer) appendSpace(n int) ([]byte, error) {
	l := len(b.comp)
	if l+n > cap(b.comp) {
		grown, err := reallocWhole(b.comp, max(l+n, 2*cap(b.comp), 1<<20))
		if err != nil {
			return nil, err
		}
		b.comp = grown[:l]
	}
	b.comp = b.comp[:l+n]
	return b.comp[l:], nil
}

// release gives the memory back; the buffer must not be used after.
func (b *wholeBuffer) release() {
	freeWhole(b.comp)
	freeWhole(b.raw)
	b.comp, b.raw = nil, nil
}

// decodeIDATWhole reads the image data, which starts with an IDAT chunk
// of the given length and runs over the IDAT chunks that follow it, into
// memory, inflates it in one call (inflateZlib), unfilters it in place
// and hands each row to sink, which must not keep it. It returns the
// header of the chunk after the image data.
func (h fastPNG) decodeIDATWhole(cr *chunkReader, length uint32, sink func(y int, row []byte)) (string, uint32, error) {
	var bufs wholeBuffer
	defer bufs.release()
	name := "IDAT"
	for name == "IDAT" {
		// Grown as the data arrives.
		for length > 0 {
			k := min(length, 1<<20)
			p, err := bufs.appendSpace(int(k))
			if err != nil {
				return "", 0, err
			}
			if err := cr.read(p); err != nil {
				return "", 0, err
			}
			length -= k
		}
		if err := cr.verify(); err != nil {
			return "", 0, err
		}
		var err error
		if name, length, err = cr.next(); err != nil {
			return "", 0, err
		}
	}
	comp := bufs.comp
	rowLen := h.width*h.bpp + 1
	// Deflate expands at most 1032:1; less data cannot hold the image.
	if int64(h.height)*int64(rowLen) > 1032*int64(len(comp))+1032 {
		return "", 0, errors.New("png: not enough pixel data")
	}
	raw, err := allocWhole(h.height * rowLen)
	if err != nil {
		return "", 0, err
	}
	bufs.raw = raw
	if err := inflateZlib(raw, comp); err != nil {
		return "", 0, err
	}
	prev := make([]byte, rowLen)
	for y := range h.height {
		cur := raw[y*rowLen : (y+1)*rowLen]
		if err := unfilter(cur[0], cur[1:], prev[1:], h.bpp); err != nil {
			return "", 0, err
		}
		sink(y, cur[1:])
		prev = cur
	}
	return name, length, nil
}

// unfilter reverses filter type ft on cur given the previous row.
func unfilter(ft byte, cur, prev []byte, bpp int) error {
	n := len(cur)
	switch ft {
	case ftNone:
	case ftSub:
		for i := bpp; i < n; i++ {
			cur[i] += cur[i-bpp]
		}
	case ftUp:
		prev = prev[:n]
		for i := range cur {
			cur[i] += prev[i]
		}
	case ftAverage:
		prev = prev[:n]
		if (bpp == 3 || bpp == 4) && kernels.Available() {
			for i := unfilterStart(kernels.UnfilterAverage(cur, prev, bpp), cur, prev, bpp, 2); i < n; i++ {
				cur[i] += byte((int(cur[i-bpp]) + int(prev[i])) >> 1)
			}
			break
		}
		for i := 0; i < bpp; i++ {
			cur[i] += prev[i] / 2
		}
		if bpp == 3 && n%3 == 0 {
			// RGB, the common slide: the left pixel stays in registers.
			a0, a1, a2 := int(cur[0]), int(cur[1]), int(cur[2])
			for i := 3; i+3 <= n; i += 3 {
				c, p := cur[i:i+3:i+3], prev[i:i+3:i+3]
				a0 = int(byte(int(c[0]) + (a0+int(p[0]))>>1))
				a1 = int(byte(int(c[1]) + (a1+int(p[1]))>>1))
				a2 = int(byte(int(c[2]) + (a2+int(p[2]))>>1))
				c[0], c[1], c[2] = byte(a0), byte(a1), byte(a2)
			}
			break
		}
		for i := bpp; i < n; i++ {
			cur[i] += byte((int(cur[i-bpp]) + int(prev[i])) >> 1)
		}
	case ftPaeth:
		prev = prev[:n]
		if (bpp == 3 || bpp == 4) && kernels.Available() {
			for i := unfilterStart(kernels.UnfilterPaeth(cur, prev, bpp), cur, prev, bpp, 1); i < n; i++ {
				cur[i] += byte(paethPredict(int(cur[i-bpp]), int(prev[i]), int(prev[i-bpp])))
			}
			break
		}
		for i := 0; i < bpp; i++ {
			cur[i] += prev[i]
		}
		if bpp == 3 && n%3 == 0 {
			a0, a1, a2 := int(cur[0]), int(cur[1]), int(cur[2])
			c0, c1, c2 := int(prev[0]), int(prev[1]), int(prev[2])
			for i := 3; i+3 <= n; i += 3 {
				c, p := cur[i:i+3:i+3], prev[i:i+3:i+3]
				b0, b1, b2 := int(p[0]), int(p[1]), int(p[2])
				a0 = int(byte(int(c[0]) + paethPredict(a0, b0, c0)))
				a1 = int(byte(int(c[1]) + paethPredict(a1, b1, c1)))
				a2 = int(byte(int(c[2]) + paethPredict(a2, b2, c2)))
				c[0], c[1], c[2] = byte(a0), byte(a1), byte(a2)
				c0, c1, c2 = b0, b1, b2
			}
			break
		}
		for i := bpp; i < n; i++ {
			cur[i] += byte(paethPredict(int(cur[i-bpp]), int(prev[i]), int(prev[i-bpp])))
		}
	default:
		return errors.New("png: bad filter type")
	}
	return nil
}

// unfilterStart returns where the byte loop goes on after a kernel did
// the first done bytes: when it did not get past the first pixel (a row
// shorter than four bytes), that pixel, which has nothing on its left, is
// unfiltered here (prev[i]/div: Average 2, Paeth 1).
func unfilterStart(done int, cur, prev []byte, bpp int, div byte) int {
	if done >= bpp {
		return done
	}
	for i := 0; i < bpp; i++ {
		cur[i] += prev[i] / div
	}
	return bpp
}

// chunkReader reads PNG chunks, checking each one's CRC.
type chunkReader struct {
	r   io.Reader
	crc hash.Hash32
	hdr [8]byte
}

// next reads a chunk's length and type and starts its checksum.
func (c *chunkReader) next() (string, uint32, error) {
	if _, err := io.ReadFull(c.r, c.hdr[:]); err != nil {
		return "", 0, noEOF(err)
	}
	length := binary.BigEndian.Uint32(c.hdr[:4])
	if length > 0x7fffffff {
		return "", 0, fmt.Errorf("png: bad chunk length %d", length)
	}
	c.crc.Reset()
	c.crc.Write(c.hdr[4:8])
	return string(c.hdr[4:8]), length, nil
}

// read reads chunk data into p.
func (c *chunkReader) read(p []byte) error {
	if _, err := io.ReadFull(c.r, p); err != nil {
		return noEOF(err)
	}
	c.crc.Write(p)
	return nil
}

// skip reads and checks the rest of a chunk of the given length.
func (c *chunkReader) skip(length uint32) error {
	var buf [4096]byte
	for length > 0 {
		n := min(uint32(len(buf)), length)
		if err := c.read(buf[:n]); err != nil {
			return err
		}
		length -= n
	}
	return c.verify()
}

// verify reads the chunk's CRC and compares it with the data read.
func (c *chunkReader) verify() error {
	var sum [4]byte
	if _, err := io.ReadFull(c.r, sum[:]); err != nil {
		return noEOF(err)
	}
	if binary.BigEndian.Uint32(sum[:]) != c.crc.Sum32() {
		return errors.New("png: invalid checksum")
	}
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// idatReader presents the data of consecutive IDAT chunks as one stream,
// checking each chunk's CRC, as image/png's decoder does.
type idatReader struct {
	cr   *chunkReader
	left uint32 // bytes left in the current IDAT chunk
}

func (d *idatReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for d.left == 0 {
		if err := d.cr.verify(); err != nil {
			return 0, err
		}
		name, length, err := d.cr.next()
		if err != nil {
			return 0, err
		}
		if name != "IDAT" {
			return 0, errors.New("png: not enough pixel data")
		}
		d.left = length
	}
	n, err := d.cr.r.Read(p[:min(uint32(len(p)), d.left)])
	d.cr.crc.Write(p[:n])
	d.left -= uint32(n)
	return n, err
}
