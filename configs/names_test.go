package configs

import (
	"strings"
	"testing"
)

// TestModelNameInAnotherCase: a registry name written in another case is
// refused at once with the right spelling. Before, `name: Lingshu-7b` with
// an engine made a new model, which failed only once engines had started
// ("has neither weight_bytes nor params_b in the registry").
func TestModelNameInAnotherCase(t *testing.T) {
	base := "output: o\ndataset: {raw: r, prepared: p}\n"
	for _, models := range []string{"models: [lingshu-7b]\n", "models:\n  - name: Lingshu-7b\n    engine: {kind: sim}\n"} {
		_, err := ParseCampaign("c.yaml", ".", []byte(base+models), nil)
		if want := `is not in the registry; did you mean "Lingshu-7B"? (names are case-sensitive)`; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", models, err, want)
		}
	}
}

// TestNewModelNeedsItsSize: a model the campaign defines (not in the
// registry) and npcorch serves needs its size at load, not when its
// engines are placed.
func TestNewModelNeedsItsSize(t *testing.T) {
	base := "output: o\ndataset: {raw: r, prepared: p}\nmodels:\n  - name: My-VLM-7B\n"
	_, err := ParseCampaign("c.yaml", ".", []byte(base+"    engine: {kind: sim}\n"), nil)
	if want := `c.yaml: line 4: field models[0]: model "My-VLM-7B" is not in the registry, so this entry defines it: add params_b`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
	if _, err := ParseCampaign("c.yaml", ".", []byte(base+"    params_b: 7\n    engine: {kind: sim}\n"), nil); err != nil {
		t.Errorf("with params_b: %v", err)
	}
}
