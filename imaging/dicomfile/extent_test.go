package dicomfile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// PydicomTestFiles is where Debian's python3-pydicom installs pydicom's
// test corpus: DICOM files written by other programs than ours.
const PydicomTestFiles = "/usr/lib/python3/dist-packages/pydicom/data/test_files"

// pydicomFile reads a file of pydicom's corpus, skipping the test when
// the package is not installed.
func pydicomFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(PydicomTestFiles, name))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not there: install Debian's python3-pydicom (apt-get install python3-pydicom) for pydicom's test files", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkCopy reads data as the import's scan does: the header, then the
// pixel data's extent from the size alone.
func checkCopy(data []byte) error {
	f, err := dicomfile.ScanHeader(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return f.CheckPixelData(bytes.NewReader(data), int64(len(data)))
}

// pixelEnd is where the whole file's pixel data ends: a file cut before
// it cannot be decoded.
func pixelEnd(t *testing.T, data []byte) int {
	t.Helper()
	f, err := dicomfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Pixels.Encapsulated {
		return f.Pixels.Offset + len(f.Pixels.Native)
	}
	last := f.Pixels.Fragments[len(f.Pixels.Fragments)-1]
	end := f.Pixels.Offset
	for end < len(data) && &data[end] != &last[0] {
		end++
	}
	return end + len(last) + 8 // the sequence delimiter
}

// nextCut steps through the cut points of a file whose pixel data runs
// from start to end: every byte within 64 of either, every 61st between.
func nextCut(cut, start, end int) int {
	if cut < start+64 || cut >= end-64 {
		return cut + 1
	}
	return min(cut+61, end-64)
}

// truncatedCopies checks copies of data cut at every byte near the start
// and the end of its pixel data, and at many between, to its end: a copy cut before the pixel data ends
// is named truncated by the header scan; and the scan passes a copy
// exactly when Parse, which prep uses, reads it.
func truncatedCopies(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := checkCopy(data); err != nil {
		t.Fatalf("%s whole: %v", name, err)
	}
	end := pixelEnd(t, data)
	f, _ := dicomfile.Parse(data)
	failed := 0
	for cut := f.Pixels.Offset - 16; cut < len(data); cut = nextCut(cut, f.Pixels.Offset, end) {
		err := checkCopy(data[:cut])
		p, perr := dicomfile.Parse(data[:cut])
		switch {
		case cut < f.Pixels.Offset && err == nil && perr == nil && !p.HasPixelData:
			// Cut where the pixel data element starts: a whole data set
			// without pixel data (mrseries names an MR image without one).
		case cut < end && err == nil:
			t.Errorf("%s cut at byte %d of %d (pixel data %d..%d): the scan passes it", name, cut, len(data), f.Pixels.Offset, end)
		case cut < end && !errors.Is(err, dicomfile.ErrTruncated):
			t.Errorf("%s cut at byte %d: %v, not named truncated", name, cut, err)
		case cut >= end && err != nil:
			t.Errorf("%s cut at byte %d, after its pixel data (%d): %v", name, cut, end, err)
		case (err == nil) != (perr == nil):
			t.Errorf("%s cut at byte %d: the scan says %v, Parse %v", name, cut, err, perr)
		}
		if err != nil {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("%s: no cut failed", name)
	}
}

// TestCheckPixelDataOwnWriter: our own writer's files, cut through their
// pixel data, and a value shorter than the image.
func TestCheckPixelDataOwnWriter(t *testing.T) {
	s := sample()
	truncatedCopies(t, "explicit VR little endian", s.Encode())
	s.NoPreamble, s.BitsAllocated, s.BitsStored = true, 8, 8
	truncatedCopies(t, "8-bit without preamble", s.Encode())

	s = sample()
	s.Pixels = s.Pixels[:len(s.Pixels)-3]
	err := checkCopy(s.Encode())
	if !errors.Is(err, dicomfile.ErrShortPixelData) {
		t.Fatalf("a value of %d pixels for 12×10: %v", len(s.Pixels), err)
	}
	const want = "a value of 234 bytes; 12×10 pixels × 1 sample(s) × 16 bits × 1 frame(s) need 240"
	if !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Errorf("error %q does not say %q", err, want)
	}
}

// TestCheckPixelDataPydicomCorpus: pydicom's MR test files, in every
// encoding it ships them (native little and big endian, implicit VR,
// padded, deflated, and encapsulated RLE, JPEG-LS and JPEG 2000), cut
// through their pixel data; and its own truncated MR file.
func TestCheckPixelDataPydicomCorpus(t *testing.T) {
	for _, name := range []string{"MR_small.dcm", "MR_small_implicit.dcm", "MR_small_bigendian.dcm", "MR_small_expb.dcm",
		"MR_small_padded.dcm", "MR_small_RLE.dcm", "MR_small_jpeg_ls_lossless.dcm", "MR_small_jp2klossless.dcm"} {
		truncatedCopies(t, name, pydicomFile(t, name))
	}
	err := checkCopy(pydicomFile(t, "MR_truncated.dcm"))
	if !errors.Is(err, dicomfile.ErrTruncated) {
		t.Errorf("pydicom's MR_truncated.dcm: %v", err)
	}
	// A deflated file's data set is read whole by ScanHeader: a cut
	// anywhere in it is found there.
	dfl := pydicomFile(t, "image_dfl.dcm")
	if err := checkCopy(dfl); err != nil {
		t.Fatalf("image_dfl.dcm: %v", err)
	}
	for _, cut := range []int{len(dfl) / 2, len(dfl) - 100, len(dfl) - 10} {
		if err := checkCopy(dfl[:cut]); !errors.Is(err, dicomfile.ErrTruncated) {
			t.Errorf("image_dfl.dcm cut at byte %d of %d: %v", cut, len(dfl), err)
		}
	}
	for cut := len(dfl) - 10; cut < len(dfl); cut++ {
		err := checkCopy(dfl[:cut])
		if _, perr := dicomfile.Parse(dfl[:cut]); (err == nil) != (perr == nil) {
			t.Errorf("image_dfl.dcm cut at byte %d: the scan says %v, Parse %v", cut, err, perr)
		}
	}
}
