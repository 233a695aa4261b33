package campaign

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/send"
)

// TestCampaignGoesOnWhenAnEngineGivesUp is issue 12's hang, with real
// engine processes: Qwen3-VL-8B's engine crashes after its first answer
// each time it starts, is restarted once (max_restarts), then gives up.
// The restart policy comes from the campaign file's launch block.
// Before the fix its remaining requests waited in Pool.Acquire for ever,
// and so did the campaign. Now its GPUs go back to the scheduler (all
// four: Hulu-Med-4B, pinned to the same four GPUs, can only start then),
// its remaining requests end not run with the reason, and the campaign
// finishes with Hulu-Med-4B fully answered.
func TestCampaignGoesOnWhenAnEngineGivesUp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	data, prepDir := fixture(t)
	src := fmt.Sprintf(`
name: gives-up
node: fake:h100-sxm-4
output: run
dataset: {raw: %q, prepared: %q}
tasks: [pathology, sequence]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, retries: 2, backoff: 50ms}
launch: {max_restarts: 1, restart_backoff: 100ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, tensor_parallel: 4, replicas: 1, sim: [--sim-fault, crash-after=1, --sim-policy, oracle]}
  - name: Hulu-Med-4B
    engine: {kind: sim, tensor_parallel: 4, replicas: 1, sim: [--sim-policy, oracle]}
`, data, prepDir)
	c, err := configs.ParseCampaign("gives-up.yaml", t.TempDir(), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	tm := testTiming()
	tm.MaxRestarts = 4 // the campaign file's launch.max_restarts wins
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	o, err := Run(ctx, Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: tm})
	if ctx.Err() != nil {
		t.Fatalf("the campaign hung until the test's deadline; log:\n%s", log.String())
	}
	if err == nil || !strings.Contains(err.Error(), "Qwen3-VL-8B-Instruct") {
		t.Fatalf("err = %v; want the run to say which model was not served", err)
	}
	sums := map[string]send.Summary{}
	for _, s := range o.Summaries {
		sums[s.Model] = s
	}
	hulu, qwen := sums["Hulu-Med-4B"], sums["Qwen3-VL-8B-Instruct"]
	if hulu.Answered != hulu.Requests || hulu.Requests == 0 {
		t.Errorf("Hulu-Med-4B: %+v; want every request answered after the other model gave up its GPUs", hulu)
	}
	if qwen.NotRun == 0 || qwen.Answered+qwen.NotRun != qwen.Requests {
		t.Errorf("Qwen3-VL-8B-Instruct: %+v; want its unanswered requests ended as not run", qwen)
	}
	reason := ""
	for r := range qwen.Reasons {
		if strings.Contains(r, "not served") && strings.Contains(r, "gave up after 1 restarts") {
			reason = r
		}
	}
	if reason == "" {
		t.Errorf("not-run reasons %v lack the engine giving up; log:\n%s", qwen.Reasons, log.String())
	}
	// The journal keeps each not-run request with the reason.
	st, err := journal.Read(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	notRun := 0
	for _, rec := range st.Records {
		if rec.Model == "Qwen3-VL-8B-Instruct" && rec.Status == journal.StatusNotRun {
			notRun++
			if !strings.Contains(strings.Join(rec.Failures, "; "), "not served") {
				t.Errorf("not-run record %s lacks the reason: %q", rec.Item, rec.Failures)
			}
		}
	}
	if notRun != qwen.NotRun {
		t.Errorf("%d not-run records journaled, summary says %d", notRun, qwen.NotRun)
	}
	for _, m := range o.Plan.Models {
		want := map[string]schedule.ModelStatus{"Qwen3-VL-8B-Instruct": schedule.StatusFailed, "Hulu-Med-4B": schedule.StatusDone}[m.Model]
		if m.Status != want {
			t.Errorf("%s ended %s, want %s", m.Model, m.Status, want)
		}
	}
	// Replicas are numbered per model from 0, as `npcorch serve` numbers
	// them (issue 12): Hulu-Med-4B's only replica is r0, though it is the
	// campaign's second.
	for _, name := range []string{"Hulu-Med-4B.r0.log", "Qwen3-VL-8B-Instruct.r0.log"} {
		if _, err := os.Stat(filepath.Join(o.RunDir, "engines", name)); err != nil {
			t.Errorf("engine log: %v", err)
		}
	}
	if !strings.Contains(log.String(), "Hulu-Med-4B/r0 ready") {
		t.Errorf("the log does not call Hulu-Med-4B's replica r0:\n%s", log.String())
	}
	if left := liveProcesses(o.RunDir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// TestBadEngineArgumentsFailTheModelWithoutReplanning is issue 19's bad
// command line: vLLM exits 2 with argparse's "unrecognized arguments",
// and npcorch re-planned the model onto other GPUs and started it again,
// three times; a missing engine binary went the same way. Now the first
// failure fails the model: one start, no restart (max_restarts allows
// two), its items not run with argparse's message (or the missing
// binary), and the other model runs. An executable missing when the run
// begins is refused before it (TestMissingEngineExecutableIsRefusedFirst
// in cmd/npcorch); this one is found, and its interpreter is missing, so
// the kernel's exec fails as a binary removed after the check would.
func TestBadEngineArgumentsFailTheModelWithoutReplanning(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	data, prepDir := fixture(t)
	vllm := filepath.Join(t.TempDir(), "vllm")
	if err := os.WriteFile(vllm, []byte("#!/nonexistent/bin/python3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`
name: bad-args
node: fake:h100-sxm-4
output: run
dataset: {raw: %q, prepared: %q}
tasks: [pathology]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
launch: {max_restarts: 2}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, tensor_parallel: 1, replicas: 1, sim: [--bogus-flag, "1"]}
  - name: Lingshu-7B
    engine: {kind: sim, tensor_parallel: 1, replicas: 1, command: [%q]}
  - name: Hulu-Med-4B
    engine: {kind: sim, tensor_parallel: 1, replicas: 1, sim: [--sim-policy, oracle]}
`, data, prepDir, vllm)
	c, err := configs.ParseCampaign("bad-args.yaml", t.TempDir(), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var log bytes.Buffer
	o, err := Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
	if err == nil || !strings.Contains(err.Error(), "unrecognized arguments: --bogus-flag") {
		t.Fatalf("err = %v; want it to carry argparse's message", err)
	}
	fails := map[string]int{}
	for _, f := range o.Plan.Failures {
		fails[f.Model]++
	}
	for _, m := range []string{"Qwen3-VL-8B-Instruct", "Lingshu-7B"} {
		if fails[m] != 1 {
			t.Errorf("%d failed starts of %s, want 1 (no re-plan)", fails[m], m)
		}
		if n := strings.Count(log.String(), m+"/r0 restarting"); n != 0 {
			t.Errorf("%s's engine was restarted %d times", m, n)
		}
	}
	for _, s := range o.Summaries {
		switch s.Model {
		case "Hulu-Med-4B":
			if s.Answered != s.Requests {
				t.Errorf("Hulu-Med-4B: %+v", s)
			}
		case "Qwen3-VL-8B-Instruct":
			found := false
			for r, n := range s.Reasons {
				found = found || (n == s.Requests && strings.Contains(r, "unrecognized arguments"))
			}
			if !found || s.NotRun != s.Requests {
				t.Errorf("Qwen3-VL-8B-Instruct: %+v; want every request not run with argparse's message", s)
			}
		case "Lingshu-7B":
			found := false
			for r, n := range s.Reasons {
				found = found || (n == s.Requests && strings.Contains(r, "binary-not-found"))
			}
			if !found || s.NotRun != s.Requests {
				t.Errorf("Lingshu-7B: %+v; want every request not run for the missing binary", s)
			}
		}
	}
}

// TestFakeNodeRefusesRealEngines: on a fake node a vLLM engine would be
// started with CUDA_VISIBLE_DEVICES naming fake GPUs (issue 12). The run
// refuses before it writes or launches anything, naming the model; the
// simulated engine beside it is fine.
func TestFakeNodeRefusesRealEngines(t *testing.T) {
	src := `
node: fake:a800-sxm-8
output: run
dataset: {raw: data, prepared: prep}
models:
  - Lingshu-7B
  - name: Hulu-Med-4B
    engine: {kind: sim}
`
	dir := t.TempDir()
	c, err := configs.ParseCampaign("fake-real.yaml", dir, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Campaign: c, Self: []string{"/nonexistent/npcorch"}})
	if err == nil || !strings.Contains(err.Error(), "fake-real.yaml: model Lingshu-7B: engine kind vllm cannot run on the fake node fake:a800-sxm-8") {
		t.Fatalf("err = %v; want a refusal naming the file, model and node", err)
	}
	if strings.Contains(err.Error(), "Hulu-Med-4B") {
		t.Errorf("the simulated engine was refused too: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run")); err == nil {
		t.Error("the refused run created its run directory")
	}
}
