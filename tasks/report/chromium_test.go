package report

import (
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// chromiumPath is Debian's chromium; the CI installs it with
// `apt-get install -y chromium`.
const chromiumPath = "/usr/bin/chromium"

// TestHTMLInChromium opens report.html in headless Chromium, with every
// network feature off, and checks the screenshot is a real rendering: the
// right size, and not one flat colour. Set NPCORCH_SCREENSHOT to a path to
// keep the screenshot for a person to look at.
func TestHTMLInChromium(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Skipf("headless Chromium check skipped: %s is not installed (apt-get install -y chromium)", chromiumPath)
	}
	if testing.Short() {
		t.Skip("headless Chromium check skipped in -short mode")
	}
	base := scoredRun(t, "base", runOptions{gpu: true})
	other := scoredRun(t, "fixed", runOptions{alpha: map[string]string{"pathology/P3": "1"}})
	out := filepath.Join(t.TempDir(), "out")
	if err := Write(testRegistry(), base, []string{other}, out); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	if keep := os.Getenv("NPCORCH_SCREENSHOT"); keep != "" {
		shot = keep
	}
	// The browser's own start-up may take a while on a loaded CI machine;
	// the deadline only stops a hung browser, it asserts nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--window-size=1400,2400",
		"file://"+filepath.Join(out, HTMLFile))
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, msg)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 2400 {
		t.Errorf("screenshot is %dx%d, want 1400x2400", b.Dx(), b.Dy())
	}
	colors, dark := inkStats(img)
	// A blank or failed page is one or two colours; the report has text,
	// table borders, shading and plots.
	if colors < 50 {
		t.Errorf("screenshot has %d distinct colours: the page looks blank", colors)
	}
	if dark < 0.005 {
		t.Errorf("only %.4f of the screenshot is dark ink: no text rendered", dark)
	}
}

// inkStats counts distinct colours (up to a cap) and the share of dark
// pixels.
func inkStats(img image.Image) (colors int, dark float64) {
	seen := map[uint32]bool{}
	b := img.Bounds()
	n, d := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if len(seen) < 10000 {
				seen[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
			}
			if r+g+bl < 3*0x5000 {
				d++
			}
			n++
		}
	}
	return len(seen), float64(d) / float64(n)
}
