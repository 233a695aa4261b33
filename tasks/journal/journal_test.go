package journal_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
)

func TestJournalTornLineIsMovedAsideAndAppendsStayValid(t *testing.T) {
	run := t.TempDir()
	j, err := journal.Open(run)
	if err != nil {
		t.Fatal(err)
	}
	a := journal.Record{Key: "k1", Item: "pathology/P01", Task: "pathology", Model: "M", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: "1"}}
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

	st, err := journal.Read(run)
	if err != nil {
		t.Fatalf("a torn last line must not fail reading: %v", err)
	}
	if st.Torn != 1 || len(st.Records) != 1 {
		t.Fatalf("torn=%d records=%d, want 1 and 1", st.Torn, len(st.Records))
	}

	j, _ = journal.Open(run)
	b := journal.Record{Key: "k2", Item: "pathology/P02", Task: "pathology", Model: "M", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: "0"}}
	if err := j.Append(b); err != nil {
		t.Fatal(err)
	}
	j.Close()
	st, err = journal.Read(run)
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
	j, _ := journal.Open(run)
	recs := []journal.Record{
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: journal.StatusNotRun, Attempts: 5},
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: journal.StatusAnswered, Attempts: 1, Answer: &inference.Answer{Content: "x"}},
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: journal.StatusNotRun, Attempts: 2},
		{Key: "k", Item: "i", Task: "card", Model: "M", Status: journal.StatusAnswered, Attempts: 1, Answer: &inference.Answer{Content: "y"}},
	}
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	st, err := journal.Read(run)
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

