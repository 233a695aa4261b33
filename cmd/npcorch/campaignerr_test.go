package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

// TestCampaignMistakesAreRefusedBeforeTheRunFolder: a campaign whose node
// or dataset is wrong is refused with the campaign file, line and field,
// before anything is launched and without leaving a run folder. A prepared
// folder made from another dataset.json was only a warning, and the run
// sent its images as if they were the dataset's; dataset.raw: nodata said
// "open nodata/dataset.json" (relative to the file, not the current
// folder) and left events.log behind; a typo in node left run.json.
func TestCampaignMistakesAreRefusedBeforeTheRunFolder(t *testing.T) {
	raw, prep := smallDataset(t)
	other := filepath.Join(t.TempDir(), "seed7")
	if code, out := npcorch(t, t.TempDir(), "synth", "--out", other, "--patients", "2", "--carepath", "0", "--seed", "7"); code != 0 {
		t.Fatalf("synth: %d\n%s", code, out)
	}
	const models = "tasks: [pathology]\nmodels:\n  - name: Lingshu-7B\n    engine: {kind: sim, replicas: 1}\n"
	// An empty API key variable and a missing engine executable failed
	// every request of the model after the run folder was made, exit 3.
	t.Setenv("NPCORCH_TEST_EMPTY_KEY", "")
	const data = "dataset: {raw: {raw}, prepared: {prep}}\ntasks: [pathology]\nmodels:\n"
	type mistake struct{ head, want string }
	cases := map[string]mistake{
		"empty API key": {"node: fake:h100-sxm-4\n" + data + "  - name: my-ext\n    engine: {kind: external, base_url: \"http://127.0.0.1:9/v1\", api_key_env: NPCORCH_TEST_EMPTY_KEY}\n",
			"line 7: field models[0].engine.api_key_env: model my-ext: environment variable NPCORCH_TEST_EMPTY_KEY is empty; export the endpoint's API key in it"},
		"missing engine path": {"node: auto\n" + data + "  - name: Lingshu-7B\n    engine: {kind: vllm, command: [/opt/nope/bin/vllm]}\n",
			`line 7: field models[0].engine.command: model Lingshu-7B: engine kind vllm cannot start: exec: "/opt/nope/bin/vllm": stat /opt/nope/bin/vllm: no such file or directory; install the engine`},
		"engine name not in PATH": {"node: auto\n" + data + "  - name: Lingshu-7B\n    engine: {kind: sglang, command: [npcorch-test-no-such-engine]}\n",
			`line 7: field models[0].engine.command: model Lingshu-7B: engine kind sglang cannot start: exec: "npcorch-test-no-such-engine": executable file not found in $PATH`},
		"wrapper without command": {"node: auto\n" + data + "  - HealthGPT-Pro-4B\n",
			"line 6: field models[0].engine.command: model HealthGPT-Pro-4B: engine kind wrapper needs engine.command"},
		"missing raw": {"node: fake:h100-sxm-4\ndataset: {raw: nodata, prepared: {prep}}\n",
			"line 3: field dataset.raw: {dir}/nodata holds no dataset.json (no such file or directory)"},
		"missing prepared": {"node: fake:h100-sxm-4\ndataset:\n  raw: {raw}\n  prepared: noprep\n",
			"line 5: field dataset.prepared: {dir}/noprep holds no manifest.json"},
		"node typo": {"node: fake:a800-pcie8\ndataset: {raw: {raw}, prepared: {prep}}\n",
			`line 2: field node: "fake:a800-pcie8" is not a fake node; use one of fake:a800-sxm-8, fake:a800-pcie-8`},
		"stale prepared": {"node: fake:h100-sxm-4\ndataset:\n  raw: {other}\n  prepared: {prep}\n",
			"line 5: field dataset.prepared: " + filepath.Join(prep, "manifest.json") + ": was made from another dataset.json"},
	}
	// node: nvml on a machine without the driver (CI's) failed only once
	// the run folder held run.json, status.json and events.log.
	if src, err := nvml.Open(gpu.NodeSpec{Kind: gpu.NodeNVML}); err == nil {
		_ = src.Close()
	} else {
		cases["no driver"] = mistake{"node: nvml\ndataset: {raw: {raw}, prepared: {prep}}\n",
			"line 2: field node: nvml: " + err.Error() + "; or, to run sim and external models without GPUs, set node: fake:a800-sxm-8 in the campaign file"}
		// node: auto found no GPU only once the run folder held run.json,
		// and its hint named --node twice, a flag run does not have.
		cases["no GPU"] = mistake{"node: auto\ndataset: {raw: {raw}, prepared: {prep}}\n",
			"line 2: field node: auto: node auto has no GPU to plan on: " + err.Error() + "; or, to run sim and external models without GPUs, set node: fake:a800-sxm-8 in the campaign file"}
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "c.yaml")
			fill := strings.NewReplacer("{raw}", raw, "{prep}", prep, "{dir}", dir, "{other}", other).Replace
			src := "output: run\n" + fill(c.head)
			if !strings.Contains(src, "models:") {
				src += models
			}
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := npcorch(t, t.TempDir(), "run", "-c", file)
			want := file + ": " + fill(c.want)
			if code != exitError || !strings.Contains(out, want) {
				t.Errorf("exit %d, output:\n%s\nwant exit %d and %q", code, out, exitError, want)
			}
			if strings.Contains(out, "--node") {
				t.Errorf("run has no --node flag, and its message names it:\n%s", out)
			}
			if _, err := os.Stat(filepath.Join(dir, "run")); !os.IsNotExist(err) {
				t.Errorf("the refused run left its folder behind (%v)", err)
			}
		})
	}
}
