package imaging

import (
	"fmt"
	"image"
	"math"
	"sync"

	"github.com/npcorch/npcorch/imaging/internal/kernels"
)

// The resampler below reproduces Pillow's Resample.c (8 bits per channel,
// Lanczos a=3) bit for bit, so that a tile made here equals the tile a
// Pillow pipeline makes from the same slice. It works directly on
// *image.Gray and on opaque *image.RGBA rows, with no per-pixel interface
// calls.

// precisionBits is Pillow's PRECISION_BITS (32 - 8 - 2).
const precisionBits = 32 - 8 - 2

// lanczosSupport is the half-width of the Lanczos-3 kernel.
const lanczosSupport = 3.0

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

func lanczos(x float64) float64 {
	if -3 <= x && x < 3 {
		return sinc(x) * sinc(x/3)
	}
	return 0
}

// coeffs is one axis of a resampling: for each output index its first
// input index, tap count and fixed-point weights.
type coeffs struct {
	ksize  int
	bounds []int // xmin, n pairs
	kk     []int32
	inSize int // every tap lies in [0, inSize): xmin ≥ 0, xmin+n ≤ inSize, n ≤ ksize
}

// precompute mirrors Pillow's precompute_coeffs + normalize_coeffs_8bpc;
// in0 and in1 are float32 as in Pillow's C signature.
func precompute(inSize int, in0, in1 float32, outSize int) coeffs {
	scale := float64(in1-in0) / float64(outSize)
	filterscale := scale
	if filterscale < 1 {
		filterscale = 1
	}
	support := lanczosSupport * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	c := coeffs{ksize: ksize, bounds: make([]int, outSize*2), kk: make([]int32, outSize*ksize), inSize: inSize}
	k := make([]float64, ksize)
	for xx := 0; xx < outSize; xx++ {
		center := float64(in0) + (float64(xx)+0.5)*scale
		ww := 0.0
		ss := 1.0 / filterscale
		xmin := int(center - support + 0.5) // C truncation toward zero
		if xmin < 0 {
			xmin = 0
		}
		xmax := int(center + support + 0.5)
		if xmax > inSize {
			xmax = inSize
		}
		xmax -= xmin
		if xmax < 0 {
			// A box past the image's end: no tap, and the kernels' taps
			// stay inside inSize.
			panic(fmt.Sprintf("imaging: resampling box [%g, %g) outside %d pixels", in0, in1, inSize))
		}
		for x := 0; x < xmax; x++ {
			w := lanczos((float64(x+xmin) - center + 0.5) * ss)
			k[x] = w
			ww += w
		}
		for x := 0; x < xmax; x++ {
			if ww != 0 {
				k[x] /= ww
			}
		}
		for x := 0; x < ksize; x++ {
			v := 0.0
			if x < xmax {
				v = k[x]
			}
			if v < 0 {
				c.kk[xx*ksize+x] = int32(-0.5 + v*(1<<precisionBits))
			} else {
				c.kk[xx*ksize+x] = int32(0.5 + v*(1<<precisionBits))
			}
		}
		c.bounds[xx*2], c.bounds[xx*2+1] = xmin, xmax
	}
	return c
}

