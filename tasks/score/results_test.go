package score_test

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/score"
)

func answered(model, item, task, patient string, repeat int, content string) journal.Record {
	return journal.Record{Key: model + item + string(rune('0'+repeat)), Model: model, Item: item, Task: task, Patient: patient,
		Repeat: repeat, Status: journal.StatusAnswered, Answer: &inference.Answer{Content: content}}
}

func TestScoreRunCountsFailuresWrongAndKeepsNotRunApart(t *testing.T) {
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "P1"}, {ID: "P2"}, {ID: "P3"}, {ID: "P4"}}}
	var items []tasks.Item
	for i, gold := range []string{"1", "0", "1", "1"} {
		id := raw.Patients[i].ID
		items = append(items, tasks.Item{ID: "pathology/" + id, Task: npcbench.Pathology, Patient: id, Gold: tasks.Gold{Label: gold}})
	}
	j := &journal.State{Records: map[string]journal.Record{}}
	for _, r := range []journal.Record{
		answered("M", "pathology/P1", "pathology", "P1", 0, "1"),                     // right
		answered("M", "pathology/P2", "pathology", "P2", 0, "The slide is unclear."), // unparseable: wrong, kept
		{Key: "x", Model: "M", Item: "pathology/P3", Task: "pathology", Patient: "P3", Status: journal.StatusNotRun},
		// P4 never attempted.
	} {
		j.Records[r.Key] = r
	}
	res, err := score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels("M"), 1, score.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Models[0]
	if m.Answered != 2 || m.NotRun != 1 || m.Missing != 1 {
		t.Fatalf("answered/not run/missing = %d/%d/%d, want 2/1/1", m.Answered, m.NotRun, m.Missing)
	}
	acc := m.Tasks[0].Score.Accuracy
	// The unparseable answer stays in the denominator; the two without an
	// answer are left out and the score is marked incomplete.
	if acc.Numerator != 1 || acc.Denominator != 2 || m.Tasks[0].Score.Complete {
		t.Fatalf("accuracy %v/%d complete=%v, want 1/2, incomplete", acc.Numerator, acc.Denominator, m.Tasks[0].Score.Complete)
	}
	var md bytes.Buffer
	res.WriteMarkdown(&md)
	if !bytes.Contains(md.Bytes(), []byte("50.0 [")) || !bytes.Contains(md.Bytes(), []byte("]*")) {
		t.Errorf("Table 1 should show 50.0 with an interval, marked provisional:\n%s", md.String())
	}
}

func TestScoreRunRepeatedReliability(t *testing.T) {
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "P1"}, {ID: "P2"}}}
	items := []tasks.Item{
		{ID: "pathology/P1", Task: npcbench.Pathology, Patient: "P1", Gold: tasks.Gold{Label: "1"}},
		{ID: "pathology/P2", Task: npcbench.Pathology, Patient: "P2", Gold: tasks.Gold{Label: "0"}},
	}
	j := &journal.State{Records: map[string]journal.Record{}}
	// P1 right in all 3 attempts; P2 right once (attempt 1).
	for rep, p2 := range []string{"1", "0", "1"} {
		for _, r := range []journal.Record{answered("M", "pathology/P1", "pathology", "P1", rep, "1"),
			answered("M", "pathology/P2", "pathology", "P2", rep, p2)} {
			j.Records[r.Key] = r
		}
	}
	res, err := score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels("M"), 3, score.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Models[0].Reliability) != 1 {
		t.Fatalf("reliability for %d tasks", len(res.Models[0].Reliability))
	}
	rel := res.Models[0].Reliability[0].Reliability
	if rel.K != 3 || rel.PassHatK.Percent != 50 || rel.PassAtK.Percent != 100 {
		t.Fatalf("k=%d pass^k=%v pass@k=%v, want 3, 50, 100", rel.K, rel.PassHatK.Percent, rel.PassAtK.Percent)
	}
	// avg@k = (3 + 1) / 6.
	if got := rel.AvgAtK.Percent; got < 66.66 || got > 66.67 {
		t.Fatalf("avg@k = %v, want 66.67", got)
	}
}

