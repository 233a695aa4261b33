package dicomfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrShortPixelData is wrapped by CheckPixelData's error for a native
// pixel data value shorter than its image needs.
var ErrShortPixelData = errors.New("shorter than the image needs")

// maxFragments bounds the items CheckPixelData walks in encapsulated pixel
// data.
const maxFragments = 1 << 20

// CheckPixelData checks, without reading a pixel, that the file ScanHeader
// read holds its whole pixel data: r reads the file from its first byte
// and size is its length. A native value must lie inside the file
// (the element's offset plus its declared length) and be at least
// NativePixelBytes long; the items of an encapsulated value (the basic
// offset table and the fragments) must each lie inside the file and a
// sequence delimiter end them, as Parse needs — it reads the 8-byte
// header of each item only. A file without pixel data passes; so does a
// deflated one, whose pixel data ScanHeader has read whole already.
// Errors wrap ErrTruncated when the file ends early, ErrShortPixelData
// when the value declares too few bytes.
func (f *File) CheckPixelData(r io.ReaderAt, size int64) error {
	if !f.HasPixelData || f.inflated {
		return nil
	}
	if f.pixelLength == undefinedLength {
		return f.checkFragments(r, size)
	}
	at, n := int64(f.pixelAt), int64(f.pixelLength)
	if at+n > size {
		return fmt.Errorf("pixel data %v at byte %d: a value of %d bytes, the file holds %d of them: %w", PixelData, at, n, max(size-at, 0), ErrTruncated)
	}
	if want, ok := f.NativePixelBytes(); ok && n < want {
		return fmt.Errorf("pixel data %v at byte %d: a value of %d bytes; %s need %d: %w", PixelData, at, n, f.imageShape(), want, ErrShortPixelData)
	}
	return nil
}

// checkFragments walks the items of encapsulated pixel data.
func (f *File) checkFragments(r io.ReaderAt, size int64) error {
	order := binary.ByteOrder(binary.LittleEndian)
	if f.BigEndian {
		order = binary.BigEndian
	}
	var head [8]byte
	pos := int64(f.pixelAt)
	for item := 0; item < maxFragments; item++ {
		what := fmt.Sprintf("fragment %d", item)
		if item == 0 {
			what = "the basic offset table"
		}
		if size-pos < 8 {
			return fmt.Errorf("pixel data %v: %s at byte %d: the item header needs 8 bytes, the file holds %d: %w", PixelData, what, pos, max(size-pos, 0), ErrTruncated)
		}
		if _, err := r.ReadAt(head[:], pos); err != nil {
			return fmt.Errorf("pixel data %v: %s at byte %d: %w", PixelData, what, pos, err)
		}
		t := Tag(order.Uint16(head[0:]))<<16 | Tag(order.Uint16(head[2:]))
		n := order.Uint32(head[4:])
		switch {
		case t == seqDelimTag:
			return nil
		case t != itemTag || n == undefinedLength:
			return fmt.Errorf("pixel data %v: element %v at byte %d: found in encapsulated pixel data where a fragment was expected", PixelData, t, pos)
		case int64(n) > size-pos-8:
			return fmt.Errorf("pixel data %v: %s at byte %d: %d bytes, the file holds %d of them: %w", PixelData, what, pos, n, size-pos-8, ErrTruncated)
		}
		pos += 8 + int64(n)
	}
	return fmt.Errorf("pixel data %v: more than %d items", PixelData, maxFragments)
}

// NativePixelBytes is the length of the native pixel data the header
// declares (PS3.5 8.1.1): rows × columns × samples per pixel × bits
// allocated × frames, in whole bytes; ok is false when Rows, Columns or
// BitsAllocated is missing.
func (f *File) NativePixelBytes() (n int64, ok bool) {
	rows, okR := f.Int(Rows)
	cols, okC := f.Int(Columns)
	bits, okB := f.Int(BitsAllocated)
	if !okR || !okC || !okB || rows < 0 || cols < 0 || bits < 0 {
		return 0, false
	}
	samples, frames := f.intOr(SamplesPerPixel, 1), f.intOr(NumberOfFrames, 1)
	// Each factor is below 2^31: the product of bits is exact up to 2^62
	// and saturates beyond (no file is that long).
	total := int64(1)
	for _, v := range []int{rows, cols, samples, frames, bits} {
		if total > 0 && int64(v) > (1<<62)/total {
			return 1 << 59, true
		}
		total *= int64(v)
	}
	return (total + 7) / 8, true
}

// intOr is Int, or def when missing or not positive.
func (f *File) intOr(t Tag, def int) int {
	if v, ok := f.Int(t); ok && v > 0 {
		return v
	}
	return def
}

// imageShape says what the pixel data holds, for errors:
// "64×64 pixels × 1 sample × 16 bits × 1 frame".
func (f *File) imageShape() string {
	rows, _ := f.Int(Rows)
	cols, _ := f.Int(Columns)
	bits, _ := f.Int(BitsAllocated)
	return fmt.Sprintf("%d×%d pixels × %d sample(s) × %d bits × %d frame(s)", cols, rows, f.intOr(SamplesPerPixel, 1), bits, f.intOr(NumberOfFrames, 1))
}
