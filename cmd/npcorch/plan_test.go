package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/campaign"
)

func TestPlanSpeedError(t *testing.T) {
	out, err := runCLI(t, "plan", "--node", "fake:h100-sxm-4", "--speed-error", "2", "--speed-seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nre-plans:\n", " measured at ", "× its registry speed (95 % ",
		"\nmeasured speeds (the node's factor, taken for a model with no measurement of its own: ", "\nspeed errors (seed 3): re-planned ",
		"× the plan that knew the true speeds, ", "); static plan ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	again, err := runCLI(t, "plan", "--node", "fake:h100-sxm-4", "--speed-error", "2", "--speed-seed", "3")
	if err != nil || again != out {
		t.Errorf("the same seed gave a different plan (%v)", err)
	}
	if plain, err := runCLI(t, "plan", "--node", "fake:h100-sxm-4"); err != nil || strings.Contains(plain, "re-plans") {
		t.Errorf("without --speed-error: %v, re-plans shown: %v", err, strings.Contains(plain, "re-plans"))
	}
	for _, bad := range []string{"0.5", "-1", "NaN", "+Inf", "1000"} {
		if _, err := runCLI(t, "plan", "--node", "fake:h100-sxm-4", "--speed-error", bad); err == nil ||
			!strings.Contains(err.Error(), ": give a factor from 1 to 100") {
			t.Errorf("--speed-error %s: %v", bad, err)
		}
	}
}

// TestPlanMixesTextAndImageModels plans text-only and image models in one
// campaign on a fake 8×A800 node, at the paper's scale. "Text models cover
// L1/L2/L4/L5/O1; image-capable models additionally cover L3 and L6" (the
// paper, Table A7): a text model is asked every task but those of L3 and
// L6, sends no image, and its engines run one API server (no image
// preprocessing); the image model is asked every task.
func TestPlanMixesTextAndImageModels(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mixed.yaml")
	if err := os.WriteFile(file, []byte(`
name: mixed
node: fake:a800-sxm-8
output: run
dataset: {raw: raw, prepared: prep}
models: [Lingshu-7B, GPT-OSS-120B, HuatuoGPT-o1-7B, Qwen3-30B-A3B, DeepSeek-V3.1]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := planJSON(t, file)
	// The paper's requests of every task a campaign asks by default (not
	// the matched controls), and of the tasks a text model answers: those
	// outside L3 and L6, by the tasks' own levels.
	reg := campaign.Benchmark()
	all, text := 0, 0
	for _, task := range reg.Tasks() {
		if task.Control || task.Judges != "" {
			continue // the matched controls are asked only when named; a judge task's requests are its judges' (PaperJudging)
		}
		n := reg.PaperMix(task.Key).Requests
		all += n
		if task.Level != "L3" && task.Level != "L6" {
			text += n
		}
	}
	byModel := map[string]schedule.ModelPlan{}
	for _, m := range p.Models {
		byModel[m.Model] = m
	}
	if m := byModel["Lingshu-7B"]; m.Status != schedule.StatusDone || m.Requests != all || m.Images == 0 {
		t.Errorf("image model: %+v; want done, %d requests with images", m, all)
	}
	for _, name := range []string{"GPT-OSS-120B", "HuatuoGPT-o1-7B", "Qwen3-30B-A3B"} {
		m := byModel[name]
		want := schedule.StatusDone
		if text == 0 {
			want = schedule.StatusNoWork
		}
		if m.Status != want || m.Requests != text || m.Images != 0 {
			t.Errorf("text model %s: %s, %d requests, %d images; want %s, %d requests, no image", name, m.Status, m.Requests, m.Images, want, text)
		}
	}
	if m := byModel["DeepSeek-V3.1"]; m.Status != schedule.StatusExternal || m.Requests != text || m.Images != 0 {
		t.Errorf("text API model: %+v; want external, %d requests, no image", m, text)
	}
	for _, w := range p.Waves {
		if w.Model != "Lingshu-7B" && w.APIServers != 1 {
			t.Errorf("wave %d: text model %s runs %d API servers, want 1", w.ID, w.Model, w.APIServers)
		}
	}
}

// TestPlanWithAJudge plans the paper's 30 models with O1 and GPT-OSS-120B
// judging at TP4: 1,726 judge requests per generator, served again as
// GPT-OSS-120B@judge, ending after every local generator.
func TestPlanWithAJudge(t *testing.T) {
	p := planJSON(t, "../../configs/campaigns/paper-o1.yaml")
	var judge *schedule.ModelPlan
	var lastGenerator schedule.Seconds
	generators := 0
	for i, m := range p.Models {
		if m.Model == "GPT-OSS-120B@judge" {
			judge = &p.Models[i]
			continue
		}
		generators++
		lastGenerator = max(lastGenerator, m.WorkEnd)
	}
	if judge == nil || generators != 30 || judge.Requests != 1726*30 || judge.Status != schedule.StatusDone {
		t.Fatalf("judge %+v over %d generators; want 51,780 requests, done", judge, generators)
	}
	if judge.WorkEnd <= lastGenerator || !strings.Contains(judge.Note, "needs the answers of 30 model(s)") {
		t.Errorf("judge ends %v, the last generator's work %v; note %q", judge.WorkEnd, lastGenerator, judge.Note)
	}
	for _, w := range p.Waves {
		if w.Model == judge.Model && w.TP != 4 {
			t.Errorf("judge wave %+v, want TP4", w)
		}
	}
}

// TestPlanPinnedReplicasBesideAnUnpinnedModel plans a model that pins its
// replicas beside one that does not, on both fake 8×A800 nodes. The
// unpinned model used to take every GPU: the pinned one then waited and
// ran alone on two GPUs, slower than running the models one at a time.
func TestPlanPinnedReplicasBesideAnUnpinnedModel(t *testing.T) {
	for _, node := range []string{"fake:a800-pcie-8", "fake:a800-sxm-8"} {
		file := filepath.Join(t.TempDir(), "pinned.yaml")
		if err := os.WriteFile(file, []byte(`
node: `+node+`
output: run
dataset: {raw: raw, prepared: prep}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 2}
  - name: Lingshu-7B
    engine: {kind: sim}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		p := planJSON(t, file)
		if p.Makespan > p.Sequential {
			t.Errorf("%s: makespan %s, later than the sequential baseline %s", node, p.Makespan, p.Sequential)
		}
		for _, m := range p.Models {
			if m.Status != schedule.StatusDone || m.Start != 0 {
				t.Errorf("%s: %s %s, started at %s; want both done, started at 0 (8 GPUs hold both)", node, m.Model, m.Status, m.Start)
			}
		}
		for _, w := range p.Waves {
			if w.Model == "Qwen3-VL-8B-Instruct" && w.Replicas != 2 {
				t.Errorf("%s: wave %d runs %d replicas of Qwen3-VL-8B-Instruct, which pins 2", node, w.ID, w.Replicas)
			}
		}
	}
}

// planJSON runs `npcorch plan -c campaign --json` and decodes its plan.
func planJSON(t *testing.T, campaign string) schedule.Plan {
	t.Helper()
	out, err := runCLI(t, "plan", "-c", campaign, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p schedule.Plan
	// Decode, not Unmarshal: plan's notes (stderr) follow the JSON.
	if err := json.NewDecoder(strings.NewReader(out[strings.Index(out, "{"):])).Decode(&p); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, out)
	}
	return p
}

