package slurm

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
)

func TestSbatchArgsAskForTheCampaignsResources(t *testing.T) {
	js := JobSpec{Name: "npcorch-c-m-r1", Comment: "npcorch run /x", Node: "gpu02", GPUs: 4, Dir: "/shared/run/slurm/m-r1/1", WorkDir: "/shared/work",
		Settings: configs.SlurmSettings{Partition: "gpu", Account: "lab", QOS: "high", Constraint: "a800&nvlink", GRES: "gpu:a800",
			TimeLimit: 26*time.Hour + 30*time.Minute + 10*time.Second, CPUsPerGPU: 8, MemPerGPU: "64G", SbatchArgs: []string{"--exclusive"}}}
	got := js.SbatchArgs()
	for _, want := range []string{"--parsable", "--job-name=npcorch-c-m-r1", "--nodes=1", "--ntasks=1", "--gres=gpu:a800:4",
		"--time=1-02:31:00", "--no-requeue", "--nodelist=gpu02", "--partition=gpu", "--account=lab", "--qos=high",
		"--constraint=a800&nvlink", "--cpus-per-task=32", "--mem=256G", "--exclusive", "--output=/shared/run/slurm/m-r1/1/engine.log",
		"--comment=npcorch run /x", "--chdir=/shared/work"} {
		if !slices.Contains(got, want) {
			t.Errorf("sbatch arguments lack %s: %v", want, got)
		}
	}
	if got[len(got)-1] != "/shared/run/slurm/m-r1/1/job.sh" {
		t.Errorf("the script is not the last argument: %v", got)
	}
	bare := JobSpec{Name: "n", GPUs: 1, Dir: "/d", Settings: configs.SlurmSettings{GRES: "gpu", TimeLimit: time.Hour}}.SbatchArgs()
	for _, a := range bare {
		for _, unset := range []string{"--partition", "--account", "--qos", "--constraint", "--cpus-per-task", "--mem", "--nodelist"} {
			if strings.HasPrefix(a, unset) {
				t.Errorf("unset %s was passed: %v", unset, bare)
			}
		}
	}
}

// TestScriptWritesTheEndpointAndExecsTheEngine runs a generated script
// with sh, as slurmd would, with an "engine" that records its arguments
// and environment: quoting, exports, the endpoint file and exec must hold.
func TestScriptWritesTheEndpointAndExecsTheEngine(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "argv")
	js := JobSpec{
		Name: "n", GPUs: 2, Dir: dir, Host: "10.0.0.12", Port: 23456,
		Settings: configs.SlurmSettings{GRES: "gpu", TimeLimit: time.Hour, Setup: []string{"export FROM_SETUP=yes"}},
		Env:      []string{"CUDA_VISIBLE_DEVICES=GPU-npcorch-must-not-set", "NPCORCH_MODEL=it's a model", "NPCORCH_REPLICA=3"},
		Argv:     []string{"/bin/sh", "-c", `printf '%s\n' "$$" "$@" >"$0.args"; env >"$0.env"`, out, "--api-key", "npc-1", "a b", `q'"$x`},
	}
	if err := os.WriteFile(js.ScriptPath(), js.Script(), 0o700); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", js.ScriptPath())
	cmd.Env = []string{"PATH=/usr/bin:/bin", "SLURM_JOB_ID=77", "SLURMD_NODENAME=gpu02", "CUDA_VISIBLE_DEVICES=0,1"}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script: %v\n%s\n%s", err, b, js.Script())
	}
	args, _ := os.ReadFile(out + ".args")
	lines := strings.Split(strings.TrimSuffix(string(args), "\n"), "\n")
	if want := []string{"--api-key", "npc-1", "a b", `q'"$x`}; !slices.Equal(lines[1:], want) {
		t.Errorf("engine arguments %q, want %q", lines[1:], want)
	}
	env, _ := os.ReadFile(out + ".env")
	for _, want := range []string{"NPCORCH_MODEL=it's a model", "NPCORCH_REPLICA=3", "FROM_SETUP=yes", "CUDA_VISIBLE_DEVICES=0,1"} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("engine environment lacks %s:\n%s", want, env)
		}
	}
	var ep EndpointFile
	data, err := os.ReadFile(js.EndpointPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &ep); err != nil {
		t.Fatalf("endpoint file %s: %v", data, err)
	}
	if ep != (EndpointFile{Job: "77", Node: "gpu02", Host: "10.0.0.12", Port: 23456, GPUs: "0,1"}) {
		t.Errorf("endpoint file says %+v", ep)
	}
}

// TestScriptCancelsItselfWhenNpcorchIsGone runs a script whose heartbeat
// file is stale: its watchdog must call scancel with the job's ID (a fake
// scancel on PATH records the call).
func TestScriptCancelsItselfWhenNpcorchIsGone(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the watchdog's first check (1 s)")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	called := filepath.Join(dir, "scancel-called")
	os.WriteFile(filepath.Join(bin, "scancel"), []byte("#!/bin/sh\necho \"$@\" >"+called+"\n"), 0o755)
	hb := filepath.Join(dir, "heartbeat")
	os.WriteFile(hb, nil, 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(hb, old, old)
	js := JobSpec{Name: "n", GPUs: 1, Dir: dir, Host: "h", Port: 1, Heartbeat: hb,
		Settings: configs.SlurmSettings{GRES: "gpu", TimeLimit: time.Hour, OrphanTimeout: 2 * time.Second},
		// The "engine" waits until scancel was called, or 20 s.
		Argv: []string{"/bin/sh", "-c", "for i in $(seq 200); do [ -e " + called + " ] && exit 0; sleep 0.1; done; exit 1"}}
	os.WriteFile(js.ScriptPath(), js.Script(), 0o700)
	cmd := exec.Command("/bin/sh", js.ScriptPath())
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "SLURM_JOB_ID=91", "SLURMD_NODENAME=n1"}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the watchdog did not call scancel: %v\n%s", err, b)
	}
	got, _ := os.ReadFile(called)
	if strings.TrimSpace(string(got)) != "91" {
		t.Errorf("scancel called with %q, want the job's ID 91", got)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"plain-1.0/x:y": "plain-1.0/x:y", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, `{"image":1}`: `'{"image":1}'`, "$HOME": "'$HOME'"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestSlurmDurationRoundsUpToMinutes(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Minute: "0-00:01:00", 90 * time.Second: "0-00:02:00", 4 * time.Hour: "0-04:00:00", 49 * time.Hour: "2-01:00:00"} {
		if got := slurmDuration(d); got != want {
			t.Errorf("slurmDuration(%v) = %s, want %s", d, got, want)
		}
	}
}
