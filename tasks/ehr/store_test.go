package ehr_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/ehr"
)

func sample(t *testing.T) *ehr.DB {
	t.Helper()
	b := ehr.NewBuilder()
	subj := b.NextID("subject_id")
	hadm := b.NextID("hadm_id")
	b.Add("patients", map[string]string{"subject_id": subj, "gender": "F", "anchor_age": "70", "anchor_year": "2150"})
	b.Add("admissions", map[string]string{"subject_id": subj, "hadm_id": hadm, "admittime": "2150-01-02 03:04:05"})
	b.Add("discharge", map[string]string{"note_id": subj + "-DS-1", "subject_id": subj, "hadm_id": hadm,
		"text": "line one, with a comma\n\"quoted\" line two"})
	db, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestWriteLoadRoundTrip(t *testing.T) {
	db := sample(t)
	dir := t.TempDir()
	if err := db.Write(dir); err != nil {
		t.Fatal(err)
	}
	got, err := ehr.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Digest() != db.Digest() {
		t.Fatalf("digest %s after reload, want %s", got.Digest(), db.Digest())
	}
	notes := got.BySubject("discharge", "10000000")
	if len(notes) != 1 || !strings.Contains(notes[0].Get("text"), "\"quoted\" line two") || notes[0].Ref().String() != "discharge/1" {
		t.Fatalf("note did not survive: %+v", notes)
	}
	if _, err := os.Stat(filepath.Join(dir, "hosp", "labevents.csv")); err != nil {
		t.Fatalf("an empty table still gets its file with a header: %v", err)
	}
}

func TestLoadRefusesAChangedTable(t *testing.T) {
	dir := t.TempDir()
	if err := sample(t).Write(dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "hosp", "patients.csv")
	data, _ := os.ReadFile(p)
	if err := os.WriteFile(p, append(data, []byte("10000001,M,50,2150,,\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ehr.Load(dir)
	if err == nil || !strings.Contains(err.Error(), "patients.csv") {
		t.Fatalf("want an error naming patients.csv, got %v", err)
	}
}

func TestBuilderRejectsUnknownColumn(t *testing.T) {
	b := ehr.NewBuilder()
	b.Add("labevents", map[string]string{"labevent_id": "1", "creatinine": "1.0"})
	if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), "creatinine") {
		t.Fatalf("want an error naming the column, got %v", err)
	}
}

func TestIDsFollowMIMIC(t *testing.T) {
	b := ehr.NewBuilder()
	for kind, want := range map[string]string{"subject_id": "10000000", "hadm_id": "20000000", "stay_id": "30000000"} {
		if got := b.NextID(kind); got != want {
			t.Errorf("first %s = %s, want %s", kind, got, want)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"labevents/17", "/", "x/0", "a/-1", "a/b/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ehr.ParseRef(s)
		if err == nil && r.String() != s && "0"+r.String() != s {
			if back, err2 := ehr.ParseRef(r.String()); err2 != nil || back != r {
				t.Fatalf("%q parsed to %v which does not round-trip", s, r)
			}
		}
	})
}

// FuzzDecodeCSV: a damaged table file is an error naming the file, never a panic, and a table that decodes
// re-encodes to a file that decodes to the same rows.
func FuzzDecodeCSV(f *testing.F) {
	s, _ := ehr.SchemaOf("omr")
	f.Add([]byte("subject_id,chartdate,seq_num,result_name,result_value\n10000000,2150-01-01,1,BMI,\"2\"\"3\"\n"))
	f.Add([]byte("subject_id,chartdate\n1,2\n"))
	f.Add([]byte("\"unterminated\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tb, err := ehr.DecodeCSV(s, data, "hosp/omr.csv")
		if err != nil {
			if !strings.Contains(err.Error(), "hosp/omr.csv") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		again, err := ehr.EncodeCSV(tb)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ehr.DecodeCSV(s, again, "x")
		if err != nil || len(back.Rows) != len(tb.Rows) {
			t.Fatalf("round trip: %v, %d rows vs %d", err, len(back.Rows), len(tb.Rows))
		}
	})
}
