package campaign_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/slurm"
	"github.com/npcorch/npcorch/tasks/campaign"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/prepare"
	"github.com/npcorch/npcorch/tasks/score"
	"github.com/npcorch/npcorch/tasks/synth"
)

// These tests run campaigns of simulated engines through a REAL Slurm:
// scripts/slurm/ci-setup.sh starts one on this machine (one node, eight
// fake GPUs). They skip, saying so, where Slurm is not installed or not
// running.

// requireSlurm skips unless sbatch works and a node with GPUs takes jobs.
func requireSlurm(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Slurm jobs")
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		t.Skip("Slurm is not installed (no sbatch on PATH); run scripts/slurm/ci-setup.sh as root to install and start a one-node test cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := configs.SlurmSettings{GRES: "gpu"}
	if _, err := slurm.Discover(ctx, slurm.Exec{}, s); err != nil {
		t.Skipf("Slurm is not running or has no GPU node (%v); run scripts/slurm/ci-setup.sh as root", err)
	}
}

var (
	fixtureOnce          sync.Once
	fixtureData, fixPrep string
	fixtureErr           error
)

// fixture is a small synthetic dataset, generated and prepared once, under
// a folder slurmd can read (the test's temporary folders are removed per
// test, so it lives in the package's own).
func fixture(t *testing.T) (data, prepDir string) {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "npcorch-slurm-fixture-")
		if err != nil {
			fixtureErr = err
			return
		}
		fixtureData, fixPrep = filepath.Join(dir, "data"), filepath.Join(dir, "prep")
		opt := synth.DefaultOptions(fixtureData)
		opt.Patients, opt.CarePath, opt.Seed = 4, 2, 7
		if _, err := synth.Generate(context.Background(), opt); err != nil {
			fixtureErr = err
			return
		}
		_, rep, err := prepare.Run(context.Background(), prepare.Options{Tasks: campaign.Benchmark(), Dataset: fixtureData, Out: fixPrep})
		if err == nil && len(rep.Errors) > 0 {
			err = fmt.Errorf("prep: %v", rep.Errors)
		}
		fixtureErr = err
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixtureData, fixPrep
}

func testTiming() launcher.Timing {
	return launcher.Timing{NoProgress: 30 * time.Second, HardCap: time.Minute, Grace: 3 * time.Second,
		RestartBackoff: 200 * time.Millisecond, MaxBackoff: time.Second}
}

// campaignFile writes a Slurm campaign; name is unique per test so that
// its jobs can be told apart in squeue. Its engines' ports (30000-32699)
// stay clear of the local launcher's range (20000-29999), which other
// packages' tests use at the same time on this one machine.
func campaignFile(t *testing.T, name, data, prepDir, slurmExtra, models string) *configs.Campaign {
	t.Helper()
	yml := fmt.Sprintf(`
name: %s
backend: slurm
output: run
seed: 11
dataset: {raw: %q, prepared: %q}
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 200ms, retries: 8}
slurm: {time_limit: 10m, poll: 300ms, orphan_timeout: 2m, max_resubmits: 3, port_base: 30000, port_span: 2700%s}
models:
%s`, name, data, prepDir, slurmExtra, models)
	c, err := configs.ParseCampaign(name+".yaml", t.TempDir(), []byte(yml), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e6)
}

// activeJobs lists this run's jobs that squeue still shows (pending,
// running, completing), as "ID STATE".
func activeJobs(t *testing.T, run string) []string {
	t.Helper()
	out, err := exec.Command("squeue", "--noheader", "--format=%i %T %j").Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	var jobs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(l, "npcorch-"+run+"-") {
			jobs = append(jobs, l)
		}
	}
	return jobs
}

