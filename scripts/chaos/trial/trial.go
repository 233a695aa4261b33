package trial

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/tasks/campaign"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/prepare"
	"github.com/npcorch/npcorch/tasks/synth"
)

// Fault is what a trial does to a running campaign.
type Fault string

// The faults of the chaos suite.
const (
	// KillEngine sends SIGKILL to an engine's whole process group (shim,
	// engine and workers), as the OOM killer or a node reset would.
	KillEngine Fault = "kill-engine"
	// HangEngine makes an engine stop streaming mid-answer and never
	// finish (POST /sim/fault {"fault":"hang"}).
	HangEngine Fault = "hang"
	// Engine503 makes an engine answer 503 on /v1/* and /health, as vLLM
	// does once its engine core is dead (POST /sim/fault {"fault":"503"}).
	Engine503 Fault = "503"
	// KillNpcorch sends SIGKILL to npcorch itself; the trial starts it
	// again with resume.
	KillNpcorch Fault = "kill-npcorch"
)

// Faults lists every fault, in the order Plans deals them.
var Faults = []Fault{KillEngine, HangEngine, Engine503, KillNpcorch}

// Plan is one trial's fault: which fault, once the journal holds how many
// lines, and which of the live engines it hits.
type Plan struct {
	Fault Fault `json:"fault"`
	// After is the number of journal lines written before the fault fires.
	After int `json:"after"`
	// Target picks an engine among those alive at that moment (modulo
	// their number); unused for KillNpcorch.
	Target int `json:"target"`
}

// Plans draws n plans from seed: the faults in turn, so each gets its
// share, each firing after a uniformly drawn 10–80 % of the run's total
// requests. The same seed gives the same plans.
func Plans(seed int64, n, total int) []Plan {
	r := rand.New(rand.NewPCG(uint64(seed), 0x63686f73))
	lo, hi := max(1, total/10), max(2, total*8/10)
	out := make([]Plan, n)
	for i := range out {
		out[i] = Plan{Fault: Faults[i%len(Faults)], After: lo + r.IntN(hi-lo), Target: r.IntN(1 << 16)}
	}
	return out
}

// Dataset sizes the synthetic dataset a bench runs on.
type Dataset struct {
	Patients, CarePath int
	Seed               int64
}

// DefaultCampaign is a demo-sized campaign: one model on two replicas and
// one on a single replica, every L3 task and the L6 episodes. %[1]q and
// %[2]q stand for the raw and prepared dataset folders. Retries cover a
// restart (their doubling backoff adds up to about 6 s; a hung engine is
// replaced after the 2 s stall window).
const DefaultCampaign = `name: chaos
node: fake:a800-sxm-8
output: run
seed: 5
dataset: {raw: %[1]q, prepared: %[2]q}
client: {connect_timeout: 1s, first_token_timeout: 4s, chunk_timeout: 2s, total_timeout: 30s, retries: 6, backoff: 100ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 2, sim: [--sim-policy, "right=0.8", --sim-load-time, 100ms, --sim-workers, "1"]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, "right=0.5", --sim-load-time, 100ms, --sim-workers, "1"]}
`

// DefaultTiming shortens the launcher's delays so that a crashed or hung
// engine is replaced within seconds.
func DefaultTiming() launcher.Timing {
	return launcher.Timing{NoProgress: 20 * time.Second, HardCap: time.Minute, Grace: time.Second, Verify: 5 * time.Second,
		RestartBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, MaxRestarts: 10,
		StallCheck: 250 * time.Millisecond, StallWindow: 2 * time.Second}
}

// Bench holds a prepared dataset, the undisturbed run's results, and runs
// trials against them, each in its own folder under Dir.
type Bench struct {
	// Dir holds data/, prep/ and one folder per trial.
	Dir string
	// Self is the argv prefix of a binary whose entry point calls Dispatch
	// (or, in a test binary, hosts its roles).
	Self []string
	// Campaign is the campaign YAML (DefaultCampaign when empty).
	Campaign string
	// Timing is the launcher timing of every run.
	Timing launcher.Timing
	// Runs bounds the runs of one trial: the first and the resumes that
	// finish what its fault left not run (0 means 3).
	Runs int
	// RunTimeout bounds one run (0 means 5 minutes).
	RunTimeout time.Duration
	// Log receives a line per run; nil discards.
	Log io.Writer

	data, prep string
	settle     time.Duration // how long orphans may take to die (0: from Timing)
	scores     map[string][]byte
	keys       map[string]bool
}

