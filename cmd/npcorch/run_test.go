package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// asNpcorch makes the test binary act as npcorch itself: `TEST run -c ...`
// in a child process, whose engines (`TEST sim-engine serve`, `TEST serve
// engine-shim`) are the test binary again, exactly as the real binary
// re-executes itself.
const asNpcorch = "NPCORCH_CMD_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asNpcorch) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// npcorch runs the test binary as npcorch with args in dir and returns
// its exit status and output.
func npcorch(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := npcorchCmd(t, dir, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

func npcorchCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), asNpcorch+"=1")
	return cmd
}

var (
	dataOnce sync.Once
	dataDir  string
	dataErr  error
)

// smallDataset is a synthetic dataset prepared by the npcorch commands
// themselves, once for the package's tests.
func smallDataset(t *testing.T) (raw, prepared string) {
	t.Helper()
	dataOnce.Do(func() {
		dataDir, dataErr = os.MkdirTemp("", "npcorch-cmd-data-")
		if dataErr != nil {
			return
		}
		for _, args := range [][]string{
			{"synth", "--out", "data", "--patients", "2", "--carepath", "0", "--seed", "5"},
			{"prep", "--data", "data", "--out", "prep"},
		} {
			cmd := npcorchCmd(t, dataDir, args...)
			if out, err := cmd.CombinedOutput(); err != nil {
				dataErr = fmt.Errorf("npcorch %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if dataErr != nil {
		t.Fatal(dataErr)
	}
	t.Cleanup(func() {}) // the folder is shared; the OS temp cleaner owns it
	return filepath.Join(dataDir, "data"), filepath.Join(dataDir, "prep")
}

// writeCampaign writes a campaign file into a folder of its own.
func writeCampaign(t *testing.T, body string) string {
	t.Helper()
	raw, prep := smallDataset(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "campaign.yaml")
	src := fmt.Sprintf("name: cli\nnode: fake:h100-sxm-4\noutput: run\ndataset: {raw: %q, prepared: %q}\n", raw, prep) + body
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestIncompleteRunExitsThreeWithReasons is issue 12: a run whose
// requests were rejected (here HTTP 400, the engine allowing one image a
// prompt) exited 0 and said "N not run" without why. It exits 3, and the
// summary groups the not-run requests by reason.
func TestIncompleteRunExitsThreeWithReasons(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	file := writeCampaign(t, `tasks: [pathology, t_groups]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle, --limit-mm-per-prompt, '{"image":1}']}
`)
	// Given relative, from the campaign's folder: the run folder is still
	// named whole (it was "run" here, absolute with --out).
	code, out := npcorch(t, filepath.Dir(file), "run", "-c", filepath.Base(file))
	if code != exitIncomplete {
		t.Fatalf("exit status %d, want %d; output:\n%s", code, exitIncomplete, out)
	}
	if want := "run directory: " + filepath.Join(filepath.Dir(file), "run") + "\n"; !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	m := regexp.MustCompile(`Lingshu-7B: (\d+) of (\d+) requests not run\n  (\d+) × rejected \(HTTP 400\): .*At most 1 image\(s\) may be provided in one prompt`).FindStringSubmatch(out)
	if m == nil || m[1] != m[3] || m[1] == "0" {
		t.Fatalf("the summary does not group the rejected requests by reason:\n%s", out)
	}
	if want := fmt.Sprintf("the run is incomplete: %s of %s requests have no answer", m[1], m[2]); !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
}

// TestInterruptedRunTellsHowToResumeItsOwnFolder is issue 12: after an
// interruption the hint left out --out, so following it resumed (or
// started) a campaign in another folder. It names --out, exits 130, and
// the command it prints continues the run; --resume on a folder without a
// run is refused, naming the folder.
func TestInterruptedRunTellsHowToResumeItsOwnFolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	file := writeCampaign(t, `tasks: [pathology]
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle, --sim-load-time, 1m]}
`)
	cwd := t.TempDir()
	cmd := npcorchCmd(t, cwd, "run", "-c", file, "--out", "elsewhere")
	// Read while the child writes it: a locked buffer (os/exec copies into
	// it from its own goroutine).
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the engine is starting (the run directory exists).
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(out.String(), "starting") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit status %d, want %d; output:\n%s", code, exitInterrupted, out.String())
	}
	hint := fmt.Sprintf("npcorch run -c %s --out elsewhere --resume", file)
	if !strings.Contains(out.String(), hint) {
		t.Errorf("the hint lacks %q:\n%s", hint, out.String())
	}
	if _, err := os.Stat(filepath.Join(cwd, "elsewhere", "run.json")); err != nil {
		t.Errorf("--out is relative to the current folder: %v", err)
	}

	empty := filepath.Join(t.TempDir(), "never-ran")
	code, refused := npcorch(t, cwd, "run", "-c", file, "--out", empty, "--resume")
	if code != exitError || !strings.Contains(refused, empty+" holds no run to continue") {
		t.Errorf("--resume on a folder without a run: exit %d:\n%s", code, refused)
	}
	if _, err := os.Stat(empty); err == nil {
		t.Errorf("--resume created %s instead of refusing", empty)
	}
}

// TestOutKeepsCampaignPathsRelativeToTheFile is issue 12: --out made the
// campaign's relative paths (prompts:, the dataset) resolve against the
// current folder instead of the campaign file's.
func TestOutKeepsCampaignPathsRelativeToTheFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	src := "output: run\ndataset: {raw: data, prepared: prep}\nprompts: myprompts\nmodels: [Lingshu-7B]\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := configs.LoadCampaign(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := setOutput(c, "out-here"); err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	for what, got := range map[string][2]string{
		"prompts":  {c.Path(c.Prompts), filepath.Join(dir, "myprompts")},
		"raw":      {c.Path(c.Dataset.Raw), filepath.Join(dir, "data")},
		"prepared": {c.Path(c.Dataset.Prepared), filepath.Join(dir, "prep")},
		"output":   {c.Path(c.Output), filepath.Join(cwd, "out-here")},
	} {
		if got[0] != got[1] {
			t.Errorf("%s resolves to %s, want %s", what, got[0], got[1])
		}
	}
}
