package slurmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/npcorch/npcorch/launcher/simengine"
)

// The test binary doubles as npcorch inside Slurm jobs: a job's script
// runs `TEST sim-engine serve ...`, exactly as it would run the npcorch
// binary (the job inherits this environment through sbatch).
const childEnv = "SLURMTEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" && len(os.Args) > 1 && os.Args[1] == "sim-engine" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := simengine.ExitCode(simengine.Main(ctx, os.Args[2:], os.Stdout, os.Stderr))
		stop()
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
