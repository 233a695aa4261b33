package importer

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// editReview rewrites a review table, setting the slot of the rows whose
// patient and series number match.
func editReview(t *testing.T, from, to string, slots map[[2]string]string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	slot := slices.Index(recs[0], "slot")
	for _, r := range recs[1:] {
		if v, ok := slots[[2]string{r[0], r[3]}]; ok {
			r[slot] = v
		}
	}
	var b bytes.Buffer
	csv.NewWriter(&b).WriteAll(recs)
	mustWrite(t, to, b.Bytes())
}

// TestReviewRoundTrip: the review table import writes, edited, decides
// the slots of the next import; fed back unedited, it gives the same
// files, byte for byte; the linked files follow the choices.
func TestReviewRoundTrip(t *testing.T) {
	root := t.TempDir()
	tree, out := filepath.Join(root, "export"), filepath.Join(root, "data")
	files := writePACS(t, tree)
	labels := filepath.Join(root, "labels.csv")
	mustWrite(t, labels, []byte(strings.Replace(labelsCSV, "42,T1", "0042,T1", 1)))
	opt := Options{DICOM: tree, Labels: labels, Out: out}
	if _, err := Import(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	// The user takes P003's first T1 axial, uses P002's oblique T2 and its
	// T1+C coronal without fat suppression, and leaves the unclassified
	// series out (it is listed, so decided).
	edited := filepath.Join(root, "edited.csv")
	editReview(t, filepath.Join(out, ReviewName), edited, map[[2]string]string{
		{"P003", "9"}: "", {"P003", "2"}: "t1_ax", {"P002", "2"}: "T2_Ax", {"P002", "5"}: "T1+C_COR_FS"})
	opt.Review = edited
	res, err := Import(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range res.Problems {
		kinds = append(kinds, string(p.Kind))
	}
	// The oblique T2 the user chose cannot be matched with the axial T1:
	// said before prep would fail on it.
	if want := []string{"match", "unreadable"}; !slices.Equal(kinds, want) || !strings.Contains(res.Problems[0].String(), "T1_Ax and T2_Ax are 30.0° apart") {
		t.Errorf("problems after the review: %v, want the oblique T2 and the unreadable file", res.Problems)
	}
	p2, p3 := res.Dataset.Patients[1], res.Dataset.Patients[2]
	if seqs := sequences(p2.Series); strings.Join(seqs, " ") != "T1_Ax T2_Ax T1+C_Ax T1_COR T1+C_COR_FS" {
		t.Errorf("P002's series after the review: %v", seqs)
	}
	if len(p3.Series) != 1 || p3.Series[0].Files[0] != "dicom/"+files["1.9.3.2"][0] {
		t.Errorf("P003's T1_Ax after the review: %+v", p3.Series)
	}
	if _, err := os.Stat(filepath.Join(out, MirrorDir, filepath.FromSlash(files["1.9.3.9"][0]))); !os.IsNotExist(err) {
		t.Errorf("the link to the series no longer chosen is still there: %v", err)
	}
	review := filepath.Join(out, ReviewName)
	first := map[string][]byte{}
	for _, f := range []string{DatasetName, ReviewName, ReportName} {
		first[f], _ = os.ReadFile(filepath.Join(out, f))
	}
	if !bytes.Contains(first[ReviewName], []byte("T2_Ax: chosen in the review; the classification alone fits no slot")) {
		t.Errorf("the review does not say the oblique T2 was put in T2_Ax by the user")
	}
	// Fed back as it is, the review is a fixed point.
	again := filepath.Join(root, "again.csv")
	data, _ := os.ReadFile(review)
	mustWrite(t, again, data)
	opt.Review = again
	if _, err := Import(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	for f, want := range first {
		if got, _ := os.ReadFile(filepath.Join(out, f)); !bytes.Equal(got, want) {
			t.Errorf("%s changed when the review was fed back as it was", f)
		}
	}
}

func sequences(refs []dataset.SeriesRef) []string {
	var out []string
	for _, r := range refs {
		out = append(out, r.Sequence)
	}
	return out
}

// TestReviewErrorsNameRowAndColumn: a review with bad rows is refused
// whole, each bad cell named by row and column, and nothing is written.
func TestReviewErrorsNameRowAndColumn(t *testing.T) {
	root := t.TempDir()
	tree, out := filepath.Join(root, "export"), filepath.Join(root, "data")
	writePACS(t, tree)
	labels := filepath.Join(root, "labels.csv")
	mustWrite(t, labels, []byte(labelsCSV))
	if _, err := Import(context.Background(), Options{DICOM: tree, Labels: labels, Out: out}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, DatasetName))
	review := filepath.Join(root, "bad.csv")
	data, _ := os.ReadFile(filepath.Join(out, ReviewName))
	lines := strings.Split(string(data), "\n")
	// Rows (1 is the header): 2 patient 0042, 3–11 P001's series 1–9 (4
	// T1WI TRA, 5 T2, 11 the CT), 12–16 P002's, 17 P003's series 2, 20 its
	// series 9 (T1_Ax).
	edit := func(row int, from, to string) {
		if !strings.Contains(lines[row-1], from) {
			t.Fatalf("row %d has no %q: %s", row, from, lines[row-1])
		}
		lines[row-1] = strings.Replace(lines[row-1], from, to, 1)
	}
	edit(4, "1.9.1.2,", "1.9.1.77,")
	edit(5, ",T2_Ax,", ",T2_AXIAL,")
	edit(11, ",not MR,,,,,,,", ",not MR,,,,,,T1_SAG,")
	edit(12, "P002,", "P003,")
	edit(17, ",T1 axial,T1,no,no,axial,0.0,,", ",T1 axial,T1,no,no,axial,0.0,T1_Ax,")
	lines = append(lines[:len(lines)-1], lines[19], "")
	mustWrite(t, review, []byte(strings.Join(lines, "\n")))
	_, err := Import(context.Background(), Options{DICOM: tree, Labels: labels, Out: out, Review: review})
	var ce CellErrors
	if !errors.As(err, &ce) {
		t.Fatalf("error %v, want cell errors", err)
	}
	want := []string{
		review + ": row 4, column series_uid: series \"1.9.1.77\" of patient \"P001\" is not in the DICOM tree",
		review + ": row 5, column slot: \"T2_AXIAL\" is not a sequence slot",
		review + ": row 11, column slot: series 9 \"HEAD\" (1.9.1.9) cannot fill T1_SAG: it is not MR (modality CT)",
		review + ": row 12, column patient: series 1.9.2.1 belongs to patient \"P002\", not \"P003\"",
		review + ": row 20, column slot: row 17 already puts a series of patient P003 in T1_Ax: keep one",
		review + ": row 21, column series_uid: series 1.9.3.9 is listed again (first in row 20)",
	}
	if len(ce) != len(want) {
		t.Errorf("%d errors, want %d:\n%v", len(ce), len(want), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("no error %q in:\n%v", w, err)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(out, DatasetName)); !bytes.Equal(after, before) {
		t.Error("a refused review changed dataset.json")
	}
	mustWrite(t, review, []byte("patient,series\nP001,1.9.1.2\n"))
	_, err = Import(context.Background(), Options{DICOM: tree, Labels: labels, Out: out, Review: review})
	for _, w := range []string{"row 1, column study_uid: no such column", "row 1, column series_uid: no such column", "row 1, column slot: no such column"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("a review without its columns: %v", err)
		}
	}
}
