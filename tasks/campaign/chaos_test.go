package campaign_test

import (
	"context"
	"os"
	"testing"

	"github.com/npcorch/npcorch/scripts/chaos/trial"
)

// The campaign test binary already doubles as the engine shim and the
// simulated engine (TestMain in main_test.go, CAMPAIGN_TEST_CHILD=1 in the
// environment of every child). The chaos trials also need it to act as
// npcorch itself, in a child process that can be SIGKILLed: that role is
// dispatched here, before TestMain runs.
func init() {
	if os.Getenv("CAMPAIGN_TEST_CHILD") == "1" && len(os.Args) > 1 && os.Args[1] == trial.CampaignRole {
		os.Exit(trial.CampaignMain(os.Args[2:], os.Stdout, os.Stderr))
	}
}

// TestChaosNothingLostNothingLeaks is the CI-sized chaos suite: one trial
// of each fault (an engine's process group SIGKILLed, an engine hanging
// mid-answer, an engine answering 503, npcorch SIGKILLed and resumed) on a
// small campaign with real engine processes. After each, the score files
// must equal the undisturbed run's byte for byte, every request must be
// answered exactly once in a journal that reads cleanly, and no process of
// the run may be left. `go run ./scripts/chaos` runs 20 and more.
func TestChaosNothingLostNothingLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes and kills them")
	}
	ctx := context.Background()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := &trial.Bench{Dir: t.TempDir(), Self: []string{exe}, Timing: trial.DefaultTiming(), Log: testLog{t}}
	if err := b.Prepare(ctx, trial.Dataset{Patients: 2, CarePath: 1, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	base, err := b.Baseline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if base.Items < 40 {
		t.Fatalf("the undisturbed run answered only %d requests", base.Items)
	}
	var results []trial.Result
	for i, p := range trial.Plans(7, len(trial.Faults), base.Items) {
		r := b.Trial(ctx, "trial-"+string(rune('a'+i)), &p)
		results = append(results, r)
		t.Log(trial.Line(r))
		for _, m := range r.Mismatches {
			t.Errorf("%s (%s): %s", r.Name, p.Fault, m)
		}
		if !r.Fired {
			t.Errorf("%s: the %s fault never fired (after %d of %d journal lines)", r.Name, p.Fault, p.After, base.Items)
		}
		if r.Items != base.Items {
			t.Errorf("%s: %d requests answered, the undisturbed run answered %d", r.Name, r.Items, base.Items)
		}
	}
	s := trial.Summarize(results)
	t.Logf("\n%s", s)
	// A fault that hit must have cost something: otherwise the trial did
	// not test what it claims.
	for _, r := range results {
		if r.Fired && r.Plan.Fault != trial.KillNpcorch && r.FailedAttempts == 0 && r.EngineCrashes == 0 {
			t.Errorf("%s: the %s fault hit %s but no attempt failed and no engine crashed", r.Name, r.Plan.Fault, r.Target)
		}
		if r.Plan.Fault == trial.KillNpcorch && r.Runs < 2 {
			t.Errorf("%s: npcorch was killed but not resumed", r.Name)
		}
	}
}

// testLog writes the bench's progress lines to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(string(p))
	return len(p), nil
}
