package main

import (
	"slices"
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
