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

// TestCrashLoopingModelIsAbandonedLocally is issue 25's engine that
// crashes after every request it answers, through the local backend with
// real engine processes. Qwen3-VL-8B's engine (TP 2) crashes after each
// answer; its replica r0 is restarted twice (launch.max_restarts) and
// fails, and the scheduler re-plans it on the other two GPUs, as before.
// Before the model budget, r1 started with a fresh budget of restarts (and
// on a larger node r2, r3 …). Now its first crash is the model's fourth,
// past launch.max_model_restarts 3: the model is abandoned with the
// reason, its unanswered requests end not run with it (journal and
// scores.md), and Hulu-Med-4B, which needs all four GPUs, runs to the end.
func TestCrashLoopingModelIsAbandonedLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	data, prepDir := fixture(t)
	src := fmt.Sprintf(`
name: crash-loop
node: fake:h100-sxm-4
output: run
dataset: {raw: %q, prepared: %q}
tasks: [pathology, sequence]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, retries: 10, backoff: 50ms}
launch: {max_restarts: 2, max_model_restarts: 3, restart_backoff: 100ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, tensor_parallel: 2, replicas: 1, sim: [--sim-fault, crash-after=1, --sim-policy, oracle]}
  - name: Hulu-Med-4B
    engine: {kind: sim, tensor_parallel: 4, replicas: 1, sim: [--sim-policy, oracle]}
`, data, prepDir)
	c, err := configs.ParseCampaign("crash-loop.yaml", t.TempDir(), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	began := time.Now()
	o, err := Run(ctx, Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
	if ctx.Err() != nil {
		t.Fatalf("the campaign did not end in 3 minutes; log:\n%s", log.String())
	}
	t.Logf("the campaign ended after %v", time.Since(began).Round(time.Millisecond))
	const crashLoopReason = "its engines crashed 4 times after they were ready (replicas r0, r1), more than the 3 restarts a model gets (launch.max_model_restarts)"
	if err == nil || !strings.Contains(err.Error(), "model Qwen3-VL-8B-Instruct was abandoned: "+crashLoopReason) {
		t.Fatalf("err = %v; want the run to name the model and why it was abandoned\n%s", err, log.String())
	}
	CheckCrashLoopOutcome(t, o, log.String(), crashLoopReason)
	if n := strings.Count(log.String(), "Qwen3-VL-8B-Instruct/r"); n == 0 || strings.Contains(log.String(), "Qwen3-VL-8B-Instruct/r2") {
		t.Errorf("Qwen3-VL-8B-Instruct had a third replica, r2: the model budget did not hold\n%s", log.String())
	}
	if crashes := strings.Count(log.String(), "crashed  Qwen3-VL-8B-Instruct/r"); crashes != 4 {
		t.Errorf("the scheduler heard %d crashes of Qwen3-VL-8B-Instruct, want 4 (3 within the budget, the 4th ends it)\n%s", crashes, log.String())
	}
	if left := liveProcesses(o.RunDir); len(left) > 0 {
		t.Errorf("processes left: %v", left)
	}
}

// CheckCrashLoopOutcome asserts what a campaign that abandoned the
// crash-looping Qwen3-VL-8B-Instruct for crashLoopReason must leave,
// whichever backend ran it (the Slurm test calls it too): the model failed
// with the reason (in events.log too), every request of it answered or
// not run (those not run with the reason, in the journal and scores.md),
// and Hulu-Med-4B fully answered.
func CheckCrashLoopOutcome(t *testing.T, o *Outcome, log, crashLoopReason string) {
	t.Helper()
	for _, m := range o.Plan.Models {
		want := map[string]schedule.ModelStatus{"Qwen3-VL-8B-Instruct": schedule.StatusFailed, "Hulu-Med-4B": schedule.StatusDone}[m.Model]
		if m.Status != want {
			t.Errorf("%s ended %s (%s), want %s", m.Model, m.Status, m.Note, want)
		}
		if m.Model == "Qwen3-VL-8B-Instruct" && !strings.HasPrefix(m.Note, crashLoopReason) {
			t.Errorf("Qwen3-VL-8B-Instruct's note %q, want it to start %q", m.Note, crashLoopReason)
		}
	}
	sums := map[string]send.Summary{}
	for _, s := range o.Summaries {
		sums[s.Model] = s
	}
	hulu, qwen := sums["Hulu-Med-4B"], sums["Qwen3-VL-8B-Instruct"]
	if hulu.Requests == 0 || hulu.Answered != hulu.Requests {
		t.Errorf("Hulu-Med-4B: %+v; want every request answered once the other model gave up its GPUs\n%s", hulu, log)
	}
	if qwen.NotRun == 0 || qwen.Answered+qwen.NotRun != qwen.Requests {
		t.Errorf("Qwen3-VL-8B-Instruct: %+v; want its unanswered requests ended as not run", qwen)
	}
	st, err := journal.Read(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	notRun := 0
	for _, rec := range st.Records {
		if rec.Model != "Qwen3-VL-8B-Instruct" || rec.Status != journal.StatusNotRun {
			continue
		}
		notRun++
		if why := journal.NotRunReason(rec); !strings.Contains(why, "not served: "+crashLoopReason) {
			t.Errorf("not-run record %s: reason %q, want the abandonment", rec.Item, why)
		}
	}
	if notRun != qwen.NotRun {
		t.Errorf("%d not-run records journaled, the summary says %d", notRun, qwen.NotRun)
	}
	events, err := os.ReadFile(filepath.Join(o.RunDir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "model Qwen3-VL-8B-Instruct abandoned: " + crashLoopReason; !strings.Contains(string(events), want) {
		t.Errorf("events.log lacks %q", want)
	}
	md, err := os.ReadFile(filepath.Join(o.RunDir, "scores.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("- Qwen3-VL-8B-Instruct, %d × ", notRun); !strings.Contains(string(md), want) || !strings.Contains(string(md), crashLoopReason) {
		t.Errorf("scores.md does not say why Qwen3-VL-8B-Instruct's %d requests were not run (%q):\n%s", notRun, want, md)
	}
}
