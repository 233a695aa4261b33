package imaging

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"
	"testing/fstest"
)

func TestReadOverviewMatchesOverview(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 8))
	fsys := fstest.MapFS{}
	add := func(name string, m image.Image) {
		var buf bytes.Buffer
		if err := png.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
		fsys[name] = &fstest.MapFile{Data: buf.Bytes()}
	}
	rect := image.Rect(0, 0, 533, 217)
	gray, rgb, nrgba := image.NewGray(rect), SlideImageForTest(533, 217), image.NewNRGBA(rect)
	gray16 := image.NewGray16(rect)
	pal := image.NewPaletted(rect, color.Palette{color.White, color.RGBA{200, 90, 160, 255}})
	for i := range gray.Pix {
		gray.Pix[i] = uint8(r.IntN(256))
		pal.Pix[i] = uint8(r.IntN(2))
	}
	for i := range nrgba.Pix {
		nrgba.Pix[i] = uint8(r.IntN(256))
		if i%4 == 3 && r.IntN(3) == 0 {
			nrgba.Pix[i] = 255 * uint8(r.IntN(2)) // opaque and clear pixels too
		}
	}
	for i := range gray16.Pix {
		gray16.Pix[i] = uint8(r.IntN(256))
	}
	add("gray.png", gray)
	add("rgb.png", rgb)
	add("rgba.png", nrgba)
	add("gray16.png", gray16)
	add("paletted.png", pal)
	streamed := map[string]bool{"gray.png": true, "rgb.png": true, "rgba.png": true}
	for name := range fsys {
		for _, size := range []int{1024, 200, 64, 17} { // copy, Lanczos only, reduce and Lanczos
			s, err := ReadSlide(fsys, "", name, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Overview(s, size)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadOverview(fsys, "", name, DefaultLimits, size)
			if err != nil {
				t.Fatalf("%s at %d: %v", name, size, err)
			}
			if got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
				t.Errorf("%s at %d px: the overview differs from Overview(ReadSlide)", name, size)
			}
			_, err = streamPNGOverview(fsys, name, DefaultLimits.MaxSlidePixels, size)
			if streamed[name] != (err == nil) {
				t.Errorf("%s: streaming path error %v", name, err)
			}
		}
	}
}

func TestReadOverviewErrors(t *testing.T) {
	var buf bytes.Buffer
	png.Encode(&buf, SlideImageForTest(300, 200))
	good := buf.Bytes()
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0x40
	fsys := fstest.MapFS{
		"huge.png":      {Data: pngHeader(30000, 30000)},
		"truncated.png": {Data: good[:len(good)*2/3]},
		"flipped.png":   {Data: flipped},
		"good.png":      {Data: good},
	}
	if _, err := ReadOverview(fsys, "", "huge.png", DefaultLimits, 64); !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge: %v, want ErrTooLarge", err)
	}
	for _, name := range []string{"truncated.png", "flipped.png", "missing.png", "../escape.png"} {
		_, err := ReadOverview(fsys, "", name, DefaultLimits, 64)
		_, rerr := ReadSlide(fsys, "", name, DefaultLimits)
		if err == nil || rerr == nil || err.Error() != rerr.Error() {
			t.Errorf("%s: ReadOverview error %v, ReadSlide error %v: want ReadSlide's", name, err, rerr)
		}
	}
	if _, err := ReadOverview(fsys, "", "good.png", DefaultLimits, 0); err == nil {
		t.Error("an overview of 0 px was made")
	}
}
