package campaign

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

const controlsCampaign = `
name: controls
node: fake:a800-sxm-8
output: run
seed: 5
dataset: {raw: %q, prepared: %q}
tasks: [l_rev_controls]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 2, sim: [--sim-policy, "right=0.5"]}
  - name: Hulu-Med-4B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, constant]}
`

// pairedWant is a comparison derived from the answer key and the policy:
// item accuracy under both conditions, the units each corrected and
// harmed, and the all-correct share of patients under both.
type pairedWant struct {
	microB, microT, allB, allT float64
	corrected, harmed          int
}

// expectPaired derives a comparison of two L5 tasks over every checkpoint.
func expectPaired(raw *dataset.Raw, right func(item string, c *dataset.Choice) bool, baseline, treatment string) pairedWant {
	var w pairedWant
	w.microB, w.allB = expectTurns(raw, baseline, right)
	w.microT, w.allT = expectTurns(raw, treatment, right)
	for _, tr := range raw.Longitudinal {
		for _, c := range tr.Checkpoints {
			key := tr.Patient + "/" + c.ID
			b, t := right(baseline+"/"+key, &c.Choice), right(treatment+"/"+key, &c.Choice)
			switch {
			case !b && t:
				w.corrected++
			case b && !t:
				w.harmed++
			}
		}
	}
	return w
}

// The matched controls run as campaign tasks, and every paired difference
// follows from dataset.json and the simulated policy alone: for the oracle
// and the constant model every condition scores alike (difference 0); for
// the 50 % model each condition's items are decided apart, so the
// differences are those of the two draws. npcorch score gives the same
// bytes again.
func TestMatchedControlsFollowFromTheAnswerKeyAndPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	data, prepDir := fixture(t)
	c, err := configs.ParseCampaign("controls.yaml", t.TempDir(), []byte(fmt.Sprintf(controlsCampaign, data, prepDir)), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var log bytes.Buffer
	o, err := Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
	if err != nil {
		t.Fatalf("campaign: %v\n%s", err, log.String())
	}
	raw, err := dataset.LoadRaw(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{"Qwen3-VL-8B-Instruct": "oracle", "Lingshu-7B": "half", "Hulu-Med-4B": "constant"}
	pairs := [][2]string{{"l_rev_snapshot", "l_rev"}, {"l_rev_shuffled", "l_rev"}, {"l_rev", "l_rev_serial"}}
	for _, m := range o.Results.Models {
		right := func(item string, ch *dataset.Choice) bool {
			return choiceRight(5, m.Model, policies[m.Model], item, ch)
		}
		if len(m.Controls) != len(pairs) {
			t.Fatalf("%s: %d comparisons, want %d", m.Model, len(m.Controls), len(pairs))
		}
		nonzero := false
		for i, p := range pairs {
			got, want := m.Controls[i], expectPaired(raw, right, p[0], p[1])
			if got.Baseline != p[0] || got.Treatment != p[1] || !got.Complete {
				t.Errorf("%s: comparison %d is %s → %s (complete %v), want %s → %s", m.Model, i, got.Baseline, got.Treatment, got.Complete, p[0], p[1])
			}
			checkPaired(t, m.Model+" "+got.Name+" item accuracy", got.Micro, want.microB, want.microT)
			checkPaired(t, m.Model+" "+got.Name+" all-turn", got.AllCorrect, want.allB, want.allT)
			if got.Corrected != want.corrected || got.Harmed != want.harmed {
				t.Errorf("%s %s: +/− %d/%d, want %d/%d", m.Model, got.Name, got.Corrected, got.Harmed, want.corrected, want.harmed)
			}
			nonzero = nonzero || got.Micro.Difference != 0
		}
		if policies[m.Model] != "half" && nonzero {
			t.Errorf("%s (%s): a difference between conditions it answers alike", m.Model, policies[m.Model])
		}
		if policies[m.Model] == "half" && !nonzero {
			t.Errorf("%s: every difference is 0; the 50 %% policy should decide each condition's items apart", m.Model)
		}
	}
	before, _ := os.ReadFile(filepath.Join(o.RunDir, "scores.json"))
	if _, _, err := ScoreDir(o.RunDir); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(o.RunDir, "scores.json"))
	if !bytes.Equal(before, after) {
		t.Error("npcorch score did not reproduce scores.json byte for byte")
	}
	md, _ := os.ReadFile(filepath.Join(o.RunDir, "scores.md"))
	if !bytes.Contains(md, []byte("## Matched controls")) || !bytes.Contains(md, []byte("L5 full history − snapshot")) {
		t.Errorf("scores.md does not report the controls:\n%s", md)
	}
	if left := liveProcesses(o.RunDir); len(left) > 0 {
		t.Errorf("processes left after the run: %v", left)
	}
}

// checkPaired compares a paired endpoint with the shares derived, and its
// difference with theirs.
func checkPaired(t *testing.T, name string, got score.Paired, baseline, treatment float64) {
	t.Helper()
	if got.Baseline == nil || got.Treatment == nil {
		t.Errorf("%s: absent", name)
		return
	}
	if math.Abs(got.Baseline.Percent-baseline) > 1e-9 || math.Abs(got.Treatment.Percent-treatment) > 1e-9 ||
		math.Abs(got.Difference-(treatment-baseline)) > 1e-9 {
		t.Errorf("%s: %.4f → %.4f (Δ %.4f), want %.4f → %.4f from the answer key and policy", name,
			got.Baseline.Percent, got.Treatment.Percent, got.Difference, baseline, treatment)
	}
}
