package tasks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestJournalTornLineIsMovedAsideAndAppendsStayValid(t *testing.T) {
	run := t.TempDir()
	j, err := OpenJournal(run)
	if err != nil {
		t.Fatal(err)
	}
	a := Record{Key: "k1", Item: "pathology/P01", Task: "pathology", Model: "M", Status: StatusAnswered, Answer: &Answer{Content: "1"}}
	if err := j.Append(a); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(run, "journal", "M", "pathology.jsonl")
	// A crash in the middle of the next write leaves half a line.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key":"k2","item":"pathology/P02","sta`)
	f.Close()

	st, err := ReadJournal(run)
	if err != nil {
		t.Fatalf("a torn last line must not fail reading: %v", err)
	}
	if st.Torn != 1 || len(st.Records) != 1 {
		t.Fatalf("torn=%d records=%d, want 1 and 1", st.Torn, len(st.Records))
	}

	j, _ = OpenJournal(run)
	b := Record{Key: "k2", Item: "pathology/P02", Task: "pathology", Model: "M", Status: StatusAnswered, Answer: &Answer{Content: "0"}}
	if err := j.Append(b); err != nil {
		t.Fatal(err)
	}
	j.Close()
	st, err = ReadJournal(run)
	if err != nil {
		t.Fatal(err)
	}
	if st.Torn != 0 || len(st.Records) != 2 {
		t.Fatalf("after repair torn=%d records=%d, want 0 and 2", st.Torn, len(st.Records))
	}
	torn, err := os.ReadFile(path + ".torn")
	if err != nil || !strings.Contains(string(torn), `"item":"pathology/P02","sta`) {
		t.Fatalf("the torn bytes must be kept in .torn, got %q, %v", torn, err)
	}
}

func TestJournalAnsweredBeatsNotRunAndDuplicatesAreCounted(t *testing.T) {
	run := t.TempDir()
	j, _ := OpenJournal(run)
	recs := []Record{
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: StatusNotRun, Attempts: 5},
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: StatusAnswered, Attempts: 1, Answer: &Answer{Content: "x"}},
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: StatusNotRun, Attempts: 2},
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: StatusAnswered, Attempts: 1, Answer: &Answer{Content: "y"}},
	}
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	st, err := ReadJournal(run)
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := st.Answered("k")
	if !ok || rec.Answer.Content != "x" {
		t.Fatalf("answered record = %+v, %v; want the first answer", rec, ok)
	}
	if st.Duplicates != 1 {
		t.Fatalf("duplicates = %d, want 1", st.Duplicates)
	}
}

func TestJournalRejectsACorruptMiddleLine(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, "journal", "M")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "card.jsonl"), []byte("{\"key\":\"a\"}\nnot json\n{\"key\":\"b\"}\n"), 0o644)
	_, err := ReadJournal(run)
	if err == nil || !strings.Contains(err.Error(), "card.jsonl line 2 is not a record") {
		t.Fatalf("err = %v, want it to name the file and line", err)
	}
}
