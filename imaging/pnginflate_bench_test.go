package imaging_test

import (
	"bytes"
	"image/png"
	"testing"
	"testing/fstest"

	. "github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/imagingtest"
)

// BenchmarkDecodeSlidePNG decodes scripts/bench's 4000×2667 slide (RGB,
// written at best speed as the benchmark inputs are) on the fast path,
// inflating its image data as it streams and whole (libdeflate in a build
// with the libdeflate tag, klauspost otherwise), side by side:
//
//	go test -tags libdeflate -run '^$' -bench DecodeSlidePNG -count 5 ./imaging
func BenchmarkDecodeSlidePNG(b *testing.B) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, imagingtest.SlideImage(4000, 2667, 1)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	for _, c := range []struct {
		name  string
		whole bool
	}{{"stream", false}, {"whole", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(4000 * 2667 * 3)
			for b.Loop() {
				if _, err := DecodePNGFastForTest(data, c.whole); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadOverview renders the overview of the bench's slide (a
// 4000×2667 RGB PNG at best speed, as scripts/bench writes it) at 1024 px,
// as npcorch prep does: decoded, unfiltered and shrunk row by row.
//
//	go test -tags libdeflate -run '^$' -bench ReadOverview -count 3 ./imaging
func BenchmarkReadOverview(b *testing.B) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, imagingtest.SlideImage(4000, 2667, 1)); err != nil {
		b.Fatal(err)
	}
	fsys := fstest.MapFS{"slide.png": &fstest.MapFile{Data: buf.Bytes()}}
	b.SetBytes(4000 * 2667 * 3)
	for b.Loop() {
		if _, err := ReadOverview(fsys, "", "slide.png", DefaultLimits, 1024); err != nil {
			b.Fatal(err)
		}
	}
}
