package mrseries

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/npcorch/npcorch/imaging/imagingtest"
)

// slices of one series: n slices of 8×8, positions along the normal of o.
func series(patient, study, uid, desc string, n int, o []float64) []imagingtest.DICOMSlice {
	out := make([]imagingtest.DICOMSlice, n)
	normal := [3]float64{o[1]*o[5] - o[2]*o[4], o[2]*o[3] - o[0]*o[5], o[0]*o[4] - o[1]*o[3]}
	for k := range out {
		out[k] = imagingtest.DICOMSlice{PatientID: patient, StudyUID: study, SeriesUID: uid, SeriesDescription: desc,
			SeriesNumber: 1, FrameOfReference: study + ".9", Instance: k + 1, Orientation: [6]float64(o),
			Position: [3]float64{4 * float64(k) * normal[0], 4 * float64(k) * normal[1], 4 * float64(k) * normal[2]},
			Spacing:  [2]float64{1, 1}, Thickness: 4, Rows: 8, Cols: 8, BitsStored: 12, Pixels: make([]uint16, 64)}
	}
	return out
}

func write(t *testing.T, root, name string, data []byte) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestScanGroupsAndAccountsForEveryFile(t *testing.T) {
	root := t.TempDir()
	// Patient A: two series mixed in one folder, files without extension,
	// one without the preamble.
	t1 := series("A", "1.1", "1.1.1", "T1 TRA", 3, axial)
	t2 := series("A", "1.1", "1.1.2", "T2 TRA", 3, axial)
	t2[1].NoPreamble = true
	for k := range t1 {
		write(t, root, fmt.Sprintf("A/ST1/IM%d", 2*k), t1[k].Encode())
		write(t, root, fmt.Sprintf("A/ST1/IM%d", 2*k+1), t2[k].Encode())
	}
	// Patient B: a localizer in three orientations, a series without
	// geometry, a CT, a truncated file, and things that are not DICOM.
	loc := series("B", "2.1", "2.1.1", "survey", 3, axial)
	loc[1].Orientation, loc[2].Orientation = [6]float64(coronal), [6]float64(sagittal)
	for k, s := range loc {
		write(t, root, fmt.Sprintf("B/loc/%d.dcm", k), s.Encode())
	}
	nog := series("B", "2.1", "2.1.2", "T1 COR", 2, coronal)
	nog[0].NoGeometry = true
	write(t, root, "B/nog/1", nog[0].Encode())
	write(t, root, "B/nog/2", nog[1].Encode())
	ct := series("B", "2.1", "2.1.3", "HEAD", 1, axial)[0]
	ct.Modality = "CT"
	write(t, root, "B/ct/1", ct.Encode())
	whole := series("B", "2.1", "2.1.4", "T2 COR", 1, coronal)[0].Encode()
	write(t, root, "B/broken/1", whole[:400])
	write(t, root, "B/notes.txt", []byte("report to follow"))
	write(t, root, "B/.DS_Store", []byte{0, 0, 0, 1})
	write(t, root, ".trash/A/IM9", t1[0].Encode())
	write(t, root, "out/dicom/A/IM1", t1[0].Encode())
	if err := os.Symlink(filepath.Join(root, "A", "ST1", "IM0"), filepath.Join(root, "B", "link")); err != nil {
		t.Fatal(err)
	}

	tree, err := Scan(context.Background(), os.DirFS(root), Options{Workers: 3, Exclude: []string{"out"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range tree.Series {
		got = append(got, fmt.Sprintf("%s %s %s %q %d files: %s; problems %q", s.PatientID, s.StudyUID, s.UID, s.Description, len(s.Files), s.Class, s.Problems))
	}
	want := []string{
		`A 1.1 1.1.1 "T1 TRA" 3 files: T1 axial; problems []`,
		`A 1.1 1.1.2 "T2 TRA" 3 files: T2 axial; problems []`,
		`B 2.1 2.1.1 "survey" 3 files: localizer; problems ["the slices lie in several orientations"]`,
		`B 2.1 2.1.2 "T1 COR" 2 files: T1 coronal; problems ["1 of 2 files lack ImagePositionPatient or ImageOrientationPatient, which order the slices"]`,
		`B 2.1 2.1.3 "HEAD" 1 files: not MR; problems []`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("series:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if f := tree.Series[0].Files; strings.Join(f, " ") != "A/ST1/IM0 A/ST1/IM2 A/ST1/IM4" {
		t.Errorf("files of the T1: %v", f)
	}
	var skipped []string
	for _, s := range tree.Skipped {
		skipped = append(skipped, s.Path+": "+s.Reason)
	}
	wantSkipped := []string{".trash/: hidden", "B/.DS_Store: hidden", "B/link: " + ReasonLink, "B/notes.txt: not DICOM", "out/: in an excluded folder"}
	if strings.Join(skipped, "\n") != strings.Join(wantSkipped, "\n") {
		t.Errorf("skipped:\n%s\nwant\n%s", strings.Join(skipped, "\n"), strings.Join(wantSkipped, "\n"))
	}
	if len(tree.Unreadable) != 1 || tree.Unreadable[0].Path != "B/broken/1" || !strings.Contains(tree.Unreadable[0].Reason, "truncated") {
		t.Errorf("unreadable: %+v", tree.Unreadable)
	}
	if tree.Files != 12 {
		t.Errorf("%d DICOM files read, want 12", tree.Files)
	}
}

// TestScanHonoursDICOMDIR: dcmmkdir's DICOMDIR is read as the index of
// its folder: files it references are matched whatever their case, a
// referenced file that is gone is named, a DICOM file it does not list is
// read and named too.
func TestScanHonoursDICOMDIR(t *testing.T) {
	if _, err := exec.LookPath("dcmmkdir"); err != nil {
		t.Skip("dcmtk (dcmmkdir) is not installed")
	}
	root := t.TempDir()
	cd := filepath.Join(root, "CD1")
	s := series("C", "3.1", "3.1.1", "T2 FS AX", 4, axial)
	for k := range s {
		write(t, cd, fmt.Sprintf("DICOM/S1/IM%d", k), s[k].Encode())
	}
	cmd := exec.Command("dcmmkdir", "-q", "+I", "-Nrc", "+r", "+D", "DICOMDIR", "DICOM")
	cmd.Dir = cd
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dcmmkdir: %v %s", err, b)
	}
	// As a CD mounted with lower-case names shows it; one file lost, one
	// added after the DICOMDIR was written.
	if err := os.Rename(filepath.Join(cd, "DICOM", "S1", "IM1"), filepath.Join(cd, "DICOM", "S1", "im1")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cd, "DICOM", "S1", "IM3"))
	write(t, cd, "DICOM/S1/EXTRA", series("C", "3.1", "3.1.1", "T2 FS AX", 5, axial)[4].Encode())
	write(t, cd, "AUTORUN.INF", []byte("[autorun]"))

	tree, err := Scan(context.Background(), os.DirFS(root), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.DICOMDIRs) != 1 || tree.DICOMDIRs[0] != "CD1/DICOMDIR" {
		t.Errorf("DICOMDIRs %v", tree.DICOMDIRs)
	}
	if len(tree.Missing) != 1 || tree.Missing[0].Path != "CD1/DICOM/S1/IM3" || !strings.Contains(tree.Missing[0].Reason, "CD1/DICOMDIR") {
		t.Errorf("missing %+v", tree.Missing)
	}
	if strings.Join(tree.Unlisted, " ") != "CD1/DICOM/S1/EXTRA" {
		t.Errorf("unlisted %v", tree.Unlisted)
	}
	if len(tree.Series) != 1 || len(tree.Series[0].Files) != 4 || tree.Series[0].Class.String() != "T2 FS axial" {
		t.Fatalf("series %+v", tree.Series)
	}
	skipped := fmt.Sprint(tree.Skipped)
	if !strings.Contains(skipped, "{CD1/AUTORUN.INF not DICOM}") || !strings.Contains(skipped, "{CD1/DICOMDIR "+ReasonDICOMDIR+"}") {
		t.Errorf("skipped %v", skipped)
	}
}

// FuzzScan: no file content panics the scan, and every file is
// accounted for: read, skipped or unreadable, named once.
func FuzzScan(f *testing.F) {
	s := series("A", "1", "1.1", "T1+C COR FS", 1, coronal)[0]
	f.Add(s.Encode())
	s.NoPreamble, s.NoPixelData = true, true
	f.Add(s.Encode())
	f.Add([]byte("DICM"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{"a/IM1": {Data: data}, "DICOMDIR": {Data: data}, "b/IM2": {Data: bytes.Clone(data)}}
		tree, err := Scan(context.Background(), fsys, Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, s := range tree.Series {
			for _, f := range s.Files {
				seen[f]++
			}
			_ = s.Class.String()
		}
		for _, s := range append(tree.Skipped, tree.Unreadable...) {
			seen[s.Path]++
		}
		if len(seen) != 3 || seen["a/IM1"] != 1 || seen["b/IM2"] != 1 || seen["DICOMDIR"] != 1 {
			t.Fatalf("files accounted for: %v", seen)
		}
	})
}
