package trial

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/npcorch/npcorch/launcher/simengine"
)

// The test binary doubles as npcorch for the campaigns the chaos trials
// start: in a child (CHAOS_TEST_CHILD=1 in its environment) it runs the
// role its arguments name, as the npcorch binary would (Dispatch): the
// campaign itself, in a process that can be SIGKILLed, the engine shim
// and the simulated engine.
const childEnv = "CHAOS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		code, ok := Dispatch(os.Args[1:])
		if !ok {
			fmt.Fprintln(os.Stderr, "unknown test child role", os.Args[1:])
			code = 2
		}
		os.Exit(code)
	}
	os.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	self, _ := json.Marshal([]string{exe, "sim-engine"})
	os.Setenv(simengine.SelfEnv, string(self))
	os.Exit(m.Run())
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
	b := &Bench{Dir: t.TempDir(), Self: []string{exe}, Timing: DefaultTiming(), Log: testLog{t}}
	if err := b.Prepare(ctx, Dataset{Patients: 2, CarePath: 1, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	base, err := b.Baseline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if base.Items < 40 {
		t.Fatalf("the undisturbed run answered only %d requests", base.Items)
	}
	var results []Result
	for i, p := range Plans(7, len(Faults), base.Items) {
		r := b.Trial(ctx, "trial-"+string(rune('a'+i)), &p)
		results = append(results, r)
		t.Log(Line(r))
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
	s := Summarize(results)
	t.Logf("\n%s", s)
	// A fault that hit must have cost something: otherwise the trial did
	// not test what it claims.
	for _, r := range results {
		if r.Fired && r.Plan.Fault != KillNpcorch && r.FailedAttempts == 0 && r.EngineCrashes == 0 {
			t.Errorf("%s: the %s fault hit %s but no attempt failed and no engine crashed", r.Name, r.Plan.Fault, r.Target)
		}
		if r.Plan.Fault == KillNpcorch && r.Runs < 2 {
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
