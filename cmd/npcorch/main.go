// Command npcorch runs multimodal medical benchmarks (NPCBench L3 and L6)
// across many open-weight models on local GPU nodes: it finds the GPUs,
// plans placement, launches and supervises engines, prepares images,
// streams requests into an append-only journal, scores and reports.
//
// This package is wiring only: flags, output streams and exit codes. Every
// behaviour lives in the gpu, launcher, imaging and tasks packages.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "npcorch:", err)
		if ctx.Err() != nil {
			os.Exit(exitInterrupted) // SIGINT or SIGTERM, whatever the command
		}
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "npcorch",
		Short: "Run NPCBench L3/L6 campaigns across many models on local GPU nodes",
		Long: `npcorch plans, launches and supervises OpenAI-compatible engines (vLLM,
SGLang, external endpoints, or its built-in simulated engine), prepares the
benchmark images, streams every request into an append-only journal, and
scores and reports exactly as the NPCBench paper defines.

Start with 'npcorch demo': it runs a whole campaign on a generated dataset
with simulated engines, no GPU needed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newDemoCmd(),
		newSynthCmd(),
		newPrepCmd(),
		newImportCmd(),
		newGpusCmd(),
		newPlanCmd(),
		newServeCmd(),
		newRunCmd(),
		newScoreCmd(),
		newCalibrateCmd(),
		newStatusCmd(),
		newReportCmd(),
		newMonitorCmd(),
		newSimEngineCmd(),
		newToolsCmd(),
	)
	return root
}
