package imaging_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/imaging"
	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// pydicomTestFiles is where Debian's python3-pydicom installs pydicom's
// test corpus.
const pydicomTestFiles = "/usr/lib/python3/dist-packages/pydicom/data/test_files"

func pydicomFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pydicomTestFiles, name))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not there: install Debian's python3-pydicom (apt-get install python3-pydicom) for pydicom's test files", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func needGDCM(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gdcmconv"); err != nil {
		t.Skip("GDCM's gdcmconv is not installed: apt-get install libgdcm-tools")
	}
}

func diffPixels(a, b []byte) (n, maxAbs int) {
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d != 0 {
			n++
			maxAbs = max(maxAbs, d, -d)
		}
	}
	return n, maxAbs
}

// TestJPEG2000MRDecodes (issue 25, 11b): an MR image in JPEG 2000 is
// decoded (GDCM's gdcmconv decompresses it to exactly the pixels pydicom
// decodes): pydicom's lossless J2K copy of its MR_small.dcm gives the same
// bytes as the uncompressed file, and so do our own slices (windowed,
// percentiles, signed and rescaled) compressed by GDCM, lossless
// (1.2.840.10008.1.2.4.90); a lossy one (.91) decodes, close to them where
// the values are unsigned.
func TestJPEG2000MRDecodes(t *testing.T) {
	needGDCM(t)
	ctx := context.Background()
	dir := t.TempDir()
	tools := imaging.DecompressTools{TempDir: dir}
	j2k := pydicomFile(t, "MR_small_jp2klossless.dcm")
	want, err := imaging.DecodeDICOMSlice(ctx, pydicomFile(t, "MR_small.dcm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := imaging.DecodeDICOMSlice(ctx, j2k, tools)
	if err != nil {
		t.Fatalf("MR_small_jp2klossless.dcm: %v", err)
	}
	if n, _ := diffPixels(got.Pix, want.Pix); n != 0 || got.Rect != want.Rect {
		t.Errorf("MR_small_jp2klossless.dcm: %d of %d pixels differ from MR_small.dcm's", n, len(want.Pix))
	}

	for name, sl := range compressionVariants() {
		native := sl.Encode()
		want, err := imaging.DecodeDICOMSlice(ctx, native, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		in, out := filepath.Join(dir, "in.dcm"), filepath.Join(dir, "out.dcm")
		if err := os.WriteFile(in, native, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, enc := range []struct {
			syntax string
			args   []string
		}{{"1.2.840.10008.1.2.4.90", []string{"--j2k"}}, {"1.2.840.10008.1.2.4.91", []string{"--j2k", "--lossy", "-q", "60"}}} {
			if b, err := exec.Command("gdcmconv", append(enc.args, in, out)...).CombinedOutput(); err != nil {
				t.Fatalf("gdcmconv %v: %v %s", enc.args, err, b)
			}
			comp, _ := os.ReadFile(out)
			if f, err := dicomfile.Parse(comp); err != nil || f.Syntax != enc.syntax {
				t.Fatalf("gdcmconv %v wrote %v (%v), want transfer syntax %s", enc.args, f, err, enc.syntax)
			}
			got, err := imaging.DecodeDICOMSlice(ctx, comp, tools)
			if err != nil {
				t.Fatalf("%s, %s: %v", name, enc.syntax, err)
			}
			n, maxAbs := diffPixels(got.Pix, want.Pix)
			switch {
			case enc.syntax == "1.2.840.10008.1.2.4.90" && n != 0:
				t.Errorf("%s, lossless J2K: %d of %d pixels differ from the uncompressed file's", name, n, len(want.Pix))
			case maxAbs > 64 && !sl.Signed:
				// GDCM's lossy encoder ("very experimental", it says)
				// moves signed 12-bit values far; pydicom decodes its
				// output to the same values gdcmconv --raw gives.
				t.Errorf("%s, lossy J2K: pixels differ by up to %d of 255 from the uncompressed file's", name, maxAbs)
			}
		}
	}
}

// TestJPEG2000WithoutGDCM: without gdcmconv a JPEG 2000 file fails with
// an error naming the program, its Debian package and the other way out;
// a transfer syntax no program here decompresses is refused with the list
// of those read.
func TestJPEG2000WithoutGDCM(t *testing.T) {
	j2k := pydicomFile(t, "MR_small_jp2klossless.dcm")
	const want = "transfer syntax 1.2.840.10008.1.2.4.90 (JPEG 2000) needs gdcmconv (Debian package libgdcm-tools) to decompress, which is not installed: install it, or convert the file to an uncompressed transfer syntax first"
	_, err := imaging.DecodeDICOMSlice(context.Background(), j2k, nil)
	var m *imaging.MissingToolError
	if !errors.As(err, &m) || !errors.Is(err, imaging.ErrNeedsTool) || err.Error() != want {
		t.Errorf("without a decoder: %v\nwant %s", err, want)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = imaging.DecodeDICOMSlice(context.Background(), j2k, imaging.DecompressTools{TempDir: t.TempDir()})
	if !errors.As(err, &m) || err.Error() != want {
		t.Errorf("without gdcmconv on PATH: %v\nwant %s", err, want)
	}
	// JPEG 2000 part 2 (multi-component), which neither dcmtk nor GDCM's
	// gdcmconv --raw is asked to decompress.
	part2 := bytes.Replace(j2k, []byte("1.2.840.10008.1.2.4.90"), []byte("1.2.840.10008.1.2.4.92"), 1)
	_, err = imaging.DecodeDICOMSlice(context.Background(), part2, imaging.DecompressTools{TempDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "transfer syntax 1.2.840.10008.1.2.4.92 (a compressed transfer syntax) is not read: npcorch reads implicit and explicit VR little endian") {
		t.Errorf("JPEG 2000 part 2: %v", err)
	}
}
