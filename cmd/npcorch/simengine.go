package main

import (
	"errors"
	"os"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/launcher/simengine"
)

// newSimEngineCmd is `npcorch sim-engine`: the simulated vLLM engine. It
// parses its own (vLLM-style) flags, so cobra passes every argument through.
func newSimEngineCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sim-engine [serve] MODEL --host H --port P [vLLM flags] [--sim-* flags]",
		Short: "Run a simulated vLLM engine (an OpenAI-compatible server for tests and the demo)",
		Long: `sim-engine behaves on the wire like 'vllm serve': the port refuses connections
while loading, then /health, /v1/models, /v1/chat/completions (streaming and
not), /metrics, vLLM's error bodies and worker child processes. Answers come
from a sim key file (--sim-key) and a policy (--sim-policy right=P|oracle|
constant|garbage); faults are injected with --sim-fault or POST /sim/fault.

Run 'npcorch sim-engine --help' for every flag.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			err := simengine.Main(cmd.Context(), args, cmd.OutOrStdout(), cmd.ErrOrStderr())
			var exit *simengine.ExitError
			if errors.As(err, &exit) {
				os.Exit(exit.Code) // Main has already told the user, like vLLM's argparse
			}
			return err
		},
	}
}
