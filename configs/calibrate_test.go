package configs

import (
	"slices"
	"strings"
	"testing"
)

// TestApplySpeedsKeepsTheCampaignsText: measured speeds land on the
// campaign's model entries, a bare name becomes a mapping, an old speed
// is replaced, comments and other fields stay, and the result loads with
// the measured speeds (issue 17.2, `npcorch calibrate`).
func TestApplySpeedsKeepsTheCampaignsText(t *testing.T) {
	in := `# my campaign
name: next
output: run
node: fake:a800-sxm-8
dataset: {raw: data, prepared: prep}
models:
  - Lingshu-7B   # the small one
  - name: Lingshu-32B
    speed_tokens_per_s: 9999
    engine: {max_num_seqs: 16}
  - HealthGPT-Pro-4B
`
	speeds := map[string]MeasuredSpeed{
		"Lingshu-7B":  {TokensPerS: 4321, Note: "measured 0.9×"},
		"Lingshu-32B": {TokensPerS: 1234.4},
		"Other":       {TokensPerS: 5},
	}
	out, set, absent, err := ApplySpeeds("next.yaml", []byte(in), speeds)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(set, []string{"Lingshu-7B", "Lingshu-32B"}) || !slices.Equal(absent, []string{"Other"}) {
		t.Errorf("set %v, absent %v", set, absent)
	}
	text := string(out)
	for _, want := range []string{"# my campaign", "name: Lingshu-7B # the small one\n    speed_tokens_per_s: 4321 # measured 0.9×", "speed_tokens_per_s: 1234\n", "max_num_seqs: 16", "- HealthGPT-Pro-4B"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	c, err := ParseCampaign("next.yaml", t.TempDir(), out, nil)
	if err != nil {
		t.Fatalf("the calibrated campaign does not load: %v\n%s", err, text)
	}
	got := map[string]float64{}
	for _, m := range c.Resolved {
		got[m.Name] = m.SpeedTokensPerS
	}
	reg, err := DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	health, _ := reg.Get("HealthGPT-Pro-4B")
	if got["Lingshu-7B"] != 4321 || got["Lingshu-32B"] != 1234 || got["HealthGPT-Pro-4B"] != health.SpeedTokensPerS {
		t.Errorf("loaded speeds %v; want the measured ones, the registry's for the unmeasured model", got)
	}
	for _, bad := range []string{"name: x\n", "[1, 2]\n", "models: {a: 1}\n", "models: [\n"} {
		if _, _, _, err := ApplySpeeds("bad.yaml", []byte(bad), speeds); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
			t.Errorf("%q: error %v; want a refusal naming the file", bad, err)
		}
	}
	snippet, err := SpeedOverrides(speeds)
	if err != nil {
		t.Fatal(err)
	}
	want := "models:\n  - name: Lingshu-32B\n    speed_tokens_per_s: 1234\n  - name: Lingshu-7B\n    speed_tokens_per_s: 4321 # measured 0.9×\n  - name: Other\n    speed_tokens_per_s: 5\n"
	if string(snippet) != want {
		t.Errorf("overrides:\n%s\nwant:\n%s", snippet, want)
	}
}

func FuzzApplySpeeds(f *testing.F) {
	f.Add([]byte("models:\n  - A\n  - name: B\n    speed_tokens_per_s: 3\n"))
	f.Add([]byte("models: [A, {name: A}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, _, err := ApplySpeeds("fuzz.yaml", data, map[string]MeasuredSpeed{"A": {TokensPerS: 7, Note: "n"}, "B": {TokensPerS: 8}})
		if err != nil {
			return
		}
		if _, _, _, err := ApplySpeeds("again.yaml", out, map[string]MeasuredSpeed{"A": {TokensPerS: 7}}); err != nil {
			t.Fatalf("output of ApplySpeeds does not parse again: %v\n%s", err, out)
		}
	})
}
