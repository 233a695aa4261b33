package campaign

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

const mixedCampaign = `
name: mixed
node: fake:a800-sxm-8
output: run
seed: 3
dataset: {raw: %q, prepared: %q}
tasks: [g_mem, c_plan, pathology, carepath]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
  - name: Fleming-R1-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
`

// A campaign of a text-only and an image model is complete when each has
// answered the tasks it was asked: the text model's L3 and L6 items are
// not its own, so they are neither missing nor scored. run.json records
// each model's tasks, and npcorch score recomputes the same bytes from it.
func TestMixedCampaignIsCompleteWhenEachModelAnsweredItsTasks(t *testing.T) {
	_, o, _, _ := runOnFixture(t, "mixed.yaml", mixedCampaign)
	for _, m := range o.Results.Models {
		if m.NotRun != 0 || m.Missing != 0 || m.Answered == 0 {
			t.Errorf("%s: %d answered, %d not run, %d missing", m.Model, m.Answered, m.NotRun, m.Missing)
		}
		text := m.Model == "Fleming-R1-7B"
		if text && (m.CarePath != nil || m.Task("pathology") != nil) {
			t.Errorf("the text model is scored on an image task: carepath %v, pathology %v", m.CarePath != nil, m.Task("pathology") != nil)
		}
		if !text && (m.CarePath == nil || m.Task("pathology") == nil) {
			t.Errorf("the image model lacks its image scores")
		}
		if m.Task("g_mem") == nil || m.Task("g_mem").Accuracy.Percent != 100 {
			t.Errorf("%s: no L1 score of 100 %%", m.Model)
		}
	}
	var meta Meta
	data2, _ := os.ReadFile(filepath.Join(o.RunDir, "run.json"))
	if err := json.Unmarshal(data2, &meta); err != nil {
		t.Fatal(err)
	}
	if got := meta.ModelTasks["Fleming-R1-7B"]; !slices.Equal(got, []string{"g_mem", "c_plan"}) {
		t.Errorf("run.json: the text model's tasks are %v, want [g_mem c_plan]", got)
	}
	if got := meta.ModelTasks["Lingshu-7B"]; len(got) != 6 {
		t.Errorf("run.json: the image model's tasks are %v, want all six", got)
	}
	before, _ := os.ReadFile(filepath.Join(o.RunDir, "scores.json"))
	if _, _, err := ScoreDir(o.RunDir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(o.RunDir, "scores.json"))
	if !bytes.Equal(before, after) {
		t.Error("npcorch score did not reproduce scores.json byte for byte")
	}
}
