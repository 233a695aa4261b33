package synth

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkGenerate measures the default dataset (8 L3 and 4 CarePath
// patients, 256×256 slices, 2000×1500 slides), files included.
func BenchmarkGenerate(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Generate(context.Background(), DefaultOptions(filepath.Join(dir, strconv.Itoa(i)))); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPatient(b *testing.B) (*patient, *renderer) {
	b.Helper()
	opt, err := DefaultOptions("unused").withDefaults()
	if err != nil {
		b.Fatal(err)
	}
	opt.Patients, opt.CarePath = 1, 0
	ps, err := planDataset(opt, opt.Structures)
	if err != nil {
		b.Fatal(err)
	}
	return ps[0], &renderer{size: opt.ImageSize, noise: newNoiseTable(rand.New(rand.NewPCG(1, 2)))}
}

// BenchmarkRenderSlice measures drawing and encoding one 256×256 slice.
func BenchmarkRenderSlice(b *testing.B) {
	p, rd := benchPatient(b)
	s := &p.series[0]
	var n int
	for b.Loop() {
		png, err := rd.renderSlice(p, s, s.slices[len(s.slices)/2], rand.New(rand.NewPCG(1, 3)))
		if err != nil {
			b.Fatal(err)
		}
		n = len(png)
	}
	b.ReportMetric(float64(n), "png-bytes")
}

// BenchmarkRenderSlide measures drawing and encoding one 2000×1500 slide.
func BenchmarkRenderSlide(b *testing.B) {
	p, rd := benchPatient(b)
	for b.Loop() {
		if _, err := p.slide.render(rd); err != nil {
			b.Fatal(err)
		}
	}
}
