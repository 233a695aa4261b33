package send_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/simengine"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// benchmark is NPCBench's tasks, whose items these tests run.
func benchmark() *tasks.Registry { return npcbench.Registry(configs.DefaultStructures()) }

// The test binary doubles as the processes the client is proven against:
// `TEST sim-engine serve MODEL ...` runs the simulated engine (and its
// workers) exactly as `npcorch sim-engine` would, and `TEST runner SPEC`
// runs a Runner over a journal in a process of its own, so that a test can
// SIGKILL it mid-run; `TEST progress-bars` draws progress bars on a
// pseudo-terminal. send.ChildEnv marks such a child.
func TestMain(m *testing.M) {
	if os.Getenv(send.ChildEnv) == "1" && len(os.Args) > 1 {
		os.Exit(runChild(os.Args[1], os.Args[2:]))
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	self, _ := json.Marshal([]string{exe, "sim-engine"})
	os.Setenv(simengine.SelfEnv, string(self))
	os.Exit(m.Run())
}

func runChild(role string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch role {
	case "sim-engine":
		return simengine.ExitCode(simengine.Main(ctx, args, os.Stdout, os.Stderr))
	case "progress-bars":
		send.ProgressBarsChild()
		return 0
	case "runner":
		if len(args) != 1 {
			break
		}
		if err := runRunnerChild(ctx, args[0]); err != nil {
			fmt.Fprintln(os.Stderr, "runner child:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown test child role", role, args)
	return 2
}
