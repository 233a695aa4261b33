package dicomfile_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/imaging/dicomfile"
)

// referencedImage is the sample's (0008,1140) sequence and the UID its
// one item holds.
const (
	referencedImage    dicomfile.Tag = 0x00081140
	referencedInstance dicomfile.Tag = 0x00081155
)

// TestItemsAcrossEncodings reads the items of a sequence written with
// undefined lengths (npcorch's writer) and, by dcmtk, with explicit
// lengths, in big endian, and inside a deflated data set.
func TestItemsAcrossEncodings(t *testing.T) {
	variants := map[string][]byte{"own writer (undefined lengths)": sample().Encode()}
	if _, err := exec.LookPath("dcmconv"); err == nil {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.dcm")
		os.WriteFile(in, sample().Encode(), 0o644)
		for _, args := range [][]string{{"+te", "+e"}, {"+te", "-e"}, {"+tb", "+e"}, {"+tb", "-e"}, {"+ti", "-e"}, {"+td", "+e"}} {
			out := filepath.Join(dir, "out.dcm")
			if b, err := exec.Command("dcmconv", append(args, in, out)...).CombinedOutput(); err != nil {
				t.Fatalf("dcmconv %v: %v %s", args, err, b)
			}
			variants["dcmconv "+strings.Join(args, " ")], _ = os.ReadFile(out)
		}
	} else {
		t.Log("dcmtk is not installed: only the own writer's encoding is read")
	}
	for name, data := range variants {
		f, err := dicomfile.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		items, err := f.Items(referencedImage)
		if err != nil || len(items) != 1 {
			t.Fatalf("%s: %d items, %v", name, len(items), err)
		}
		if got := items[0].String(referencedInstance); got != "1.2.3.4.999" {
			t.Errorf("%s: item holds %q", name, got)
		}
		if got := items[0].String(dicomfile.SOPClassUID); got != "" {
			t.Errorf("%s: item has an element of the data set: %q", name, got)
		}
		if nested, err := items[0].Items(referencedInstance); nested != nil || err != nil {
			t.Errorf("%s: a UID read as a sequence: %v %v", name, nested, err)
		}
		if got := f.String(dicomfile.SeriesDescription); got != "T2 FS AX" {
			t.Errorf("%s: the element after the sequence reads %q", name, got)
		}
	}
}

// TestItemsOfDCMTKDICOMDIR reads the directory records of a DICOMDIR that
// dcmmkdir wrote over three files in two series.
func TestItemsOfDCMTKDICOMDIR(t *testing.T) {
	if _, err := exec.LookPath("dcmmkdir"); err != nil {
		t.Skip("dcmtk (dcmmkdir) is not installed")
	}
	dir := t.TempDir()
	files := []string{"DICOM/S1/IM1", "DICOM/S1/IM2", "DICOM/S2/IM1"}
	for i, name := range files {
		s := sample()
		s.Instance = i + 1
		if i == 2 {
			s.SeriesUID = "1.2.3.5"
		}
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), s.Encode(), 0o644)
	}
	cmd := exec.Command("dcmmkdir", "-q", "+I", "-Nrc", "+r", "+D", "DICOMDIR", "DICOM")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dcmmkdir: %v %s", err, b)
	}
	data, err := os.ReadFile(filepath.Join(dir, "DICOMDIR"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := dicomfile.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	records, err := f.Items(dicomfile.DirectoryRecordSequence)
	if err != nil {
		t.Fatal(err)
	}
	var types, refs []string
	for _, r := range records {
		types = append(types, r.String(dicomfile.DirectoryRecordType))
		if id := r.Strings(dicomfile.ReferencedFileID); id != nil {
			refs = append(refs, strings.Join(id, "/"))
		}
	}
	slices.Sort(types)
	if want := []string{"IMAGE", "IMAGE", "IMAGE", "PATIENT", "SERIES", "SERIES", "STUDY"}; !slices.Equal(types, want) {
		t.Errorf("record types %v, want %v", types, want)
	}
	slices.Sort(refs)
	if !slices.Equal(refs, files) {
		t.Errorf("referenced files %v, want %v", refs, files)
	}
}

// TestItemsRefusesDamage: a defined-length sequence holding something
// other than items, or an item longer than its sequence, is an error
// naming the sequence, not a panic; Parse itself accepts both (it does
// not look inside defined-length values).
func TestItemsRefusesDamage(t *testing.T) {
	head := "\x08\x00\x60\x00CS\x02\x00MR" + "\x08\x00\x40\x11SQ\x00\x00\x08\x00\x00\x00"
	for name, c := range map[string]struct{ content, want string }{
		"not an item":       {"\x08\x00\x18\x00UI\x00\x00", "where an item was expected"},
		"item past the end": {"\xfe\xff\x00\xe0\x10\x00\x00\x00", "truncated"},
		"an empty item":     {"\xfe\xff\x00\xe0\x00\x00\x00\x00", ""},
	} {
		f, err := dicomfile.Parse([]byte(head + c.content))
		if err != nil {
			t.Fatalf("%s: Parse: %v", name, err)
		}
		items, err := f.Items(referencedImage)
		if c.want == "" {
			if err != nil || len(items) != 1 || len(items[0].Elements) != 0 {
				t.Errorf("%s: an empty item read as %v, %v", name, items, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), "(0008,1140)") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
