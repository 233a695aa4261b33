package imaging

import (
	"image"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"testing"
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