// TestScoreFilesCountJournalProblems: the score files carry the count of
// each kind of journal problem, and only when there is one, so a clean
// journal's score files do not change.
func TestScoreFilesCountJournalProblems(t *testing.T) {
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "P1"}, {ID: "P2"}}}
	items := []tasks.Item{
		{ID: "pathology/P1", Task: npcbench.Pathology, Patient: "P1", Gold: tasks.Gold{Label: "1"}},
		{ID: "pathology/P2", Task: npcbench.Pathology, Patient: "P2", Gold: tasks.Gold{Label: "0"}},
	}
	clean := []string{
		recordLine(t, answered("M", "pathology/P1", "pathology", "P1", 0, "1")),
		recordLine(t, answered("M", "pathology/P2", "pathology", "P2", 0, "0")),
	}
	files := func(lines []string, torn string, extra ...journal.Record) (*score.Results, map[string]string) {
		run := t.TempDir()
		writeJournalFile(t, run, "M", "pathology", lines, torn)
		for _, r := range extra {
			writeJournalFile(t, run, journal.SafeName(r.Model), r.Task, []string{recordLine(t, r)}, "")
		}
		j, err := journal.Read(run)
		if err != nil {
			t.Fatal(err)
		}
		res, err := score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels("M"), 1, score.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for name, write := range map[string]func(io.Writer) error{"json": res.WriteJSON, "csv": res.WriteCSV, "md": res.WriteMarkdown} {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			out[name] = b.String()
		}
		return res, out
	}

	res, out := files(clean, "")
	if res.JournalProblems != nil || strings.Contains(out["json"], "journal") || strings.Contains(out["csv"], "journal") || strings.Contains(out["md"], "Journal") {
		t.Fatalf("a clean journal must leave the score files as they were:\n%s\n%s", out["csv"], out["md"])
	}

	// P1 answered again differently; P2's answer torn; a model not in the run.
	again := recordLine(t, answered("M", "pathology/P1", "pathology", "P1", 0, "0"))
	res, out = files([]string{clean[0], again}, clean[1][:40], answered("X", "pathology/P1", "pathology", "P1", 0, "0"))
	jr := res.JournalProblems
	if jr == nil || jr.Summary() != "3 problem(s) (1 conflicting_answer, 1 torn_line, 1 unknown_model)" {
		t.Fatalf("journal problems = %+v", jr)
	}
	for _, want := range []string{`"kind": "torn_line"`, `"file": "journal/X/pathology.jsonl"`, `"kind": "unknown_model"`} {
		if !strings.Contains(out["json"], want) {
			t.Errorf("scores.json lacks %s", want)
		}
	}
	if !strings.Contains(out["csv"], "\n,journal,torn_line,,1,") || !strings.Contains(out["csv"], "\n,journal,unknown_model,,1,") {
		t.Errorf("scores.csv lacks the journal rows:\n%s", out["csv"])
	}
	if !strings.Contains(out["md"], "**Journal problems: 3 problem(s)") {
		t.Errorf("scores.md lacks the journal line:\n%s", out["md"])
	}
	// The first answer of P1 is kept; P2 is not done.
	if m := res.Models[0]; m.Answered != 1 || m.Missing != 1 || m.Tasks[0].Score.Accuracy.Numerator != 1 {
		t.Errorf("answered %d missing %d right %v, want 1, 1, 1", m.Answered, m.Missing, m.Tasks[0].Score.Accuracy.Numerator)
	}
}

// TestScoreFilesFollowTheUmask: the score files are made as any file is
// (0666 less the umask), so a group sharing a run folder can read them;
// they were 0600 whatever the umask, from the temporary file they were
// renamed from.
func TestScoreFilesFollowTheUmask(t *testing.T) {
	raw := &dataset.Raw{Patients: []dataset.Patient{{ID: "P1"}}}
	items := []tasks.Item{{ID: "pathology/P1", Task: npcbench.Pathology, Patient: "P1", Gold: tasks.Gold{Label: "1"}}}
	run := t.TempDir()
	writeJournalFile(t, run, "M", "pathology", []string{recordLine(t, answered("M", "pathology/P1", "pathology", "P1", 0, "1"))}, "")
	j, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	res, err := score.ScoreRun(benchmark(), "c", raw, items, j, score.RunModels("M"), 1, score.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ umask, want fs.FileMode }{{0o022, 0o644}, {0o027, 0o640}} {
		dir := t.TempDir()
		old := syscall.Umask(int(c.umask))
		err := score.WriteScoreFiles(dir, res)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"scores.json", "scores.csv", "scores.md"} {
			st, err := os.Stat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != c.want {
				t.Errorf("umask %03o: %s has mode %v, want %v", c.umask, name, st.Mode().Perm(), c.want)
			}
		}
	}
}

// writeJournalFile writes a journal file of lines, then torn (a last line
// without its newline), as a crashed run leaves it.
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

// benchmark is NPCBench's tasks, whose answers these tests score.
func benchmark() *tasks.Registry { return npcbench.Registry(configs.DefaultStructures()) }
