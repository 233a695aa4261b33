package clinicare

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestSpecValidationNamesTheProblem(t *testing.T) {
	good, err := LoadSpecs()
	if err != nil {
		t.Fatal(err)
	}
	if len(good) < 8 {
		t.Fatalf("%d specs, want ≥ 8", len(good))
	}
	for name, tc := range map[string]struct {
		edit func(string) string
		want string
	}{
		"unknown field":  {func(s string) string { return s + "\nextra: 1\n" }, "extra"},
		"bad provenance": {func(s string) string { return strings.Replace(s, "provenance: guideline", "provenance: vibes", 1) }, "vibes"},
		"bad weight":     {func(s string) string { return strings.Replace(s, "weight: -2", "weight: -3", 1) }, "weighs -3"},
		"unknown table": {func(s string) string {
			return strings.Replace(s, "required_sources: [", "required_sources: [lab_results, ", 1)
		}, "lab_results"},
	} {
		raw := mustRead(t, "scenarios/post-ct-aki.yaml")
		fsys := fstest.MapFS{"scenarios/post-ct-aki.yaml": {Data: []byte(tc.edit(raw))}}
		_, err := loadSpecs(fsys)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "post-ct-aki.yaml") {
			t.Errorf("%s: want an error naming the file and %q, got %v", name, tc.want, err)
		}
	}
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	data, err := specFS().ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
