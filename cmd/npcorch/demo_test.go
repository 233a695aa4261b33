package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/campaign"
)

// The demo runs every level: its embedded campaign asks every task but the
// matched controls (L1 to L6, and O1), so that it prints the whole Table 1.
func TestDemoCampaignAsksEveryLevel(t *testing.T) {
	src, err := configs.Defaults.ReadFile("campaigns/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := configs.ParseCampaign("demo.yaml", t.TempDir(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := campaign.Benchmark()
	s, err := campaign.CampaignSource(reg, c)
	if err != nil {
		t.Fatal(err)
	}
	levels := map[string]bool{}
	for _, k := range reg.Keys() {
		task, _ := reg.Task(k)
		if task.Control {
			continue
		}
		if !slices.Contains(s.Tasks, k) {
			t.Errorf("the demo does not ask %s (%s)", k, task.Level)
		}
		levels[task.Level] = true
	}
	for _, l := range []string{"L1", "L2", "L3", "L4", "L5", "L6"} {
		if !levels[l] {
			t.Errorf("no task of %s in the registry (levels %v)", l, levels)
		}
	}
}

// TestDemoInterruptedSaysHowToContinue: a demo cut short (here before it
// starts) exits 130 with the command that continues it, not the error of
// whatever phase the signal cut ("schedule: waiting for engines at 0s:
// context canceled"), and that command runs the demo to its end.
func TestDemoInterruptedSaysHowToContinue(t *testing.T) {
	root := newRootCmd()
	out := filepath.Join(t.TempDir(), "d")
	root.SetArgs([]string{"demo", "--out", out, "--seed", "3"})
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := root.ExecuteContext(ctx)
	want := fmt.Sprintf("continue with `npcorch demo --out %s --seed 3 --resume`", out)
	if exitCode(err) != exitInterrupted || !strings.Contains(err.Error(), want) {
		t.Fatalf("interrupted demo: %v (exit %d), want exit %d and %q", err, exitCode(err), exitInterrupted, want)
	}
	// The command it prints works, though the demo was cut before its run
	// began: it said "--resume: …/run holds no run to continue".
	if code, log := npcorch(t, t.TempDir(), "demo", "--out", out, "--seed", "3", "--resume"); code != 0 {
		t.Fatalf("the printed command exited %d:\n%s", code, log)
	}
	if _, err := os.Stat(filepath.Join(out, "run", "scores.json")); err != nil {
		t.Errorf("the continued demo wrote no scores: %v", err)
	}
}
