package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/tasks/campaign"
)

// TestResumeKeepsTheRunsRepeatsAndSeed: a run started with --repeat 2 and
// resumed without it was scored as one repeat, its second repeat's
// answers dropped as journal problems; a resume under another seed was
// taken silently. The resume keeps the run's repeats and seed, and one
// that asks others is refused, naming both values and the folder.
func TestResumeKeepsTheRunsRepeatsAndSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	body := `tasks: [pathology]
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
`
	file := writeCampaign(t, "seed: 4\n"+body)
	cwd := t.TempDir()
	runDir := filepath.Join(cwd, "run")
	if code, text := npcorch(t, cwd, "run", "-c", file, "--out", "run", "--repeat", "2"); code != 0 {
		t.Fatalf("the run: exit %d:\n%s", code, text)
	}
	code, text := npcorch(t, cwd, "run", "-c", file, "--out", "run", "--resume")
	if code != 0 || strings.Contains(text, "journal problem") {
		t.Errorf("resuming without --repeat: exit %d:\n%s", code, text)
	}
	if meta := readMeta(t, runDir); meta.Repeats != 2 || meta.Seed != 4 {
		t.Errorf("after the resume run.json says %d repeats, seed %d; want 2, 4", meta.Repeats, meta.Seed)
	}

	for _, c := range []struct {
		name, campaign string
		args           []string
		want           string
	}{
		{"another --repeat", "seed: 4\n" + body, []string{"--repeat", "3"},
			runDir + " was started with repeats 2 (its run.json), but --repeat 3"},
		{"another repeat: in the file", "seed: 4\nrepeat: 1\n" + body, nil,
			runDir + " was started with repeats 2 (its run.json), but the campaign file %s says repeat: 1"},
		{"another seed: in the file", "seed: 9\n" + body, nil,
			runDir + " was started with seed 4 (its run.json), but the campaign file %s says seed: 9"},
	} {
		if err := os.WriteFile(file, []byte(campaignWithBody(t, file, c.campaign)), 0o644); err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(c.want, "%s", file)
		code, text := npcorch(t, cwd, append([]string{"run", "-c", file, "--out", "run", "--resume"}, c.args...)...)
		if code != exitError || !strings.Contains(text, want) {
			t.Errorf("%s: exit %d, want %d and %q:\n%s", c.name, code, exitError, want, text)
		}
		if meta := readMeta(t, runDir); meta.Repeats != 2 || meta.Seed != 4 {
			t.Errorf("%s: run.json now says %d repeats, seed %d", c.name, meta.Repeats, meta.Seed)
		}
	}
}

// campaignWithBody is the campaign file's header (name, node, output,
// dataset, as writeCampaign wrote it) followed by body.
func campaignWithBody(t *testing.T, file, body string) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfterN(string(data), "\n", 5)
	return strings.Join(lines[:4], "") + body
}

func readMeta(t *testing.T, runDir string) campaign.Meta {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(runDir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m campaign.Meta
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
