package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/imaging/imagingtest"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/dataset/datasettest"
)

// TestImportThenPrep: `npcorch import` of a DICOM tree whose every
// patient has what its labels ask for exits 0, and `npcorch prep` makes
// every image of the dataset it wrote; a labels row without images makes
// import exit 1 naming it, with the files written all the same.
func TestImportThenPrep(t *testing.T) {
	dir := t.TempDir()
	tree, data := filepath.Join(dir, "export"), filepath.Join(dir, "data")
	if _, err := datasettest.Write(tree, datasettest.Options{Patients: 2, DICOM: true, Series: imagingtest.Options{AxialSlices: 8, CoronalSlices: 6,
		Size: 32}, Cohorts: []string{dataset.CohortSequence}}); err != nil {
		t.Fatal(err)
	}
	labels := filepath.Join(dir, "labels.csv")
	os.WriteFile(labels, []byte("patient_id,t_stage,n_stage,t_from,t_to,n_from,n_to\nP001,T3,N1,-60,-39,-60,-39\nP002,T1,,,,,\n"), 0o644)
	out, err := runCLI(t, "import", "--dicom", tree, "--labels", labels, "--out", data, "--workers", "2")
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	for _, w := range []string{"import: 2 patients imported; 84 DICOM files read in 12 series", "1 other files skipped",
		"note: patient P001: no T1_SAG series (no cohort of it needs one)"} {
		if !strings.Contains(out, w) {
			t.Errorf("import said nothing of %q:\n%s", w, out)
		}
	}
	out, err = runCLI(t, "prep", "--data", data, "--out", filepath.Join(dir, "prep"), "--workers", "2")
	if err != nil {
		t.Fatalf("prep of the imported dataset: %v", err)
	}
	if !strings.Contains(out, "0 failed") {
		t.Errorf("prep: %s", out)
	}

	os.WriteFile(labels, []byte("patient_id\nP001\nP404\n"), 0o644)
	_, err = runCLI(t, "import", "--dicom", tree, "--labels", labels, "--out", data)
	for _, w := range []string{"unresolved: no_images: patient P404: row 3", "unresolved: no_labels: patient P002",
		"2 unresolved problems", "run import again with --review " + filepath.Join(data, "review.csv")} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("import with a label row without images: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "review.csv")); err != nil {
		t.Errorf("an unresolved import wrote no review: %v", err)
	}
}

// TestImportOfBadInputWritesNothing: an import whose DICOM folder does not
// exist exits 1 naming it and leaves no output folder behind (it made an
// empty one before; docs/dataset.md: "nothing written").
func TestImportOfBadInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	labels := filepath.Join(dir, "labels.csv")
	os.WriteFile(labels, []byte("patient_id,t_stage\nP001,T3\n"), 0o644)
	out := filepath.Join(dir, "data")
	missing := filepath.Join(dir, "nope")
	_, err := runCLI(t, "import", "--dicom", missing, "--labels", labels, "--out", out)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("import of a missing folder: %v, want an error naming %s", err, missing)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the failed import left %s behind", out)
	}
}