func readAttempts(t *testing.T, runDir string) []slurm.Attempt {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(runDir, "slurm", "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var a []slurm.Attempt
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// journalLines counts the records written so far.
func journalLines(runDir string) int {
	n := 0
	filepath.WalkDir(filepath.Join(runDir, "journal"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			data, _ := os.ReadFile(p)
			n += bytes.Count(data, []byte("\n"))
		}
		return nil
	})
	return n
}

// checkComplete asserts that every item of every model was answered
// exactly once and scored.
func checkComplete(t *testing.T, o *campaign.Outcome) {
	t.Helper()
	st, err := journal.Read(o.RunDir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Duplicates != 0 || st.Torn != 0 {
		t.Errorf("journal: %d duplicate answers, %d torn lines", st.Duplicates, st.Torn)
	}
	if o.Results == nil || len(o.Results.Models) == 0 {
		t.Fatal("no scores")
	}
	for _, m := range o.Results.Models {
		if m.NotRun != 0 || m.Missing != 0 {
			t.Errorf("%s: %d items not run, %d missing", m.Model, m.NotRun, m.Missing)
		}
	}
	for _, s := range o.Summaries {
		if s.Answered != s.Requests {
			t.Errorf("%s: %d of %d requests answered", s.Model, s.Answered, s.Requests)
		}
	}
}

func TestSlurmCampaignEndToEnd(t *testing.T) {
	requireSlurm(t)
	data, prepDir := fixture(t)
	name := uniqueName("e2e")
	c := campaignFile(t, name, data, prepDir, ", shared_filesystem: true", `
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 2, sim: [--sim-policy, oracle, --sim-load-time, 300ms]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, tensor_parallel: 2, sim: [--sim-policy, constant]}
`)
	exe, _ := os.Executable()
	var log bytes.Buffer
	o, err := campaign.Run(context.Background(), campaign.Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
	if err != nil {
		t.Fatalf("campaign: %v\n%s", err, log.String())
	}
	checkComplete(t, o)
	// The oracle policy answers everything right: proof that the answers
	// came from engines that saw the real images (file:// on a shared disk).
	for _, m := range o.Results.Models {
		if m.Model != "Qwen3-VL-8B-Instruct" {
			continue
		}
		for _, col := range score.CardOf(campaign.Benchmark()).Table {
			if s, _ := col.Pick(m); s != nil && s.Percent != 100 {
				t.Errorf("oracle %s %s = %.1f%%, want 100", m.Model, col.Name, s.Percent)
			}
		}
	}
	attempts := readAttempts(t, o.RunDir)
	perModel := map[string]int{}
	for _, a := range attempts {
		perModel[a.Model]++
		if a.Ready.IsZero() || a.Started.IsZero() {
			t.Errorf("job %s of %s/r%d never became ready: %+v", a.JobID, a.Model, a.Replica, a)
		}
		if a.Outcome != "stopped" {
			t.Errorf("job %s of %s ended %q, want stopped", a.JobID, a.Model, a.Outcome)
		}
		if a.Node == "" || a.Port == 0 {
			t.Errorf("job %s: no node or port recorded", a.JobID)
		}
		if a.Model == "Lingshu-7B" && a.GPUs != 2 {
			t.Errorf("Lingshu-7B pins TP 2 but its job asked for %d GPUs", a.GPUs)
		}
		script, err := os.ReadFile(filepath.Join(filepath.Dir(a.Log), "job.sh"))
		if err != nil {
			t.Fatal(err)
		}
		// Every engine runs with a generated API key, from its environment
		// (never its command line), bound to the node's address.
		if !bytes.Contains(script, []byte("\nexport VLLM_API_KEY=npc-")) || bytes.Contains(script, []byte("--api-key")) ||
			bytes.Contains(script, []byte("--host 127.0.0.1 ")) && !strings.Contains(log.String(), "(127.0.0.1)") {
			t.Errorf("job %s: script lacks a generated key in VLLM_API_KEY, puts one on the command line, or binds to loopback:\n%s", a.JobID, script)
		}
	}
	if perModel["Qwen3-VL-8B-Instruct"] != 2 || perModel["Lingshu-7B"] != 1 {
		t.Errorf("jobs per model = %v, want 2 and 1", perModel)
	}
	if left := activeJobs(t, name); len(left) > 0 {
		t.Errorf("jobs left in squeue after the campaign: %v", left)
	}
	if !strings.Contains(log.String(), "pending") || !strings.Contains(log.String(), "start-up") {
		t.Errorf("the log reports no pending and start-up times:\n%s", log.String())
	}
}

// midRun is a campaign of one oracle replica running in the background,
// for the tests that disturb its job once it has answered a few requests.
type midRun struct {
	t    *testing.T
	name string // the campaign's, unique: its jobs in squeue
	dir  string // the run directory
	log  proctest.Buffer
	done chan midRunEnd
}

type midRunEnd struct {
	o   *campaign.Outcome
	err error
}

func startMidRun(t *testing.T, prefix string, timing launcher.Timing) *midRun {
	t.Helper()
	data, prepDir := fixture(t)
	m := &midRun{t: t, name: uniqueName(prefix), done: make(chan midRunEnd, 1)}
	c := campaignFile(t, m.name, data, prepDir, "", `
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 1, tensor_parallel: 1, max_num_seqs: 4, sim: [--sim-policy, oracle, --sim-decode-tps, "300"]}
`)
	m.dir = c.Path(c.Output)
	exe, _ := os.Executable()
	go func() {
		o, err := campaign.Run(context.Background(), campaign.Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &m.log, Timing: timing})
		m.done <- midRunEnd{o, err}
	}()
	return m
}

// await polls every 100 ms, once the journal holds 3 records, until found
// reports true; the campaign ending first, or 90 s passing, fails the test.
func (m *midRun) await(what string, found func() bool) {
	m.t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case r := <-m.done:
			m.t.Fatalf("the campaign ended before %s: %v\n%s", what, r.err, m.log.String())
		case <-deadline:
			m.t.Fatalf("no %s after 90s\n%s", what, m.log.String())
		case <-time.After(100 * time.Millisecond):
		}
		if journalLines(m.dir) >= 3 && found() {
			return
		}
	}
}