// TestPlanRefusesAnUnplaceableModel: a model no GPU group of the node can
// hold used to be printed "unplaceable" with exit status 0, and the run
// then abandoned it. The plan is still printed, and plan fails (exit 1,
// README "Exit statuses") naming the model and why; a campaign that asks
// O1 with no judges gets a note that O1 will not be scored.
func TestPlanRefusesAnUnplaceableModel(t *testing.T) {
	file := filepath.Join(t.TempDir(), "huge.yaml")
	os.WriteFile(file, []byte(`name: huge
node: fake:a800-sxm-8
output: run
dataset: {raw: data, prepared: prep}
tasks: [pathology, o1]
models:
  - name: Lingshu-7B
  - name: Huge
    params_b: 900
    engine: {kind: sim}
`), 0o644)
	out, err := runCLI(t, "plan", "-c", file)
	if err == nil || exitCode(err) != exitError {
		t.Fatalf("plan: %v (exit %d), want exit 1\n%s", err, exitCode(err), out)
	}
	// runCLI's error holds the error's line, then what the command printed.
	for _, want := range []string{"plan: model Huge cannot be placed on fake:a800-sxm-8: Huge needs at least 28 GPUs of this kind", "larger than one node", "does not yet place one engine across several nodes", "give it a node with more GPU memory",
		"Huge        unplaceable", "plan: note: o1's answers will be journaled but not scored: campaign huge has no judges"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("plan's error and output lack %q:\n%v", want, err)
		}
	}
}

// TestPlanWithoutGPUsNamesTheFakeNodeFlagOnce: on a machine without the
// NVIDIA driver, plan --node auto said how to choose a fake node twice
// (the driver's message and the planner's each added it).
func TestPlanWithoutGPUsNamesTheFakeNodeFlagOnce(t *testing.T) {
	if src, err := nvml.Open(gpu.NodeSpec{Kind: gpu.NodeNVML}); err == nil {
		_ = src.Close()
		t.Skip("this machine has the NVIDIA driver")
	}
	for _, node := range []string{"auto", "nvml"} {
		_, err := runCLI(t, "plan", "--node", node)
		if err == nil || strings.Count(err.Error(), "--node fake:") != 1 || !strings.Contains(err.Error(), "install the NVIDIA driver") {
			t.Errorf("plan --node %s: %v; want one hint to plan for a fake node with --node fake:NAME", node, err)
		}
	}
}
