package report

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkWrite reports a run of 21 models (the paper's multimodal model
// count) with GPU samples, writing every file and plot.
func BenchmarkWrite(b *testing.B) {
	run := filepath.Join(b.TempDir(), "run")
	writeRun(b, run, runOptions{gpu: true, extraModels: 19})
	out := b.TempDir()
	b.ResetTimer()
	for i := range b.N {
		if err := Write(testRegistry(), run, nil, filepath.Join(out, fmt.Sprint(i))); err != nil {
			b.Fatal(err)
		}
	}
}