// finish waits for the campaign's end and checks that every item was
// scored once and no job is left; it returns the jobs npcorch submitted.
func (m *midRun) finish(after string) (*campaign.Outcome, []slurm.Attempt) {
	m.t.Helper()
	var r midRunEnd
	select {
	case r = <-m.done:
	case <-time.After(2 * time.Minute):
		m.t.Fatalf("the campaign did not finish after %s\n%s", after, m.log.String())
	}
	if r.err != nil {
		m.t.Fatalf("campaign: %v\n%s", r.err, m.log.String())
	}
	if testing.Verbose() {
		m.t.Log(m.log.String())
	}
	checkComplete(m.t, r.o)
	attempts := readAttempts(m.t, r.o.RunDir)
	if len(attempts) < 2 {
		m.t.Fatalf("want the job re-submitted after %s; jobs: %+v\n%s", after, attempts, m.log.String())
	}
	if last := attempts[len(attempts)-1]; last.Ready.IsZero() || last.Outcome != "stopped" {
		m.t.Errorf("the re-submitted job %s: ready %v, outcome %q", last.JobID, last.Ready, last.Outcome)
	}
	if left := activeJobs(m.t, m.name); len(left) > 0 {
		m.t.Errorf("jobs left in squeue: %v", left)
	}
	return r.o, attempts
}

// TestSlurmJobKilledMidRunIsResubmitted cancels the only replica's job with
// scancel while requests stream: the replica must come back in a new job
// and every item must be scored exactly once.
func TestSlurmJobKilledMidRunIsResubmitted(t *testing.T) {
	requireSlurm(t)
	m := startMidRun(t, "kill", testTiming())
	killed := ""
	m.await("a running job with answers", func() bool {
		for _, j := range activeJobs(t, m.name) {
			if f := strings.Fields(j); len(f) >= 2 && f[1] == "RUNNING" {
				killed = f[0]
			}
		}
		return killed != ""
	})
	before := journalLines(m.dir)
	if out, err := exec.Command("scancel", killed).CombinedOutput(); err != nil {
		t.Fatalf("scancel %s: %v %s", killed, err, out)
	}
	o, attempts := m.finish("its job was killed")
	if first := attempts[0]; first.JobID != killed || !strings.HasPrefix(first.Outcome, "resubmitted") || !strings.Contains(first.State, "CANCELLED") {
		t.Errorf("first job %s: state %q outcome %q; want job %s CANCELLED and resubmitted", first.JobID, first.State, first.Outcome, killed)
	}
	if before >= journalLines(o.RunDir) {
		t.Errorf("no request was answered after the kill (%d records before, %d after)", before, journalLines(o.RunDir))
	}
	// A job cancelled from outside is the cluster's doing, not a crash of
	// the engine: the scheduler hears none, so launch.max_model_restarts
	// is not spent (docs/slurm.md).
	if log := m.log.String(); !strings.Contains(log, "Qwen3-VL-8B-Instruct/r0 crashed") || strings.Contains(log, "crashed  Qwen3-VL-8B-Instruct/r0") {
		t.Errorf("want the engine's loss logged but no crash told to the scheduler:\n%s", log)
	}
}

