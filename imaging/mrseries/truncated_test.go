package mrseries

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// pydicomTestFiles is where Debian's python3-pydicom installs pydicom's
// test corpus.
const pydicomTestFiles = "/usr/lib/python3/dist-packages/pydicom/data/test_files"

// cut is a truncated copy of a file: its name and where it is cut.
type cut struct {
	name string
	at   int
}

// TestScanNamesTruncatedFiles: the header scan names every MR file cut
// short in its pixel data as unreadable — a copy of our own writer's
// slice and of pydicom's MR files (native, big endian, implicit VR, RLE
// and JPEG 2000 encapsulated) cut at several points — and reads the
// whole files of the same series. Before, such files passed the scan and
// failed only at prep.
func TestScanNamesTruncatedFiles(t *testing.T) {
	root := t.TempDir()
	s := series("A", "1.1", "1.1.1", "T2 TRA", 6, axial)
	own := s[0].Encode()
	px := pixelOffset(t, own)
	for k := range s {
		write(t, root, fmt.Sprintf("A/s1/IM%d", k), s[k].Encode())
	}
	// The pixel data element starts 12 bytes before its value.
	cuts := []cut{{"A/s1/IM0", px + 1}, {"A/s1/IM1", px + 64}, {"A/s1/IM2", len(own) - 1}, {"A/s1/IM3", px - 12}, {"A/s1/IM4", px - 4}}
	for _, c := range cuts {
		write(t, root, c.name, s[0].Encode()[:c.at])
	}
	// pydicom's files, cut at points counted from the start of their pixel
	// data's value (positive) or back from its end (negative).
	pydicom := map[string][]int{}
	if _, err := os.Stat(pydicomTestFiles); err != nil {
		t.Log("pydicom's test files are not installed (Debian python3-pydicom): only our own writer's files are cut")
	} else {
		pydicom = map[string][]int{
			"MR_small.dcm": {1, 4096, -1}, "MR_small_bigendian.dcm": {2, -100}, "MR_small_implicit.dcm": {-7},
			// Encapsulated: without the sequence delimiter, inside it,
			// inside the last fragment, inside the first fragment's item
			// header.
			"MR_small_RLE.dcm": {-8, -3, -9, 12}, "MR_small_jp2klossless.dcm": {-8, -500, 4},
		}
	}
	for name, points := range pydicom {
		data, err := os.ReadFile(filepath.Join(pydicomTestFiles, name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, root, "B/"+name, data)
		start, end := pixelExtent(t, data)
		for _, p := range points {
			at := start + p
			if p < 0 {
				at = end + p
			}
			c := cut{fmt.Sprintf("B/cut%d-%s", p, name), at}
			write(t, root, c.name, data[:c.at])
			cuts = append(cuts, c)
		}
	}
	if len(pydicom) > 0 { // and pydicom's own truncated MR file
		data, err := os.ReadFile(filepath.Join(pydicomTestFiles, "MR_truncated.dcm"))
		if err != nil {
			t.Fatal(err)
		}
		write(t, root, "B/MR_truncated.dcm", data)
		cuts = append(cuts, cut{"B/MR_truncated.dcm", len(data)})
	}

	tree, err := Scan(context.Background(), os.DirFS(root), Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	unreadable := map[string]string{}
	for _, u := range tree.Unreadable {
		unreadable[u.Path] = u.Reason
	}
	for _, c := range cuts {
		reason, ok := unreadable[c.name]
		switch {
		case !ok:
			t.Errorf("%s, cut at byte %d: not named by the scan", c.name, c.at)
		case !strings.Contains(reason, "truncated") && !strings.Contains(reason, "without pixel data"):
			t.Errorf("%s: %s", c.name, reason)
		}
		delete(unreadable, c.name)
	}
	for p, r := range unreadable {
		t.Errorf("%s is not cut, named unreadable: %s", p, r)
	}
	if r := fmt.Sprint(tree.Unreadable); !strings.Contains(r, `corrupt or truncated DICOM (patient A, series 1 "T2 TRA", instance 1): pixel data (7fe0,0010) at byte`) {
		t.Errorf("the reason does not name the patient, series and instance: %s", r)
	}
	whole := 0
	for _, s := range tree.Series {
		whole += len(s.Files)
	}
	if want := 1 + len(pydicom); whole != want {
		t.Errorf("%d whole files read, want %d: %v", whole, want, tree.Series)
	}
}

func pixelOffset(t *testing.T, data []byte) int {
	start, _ := pixelExtent(t, data)
	return start
}

// pixelExtent is where a whole file's pixel data value starts and ends
// (after the sequence delimiter of encapsulated pixel data).
func pixelExtent(t *testing.T, data []byte) (start, end int) {
	t.Helper()
	f, err := dicomfile.Parse(data)
	if err != nil || f.Pixels == nil {
		t.Fatalf("%v (pixel data %v)", err, f.Pixels)
	}
	if !f.Pixels.Encapsulated {
		return f.Pixels.Offset, f.Pixels.Offset + len(f.Pixels.Native)
	}
	last := f.Pixels.Fragments[len(f.Pixels.Fragments)-1]
	end = f.Pixels.Offset
	for &data[end] != &last[0] {
		end++
	}
	return f.Pixels.Offset, end + len(last) + 8
}
