package campaign

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/score"
)

const controlsCampaign = `
name: controls
node: fake:a800-sxm-8
output: run
seed: 5
dataset: {raw: %q, prepared: %q}
tasks: [l_rev_controls, carepath_controls]
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
// item accuracy, patient-macro accuracy and the all-correct share of
// patients under both conditions, and the units each corrected and harmed.
type pairedWant struct {
	microB, microT, macroB, macroT, allB, allT float64
	corrected, harmed                          int
}

// pairedUnit is one question every condition of a control family asks:
// its patient, its item id without the task, and its options and answer.
type pairedUnit struct {
	patient, key string
	choice       dataset.Choice
}

// lRevUnits are the L5 checkpoints.
func lRevUnits(raw *dataset.Raw) []pairedUnit {
	var out []pairedUnit
	for _, tr := range raw.Longitudinal {
		for _, c := range tr.Checkpoints {
			out = append(out, pairedUnit{tr.Patient, tr.Patient + "/" + c.ID, c.Choice})
		}
	}
	return out
}

// careControlUnits are the scored control questions of the L6 controls'
// cohort.
func careControlUnits(raw *dataset.Raw) []pairedUnit {
	var out []pairedUnit
	for _, p := range raw.Patients {
		if !slices.Contains(p.Cohorts, dataset.CohortCareControl) {
			continue
		}
		for _, q := range p.Episode.ControlQuestions {
			if !q.Excluded {
				out = append(out, pairedUnit{p.ID, p.ID + "/" + q.ID, dataset.Choice{ID: q.ID, Options: q.Options, Answer: []string{q.Answer}}})
			}
		}
	}
	return out
}

// expectPaired derives a comparison of two tasks over the units.
func expectPaired(units []pairedUnit, right func(item string, c *dataset.Choice) bool, baseline, treatment string) pairedWant {
	var w pairedWant
	type tally struct{ n, b, t int }
	byPatient := map[string]*tally{}
	var order []string
	okB, okT := 0, 0
	for _, u := range units {
		b, t := right(baseline+"/"+u.key, &u.choice), right(treatment+"/"+u.key, &u.choice)
		if byPatient[u.patient] == nil {
			byPatient[u.patient] = &tally{}
			order = append(order, u.patient)
		}
		p := byPatient[u.patient]
		p.n++
		if b {
			okB++
			p.b++
		}
		if t {
			okT++
			p.t++
		}
		switch {
		case !b && t:
			w.corrected++
		case b && !t:
			w.harmed++
		}
	}
	for _, id := range order {
		p := byPatient[id]
		w.macroB += float64(p.b) / float64(p.n)
		w.macroT += float64(p.t) / float64(p.n)
		if p.b == p.n {
			w.allB++
		}
		if p.t == p.n {
			w.allT++
		}
	}
	n, np := float64(len(units)), float64(len(order))
	w.microB, w.microT = 100*float64(okB)/n, 100*float64(okT)/n
	w.macroB, w.macroT, w.allB, w.allT = 100*w.macroB/np, 100*w.macroT/np, 100*w.allB/np, 100*w.allT/np
	return w
}

// The matched controls run as campaign tasks, and every paired difference
// follows from dataset.json and the simulated policy alone: for the oracle
// and the constant model every condition scores alike (difference 0); for
// the 50 % model each condition's items are decided apart, so the
// differences are those of the two draws. npcorch score gives the same
// bytes again.
func TestMatchedControlsFollowFromTheAnswerKeyAndPolicy(t *testing.T) {
	_, o, data, _ := runOnFixture(t, "controls.yaml", controlsCampaign)
	raw, err := dataset.LoadRaw(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{"Qwen3-VL-8B-Instruct": "oracle", "Lingshu-7B": "half", "Hulu-Med-4B": "constant"}
	l5, l6 := lRevUnits(raw), careControlUnits(raw)
	if len(l6) < 3 {
		t.Fatalf("the fixture has %d L6 control questions, want a few", len(l6))
	}
	pairs := []struct {
		baseline, treatment string
		units               []pairedUnit
	}{
		{"l_rev_snapshot", "l_rev", l5}, {"l_rev_shuffled", "l_rev", l5}, {"l_rev", "l_rev_serial", l5},
		{"cp_care_own_findings", "cp_care_ref_findings", l6}, {"cp_care_own_findings", "cp_care_no_findings", l6},
		{"cp_care_ref_findings", "cp_care_serial", l6},
	}
	for _, m := range o.Results.Models {
		right := func(item string, ch *dataset.Choice) bool {
			return choiceRight(5, m.Model, policies[m.Model], item, ch)
		}
		// The run asked no care decision: the findings the own-findings
		// condition was given are scored alone.
		if m.CarePath != nil || m.Task("cp_pathology") == nil || m.Task("cp_mri") == nil {
			t.Errorf("%s: CarePath %v, cp_pathology %v, cp_mri %v; want the findings scored alone", m.Model, m.CarePath != nil, m.Task("cp_pathology") != nil, m.Task("cp_mri") != nil)
		} else if policies[m.Model] == "oracle" && (m.Task("cp_pathology").Accuracy.Percent != 100 || m.Task("cp_mri").Accuracy.Percent != 100) {
			t.Errorf("%s: the oracle's findings score below 100", m.Model)
		}
		if len(m.Controls) != len(pairs) {
			t.Fatalf("%s: %d comparisons, want %d", m.Model, len(m.Controls), len(pairs))
		}
		nonzero := false
		for i, p := range pairs {
			got, want := m.Controls[i], expectPaired(p.units, right, p.baseline, p.treatment)
			if got.Baseline != p.baseline || got.Treatment != p.treatment || !got.Complete || got.Units != len(p.units) {
				t.Errorf("%s: comparison %d is %s → %s (complete %v, %d units), want %s → %s over %d", m.Model, i,
					got.Baseline, got.Treatment, got.Complete, got.Units, p.baseline, p.treatment, len(p.units))
			}
			checkPaired(t, m.Model+" "+got.Name+" item accuracy", got.Micro, want.microB, want.microT)
			checkPaired(t, m.Model+" "+got.Name+" patient-macro", got.PatientMacro, want.macroB, want.macroT)
			checkPaired(t, m.Model+" "+got.Name+" all-correct", got.AllCorrect, want.allB, want.allT)
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
	if !bytes.Contains(md, []byte("## Matched controls")) || !bytes.Contains(md, []byte("L5 full history − snapshot")) ||
		!bytes.Contains(md, []byte("L6 reference − own findings")) {
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
