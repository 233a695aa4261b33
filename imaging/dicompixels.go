package imaging

import (
	"fmt"
	"image"
	"math"
	"sync"
)

// storedValues describes how a slice's stored values become modality
// values: the low bits of each pixel, two's complement when signed, times
// the slope plus the intercept.
type storedValues struct {
	mask, sign       uint32
	signed           bool
	slope, intercept float64
}

func newStoredValues(h dicomHeader) storedValues {
	return storedValues{mask: 1<<uint(h.bitsStor) - 1, sign: 1 << uint(h.bitsStor-1), signed: h.signed,
		slope: h.slope, intercept: h.intercept}
}

// modality is the modality value of stored value u (already masked). The
// conversions keep the product rounded on its own, so no platform fuses
// it with the sum.
func (s storedValues) modality(u uint32) float64 {
	v := int64(u)
	if s.signed && u&s.sign != 0 {
		v -= int64(s.mask) + 1
	}
	return float64(float64(v)*s.slope) + s.intercept
}

// ascending returns the stored values in ascending order of their signed
// or unsigned value.
func (s storedValues) ascending(yield func(u uint32) bool) {
	start := uint32(0)
	if s.signed {
		start = s.sign // the most negative value
	}
	for i := uint32(0); i <= s.mask; i++ {
		if !yield((start + i) & s.mask) {
			return
		}
	}
}

// scratch is decodeNative's working memory, pooled: a count and an output
// byte for every 16-bit stored value (indexing by a uint16 needs no bounds
// check).
type scratch struct {
	counts [1 << 16]uint32
	lut    [1 << 16]uint8
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// decodeNative maps the rows×cols stored values of native pixel data px
// (8 or 16 bits allocated, little or big endian) to 8 bits: a histogram
// of the stored values, the window (the header's, or percentiles taken
// from the histogram), then one pass through a table holding the output
// of every stored value present. Each output byte is what ApplyWindow
// gives for the pixel's modality value, inverted for MONOCHROME1.
func decodeNative(h dicomHeader, px []byte, big bool) (*image.Gray, error) {
	n := h.rows * h.cols
	size := h.bitsAllocated / 8
	if len(px) < n*size {
		return nil, fmt.Errorf("pixel data has %d bytes; %dx%d pixels of %d bits need %d: truncated", len(px), h.cols, h.rows, h.bitsAllocated, n*size)
	}
	px = px[:n*size]
	sv := newStoredValues(h)
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	counts := sc.counts[:sv.mask+1]
	clear(counts)
	histogram(&sc.counts, px, size, big, uint16(sv.mask))
	win := h.window
	if win.Width == 0 {
		win = sv.percentileWindow(counts, n)
	}
	wm := newWindowMap(win)
	for u, c := range counts {
		if c > 0 {
			b := wm.byte(sv.modality(uint32(u)))
			if h.inverted {
				b = 255 - b
			}
			sc.lut[u] = b
		}
	}
	out := image.NewGray(image.Rect(0, 0, h.cols, h.rows))
	mapStored(out.Pix, px, size, big, uint16(sv.mask), &sc.lut)
	return out, nil
}

// histogram counts the masked stored values of px.
func histogram(counts *[1 << 16]uint32, px []byte, size int, big bool, mask uint16) {
	switch {
	case size == 1:
		for _, b := range px {
			counts[uint16(b)&mask]++
		}
	case big:
		for i := 1; i < len(px); i += 2 {
			counts[(uint16(px[i-1])<<8|uint16(px[i]))&mask]++
		}
	default:
		for i := 1; i < len(px); i += 2 {
			counts[(uint16(px[i-1])|uint16(px[i])<<8)&mask]++
		}
	}
}

// mapStored writes lut[stored value] for each pixel of px into dst.
func mapStored(dst []uint8, px []byte, size int, big bool, mask uint16, lut *[1 << 16]uint8) {
	switch {
	case size == 1:
		px = px[:len(dst)]
		for i, b := range px {
			dst[i] = lut[uint16(b)&mask]
		}
	case big:
		px = px[:2*len(dst)]
		for i := range dst {
			dst[i] = lut[(uint16(px[2*i])<<8|uint16(px[2*i+1]))&mask]
		}
	default:
		px = px[:2*len(dst)]
		for i := range dst {
			dst[i] = lut[(uint16(px[2*i])|uint16(px[2*i+1])<<8)&mask]
		}
	}
}

// percentileWindow is PercentileWindow of the n modality values counted
// in counts, read from the histogram: the modality value is monotonic in
// the stored value (increasing for a positive slope, decreasing for a
// negative one), so the k-th smallest modality value is the modality
// value of the k-th smallest (or (n−1−k)-th smallest) stored value.
func (s storedValues) percentileWindow(counts []uint32, n int) Window {
	last := float64(n - 1)
	klo, khi := int(math.Floor(PercentileLow*last)), int(math.Ceil(PercentileHigh*last))
	if s.slope < 0 {
		klo, khi = n-1-klo, n-1-khi
	}
	return Window{Lo: s.modality(s.kth(counts, klo)), Hi: s.modality(s.kth(counts, khi))}
}

// kth is the k-th smallest (from 0) stored value counted in counts.
func (s storedValues) kth(counts []uint32, k int) uint32 {
	seen, found := 0, uint32(0)
	for u := range s.ascending {
		seen += int(counts[u])
		if seen > k {
			found = u
			break
		}
	}
	return found
}

// windowMap is a Window ready to map values to bytes.
type windowMap struct {
	voi               bool
	c5, lo, hi, scale float64 // scale: den for a VOI window, k for Lo..Hi
}

func newWindowMap(win Window) windowMap {
	if win.Width > 0 {
		c, wd := win.Center, win.Width
		den := wd - 1
		if den <= 0 {
			den = 1
		}
		return windowMap{voi: true, c5: c - 0.5, lo: c - 0.5 - (wd-1)/2, hi: c - 0.5 + (wd-1)/2, scale: den}
	}
	lo, hi := win.Lo, win.Hi
	if !(hi > lo) {
		hi = lo + 1
	}
	return windowMap{lo: lo, scale: 255 / (hi - lo)}
}

// byte maps v: a DICOM VOI LINEAR window (PS3.3 C.11.2.1.2), or Lo..Hi
// to 0..255; floor(v' + 0.5) clamped to 0..255. The conversions keep each
// product rounded on its own.
func (m windowMap) byte(v float64) uint8 {
	if m.voi {
		switch {
		case v <= m.lo:
			return 0
		case v > m.hi:
			return 255
		}
		return clampByte(math.Floor(float64(((v-m.c5)/m.scale+0.5)*255) + 0.5))
	}
	return clampByte(math.Floor(float64((v-m.lo)*m.scale) + 0.5))
}
