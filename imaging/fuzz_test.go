package imaging

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"
)

func FuzzParseSidecar(f *testing.F) {
	f.Add([]byte(`{"sequence":"T1_Ax","frame_of_reference":"F","orientation":[1,0,0,0,1,0],"pixel_spacing":[1,1],"slice_thickness":3,"slices":[{"file":"a.png","instance":1,"position":[0,0,0]}]}`))
	f.Add([]byte(`{"slices":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseSidecar(data)
		if err != nil {
			return
		}
		if len(m.Slices) == 0 {
			t.Fatal("accepted a series without slices")
		}
		if _, err := m.Normal(); err != nil {
			t.Fatal("accepted a series without a normal")
		}
	})
}

func FuzzCheckHeader(f *testing.F) {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 4, 3)))
	f.Add(buf.Bytes())
	f.Add(pngHeader(30000, 30000))
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 1 << 16
		cfg, _, err := CheckHeader(data, max)
		if err != nil {
			return
		}
		if int64(cfg.Width)*int64(cfg.Height) > max {
			t.Fatalf("accepted %dx%d over the limit", cfg.Width, cfg.Height)
		}
		if m, err := DecodeImage(data, max); err == nil {
			ToGray8(m)
		}
	})
}

func FuzzDecodeDICOMSlice(f *testing.F) {
	raw := []uint16{1, 2, 3, 4, 5, 6, 7, 8, 9}
	good := writeDICOM(f, true, 1, -3, []string{"4", "6"}, raw, 3, 3)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := DecodeDICOMSlice(context.Background(), data, nil)
		if err == nil && (g == nil || len(g.Pix) != g.Rect.Dx()*g.Rect.Dy()) {
			t.Fatal("bad image without error")
		}
	})
}
