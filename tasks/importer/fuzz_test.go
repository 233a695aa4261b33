package importer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/npcorch/npcorch/imaging/mrseries"
)

// FuzzReadLabels: no labels sheet panics; what is accepted has a patient
// ID on every label, unique, and stages in range.
func FuzzReadLabels(f *testing.F) {
	f.Add([]byte(labelsCSV))
	f.Add([]byte("\xef\xbb\xbfpatient_id;t_stage;t_from;t_to\r\n0042;t3;\"40,5\";-35\r\n"))
	f.Add([]byte("id,cohorts\nA,\"sequence t_groups,n_groups\"\n\"B\nC\",x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "labels.csv")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		labels, _, err := ReadLabels(file)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, l := range labels {
			if l.Patient == "" || seen[l.Patient] {
				t.Fatalf("label %+v accepted", l)
			}
			seen[l.Patient] = true
			if l.TStage != "" && (len(l.TStage) != 2 || l.TStage[0] != 'T' || l.TStage[1] < '1' || l.TStage[1] > '4') {
				t.Fatalf("t_stage %q accepted", l.TStage)
			}
		}
	})
}

// FuzzReview: no review table panics; an accepted one gives each patient
// at most one series a slot, and only image series.
func FuzzReview(f *testing.F) {
	f.Add([]byte("patient,study_uid,series_uid,slot\nP1,1.1,1.1.1,T1_Ax\nP1,1.1,1.1.2,\n"))
	f.Add([]byte("patient,study_uid,series_uid,slot\nP1,1.1,1.1.1,T1_Ax\nP1,1.1,1.1.3,t1_ax\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "review.csv")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		image := mrseries.Classify(mrseries.Acquisition{Modality: "MR", Description: "T1 TRA", HasPixels: true, Frames: 1,
			Orientation: []float64{1, 0, 0, 0, 1, 0}})
		entries := []*entry{
			{s: &mrseries.Series{PatientID: "P1", StudyUID: "1.1", UID: "1.1.1", Class: image}},
			{s: &mrseries.Series{PatientID: "P1", StudyUID: "1.1", UID: "1.1.2", Class: mrseries.Classify(mrseries.Acquisition{Modality: "CT", HasPixels: true})}},
			{s: &mrseries.Series{PatientID: "P1", StudyUID: "1.1", UID: "1.1.3", Class: image}},
		}
		if _, err := applyReview(file, entries); err != nil {
			return
		}
		if entries[1].slot != "" || entries[0].slot != "" && entries[0].slot == entries[2].slot {
			t.Fatalf("slots %q %q %q accepted", entries[0].slot, entries[1].slot, entries[2].slot)
		}
	})
}
