package campaign

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const resumeCampaign = `
name: resume
node: fake:a800-sxm-8
output: run
seed: 3
dataset: {raw: %q, prepared: %q}
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
tasks: [pathology]
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
`

// TestResumeReportsJournalProblems: `run --resume` names every problem of
// the journal it continues (file, line, what is done) before it goes on,
// and the scores it writes count them.
func TestResumeReportsJournalProblems(t *testing.T) {
	c, o, _, log := runOnFixture(t, "resume.yaml", resumeCampaign)
	exe, _ := os.Executable()
	if strings.Contains(log.String(), "journal problem") {
		t.Fatalf("a fresh run reports journal problems:\n%s", log.String())
	}
	// A record of a model the campaign no longer has, and a torn line.
	old := filepath.Join(o.RunDir, "journal", "Gone-7B", "pathology.jsonl")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	gone := `{"key":"k","item":"pathology/P001","task":"pathology","patient":"P001","model":"Gone-7B","repeat":0,"status":"answered","answer":{"content":"1"}}` + "\n"
	if err := os.WriteFile(old, []byte(gone), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(o.RunDir, "journal", "Lingshu-7B", "pathology.jsonl")
	lines := bytes.Count(mustRead(t, path), []byte("\n"))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"key":"x","item":"pathology/P00`)
	f.Close()

	log.Reset()
	var out bytes.Buffer
	if _, err := Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Resume: true, Out: &out, Log: log, Timing: testTiming()}); err != nil {
		t.Fatalf("resume: %v\n%s", err, log.String())
	}
	for _, want := range []string{
		fmt.Sprintf("journal problem: journal/Lingshu-7B/pathology.jsonl line %d: torn_line: the last line is incomplete", lines+1),
		`journal problem: journal/Gone-7B/pathology.jsonl line 1: unknown_model: model "Gone-7B" is not one of the run's 1 models: the record is ignored`,
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the resumed run's log lacks %q:\n%s", want, log.String())
		}
	}
	if !strings.Contains(out.String(), "**Journal problems:") {
		t.Errorf("the resumed run's scores do not count the journal problems:\n%s", out.String())
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
