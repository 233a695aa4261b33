package synth

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestPNGEncoderRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rect := image.Rect(0, 0, 37, 23)
	gray := image.NewGray(rect)
	gray16 := image.NewGray16(rect)
	pal := image.NewPaletted(rect, color.Palette{color.RGBA{1, 2, 3, 255}, color.RGBA{250, 128, 7, 255}, color.RGBA{0, 0, 0, 255}})
	for i := range gray.Pix {
		gray.Pix[i] = uint8(r.IntN(256))
		pal.Pix[i] = uint8(r.IntN(3))
	}
	for i := range gray16.Pix {
		gray16.Pix[i] = uint8(r.IntN(256))
	}
	// A sub-image has a stride wider than its rows.
	sub := gray.SubImage(image.Rect(0, 0, 20, 10)).(*image.Gray)
	var e pngEncoder
	for _, img := range []image.Image{gray, gray16, pal, sub} {
		var first []byte
		for round := range 2 { // the second round reuses a pooled writer
			b, err := e.encode(img)
			if err != nil {
				t.Fatalf("%T: %v", img, err)
			}
			if round == 0 {
				first = b
			} else if !bytes.Equal(b, first) {
				t.Fatalf("%T: the second encoding differs from the first", img)
			}
			got, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%T: decode: %v", img, err)
			}
			want := img
			if s, ok := img.(*image.Gray); ok && s == sub {
				want = image.NewGray(image.Rect(0, 0, 20, 10))
				for y := range 10 {
					copy(want.(*image.Gray).Pix[y*20:], sub.Pix[y*sub.Stride:y*sub.Stride+20])
				}
			}
			if !samePixels(got, want) {
				t.Errorf("%T: decoded pixels differ", img)
			}
		}
	}
	if _, err := e.encode(image.NewNRGBA(rect)); err == nil {
		t.Error("encoding an NRGBA image succeeded")
	}

	// Expanded to RGB, the paletted image decodes to the same colours.
	b, err := e.encodeRGB(pal)
	if err != nil {
		t.Fatal(err)
	}
	got, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decode RGB: %v", err)
	}
	if _, ok := got.(*image.RGBA); !ok {
		t.Fatalf("RGB PNG decodes to %T, want *image.RGBA", got)
	}
	for y := range rect.Dy() {
		for x := range rect.Dx() {
			if got.At(x, y) != color.Color(pal.Palette[pal.ColorIndexAt(x, y)]) {
				t.Fatalf("pixel (%d,%d) = %v, want %v", x, y, got.At(x, y), pal.At(x, y))
			}
		}
	}
}

func samePixels(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() || reflect.TypeOf(a) != reflect.TypeOf(b) {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 || a1 != a2 {
				return false
			}
		}
	}
	return true
}