// ScoreFiles are the files that must not change under fire.
var ScoreFiles = []string{"scores.json", "scores.csv", "scores.md"}

// Prepare generates and prepares the bench's dataset under Dir.
func (b *Bench) Prepare(ctx context.Context, d Dataset) error {
	b.data, b.prep = filepath.Join(b.Dir, "data"), filepath.Join(b.Dir, "prep")
	opt := synth.DefaultOptions(b.data)
	opt.Patients, opt.CarePath, opt.Seed, opt.Overwrite = d.Patients, d.CarePath, d.Seed, true
	if _, err := synth.Generate(ctx, opt); err != nil {
		return fmt.Errorf("chaos bench: generate the dataset in %s: %w", b.data, err)
	}
	_, rep, err := prepare.Run(ctx, prepare.Options{Tasks: campaign.Benchmark(), Dataset: b.data, Out: b.prep})
	if err != nil {
		return fmt.Errorf("chaos bench: prepare %s: %w", b.data, err)
	}
	if len(rep.Errors) > 0 {
		return fmt.Errorf("chaos bench: %d images of %s could not be prepared; first: %v", len(rep.Errors), b.data, rep.Errors[0])
	}
	return nil
}

// Baseline runs the campaign undisturbed and keeps its score files and
// answered requests as the reference of every trial.
func (b *Bench) Baseline(ctx context.Context) (Result, error) {
	res := b.Trial(ctx, "baseline", nil)
	if len(res.Mismatches) > 0 {
		return res, fmt.Errorf("chaos bench: the undisturbed run failed: %s", strings.Join(res.Mismatches, "; "))
	}
	run := filepath.Join(b.Dir, "baseline", "run")
	b.scores = map[string][]byte{}
	for _, f := range ScoreFiles {
		data, err := os.ReadFile(filepath.Join(run, f))
		if err != nil {
			return res, fmt.Errorf("chaos bench: the undisturbed run wrote no %s: %w", f, err)
		}
		b.scores[f] = data
	}
	j, err := readJournal(run)
	if err != nil {
		return res, err
	}
	b.keys = map[string]bool{}
	for k, n := range j.answered {
		if n > 0 {
			b.keys[k] = true
		}
	}
	return res, nil
}

// Result is what one trial did and found.
type Result struct {
	Name string `json:"name"`
	// Plan is the fault (nil for the undisturbed run).
	Plan *Plan `json:"plan,omitempty"`
	// Fired reports whether the fault hit; Target says what it hit.
	Fired  bool   `json:"fired"`
	Target string `json:"target,omitempty"`
	// Runs counts npcorch runs: the first, and each resume.
	Runs int `json:"runs"`
	// Items is the number of requests answered in the final journal.
	Items int `json:"items"`
	// FailedAttempts counts attempts that failed and were retried or
	// journaled not run; NotRun counts not-run journal lines.
	FailedAttempts int `json:"failed_attempts"`
	NotRun         int `json:"not_run"`
	// Torn counts torn journal lines set aside on resume.
	Torn int `json:"torn"`
	// EngineCrashes counts engine crash events (restarts followed).
	EngineCrashes int `json:"engine_crashes"`
	// RunErrors are the errors npcorch reported, one per failed run.
	RunErrors []string `json:"run_errors,omitempty"`
	// Mismatches are broken promises: empty when the trial passed.
	Mismatches []string      `json:"mismatches,omitempty"`
	Elapsed    time.Duration `json:"elapsed_ns"`
}

func (r *Result) failf(format string, a ...any) {
	r.Mismatches = append(r.Mismatches, fmt.Sprintf(format, a...))
}

