package slurm_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/slurm"
)

// This test runs a Slurm job through a REAL Slurm: scripts/slurm/ci-setup.sh
// starts one on this machine (one node, eight fake GPUs). It skips, saying
// so, where Slurm is not installed or not running. Whole campaigns through
// Slurm are tested in tasks/campaign/slurmtest.

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

func testTiming() launcher.Timing {
	return launcher.Timing{NoProgress: 30 * time.Second, HardCap: time.Minute, Grace: 3 * time.Second,
		RestartBackoff: 200 * time.Millisecond, MaxBackoff: time.Second}
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
