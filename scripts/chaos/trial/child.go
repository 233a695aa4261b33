package trial

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/simengine"
	"github.com/npcorch/npcorch/tasks/campaign"
)

// CampaignRole is the first argument that makes a binary hosting Dispatch
// (or CampaignMain) act as `npcorch run`.
const CampaignRole = "chaos-campaign"

// Dispatch runs the child roles a bench needs from the binary in Self: the
// campaign (CampaignRole), the engine shim (`serve engine-shim`) and the
// simulated engine (`sim-engine`), exactly as the npcorch binary would. It
// reports false when args name none of them.
func Dispatch(args []string) (code int, ok bool) {
	if len(args) == 0 {
		return 0, false
	}
	switch {
	case args[0] == CampaignRole:
		return CampaignMain(args[1:], os.Stdout, os.Stderr), true
	case args[0] == "serve" && len(args) > 1 && args[1] == "engine-shim":
		return launcher.ShimMain(args[2:], os.Stderr), true
	case args[0] == "sim-engine":
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return simengine.ExitCode(simengine.Main(ctx, args[1:], os.Stdout, os.Stderr)), true
	}
	return 0, false
}

// CampaignMain is `npcorch run -c FILE [--resume]` with the launcher timing
// given as JSON (the chaos bench shortens every delay): it runs the
// campaign with this binary as npcorch and returns the exit status.
func CampaignMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet(CampaignRole, flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("campaign", "", "campaign file")
	resume := fs.Bool("resume", false, "continue the run's journal")
	timing := fs.String("timing", "{}", "launcher.Timing as JSON (durations in nanoseconds)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var t launcher.Timing
	if err := json.Unmarshal([]byte(*timing), &t); err != nil {
		fmt.Fprintf(stderr, "%s: --timing: %v\n", CampaignRole, err)
		return 2
	}
	c, err := configs.LoadCampaign(*file, nil)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", CampaignRole, err)
		return 2
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", CampaignRole, err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = campaign.Run(ctx, campaign.Options{Campaign: c, Self: []string{self}, Resume: *resume,
		Out: stdout, Log: stderr, Timing: t})
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", CampaignRole, err)
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	return 0
}