func clip8(v int32) uint8 {
	v >>= precisionBits
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// raster is an 8-bit interleaved image: bpp bytes a pixel, the first ch
// of them resampled (Gray: 1/1; RGBA: 4/3 with alpha kept at 255; packed
// RGB: 3/3, only as the source of a horizontal pass into RGBA).
type raster struct {
	pix         []uint8
	stride      int
	w, h        int
	bpp, ch     int
	alphaOpaque bool
}

func grayRaster(g *image.Gray) raster {
	b := g.Bounds()
	return raster{pix: g.Pix[g.PixOffset(b.Min.X, b.Min.Y):], stride: g.Stride, w: b.Dx(), h: b.Dy(), bpp: 1, ch: 1}
}

func rgbaRaster(m *image.RGBA) raster {
	b := m.Bounds()
	return raster{pix: m.Pix[m.PixOffset(b.Min.X, b.Min.Y):], stride: m.Stride, w: b.Dx(), h: b.Dy(), bpp: 4, ch: 3, alphaOpaque: true}
}

func newRaster(like raster, w, h int) raster {
	r := raster{pix: make([]uint8, w*h*like.bpp), stride: w * like.bpp, w: w, h: h, bpp: like.bpp, ch: like.ch, alphaOpaque: like.alphaOpaque}
	if r.alphaOpaque {
		for i := 3; i < len(r.pix); i += 4 {
			r.pix[i] = 255
		}
	}
	return r
}

// coeffKey names one axis of a resampling.
type coeffKey struct {
	inSize, outSize int
	in0, in1        float32
}

// maxMemoAxes bounds a coeffMemo: a batch meets a few slice and tile
// sizes, and beyond the bound coefficients are computed each time.
const maxMemoAxes = 256

// coeffMemo keeps the coefficients of the axes resampled so far, so that
// a batch of same-sized slices computes them once (computing them is
// about a tenth of a tile's resize). The zero value is ready; it is safe
// for concurrent use, and its coefficients are never modified.
type coeffMemo struct {
	mu sync.Mutex
	m  map[coeffKey]coeffs
}

// get returns precompute's coefficients, from the memo when it has them;
// a nil memo computes them.
func (cm *coeffMemo) get(inSize int, in0, in1 float32, outSize int) coeffs {
	if cm == nil {
		return precompute(inSize, in0, in1, outSize)
	}
	k := coeffKey{inSize, outSize, in0, in1}
	cm.mu.Lock()
	c, ok := cm.m[k]
	cm.mu.Unlock()
	if ok {
		return c
	}
	c = precompute(inSize, in0, in1, outSize)
	cm.mu.Lock()
	if cm.m == nil {
		cm.m = map[coeffKey]coeffs{}
	}
	if len(cm.m) < maxMemoAxes {
		cm.m[k] = c
	}
	cm.mu.Unlock()
	return c
}

// box is a source region in Pillow's float32 box convention.
type box [4]float32

// resample resizes src's box region to w×h exactly as Pillow's
// Image.resize(size, LANCZOS, box) does for 8-bit modes, with the
// coefficients of memo (nil: computed here).
func resample(src raster, w, h int, bx box, memo *coeffMemo) raster {
	if src.w == w && src.h == h && bx == (box{0, 0, float32(w), float32(h)}) {
		out := newRaster(src, w, h)
		for y := 0; y < h; y++ {
			copy(out.pix[y*out.stride:y*out.stride+w*src.bpp], src.pix[y*src.stride:])
		}
		return out
	}
	needH := w != src.w || bx[0] != 0 || bx[2] != float32(w)
	needV := h != src.h || bx[1] != 0 || bx[3] != float32(h)
	hc := memo.get(src.w, bx[0], bx[2], w)
	vc := memo.get(src.h, bx[1], bx[3], h)
	yFirst := vc.bounds[0]
	yLast := vc.bounds[h*2-2] + vc.bounds[h*2-1]
	cur, offset := src, 0
	if needH {
		tmp := newRaster(src, w, yLast-yFirst)
		resampleH(tmp, src, yFirst, hc)
		cur, offset = tmp, yFirst
	}
	if needV {
		out := newRaster(cur, cur.w, h)
		resampleV(out, cur, vc, offset)
		cur = out
	}
	return cur
}

func resampleH(dst, src raster, offset int, c coeffs) {
	half := int32(1) << (precisionBits - 1)
	if src.bpp == 1 {
		for yy := 0; yy < dst.h; yy++ {
			horizontalGray(dst.pix[yy*dst.stride:yy*dst.stride+dst.w], src.pix[(yy+offset)*src.stride:], c, half)
		}
		return
	}
	for yy := 0; yy < dst.h; yy++ {
		in := src.pix[(yy+offset)*src.stride:]
		out := dst.pix[yy*dst.stride:]
		if src.bpp == 4 && src.ch == 3 && dst.bpp == 4 && dst.alphaOpaque && kernels.Available() {
			horizontalRGBA(out[:4*dst.w], in[:4*src.w], c)
			continue
		}
		for xx := 0; xx < dst.w; xx++ {
			xmin, n := c.bounds[xx*2], c.bounds[xx*2+1]
			k := c.kk[xx*c.ksize : xx*c.ksize+n]
			if src.ch == 3 && (src.bpp == 3 || src.bpp == 4) {
				var s0, s1, s2 int32
				if src.bpp == 4 {
					s0, s1, s2 = tapsRGB4(in[xmin*4:(xmin+n)*4], k)
				} else {
					s0, s1, s2 = tapsRGB3(in[xmin*3:(xmin+n)*3], k)
				}
				o := out[xx*dst.bpp : xx*dst.bpp+3 : xx*dst.bpp+3]
				o[0], o[1], o[2] = clip8(half+s0), clip8(half+s1), clip8(half+s2)
				continue
			}
			for ch := 0; ch < src.ch; ch++ {
				ss := half
				for x, kv := range k {
					ss += int32(in[(x+xmin)*src.bpp+ch]) * kv
				}
				out[xx*dst.bpp+ch] = clip8(ss)
			}
		}
	}
}

// horizontalRGBA resamples one opaque RGBA row on the AVX2 kernel: the
// bytes of resampleH's loop, alpha 255. The kernel trusts the taps, which
// lie inside c.inSize pixels (precompute), so in must hold that many.
func horizontalRGBA(out, in []byte, c coeffs) {
	w := len(out) / 4
	if len(in) < 4*c.inSize || len(c.bounds) < 2*w || len(c.kk) < w*c.ksize {
		panic(fmt.Sprintf("imaging: coefficients for %d of %d pixels into %d, row of %d", len(c.bounds)/2, c.inSize, w, len(in)/4))
	}
	kernels.HorizontalRGBA(out, in, c.bounds[:2*w], c.kk[:w*c.ksize], c.ksize)
}

// horizontalGray resamples one gray row: six taps (an enlargement by
// about two, the tiles' case) unrolled, others four at a time.
func horizontalGray(out, in []byte, c coeffs, half int32) {
	for xx := range out {
		xmin, n := c.bounds[xx*2], c.bounds[xx*2+1]
		k := c.kk[xx*c.ksize : xx*c.ksize+n]
		if n == 6 {
			r := in[xmin : xmin+6 : xmin+6]
			k := k[:6:6]
			out[xx] = clip8(half + int32(r[0])*k[0] + int32(r[1])*k[1] + int32(r[2])*k[2] + int32(r[3])*k[3] + int32(r[4])*k[4] + int32(r[5])*k[5])
			continue
		}
		out[xx] = clip8(half + tapsGray(in[xmin:xmin+n], k))
	}
}

// tapsGray sums the taps k over gray pixels, four at a time.
func tapsGray(row []byte, k []int32) (s int32) {
	for len(k) >= 4 && len(row) >= 4 {
		s += int32(row[0])*k[0] + int32(row[1])*k[1] + int32(row[2])*k[2] + int32(row[3])*k[3]
		k, row = k[4:], row[4:]
	}
	for len(k) >= 1 && len(row) >= 1 {
		s += int32(row[0]) * k[0]
		k, row = k[1:], row[1:]
	}
	return s
}

// tapsRGB4 sums the taps k over RGBA pixels (alpha ignored), four then two
// at a time, re-slicing so the compiler drops bounds checks: Pillow's
// integer sums, regrouped (integer addition is associative, also when it
// wraps).
func tapsRGB4(row []byte, k []int32) (s0, s1, s2 int32) {
	for len(k) >= 4 && len(row) >= 16 {
		k0, k1, k2, k3 := k[0], k[1], k[2], k[3]
		s0 += int32(row[0])*k0 + int32(row[4])*k1 + int32(row[8])*k2 + int32(row[12])*k3
		s1 += int32(row[1])*k0 + int32(row[5])*k1 + int32(row[9])*k2 + int32(row[13])*k3
		s2 += int32(row[2])*k0 + int32(row[6])*k1 + int32(row[10])*k2 + int32(row[14])*k3
		k, row = k[4:], row[16:]
	}
	for len(k) >= 1 && len(row) >= 4 {
		s0 += int32(row[0]) * k[0]
		s1 += int32(row[1]) * k[0]
		s2 += int32(row[2]) * k[0]
		k, row = k[1:], row[4:]
	}
	return s0, s1, s2
}

// tapsRGB3 is tapsRGB4 over packed RGB pixels.
func tapsRGB3(row []byte, k []int32) (s0, s1, s2 int32) {
	for len(k) >= 4 && len(row) >= 12 {
		k0, k1, k2, k3 := k[0], k[1], k[2], k[3]
		s0 += int32(row[0])*k0 + int32(row[3])*k1 + int32(row[6])*k2 + int32(row[9])*k3
		s1 += int32(row[1])*k0 + int32(row[4])*k1 + int32(row[7])*k2 + int32(row[10])*k3
		s2 += int32(row[2])*k0 + int32(row[5])*k1 + int32(row[8])*k2 + int32(row[11])*k3
		k, row = k[4:], row[12:]
	}
	for len(k) >= 1 && len(row) >= 3 {
		s0 += int32(row[0]) * k[0]
		s1 += int32(row[1]) * k[0]
		s2 += int32(row[2]) * k[0]
		k, row = k[1:], row[3:]
	}
	return s0, s1, s2
}

// resampleV resamples src's columns into dst; src's row 0 is row offset
// of the image the coefficients index.
func resampleV(dst, src raster, c coeffs, offset int) {
	half := int32(1) << (precisionBits - 1)
	rowBytes := dst.w * dst.bpp
	acc := make([]int32, rowBytes)
	for yy := 0; yy < dst.h; yy++ {
		ymin, n := c.bounds[yy*2]-offset, c.bounds[yy*2+1]
		k := c.kk[yy*c.ksize : yy*c.ksize+n]
		out := dst.pix[yy*dst.stride : yy*dst.stride+rowBytes]
		row := func(t int) []byte { return src.pix[(ymin+t)*src.stride : (ymin+t)*src.stride+rowBytes] }
		if kernels.Available() && n > 0 && rowBytes >= 8 {
			verticalRow(out, src, ymin, k, dst.bpp == 4 && dst.alphaOpaque)
			continue
		}
		if n == 6 {
			// Six taps (an enlargement by about two, the tiles' case): one
			// pass, no accumulator.
			vertical6(out, [6][]byte{row(0), row(1), row(2), row(3), row(4), row(5)}, [6]int32(k), half)
		} else {
			// Row-major accumulation, four rows then one at a time: the
			// same integer sums as Pillow's per-pixel loop (integer
			// addition is associative, also when it wraps), cache
			// friendly.
			for i := range acc {
				acc[i] = half
			}
			t := 0
			for ; t+4 <= n; t += 4 {
				r0, r1, r2, r3 := row(t), row(t+1), row(t+2), row(t+3)
				k0, k1, k2, k3 := k[t], k[t+1], k[t+2], k[t+3]
				acc := acc[:len(r0)]
				r1, r2, r3 = r1[:len(r0)], r2[:len(r0)], r3[:len(r0)]
				for i, p := range r0 {
					acc[i] += int32(p)*k0 + int32(r1[i])*k1 + int32(r2[i])*k2 + int32(r3[i])*k3
				}
			}
			for ; t < n; t++ {
				r, kt := row(t), k[t]
				acc := acc[:len(r)]
				for i, p := range r {
					acc[i] += int32(p) * kt
				}
			}
			acc := acc[:len(out)]
			for i, a := range acc {
				out[i] = clip8(a)
			}
		}
		if dst.alphaOpaque {
			for i := 3; i < len(out); i += 4 {
				out[i] = 255
			}
		}
	}
}

// verticalRow writes out[i] = clip8(half + Σt src row ymin+t [i]·k[t]) on
// the AVX2 kernel (the bytes a multiple of eight) and the loop below (the
// rest), every fourth byte 255 when opaque: the bytes of resampleV's loops.
func verticalRow(out []byte, src raster, ymin int, k []int32, opaque bool) {
	n := len(k)
	if ymin < 0 || (ymin+n-1)*src.stride+len(out) > len(src.pix) {
		panic(fmt.Sprintf("imaging: rows %d+%d outside %d rows", ymin, n, src.h))
	}
	var mask uint32
	if opaque {
		mask = 0xff000000
	}
	body := len(out) &^ 7
	kernels.Vertical(out[:body], src.pix[ymin*src.stride:], src.stride, k, mask)
	half := int32(1) << (precisionBits - 1)
	for i := body; i < len(out); i++ {
		s := half
		for t, kt := range k {
			s += int32(src.pix[(ymin+t)*src.stride+i]) * kt
		}
		out[i] = clip8(s)
		if opaque && i%4 == 3 {
			out[i] = 255
		}
	}
}

// vertical6 writes out[i] = clip8(half + Σ rows[t][i]·k[t]) over six rows.
func vertical6(out []byte, rows [6][]byte, k [6]int32, half int32) {
	r0, r1, r2, r3, r4, r5 := rows[0], rows[1][:len(rows[0])], rows[2][:len(rows[0])], rows[3][:len(rows[0])], rows[4][:len(rows[0])], rows[5][:len(rows[0])]
	out = out[:len(r0)]
	for i, p := range r0 {
		s := half + int32(p)*k[0] + int32(r1[i])*k[1] + int32(r2[i])*k[2] + int32(r3[i])*k[3] + int32(r4[i])*k[4] + int32(r5[i])*k[5]
		out[i] = clip8(s)
	}
}

// ResizeGray resizes a grayscale image to w×h with Pillow-identical
// Lanczos resampling.
func ResizeGray(src *image.Gray, w, h int) (*image.Gray, error) {
	return resizeGray(src, w, h, nil)
}

func resizeGray(src *image.Gray, w, h int, memo *coeffMemo) (*image.Gray, error) {
	if w <= 0 || h <= 0 || src.Bounds().Empty() {
		return nil, fmt.Errorf("resize %v to %dx%d: empty image or size", src.Bounds().Size(), w, h)
	}
	r := resample(grayRaster(src), w, h, box{0, 0, float32(src.Bounds().Dx()), float32(src.Bounds().Dy())}, memo)
	return &image.Gray{Pix: r.pix, Stride: r.stride, Rect: image.Rect(0, 0, w, h)}, nil
}
