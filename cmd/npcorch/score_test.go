package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
)

// pathologyRun makes a run directory of one model, "M", on the pathology
// task of two patients (P1 positive, P2 negative), with a clean journal
// answering both right, and returns it.
func pathologyRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	raw, prep, run := filepath.Join(dir, "raw"), filepath.Join(dir, "prep"), filepath.Join(dir, "run")
	files := map[string]string{
		filepath.Join(raw, "P1.svs"): "slide", filepath.Join(raw, "P2.svs"): "slide",
		filepath.Join(prep, "P1.png"): "png", filepath.Join(prep, "P2.png"): "png",
		filepath.Join(raw, "dataset.json"): `{"format":"npcorch-dataset/1","name":"two","patients":[
			{"id":"P1","cohorts":["pathology"],"pathology":{"file":"P1.svs","label":1}},
			{"id":"P2","cohorts":["pathology"],"pathology":{"file":"P2.svs","label":0}}]}`,
		filepath.Join(prep, "manifest.json"): `{"format":"npcorch-prepared/1","patients":[
			{"id":"P1","overview":{"path":"P1.png","width":8,"height":8}},
			{"id":"P2","overview":{"path":"P2.png","width":8,"height":8}}]}`,
		filepath.Join(run, "run.json"): fmt.Sprintf(`{"campaign":"two","raw":%q,"prepared":%q,"models":["M"],"tasks":["pathology"],"repeats":1,"seed":1,"node":"fake:h200-1"}`, raw, prep),
	}
	for p, s := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	j, err := journal.Open(run)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct{ patient, answer string }{{"P1", "1"}, {"P2", "0"}} {
		if err := j.Append(journal.Record{Key: "key-" + r.patient, Item: "pathology/" + r.patient, Task: "pathology", Patient: r.patient,
			Model: "M", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: r.answer}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return run
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
}

func line(t *testing.T, r journal.Record) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestScoreReportsADamagedJournalAndStrictFails: `npcorch score` names each
// damaged journal line (file, line, what was done) and counts them in the
// score files; --strict then fails with the summary. A clean journal gives
// no report and unchanged score files, --strict or not.
func TestScoreReportsADamagedJournalAndStrictFails(t *testing.T) {
	run := pathologyRun(t)
	out, err := runCLI(t, "score", "--run", run, "--strict")
	if err != nil || strings.Contains(out, "journal problem") {
		t.Fatalf("clean journal: %v\n%s", err, out)
	}
	clean, _ := os.ReadFile(filepath.Join(run, "scores.json"))

	jfile := filepath.Join(run, "journal", "M", "pathology.jsonl")
	appendLine(t, jfile, line(t, journal.Record{Key: "key-P1", Item: "pathology/P1", Task: "pathology", Patient: "P1",
		Model: "M", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: "0"}}))
	appendLine(t, filepath.Join(run, "journal", "Old", "pathology.jsonl"), line(t, journal.Record{Key: "old-P1", Item: "pathology/P1",
		Task: "pathology", Patient: "P1", Model: "Old", Status: journal.StatusAnswered, Answer: &inference.Answer{Content: "1"}}))
	appendLine(t, jfile, `{"key":"key-P3","item":"pathology/P3","sta`)

	out, err = runCLI(t, "score", "--run", run)
	if err != nil {
		t.Fatalf("without --strict the problems are reported, not fatal: %v", err)
	}
	for _, want := range []string{
		"journal problem: journal/M/pathology.jsonl line 3: conflicting_answer: pathology/P1 of M (repeat 0, key key-P1…) answered again with a different answer than line 1: kept line 1, ignored this one",
		"journal problem: journal/M/pathology.jsonl line 4: torn_line: the last line is incomplete",
		"journal problem: journal/Old/pathology.jsonl line 1: unknown_model: model \"Old\" is not one of the run's 1 models: the record is ignored",
		"**Journal problems: 3 problem(s) (1 conflicting_answer, 1 torn_line, 1 unknown_model).**",
		"| M | 100.0 [",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	scores, _ := os.ReadFile(filepath.Join(run, "scores.json"))
	if !strings.Contains(string(scores), `"journal_problems"`) {
		t.Error("scores.json does not count the journal problems")
	}

	_, err = runCLI(t, "score", "--run", run, "--strict")
	if err == nil || !strings.Contains(err.Error(), "score --strict: the journal of "+run+" has 3 problem(s) (1 conflicting_answer, 1 torn_line, 1 unknown_model)") {
		t.Fatalf("--strict on a damaged journal: %v", err)
	}

	// Repaired, the journal scores as before, byte for byte.
	if err := os.RemoveAll(filepath.Join(run, "journal", "Old")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(jfile)
	lines := strings.SplitAfter(string(data), "\n")
	if err := os.WriteFile(jfile, []byte(strings.Join(lines[:2], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "score", "--run", run, "--strict"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(filepath.Join(run, "scores.json")); string(again) != string(clean) {
		t.Error("the repaired journal does not give the clean journal's scores.json")
	}
}

// TestScoreAndPlanNameTheDatasetsProblems (issue 18): score and plan load
// the dataset as run does and print its problems by name; before, both
// dropped them in silence (only run printed them).
func TestScoreAndPlanNameTheDatasetsProblems(t *testing.T) {
	run := pathologyRun(t)
	var meta struct{ Raw, Prepared string }
	b, _ := os.ReadFile(filepath.Join(run, "run.json"))
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	// P1's T stage is no T stage; P3 has no prepared images.
	rawFile := filepath.Join(meta.Raw, "dataset.json")
	os.WriteFile(filepath.Join(meta.Raw, "P3.svs"), []byte("slide"), 0o644)
	os.WriteFile(rawFile, []byte(`{"format":"npcorch-dataset/1","name":"two","patients":[
		{"id":"P1","cohorts":["pathology"],"pathology":{"file":"P1.svs","label":1},"t_stage":"T5"},
		{"id":"P2","cohorts":["pathology"],"pathology":{"file":"P2.svs","label":0}},
		{"id":"P3","cohorts":["pathology"],"pathology":{"file":"P3.svs","label":0}}]}`), 0o644)
	wants := []string{
		"dataset problem: " + rawFile + `: patients[0] (P1): t_stage "T5" is not T1..T4` + "\n",
		"item problem: pathology/P3: no prepared images for this patient; run `npcorch prep` on the dataset again\n",
	}
	out, err := runCLI(t, "score", "--run", run)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("score output lacks %q:\n%s", w, out)
		}
	}
	campaign := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(campaign, []byte(fmt.Sprintf(`
name: problems
node: fake:h200-1
output: run
dataset: {raw: %q, prepared: %q}
tasks: [pathology]
models:
  - name: Lingshu-7B
    engine: {kind: sim}
`, meta.Raw, meta.Prepared)), 0o644)
	out, err = runCLI(t, "plan", "-c", campaign, "--paper-scale=false")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("plan output lacks %q:\n%s", w, out)
		}
	}
}
