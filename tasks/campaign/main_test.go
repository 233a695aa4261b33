package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/simengine"
)

// The test binary doubles as npcorch for the engines a campaign starts:
// `TEST serve engine-shim ...` runs the shim and `TEST sim-engine ...` the
// simulated engine (and its workers), exactly as the npcorch binary would.
const childEnv = "CAMPAIGN_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" && len(os.Args) > 1 {
		os.Exit(runChild(os.Args[1], os.Args[2:]))
	}
	os.Setenv(childEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	self, _ := json.Marshal([]string{exe, "sim-engine"})
	os.Setenv(simengine.SelfEnv, string(self))
	code := m.Run()
	if fixtureDir != "" {
		os.RemoveAll(fixtureDir)
	}
	os.Exit(code)
}

func runChild(role string, args []string) int {
	switch role {
	case "serve":
		if len(args) > 0 && args[0] == "engine-shim" {
			return launcher.ShimMain(args[1:], os.Stderr)
		}
	case "sim-engine":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return simengine.ExitCode(simengine.Main(ctx, args, os.Stdout, os.Stderr))
	}
	fmt.Fprintln(os.Stderr, "unknown test child role", role, args)
	return 2
}
