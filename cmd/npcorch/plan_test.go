package main

import (
	"strings"
	"testing"
)

func TestPlanSpeedError(t *testing.T) {
	out, err := runCLI(t, "plan", "--node", "fake:h100-sxm-4", "--speed-error", "2", "--speed-seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nre-plans:\n", " measured at ", "× its registry speed (95 % ",
		"\nmeasured speeds (models not measured: ", "\nspeed errors (seed 3): re-planned ",
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