// TestSlurmHungEngineIsCancelledAndResubmitted makes the only replica's
// engine hang mid-run (its streams stop and never finish, its process and
// job live on): the watchdog must see running requests without a new token,
// cancel the job and re-submit it, and every item must be scored exactly
// once. Without the watchdog the hung requests would only end at the
// client's timeouts, on the same hung engine.
func TestSlurmHungEngineIsCancelledAndResubmitted(t *testing.T) {
	requireSlurm(t)
	timing := testTiming()
	timing.StallCheck, timing.StallWindow = 200*time.Millisecond, time.Second
	m := startMidRun(t, "hang", timing)
	var hung slurm.EndpointFile
	m.await("an engine answering", func() bool {
		var ok bool
		hung, ok = servingEndpoint(m.dir, m.log.String())
		return ok
	})
	resp, err := http.Post(fmt.Sprintf("http://%s:%d/sim/fault", hung.Host, hung.Port), "application/json", strings.NewReader(`{"fault":"hang"}`))
	if err != nil {
		t.Fatalf("hanging job %s's engine: %v", hung.Job, err)
	}
	resp.Body.Close()
	_, attempts := m.finish("its engine hung")
	i := slices.IndexFunc(attempts, func(a slurm.Attempt) bool { return a.JobID == hung.Job })
	if i < 0 || !strings.HasPrefix(attempts[i].Outcome, "resubmitted") || !strings.Contains(attempts[i].Outcome, "no new token") {
		t.Errorf("want job %s resubmitted because no new token came; jobs: %+v", hung.Job, attempts)
	}
	// A hung engine is its own fault: it counts against the model's
	// restarts (launch.max_model_restarts).
	if log := m.log.String(); !strings.Contains(log, "crashed  Qwen3-VL-8B-Instruct/r0") {
		t.Errorf("the scheduler was not told of the hung engine's crash:\n%s", log)
	}
}

// servingEndpoint is the endpoint file of the job that serves now: the
// last job the log reports ready, with no job submitted after it; false
// while there is none. An earlier attempt's file stays in its directory
// (slurm/<model>-r0/1/endpoint.json) with the port of an engine that is
// gone (a job whose port was taken, or lost and re-submitted), and a
// later attempt writes its file before its engine listens: neither may
// be dialled.
func servingEndpoint(runDir, log string) (slurm.EndpointFile, bool) {
	serving := ""
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, ": submitted job ") {
			serving = ""
		} else if _, after, ok := strings.Cut(l, ": job "); ok && strings.Contains(after, " ready at ") {
			serving, _, _ = strings.Cut(after, " ")
		}
	}
	if serving == "" {
		return slurm.EndpointFile{}, false
	}
	files, _ := filepath.Glob(filepath.Join(runDir, "slurm", "*", "*", "endpoint.json"))
	for _, f := range files {
		var ep slurm.EndpointFile
		if raw, err := os.ReadFile(f); err == nil && json.Unmarshal(raw, &ep) == nil && ep.Job == serving {
			return ep, true
		}
	}
	return slurm.EndpointFile{}, false
}

