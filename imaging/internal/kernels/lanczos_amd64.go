//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

var haveAVX2 = cpu.X86.HasAVX2

// Available reports whether the kernels run here (amd64 with AVX2, built
// without the purego tag); when it is false they must not be called.
func Available() bool { return haveAVX2 }

// HorizontalRGBA resamples one row of RGBA pixels into out, len(out)/4
// pixels: output pixel x is, per colour channel, clip8(1<<21 + Σi
// in[4·(xmin+i)+ch]·kk[x·ksize+i]) over the n = bounds[2x+1] taps from
// xmin = bounds[2x], alpha 255 (clip8: shift right by 22, clamp to
// 0..255; the sum wraps as int32). The caller checks that every tap lies
// inside in and kk.
//
//go:noescape
func HorizontalRGBA(out, in []byte, bounds []int, kk []int32, ksize int)

// Vertical writes out[i] = clip8(1<<21 + Σt src[t·stride+i]·k[t]), ORed
// with byte i%4 of orMask (little-endian), for every i below len(out)
// rounded down to a multiple of eight. The caller checks that every row
// lies inside src and that k is not empty.
//
//go:noescape
func Vertical(out, src []byte, stride int, k []int32, orMask uint32)

// ExpandRGB writes packed RGB pixels of src as opaque RGBA into dst, four
// at a time while src has sixteen bytes left to read (it reads one pixel
// and a byte past the last four it converts) and dst room for them; it
// returns how many pixels it converted, the caller converts the rest.
//
//go:noescape
func ExpandRGB(dst, src []byte) int

// UnfilterPaeth reverses the PNG Paeth filter on cur (the row above,
// already unfiltered, is prev, as long) for pixels of bpp bytes, 3 or 4,
// from the row's start, while four bytes are left to read; it returns the
// bytes it did, the caller does the rest. A 3-byte pixel is read and
// written with the byte after it, which is written back unchanged.
//
//go:noescape
func UnfilterPaeth(cur, prev []byte, bpp int) int

// UnfilterAverage is UnfilterPaeth for the Average filter.
//
//go:noescape
func UnfilterAverage(cur, prev []byte, bpp int) int
