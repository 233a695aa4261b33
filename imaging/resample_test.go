package imaging

import (
	"image"
	"image/draw"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/npcorch/npcorch/imaging/internal/kernels"
)

func loadPNG(t *testing.T, name string) image.Image {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func toRGBA(m image.Image) *image.RGBA {
	out := image.NewRGBA(m.Bounds())
	draw.Draw(out, out.Bounds(), m, m.Bounds().Min, draw.Src)
	return out
}

// The goldens were made by Pillow 9.4 (Debian bookworm's python3-pil):
// Image.resize(size, LANCZOS) and Image.thumbnail(size, LANCZOS).
func TestResizeGrayMatchesPillow(t *testing.T) {
	src := loadPNG(t, "pillow_src_gray.png").(*image.Gray)
	for _, name := range []string{"pillow_gray_up_128x96.png", "pillow_gray_down_23x17.png"} {
		want := loadPNG(t, name).(*image.Gray)
		got, err := ResizeGray(src, want.Rect.Dx(), want.Rect.Dy())
		if err != nil {
			t.Fatal(err)
		}
		diff := 0
		for i := range want.Pix {
			if got.Pix[i] != want.Pix[i] {
				diff++
			}
		}
		if diff != 0 {
			t.Errorf("%s: %d of %d pixels differ from Pillow", name, diff, len(want.Pix))
		}
	}
}

func TestThumbnailMatchesPillow(t *testing.T) {
	src := toRGBA(loadPNG(t, "pillow_src_rgb.png"))
	for _, tc := range []struct {
		name string
		size int
	}{{"pillow_thumb_64.png", 64}, {"pillow_thumb_200.png", 200}} {
		want := toRGBA(loadPNG(t, tc.name))
		got := Thumbnail(src, tc.size, tc.size)
		if got.Rect.Size() != want.Rect.Size() {
			t.Fatalf("%s: size %v, Pillow %v", tc.name, got.Rect.Size(), want.Rect.Size())
		}
		diff := 0
		for i := range want.Pix {
			if got.Pix[i] != want.Pix[i] {
				diff++
			}
		}
		if diff != 0 {
			t.Errorf("%s: %d of %d bytes differ from Pillow", tc.name, diff, len(want.Pix))
		}
	}
}

func TestThumbnailSize(t *testing.T) {
	for _, tc := range []struct{ w, h, b, ww, wh int }{
		{457, 301, 64, 64, 42},
		{301, 457, 64, 42, 64},
		{4000, 3000, 1024, 1024, 768},
		{1000, 10, 100, 100, 1},
		{10, 1000, 100, 1, 100},
	} {
		w, h, ok := ThumbnailSize(tc.w, tc.h, tc.b, tc.b)
		if !ok || w != tc.ww || h != tc.wh {
			t.Errorf("ThumbnailSize(%d,%d,%d) = %d,%d,%v; want %d,%d", tc.w, tc.h, tc.b, w, h, ok, tc.ww, tc.wh)
		}
	}
	if _, _, ok := ThumbnailSize(50, 40, 64, 64); ok {
		t.Error("an image inside the box must not be resized")
	}
}

func TestBestLevel(t *testing.T) {
	ds := []float64{1, 4, 16, 64}
	for _, tc := range []struct {
		d    float64
		want int
	}{{0.5, 0}, {1, 0}, {3.9, 0}, {4, 1}, {20, 2}, {1000, 3}} {
		if got := BestLevel(ds, tc.d); got != tc.want {
			t.Errorf("BestLevel(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

func BenchmarkResizeGray256to512(b *testing.B) {
	src := image.NewGray(image.Rect(0, 0, 256, 256))
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 7)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ResizeGray(src, 512, 512); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThumbnailRows shrinks 4000×2667 packed RGB rows (an RGB slide
// as the PNG decoder hands them) to 1024 px: the horizontal Lanczos pass
// per row, then the vertical one.
//
//	go test -run '^$' -bench ThumbnailRows -count 3 ./imaging
func BenchmarkThumbnailRows(b *testing.B) {
	const w, h = 4000, 2667
	src := SlideImageForTest(w, h)
	rows := make([][]byte, h)
	for y := range rows {
		rows[y] = make([]byte, 3*w)
		rgbaToRGBForTest(rows[y], src.Pix[y*src.Stride:])
	}
	b.SetBytes(w * h * 3)
	for b.Loop() {
		t := newThumbnailer(w, h, 1024, 1024, 3)
		for _, r := range rows {
			t.row(r)
		}
		t.result()
	}
}

func rgbaToRGBForTest(dst, src []byte) {
	for x := 0; x < len(dst)/3; x++ {
		copy(dst[3*x:3*x+3], src[4*x:4*x+3])
	}
}

// TestAVX2KernelsMatchGoLoops checks the AVX2 Lanczos kernels against the
// definition (Pillow's per-pixel sums, clip8), on Lanczos coefficients of
// shrinks and enlargements and on random ones that wrap and saturate.
func TestAVX2KernelsMatchGoLoops(t *testing.T) {
	if !kernels.Available() {
		t.Skip("no AVX2 on this machine or in this build (purego)")
	}
	r := rand.New(rand.NewPCG(5, 16))
	half := int32(1) << (precisionBits - 1)
	randomCoeffs := func(inSize, outSize int) coeffs {
		c := coeffs{ksize: 1 + r.IntN(30), bounds: make([]int, 2*outSize), inSize: inSize}
		c.kk = make([]int32, outSize*c.ksize)
		for i := range c.kk {
			c.kk[i] = int32(r.Uint32())
			if r.IntN(2) == 0 {
				c.kk[i] >>= 8 + r.IntN(20)
			}
		}
		for x := 0; x < outSize; x++ {
			n := r.IntN(min(c.ksize, inSize) + 1)
			c.bounds[2*x], c.bounds[2*x+1] = r.IntN(inSize-n+1), n
		}
		return c
	}
	for trial := 0; trial < 300; trial++ {
		inSize, outSize := 1+r.IntN(300), 1+r.IntN(300)
		c := precompute(inSize, 0, float32(inSize), outSize)
		if trial%3 == 0 {
			c = randomCoeffs(inSize, outSize)
		}
		in := make([]byte, 4*inSize)
		for i := range in {
			in[i] = byte(r.Uint32())
		}
		got := make([]byte, 4*outSize)
		horizontalRGBA(got, in, c)
		for x := 0; x < outSize; x++ {
			xmin, n := c.bounds[2*x], c.bounds[2*x+1]
			for ch := 0; ch < 4; ch++ {
				want := byte(255)
				if ch < 3 {
					s := half
					for i, k := range c.kk[x*c.ksize : x*c.ksize+n] {
						s += int32(in[4*(xmin+i)+ch]) * k
					}
					want = clip8(s)
				}
				if got[4*x+ch] != want {
					t.Fatalf("trial %d, horizontal %d→%d: pixel %d channel %d is %d, want %d", trial, inSize, outSize, x, ch, got[4*x+ch], want)
				}
			}
		}

		// Vertical: rows of any byte width, gray (no mask) or RGBA.
		opaque := r.IntN(2) == 0
		width := 1 + r.IntN(200)
		if opaque {
			width *= 4
		}
		src := raster{w: width, h: inSize, stride: width + r.IntN(9), bpp: 1, ch: 1}
		if opaque {
			src.w, src.bpp, src.ch, src.alphaOpaque = width/4, 4, 3, true
		}
		src.pix = make([]byte, (inSize-1)*src.stride+width)
		for i := range src.pix {
			src.pix[i] = byte(r.Uint32())
		}
		for y := 0; y < outSize; y++ {
			ymin, n := c.bounds[2*y], c.bounds[2*y+1]
			if n == 0 {
				continue
			}
			k := c.kk[y*c.ksize : y*c.ksize+n]
			out := make([]byte, width)
			verticalRow(out, src, ymin, k, opaque)
			for i := range out {
				s := half
				for tp, kt := range k {
					s += int32(src.pix[(ymin+tp)*src.stride+i]) * kt
				}
				want := clip8(s)
				if opaque && i%4 == 3 {
					want = 255
				}
				if out[i] != want {
					t.Fatalf("trial %d, vertical %d→%d, row %d: byte %d of %d is %d, want %d", trial, inSize, outSize, y, i, width, out[i], want)
				}
			}
		}
	}
}

// TestRGBToRGBAMatchesDefinition checks rgbToRGBA (the SSE kernel and its
// tail) against the definition for every row length up to 40 pixels.
func TestRGBToRGBAMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	for n := 0; n <= 40; n++ {
		src := make([]byte, 3*n)
		for i := range src {
			src[i] = byte(r.Uint32())
		}
		dst := make([]byte, 4*n)
		rgbToRGBA(dst, src)
		for x := 0; x < n; x++ {
			want := [4]byte{src[3*x], src[3*x+1], src[3*x+2], 255}
			if [4]byte(dst[4*x:4*x+4]) != want {
				t.Fatalf("%d pixels: pixel %d is %v, want %v", n, x, dst[4*x:4*x+4], want)
			}
		}
	}
}