// Trial runs the campaign in Dir/name under the fault of p (nil: none),
// resumes it while requests are missing, and checks the outcome against
// the baseline.
func (b *Bench) Trial(ctx context.Context, name string, p *Plan) (res Result) {
	start := time.Now()
	res = Result{Name: name, Plan: p}
	defer func() { res.Elapsed = time.Since(start) }()
	dir := filepath.Join(b.Dir, name)
	if err := os.RemoveAll(dir); err != nil {
		res.failf("clear %s: %v", dir, err)
		return res
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		res.failf("%v", err)
		return res
	}
	tmpl := b.Campaign
	if tmpl == "" {
		tmpl = DefaultCampaign
	}
	file := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, tmpl, b.data, b.prep), 0o644); err != nil {
		res.failf("%v", err)
		return res
	}
	runDir := filepath.Join(dir, "run")
	groups := map[int]bool{}
	runs := b.Runs
	if runs <= 0 {
		runs = 3
	}
	for n := 1; n <= runs; n++ {
		res.Runs = n
		plan := p
		if n > 1 {
			plan = nil
		}
		err := b.run(ctx, dir, file, n, plan, groups, &res)
		if err != nil {
			res.RunErrors = append(res.RunErrors, fmt.Sprintf("run %d: %v", n, err))
		}
		if ctx.Err() != nil {
			res.failf("interrupted: %v", ctx.Err())
			break
		}
		if err == nil && b.complete(runDir) {
			break
		}
		if n == runs {
			res.failf("still incomplete after %d runs: %v", n, err)
		}
	}
	b.check(&res, dir, runDir, groups)
	return res
}

// complete reports whether every request of the baseline is answered.
func (b *Bench) complete(runDir string) bool {
	if b.keys == nil {
		return true
	}
	j, err := readJournal(runDir)
	if err != nil {
		return false
	}
	for k := range b.keys {
		if j.answered[k] == 0 {
			return false
		}
	}
	return true
}

// run starts npcorch (run n of a trial), fires plan's fault when its
// moment comes, and waits for npcorch to exit. Every process group seen
// carrying dir is added to groups.
func (b *Bench) run(ctx context.Context, dir, file string, n int, plan *Plan, groups map[int]bool, res *Result) error {
	timing, err := json.Marshal(b.Timing)
	if err != nil {
		return err
	}
	argv := append(append([]string{}, b.Self...), CampaignRole, "--campaign", file, "--timing", string(timing))
	if n > 1 {
		argv = append(argv, "--resume")
	}
	logFile, err := os.Create(filepath.Join(dir, fmt.Sprintf("npcorch-%d.log", n)))
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// npcorch dies with the bench; its engines follow through their shims.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start npcorch (%s): %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timeout := b.RunTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	own := syscall.Getpgrp()
	runDir := filepath.Join(dir, "run")
	for {
		select {
		case err := <-done:
			err = exitError(err, logFile.Name())
			b.logf("%s run %d: %s", filepath.Base(dir), n, orOK(err))
			return err
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
			<-done
			return ctx.Err()
		case <-deadline.C:
			_ = cmd.Process.Kill()
			<-done
			return fmt.Errorf("npcorch ran past %v and was killed; see %s", timeout, logFile.Name())
		case <-tick.C:
			procs := proctest.Procs(dir)
			for _, pr := range procs {
				if pr.PGID != own {
					groups[pr.PGID] = true
				}
			}
			if plan == nil || res.Fired || journalLines(runDir) < plan.After {
				continue
			}
			target, ok, err := b.fire(*plan, cmd.Process, procs)
			if err != nil {
				res.failf("fire %s: %v", plan.Fault, err)
				plan = nil
				continue
			}
			if ok {
				res.Fired, res.Target = true, target
				b.logf("%s run %d: %s fired at %s", filepath.Base(dir), n, plan.Fault, target)
			}
		}
	}
}