// writeJournalFile writes lines (each given without its newline) to
// RUN/journal/MODEL/TASK.jsonl; torn is appended without a newline.
func writeJournalFile(t *testing.T, run, model, task string, lines []string, torn string) {
	t.Helper()
	dir := filepath.Join(run, "journal", model)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.WriteString(torn)
	if err := os.WriteFile(filepath.Join(dir, task+".jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func recordLine(t *testing.T, r journal.Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestJournalReportsEveryDamagedLine: no line is dropped or overridden in
// silence. Each damaged line is listed with its file, its line and what
// was done, and the rest of the journal is still read.
func TestJournalReportsEveryDamagedLine(t *testing.T) {
	run := t.TempDir()
	rec := func(key, item, status, content string) journal.Record {
		r := journal.Record{Key: key, Item: item, Task: "pathology", Model: "M", Status: status}
		if status == journal.StatusAnswered {
			r.Answer = &inference.Answer{Content: content}
		}
		return r
	}
	other := rec("k9", "pathology/P9", journal.StatusAnswered, "1")
	other.Model = "N"
	writeJournalFile(t, run, "M", "pathology", []string{
		recordLine(t, rec("k1", "pathology/P1", journal.StatusAnswered, "1")),
		"not json",
		recordLine(t, rec("k1", "pathology/P1", journal.StatusAnswered, "0")),
		recordLine(t, rec("k1", "pathology/P1", journal.StatusAnswered, "1")),
		`{"key":"k3"}`,
		recordLine(t, rec("k4", "pathology/P4", "done", "")),
		recordLine(t, journal.Record{Key: "k5", Item: "pathology/P5", Task: "pathology", Model: "M", Status: journal.StatusAnswered}),
		recordLine(t, other),
		recordLine(t, rec("k2", "pathology/P2", journal.StatusNotRun, "")),
		recordLine(t, rec("k2", "pathology/P2", journal.StatusAnswered, "0")),
		"",
	}, `{"key":"k6","item":"pathology/P6","sta`)

	st, err := journal.Read(run)
	if err != nil {
		t.Fatalf("a damaged journal must still be read: %v", err)
	}
	const file = "journal/M/pathology.jsonl"
	want := []struct {
		line int
		kind string
		says string
	}{
		{2, journal.ProblemCorrupt, "skipped"},
		{3, journal.ProblemConflicting, "kept line 1, ignored this one"},
		{4, journal.ProblemDuplicate, "kept line 1"},
		{5, journal.ProblemInvalid, "lacks its key, item, task or model"},
		{6, journal.ProblemInvalid, `status "done"`},
		{7, journal.ProblemInvalid, "without its answer"},
		{8, journal.ProblemMisfiled, "belongs in journal/N/pathology.jsonl"},
		{11, journal.ProblemCorrupt, "skipped"},
		{12, journal.ProblemTorn, "sends it again"},
	}
	if len(st.Problems) != len(want) {
		t.Fatalf("%d problems, want %d:\n%s", len(st.Problems), len(want), problemList(st.Problems))
	}
	for i, w := range want {
		p := st.Problems[i]
		if p.File != file || p.Line != w.line || p.Kind != w.kind || !strings.Contains(p.Detail, w.says) {
			t.Errorf("problem %d = %v\nwant %s line %d: %s: …%s…", i, p, file, w.line, w.kind, w.says)
		}
	}
	if r, ok := st.Answered("k1"); !ok || r.Answer.Content != "1" {
		t.Errorf("k1 = %+v, want the first answer kept", r)
	}
	if _, ok := st.Answered("k2"); !ok || len(st.Records) != 2 {
		t.Errorf("records %v: want k1 and k2 (answered after a not-run line) and nothing else", st.Sorted())
	}
	if st.Torn != 1 || st.Duplicates != 2 {
		t.Errorf("torn %d duplicates %d, want 1 and 2", st.Torn, st.Duplicates)
	}
}

func problemList(ps []journal.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.String() + "\n")
	}
	return b.String()
}

// TestJournalCheckReportsRecordsTheRunDoesNotHave: records of models,
// tasks, items or repeats outside the run are ignored by scoring, and each
// of their lines is reported.
func TestJournalCheckReportsRecordsTheRunDoesNotHave(t *testing.T) {
	run := t.TempDir()
	ans := func(key, model, task, item string, repeat int) string {
		return recordLine(t, journal.Record{Key: key, Model: model, Task: task, Item: item, Repeat: repeat, Status: journal.StatusAnswered, Answer: &inference.Answer{Content: "1"}})
	}
	writeJournalFile(t, run, "M", "pathology", []string{
		ans("a", "M", "pathology", "pathology/P1", 0),
		ans("b", "M", "pathology", "pathology/P9", 0),
		ans("c", "M", "pathology", "pathology/P1", 3),
		ans("f", "M", "pathology", "card/P1/clivus", 0),
	}, "")
	writeJournalFile(t, run, "X", "pathology", []string{ans("d", "X", "pathology", "pathology/P1", 0)}, "")
	writeJournalFile(t, run, "M", "card", []string{
		recordLine(t, journal.Record{Key: "e", Model: "M", Task: "card", Item: "card/P1/clivus", Status: journal.StatusNotRun}),
		ans("e", "M", "card", "card/P1/clivus", 0),
	}, "")
	st, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	got := problemList(st.Check(map[string]string{"pathology/P1": "pathology"}, []string{"M"}, 1))
	want := `journal/M/card.jsonl line 1: unknown_task: task "card" has no items in this run: the record is ignored
journal/M/card.jsonl line 2: unknown_task: task "card" has no items in this run: the record is ignored
journal/M/pathology.jsonl line 2: unknown_item: item "pathology/P9" is not one of the run's pathology items: the record is ignored
journal/M/pathology.jsonl line 3: unknown_repeat: repeat 3 of pathology/P1 is outside the run's 1 repeat(s): the record is ignored
journal/M/pathology.jsonl line 4: unknown_item: item "card/P1/clivus" is not one of the run's pathology items: the record is ignored
journal/X/pathology.jsonl line 1: unknown_model: model "X" is not one of the run's 1 models: the record is ignored
`
	if got != want {
		t.Errorf("problems:\n%s\nwant:\n%s", got, want)
	}
}
