//go:build openslide

package imaging

import (
	"errors"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenSlidePyramidalTIFF reads a small pyramidal TIFF made by vips the
// way .ci/run makes it, and checks the overview against the same image
// read as a plain PNG (JPEG Q85 tiles differ a little).
func TestOpenSlidePyramidalTIFF(t *testing.T) {
	if _, err := exec.LookPath("vips"); err != nil {
		t.Skip("vips not installed (Debian: libvips-tools)")
	}
	dir := t.TempDir()
	src := SlideImageForTest(1800, 1200)
	f, _ := os.Create(filepath.Join(dir, "in.png"))
	png.Encode(f, src)
	f.Close()
	cmd := exec.Command("vips", "tiffsave", filepath.Join(dir, "in.png"), filepath.Join(dir, "slide.tif"),
		"--tile", "--tile-width", "256", "--tile-height", "256", "--pyramid", "--compression", "jpeg", "--Q", "85")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("vips: %v %s", err, out)
	}
	fsys := os.DirFS(dir)
	s, err := ReadSlide(fsys, dir, "slide.tif", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(ImageSlide); ok {
		t.Fatal("pyramidal TIFF was not opened by OpenSlide")
	}
	if n := len(s.LevelDimensions()); n < 2 {
		t.Fatalf("%d levels, want a pyramid", n)
	}
	ov, err := Overview(s, 256)
	if err != nil {
		t.Fatal(err)
	}
	if ov.Rect.Size() != image.Pt(256, 171) {
		t.Fatalf("overview %v, want 256x171", ov.Rect.Size())
	}
	plain, err := ReadSlide(fsys, dir, "in.png", DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Overview(plain, 256)
	if err != nil {
		t.Fatal(err)
	}
	var sum, n float64
	for i := range ref.Pix {
		if i%4 == 3 {
			continue
		}
		d := float64(ref.Pix[i]) - float64(ov.Pix[i])
		if d < 0 {
			d = -d
		}
		sum += d
		n++
	}
	if mean := sum / n; mean > 12 {
		t.Errorf("mean difference to the plain overview %.1f, want a close match", mean)
	}
}

// TestNonSlideSVSInTheOpenSlideBuild (issue 12, item 20): a .svs file
// OpenSlide does not recognise is reported as such, not as a build
// without OpenSlide.
func TestNonSlideSVSInTheOpenSlideBuild(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.svs"), []byte("this is not a slide"), 0o644)
	_, err := ReadSlide(os.DirFS(dir), dir, "x.svs", DefaultLimits)
	if err == nil || errors.Is(err, ErrNoOpenSlide) || !strings.Contains(err.Error(), "OpenSlide does not recognise") {
		t.Fatalf("non-slide .svs: %v", err)
	}
}
