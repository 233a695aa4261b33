package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// TestLabelsFromCSVAndXLSX: the same sheet as CSV (comma, or semicolon
// with a byte order mark as spreadsheets save it) and as XLSX gives the
// same labels; patient IDs kept as text keep their leading zeros.
func TestLabelsFromCSVAndXLSX(t *testing.T) {
	dir := t.TempDir()
	rows := [][]string{
		{"Patient ID", "T stage", "N-Stage", "Cohorts", "t_from", "t_to", "n_from", "n_to", "Age"},
		{"0042", "t3", "N1", "sequence t_groups", "40", "-35", "", "", "61"},
		{"", "", "", "", "", "", "", "", ""},
		{"P7", "", "n0", "", "", "", "30,5", "-75", ""},
	}
	want := []Label{
		{Row: 2, Patient: "0042", TStage: "T3", NStage: "N1", Cohorts: []string{"sequence", "t_groups"}, T: &dataset.Range{From: 40, To: -35}},
		{Row: 4, Patient: "P7", NStage: "N0", N: &dataset.Range{From: 30.5, To: -75}},
	}
	var csvText, semi strings.Builder
	for _, r := range rows {
		semi.WriteString(strings.Join(r, ";") + "\r\n")
		quoted := slices.Clone(r)
		for i, c := range quoted {
			if strings.Contains(c, ",") {
				quoted[i] = `"` + c + `"`
			}
		}
		csvText.WriteString(strings.Join(quoted, ",") + "\n")
	}
	files := map[string][]byte{"labels.csv": []byte(csvText.String()), "excel.csv": []byte("\xef\xbb\xbf" + semi.String())}
	for name, data := range files {
		mustWrite(t, filepath.Join(dir, name), data)
	}
	x := excelize.NewFile()
	for i, r := range rows {
		for j, c := range r {
			cell, _ := excelize.CoordinatesToCellName(j+1, i+1)
			x.SetCellStr("Sheet1", cell, c)
		}
	}
	if err := x.SaveAs(filepath.Join(dir, "labels.xlsx")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"labels.csv", "excel.csv", "labels.xlsx"} {
		got, unused, err := ReadLabels(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		if strings.Join(unused, ",") != "age" {
			t.Errorf("%s: unused columns %v", name, unused)
		}
	}
}

// TestLabelsErrorsNameRowAndColumn: every bad cell is named, and an
// import with bad labels writes nothing.
func TestLabelsErrorsNameRowAndColumn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "labels.csv")
	mustWrite(t, file, []byte(`patient_id,t_stage,n_stage,cohorts,t_from,t_to
P1,T5,N1,,,
P2,T1,N4,cards,10,
,T2,,,,
P1,T1,,,,
P3,,,"sequence,n_groups",x,3
`))
	_, _, err := ReadLabels(file)
	var ce CellErrors
	if !errors.As(err, &ce) {
		t.Fatalf("error %v", err)
	}
	want := []string{
		file + `: row 2, column t_stage: "T5" is not T1, T2, T3 or T4`,
		file + `: row 3, column n_stage: "N4" is not N0, N1, N2 or N3`,
		file + `: row 3, column cohorts: "cards" is not a cohort an import fills`,
		file + `: row 3, column t_to: empty, and t_from is given`,
		file + `: row 4, column patient_id: empty`,
		file + `: row 5, column patient_id: patient P1 again (first in row 2)`,
		file + `: row 6, column t_from: "x" is not a number of mm`,
	}
	if len(ce) != len(want) {
		t.Errorf("%d errors, want %d:\n%v", len(ce), len(want), err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("no error %q in:\n%v", w, err)
		}
	}
	out := filepath.Join(dir, "out")
	if _, err := Import(context.Background(), Options{DICOM: dir, Labels: file, Out: out}); err == nil {
		t.Fatal("an import with bad labels ran")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an import with bad labels wrote %s", out)
	}
	mustWrite(t, file, []byte("name,t_stage\nx,T1\n"))
	if _, _, err := ReadLabels(file); err == nil || !strings.Contains(err.Error(), "row 1, column patient_id: no patient ID column") {
		t.Errorf("a sheet without a patient column: %v", err)
	}
}

// TestImportInPlace: a tree inside the dataset folder is referenced where
// it is (nothing linked), and the import's own files, there too, are not
// read as part of it on the next run.
func TestImportInPlace(t *testing.T) {
	out := t.TempDir()
	tree := filepath.Join(out, "pacs")
	files := writePACS(t, tree)
	labels := filepath.Join(t.TempDir(), "labels.csv")
	mustWrite(t, labels, []byte("patient_id\nP003\n"))
	for range 2 {
		res, err := Import(context.Background(), Options{DICOM: tree, Labels: labels, Out: out})
		if err != nil {
			t.Fatal(err)
		}
		p := res.Dataset.Patients[0]
		if len(p.Series) != 1 || p.Series[0].Files[0] != "pacs/"+files["1.9.3.9"][0] {
			t.Fatalf("series %+v", p.Series)
		}
		if res.Linked+res.Copied != 0 {
			t.Errorf("%d files linked and %d copied for a tree inside the dataset", res.Linked, res.Copied)
		}
	}
	if _, err := os.Stat(filepath.Join(out, MirrorDir)); !os.IsNotExist(err) {
		t.Errorf("%s made for a tree inside the dataset", MirrorDir)
	}
	// The dataset folder inside the tree: its files are not scanned.
	inner := filepath.Join(tree, "npc")
	for range 2 {
		res, err := Import(context.Background(), Options{DICOM: tree, Labels: labels, Out: inner})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(res.Notes, "\n"), "skipped 1 files: in an excluded folder") || res.Tree.Files != 115 {
			t.Errorf("notes %q, %d DICOM files read, want the tree's 115", res.Notes, res.Tree.Files)
		}
	}
}
