package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// TestCalibrateTurnsARunsSpeedsIntoTheNextCampaign is issue 17.2's
// `npcorch calibrate --run DIR`: it shows the run's measured speeds per
// model and replica, prints them as registry overrides, and writes the
// next campaign with them; a model measured only through its image
// preprocessing keeps its registry speed, and a run without speeds.json
// is told what is missing.
func TestCalibrateTurnsARunsSpeedsIntoTheNextCampaign(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	speeds := `{"node":{"factor":0.8,"log_sd":0.2},"models":[
{"model":"Lingshu-7B","registry_tokens_per_s":5000,"tokens_per_s":2555,"factor":0.511,"factor_low":0.43,"factor_high":0.61,"log_sd":0.09,
 "samples":2,"informative":2,"seconds":600,"work":300000,"ttft_s":0.4,
 "replicas":[{"replica":1,"tp":1,"gpus":[3],"samples":2,"seconds":600,"tokens_per_s":500,"images_per_s":2.5,"ttft_s":0.4}]},
{"model":"HealthGPT-Pro-4B","registry_tokens_per_s":3000,"tokens_per_s":2400,"factor":0.8,"factor_low":0.5,"factor_high":1.3,"log_sd":0.25,
 "samples":1,"informative":0,"seconds":60,"work":1000}]}`
	if err := os.WriteFile(filepath.Join(run, "speeds.json"), []byte(speeds), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "calibrate", "--run", run)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Lingshu-7B  ", "0.51×", "2.5 img/s", "0.40s",
		"- name: Lingshu-7B\n    speed_tokens_per_s: 2555 # measured in run: 0.51× the registry's 5000 (95 % 0.43–0.61, 2 samples)",
		"HealthGPT-Pro-4B: no sample measured its GPUs"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "name: HealthGPT-Pro-4B") {
		t.Errorf("an override for a model whose GPUs were not measured:\n%s", out)
	}
	campaign := filepath.Join(dir, "next.yaml")
	if err := os.WriteFile(campaign, []byte("name: next\noutput: run2\nnode: fake:a800-sxm-8\ndataset: {raw: data, prepared: prep}\nmodels: [Lingshu-7B, HealthGPT-Pro-4B]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, "next-calibrated.yaml")
	if _, err := runCLI(t, "calibrate", "--run", run, "-c", campaign, "--out", next); err != nil {
		t.Fatal(err)
	}
	c, err := configs.LoadCampaign(next, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Resolved {
		if m.Name == "Lingshu-7B" && m.SpeedTokensPerS != 2555 {
			t.Errorf("Lingshu-7B speed %v in the calibrated campaign, want 2555", m.SpeedTokensPerS)
		}
	}
	if _, err := runCLI(t, "calibrate", "--run", run, "-c", campaign, "--out", next); err == nil || !strings.Contains(err.Error(), "new file") {
		t.Errorf("an existing --out was overwritten or refused without saying how: %v", err)
	}
	if _, err := runCLI(t, "calibrate", "--run", dir); err == nil || !strings.Contains(err.Error(), "has no speeds.json") {
		t.Errorf("a folder without speeds.json: %v", err)
	}
}
