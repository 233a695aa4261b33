package placement

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"testing"

	"github.com/disintegration/imaging"
)

// Qwen2-VL image processor geometry: 14-pixel patches, 2×2 merge, two
// temporal frames per still image.
const (
	proxyPatch    = 14
	proxyMerge    = 2
	proxyTemporal = 2
)

// planeGroupPNG returns a deterministic 512×1644 8-bit grayscale PNG with
// smooth anatomy-like gradients and noise, the shape imaging/prep writes.
func planeGroupPNG(tb testing.TB) []byte {
	tb.Helper()
	const w, h = 512, 1644
	img := image.NewGray(image.Rect(0, 0, w, h))
	seed := uint32(1)
	for y := range h {
		for x := range w {
			seed = seed*1664525 + 1013904223 // LCG noise, ±12 grey levels
			v := 120 + 80*math.Sin(float64(x)/37)*math.Cos(float64(y)/53) + float64(int(seed>>24)%25-12)
			img.Pix[y*img.Stride+x] = uint8(max(0, min(255, v)))
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// proxyPreprocess does in Go what a Qwen2-VL-family API server does to one
// image: decode, RGB, resize to multiples of 28 (bicubic), rescale and
// normalise to float32, and lay the pixels out as patches.
func proxyPreprocess(data []byte, out []float32) ([]float32, error) {
	src, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	f := proxyPatch * proxyMerge
	b := src.Bounds()
	w := max(f, int(math.Round(float64(b.Dx())/float64(f)))*f)
	h := max(f, int(math.Round(float64(b.Dy())/float64(f)))*f)
	rgb := imaging.Resize(src, w, h, imaging.CatmullRom)
	mean := [3]float32{0.48145466, 0.4578275, 0.40821073}
	std := [3]float32{0.26862954, 0.26130258, 0.27577711}
	gh, gw := h/proxyPatch, w/proxyPatch
	dim := 3 * proxyTemporal * proxyPatch * proxyPatch
	out = out[:0]
	if cap(out) < gh*gw*dim {
		out = make([]float32, 0, gh*gw*dim)
	}
	// Patch order as the processor flattens it: merge blocks row-major,
	// then the patches of a block, then channel, frame, row, column.
	for by := 0; by < gh/proxyMerge; by++ {
		for bx := 0; bx < gw/proxyMerge; bx++ {
			for my := range proxyMerge {
				for mx := range proxyMerge {
					py, px := (by*proxyMerge+my)*proxyPatch, (bx*proxyMerge+mx)*proxyPatch
					for c := range 3 {
						for range proxyTemporal {
							for y := range proxyPatch {
								row := rgb.Pix[(py+y)*rgb.Stride+px*4:]
								for x := range proxyPatch {
									v := float32(row[x*4+c]) / 255
									out = append(out, (v-mean[c])/std[c])
								}
							}
						}
					}
				}
			}
		}
	}
	return out, nil
}

func TestProxyPreprocessShape(t *testing.T) {
	out, err := proxyPreprocess(planeGroupPNG(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	// 512×1644 becomes 504×1652: 36×118 patches of 3×2×14×14 values, the
	// same tensor transformers' Qwen2VLImageProcessor returns.
	if want := 36 * 118 * 3 * 2 * 14 * 14; len(out) != want {
		t.Fatalf("%d values, want %d", len(out), want)
	}
	if _, err := proxyPreprocess([]byte("not a png"), nil); err == nil {
		t.Error("garbage decoded")
	}
}

// BenchmarkPreprocessProxy times one 512×1644 plane group through the Go
// proxy of an API server's image preprocessing; docs/BENCHMARKS.md
// compares it with testdata/preprocess_proxy.py (Pillow + numpy):
//
//	go test -run '^$' -bench PreprocessProxy -cpu 1 ./launcher/placement/
func BenchmarkPreprocessProxy(b *testing.B) {
	data := planeGroupPNG(b)
	var out []float32
	for b.Loop() {
		var err error
		if out, err = proxyPreprocess(data, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "images/s")
}
