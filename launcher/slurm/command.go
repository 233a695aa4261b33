package slurm

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Commander runs one Slurm command (sbatch, squeue, scancel, sacct,
// scontrol) and returns its standard output.
type Commander interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Exec runs Slurm's commands found on PATH, in the environment Env (nil:
// npcorch's own). sbatch hands its own environment to the job
// (--export=ALL, Slurm's default), so the backend gives it one without
// the secrets no engine needs (launcher.EngineEnv).
type Exec struct {
	Env []string
}

// Run implements Commander; a failure carries the command line and
// Slurm's own message.
func (e Exec) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = e.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(string(out))
		}
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return out, nil
}