// TestSlurmCampaignInterruptedLeavesNoJob cancels the campaign's context
// (what npcorch does on Ctrl-C) while jobs pend and run: no job of the run
// may be left in squeue, and no engine process on the node.
func TestSlurmCampaignInterruptedLeavesNoJob(t *testing.T) {
	requireSlurm(t)
	data, prepDir := fixture(t)
	name := uniqueName("int")
	c := campaignFile(t, name, data, prepDir, "", `
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 2, tensor_parallel: 1, sim: [--sim-policy, oracle, --sim-decode-tps, "20"]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, tensor_parallel: 1, sim: [--sim-policy, oracle, --sim-load-time, 1h]}
`)
	exe, _ := os.Executable()
	var log proctest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := campaign.Run(ctx, campaign.Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
		done <- err
	}()
	runDir := c.Path(c.Output)
	deadline := time.After(90 * time.Second)
	for journalLines(runDir) < 2 || len(activeJobs(t, name)) < 3 {
		select {
		case err := <-done:
			t.Fatalf("the campaign ended before it could be interrupted: %v\n%s", err, log.String())
		case <-deadline:
			t.Fatalf("the campaign's three jobs were not all submitted with answers flowing after 90s: %v\n%s", activeJobs(t, name), log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the interrupted campaign did not return\n%s", log.String())
	}
	if left := activeJobs(t, name); len(left) > 0 {
		t.Errorf("jobs left in squeue after the interrupt: %v\n%s", left, log.String())
	}
	if left := proctest.Procs(runDir); len(left) > 0 {
		t.Errorf("engine processes left after the interrupt: %v", left)
	}
	for _, a := range readAttempts(t, runDir) {
		if a.Ended.IsZero() {
			t.Errorf("job %s of %s/r%d has no end recorded: %+v", a.JobID, a.Model, a.Replica, a)
		}
	}
}

// TestSlurmPendingJobIsCancelledWhenStartIsInterrupted submits a job
// Slurm holds (pending), interrupts the start, and expects the job gone
// from squeue, recorded as never started.
func TestSlurmPendingJobIsCancelledWhenStartIsInterrupted(t *testing.T) {
	requireSlurm(t)
	reg, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := reg.Get("Lingshu-7B")
	m.Engine.Kind = configs.EngineSim
	exe, _ := os.Executable()
	run := uniqueName("hold")
	var log proctest.Buffer
	dir := t.TempDir()
	b, err := slurm.New(slurm.Config{
		Settings: configs.SlurmSettings{GRES: "gpu", TimeLimit: 5 * time.Minute, Poll: 200 * time.Millisecond, MaxResubmits: 1,
			PortBase: 26000, PortSpan: 6000, SbatchArgs: []string{"--hold"}},
		Run: run, Dir: dir, Engines: launcher.Engines{Sim: []string{exe, "sim-engine"}}, Timing: testTiming(), Log: &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	cl, err := b.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	node := cl.PlacementNode(configs.SlurmSettings{GRES: "gpu", GPUMemoryGiB: 80})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(activeJobs(t, run)) == 0 {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	_, err = b.Start(ctx, launcher.ReplicaSpec{Model: m, Replica: 1, GPUs: []string{node.GPUs[0].UUID}})
	if err != context.Canceled {
		t.Fatalf("Start of a held job returned %v, want context.Canceled\n%s", err, log.String())
	}
	if left := activeJobs(t, run); len(left) > 0 {
		t.Errorf("the held job is still in squeue after the interrupted start: %v", left)
	}
	if err := b.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := b.Attempts()
	if len(a) != 1 || !a[0].Started.IsZero() || a[0].Outcome != "stopped" || !strings.HasPrefix(a[0].State, "CANCELLED") {
		t.Errorf("attempts %+v; want one job, never started, cancelled and stopped\n%s", a, log.String())
	}
}

// TestServingEndpointSkipsEarlierAttempts forces the order the flaky run
// met: the first job's endpoint file (its engine gone) is still on disk
// while a later job serves. The endpoint dialled must be the later job's,
// and none while the latest job is submitted but not yet ready.
func TestServingEndpointSkipsEarlierAttempts(t *testing.T) {
	run := t.TempDir()
	for attempt, ep := range map[string]slurm.EndpointFile{
		"1": {Job: "41", Node: "n1", Host: "127.0.0.1", Port: 30001},
		"2": {Job: "42", Node: "n1", Host: "127.0.0.1", Port: 30002},
	} {
		dir := filepath.Join(run, "slurm", "qwen3-vl-8b-instruct-r0", attempt)
		raw, _ := json.Marshal(ep)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "endpoint.json"), raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const r0 = "slurm: Qwen3-VL-8B-Instruct/r0: "
	first := r0 + "submitted job 41 (npc-q-r0, 1 GPU on n1, port 30001)\n" +
		r0 + "job 41 ready at http://127.0.0.1:30001/v1 (pending 1s, start-up 2s)\n" +
		r0 + "Slurm job 41 of Qwen3-VL-8B-Instruct/r0 ended CANCELLED; re-submitting in 200ms (1 of at most 3)\n" +
		r0 + "submitted job 42 (npc-q-r0, 1 GPU on n1, port 30002)\n"
	if ep, ok := servingEndpoint(run, first); ok {
		t.Errorf("job 42 is not ready yet, job 41 is gone: got %+v, want none", ep)
	}
	ready := first + r0 + "job 42 ready at http://127.0.0.1:30002/v1 (pending 1s, start-up 2s)\n"
	if ep, ok := servingEndpoint(run, ready); !ok || ep.Job != "42" || ep.Port != 30002 {
		t.Errorf("got %+v, %v; want job 42's endpoint on port 30002", ep, ok)
	}
}