// fire injects plan's fault; ok is false when no engine is alive to hit
// yet (the trial tries again on the next tick).
func (b *Bench) fire(plan Plan, npcorch *os.Process, procs []proctest.Proc) (target string, ok bool, err error) {
	if plan.Fault == KillNpcorch {
		return fmt.Sprintf("npcorch pid %d", npcorch.Pid), true, npcorch.Signal(syscall.SIGKILL)
	}
	// Hit an engine that is serving requests: a fault on an idle replica
	// whose model has finished proves nothing.
	hc := &http.Client{Timeout: 2 * time.Second}
	var engines []proctest.Proc
	for _, p := range procs {
		if !isEngine(p) {
			continue
		}
		l, err := inference.ScrapeLoad(context.Background(), hc, fmt.Sprintf("http://%s:%s/metrics", p.Flag("--host"), p.Flag("--port")))
		if err == nil && l.Running > 0 {
			engines = append(engines, p)
		}
	}
	if len(engines) == 0 {
		return "", false, nil
	}
	e := engines[plan.Target%len(engines)]
	target = fmt.Sprintf("%s port %s pgid %d", e.Argv[3], e.Flag("--port"), e.PGID)
	switch plan.Fault {
	case KillEngine:
		if err := syscall.Kill(-e.PGID, syscall.SIGKILL); err != nil {
			return "", false, fmt.Errorf("SIGKILL process group %d: %w", e.PGID, err)
		}
		return target, true, nil
	case HangEngine, Engine503:
		url := fmt.Sprintf("http://%s:%s/sim/fault", e.Flag("--host"), e.Flag("--port"))
		resp, err := hc.Post(url, "application/json", strings.NewReader(fmt.Sprintf(`{"fault":%q}`, plan.Fault)))
		if err != nil {
			return "", false, nil // still loading, or just stopped: try the next one
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return "", false, fmt.Errorf("POST %s: HTTP %d", url, resp.StatusCode)
		}
		return target, true, nil
	}
	return "", false, fmt.Errorf("unknown fault %q", plan.Fault)
}

// check verifies a finished trial against the baseline.
func (b *Bench) check(res *Result, dir, runDir string, groups map[int]bool) {
	for _, f := range ScoreFiles {
		got, err := os.ReadFile(filepath.Join(runDir, f))
		if err != nil {
			res.failf("%s: %v", f, err)
			continue
		}
		if want, ok := b.scores[f]; ok && !bytes.Equal(got, want) {
			res.failf("%s differs from the undisturbed run's at byte %d", f, firstDiff(got, want))
		}
	}
	j, err := readJournal(runDir)
	if err != nil {
		res.failf("journal: %v", err)
	} else {
		res.Items, res.FailedAttempts, res.NotRun, res.Torn = len(j.answered), j.failedAttempts, j.notRun, j.torn
		for _, bad := range j.invalid {
			res.failf("journal: %s", bad)
		}
		for k, n := range j.answered {
			if n != 1 {
				res.failf("journal: request %s answered %d times", k, n)
			}
			if b.keys != nil && !b.keys[k] {
				res.failf("journal: request %s answered but not part of the undisturbed run", k)
			}
		}
		for k := range b.keys {
			if j.answered[k] == 0 {
				res.failf("journal: request %s never answered", k)
			}
		}
	}
	res.EngineCrashes = countLines(filepath.Join(runDir, "events.log"), crashedEvent)
	// Engines orphaned by a killed npcorch die within their shim's grace
	// period; anything alive after that has leaked.
	settle := b.settle
	if settle == 0 {
		settle = b.Timing.Grace + b.Timing.Verify + 5*time.Second
	}
	bound := time.Now().Add(settle)
	for {
		left := proctest.Matching(dir, groups)
		if len(left) == 0 {
			return
		}
		if time.Now().After(bound) {
			for _, p := range left {
				res.failf("process left after the run: %s", p)
				_ = syscall.Kill(p.PID, syscall.SIGKILL) // ours: it carries dir or a group that did
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *Bench) logf(format string, a ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, format+"\n", a...)
	}
}

func orOK(err error) string {
	if err == nil {
		return "finished"
	}
	return err.Error()
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func exitError(err error, log string) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("npcorch %v: %s", ee.ProcessState, describeTail(log))
	}
	return err
}

// describeTail is the last non-empty line of a log file.
func describeTail(path string) string {
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// crashedEvent matches the launcher's "MODEL/rN crashed" event line.
var crashedEvent = regexp.MustCompile(`/r[0-9]+ crashed`)

func countLines(path string, re *regexp.Regexp) int {
	data, _ := os.ReadFile(path)
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}
