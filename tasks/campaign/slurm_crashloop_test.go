package campaign_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/campaign"
)

// TestSlurmCrashLoopingModelIsAbandoned is issue 25's measurement through
// real Slurm jobs: an engine that dies after each request it answers. Its
// replica r0 "gave up after 3 re-submissions" (slurm.max_resubmits), and
// the scheduler placed r1 on other GPUs with a fresh budget, then r2, …:
// 15 jobs after 700 s and still going. Now the crashes of all the model's
// jobs count against launch.max_model_restarts (4): r0's four jobs crash,
// r0 fails and is re-planned as before, and r1's first crash, the fifth,
// abandons the model. Its jobs are cancelled, its requests without an
// answer end not run with the reason (journal, scores.md), and Hulu-Med-4B,
// whose two TP-4 replicas need all eight GPUs, runs to the end.
func TestSlurmCrashLoopingModelIsAbandoned(t *testing.T) {
	requireSlurm(t)
	data, prepDir := fixture(t)
	name := uniqueName("crashloop")
	yml := fmt.Sprintf(`
name: %s
backend: slurm
output: run
seed: 11
dataset: {raw: %q, prepared: %q}
tasks: [pathology, sequence]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 200ms, retries: 12}
launch: {max_model_restarts: 4}
slurm: {time_limit: 10m, poll: 300ms, orphan_timeout: 2m, max_resubmits: 3, port_base: 30000, port_span: 2700}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, tensor_parallel: 2, replicas: 1, sim: [--sim-fault, crash-after=1, --sim-policy, oracle]}
  - name: Hulu-Med-4B
    engine: {kind: sim, tensor_parallel: 4, replicas: 2, sim: [--sim-policy, oracle]}
`, name, data, prepDir)
	c, err := configs.ParseCampaign(name+".yaml", t.TempDir(), []byte(yml), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var log bytes.Buffer
	began := time.Now()
	o, err := campaign.Run(ctx, campaign.Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
	if ctx.Err() != nil {
		t.Fatalf("the campaign did not end in 4 minutes; log:\n%s", log.String())
	}
	t.Logf("the campaign ended after %v", time.Since(began).Round(time.Millisecond))
	const reason = "its engines crashed 5 times after they were ready (replicas r0, r1), more than the 4 restarts a model gets (launch.max_model_restarts)"
	if err == nil || !strings.Contains(err.Error(), "model Qwen3-VL-8B-Instruct was abandoned: "+reason) {
		t.Fatalf("err = %v; want the run to name the model and why it was abandoned\n%s", err, log.String())
	}
	campaign.CheckCrashLoopOutcome(t, o, log.String(), reason)
	jobs := map[int]int{}
	for _, a := range readAttempts(t, o.RunDir) {
		if a.Model == "Qwen3-VL-8B-Instruct" {
			jobs[a.Replica]++
		}
	}
	// r0: its first job and three re-submissions; r1: its job, and at
	// most one re-submission cancelled by the abandonment.
	if jobs[0] != 4 || jobs[1] < 1 || jobs[1] > 2 || len(jobs) != 2 {
		t.Errorf("Qwen3-VL-8B-Instruct's jobs per replica: %v; want 4 of r0, 1 or 2 of r1, no r2\n%s", jobs, log.String())
	}
	if left := activeJobs(t, name); len(left) > 0 {
		t.Errorf("jobs left in squeue after the campaign: %v", left)
	}
}
