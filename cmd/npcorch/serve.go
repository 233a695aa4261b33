package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
)

func newServeCmd() *cobra.Command {
	var (
		campaign, model, logDir, endpoints string
		gpuSets                            []string
		grace, noProgress                  time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve [-c CAMPAIGN] --model NAME [--gpus UUID,UUID]...",
		Short: "Start one model's engine replicas, print their endpoints, stop all on Ctrl-C",
		Long: `serve starts the replicas of one model (one per --gpus set; without --gpus,
engine.replicas replicas for sim and external engines), waits until each is
proven ready (health, served name, one-token warm-up chat), prints their
OpenAI-compatible endpoints, restarts crashed engines, and on Ctrl-C stops
every engine's whole process group and verifies that none of it remains.
API keys are written only to the endpoints file (mode 0600).`,
		Args: cobra.NoArgs,
		PreRunE: refuseOutOfRange(flagRange{"grace", 1e-9, "give a duration such as 20s"},
			flagRange{"start-timeout", 1e-9, "give a duration such as 20m"}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			sv, err := serveModel(campaign, model)
			if err != nil {
				return err
			}
			// The campaign file's launch settings, unless a flag says.
			timing := launcher.Timing{}.With(sv.launch)
			if cmd.Flags().Changed("grace") {
				timing.Grace = grace
			}
			if cmd.Flags().Changed("start-timeout") {
				timing.NoProgress = noProgress
			}
			if logDir == "" {
				logDir = filepath.Join(sv.out, "engines")
			}
			if endpoints == "" {
				endpoints = filepath.Join(logDir, "endpoints.json")
			}
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("serve: find the npcorch executable (needed for the engine shim): %w", err)
			}
			sup := launcher.NewSupervisor(launcher.Config{
				Engines:   selfEngines(exe),
				Shim:      []string{exe, "serve", "engine-shim"},
				LogDir:    logDir,
				Host:      sv.host,
				Timing:    timing,
				SecretEnv: sv.secrets,
			})
			specs := launcher.ServeSpecs(sv.model, parseGPUSets(gpuSets), sv.mediaRoot)
			return launcher.Serve(cmd.Context(), sup, specs, cmd.OutOrStdout(), endpoints)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&campaign, "campaign", "c", "", "campaign file (default: the embedded model registry)")
	f.StringVar(&model, "model", "", "model name to serve (required)")
	f.StringArrayVar(&gpuSets, "gpus", nil, "GPU UUIDs of one replica, comma-separated; repeat for more replicas")
	f.StringVar(&logDir, "log-dir", "", "folder for replica logs (default: the campaign output's engines/, or ./npcorch-serve/engines)")
	f.StringVar(&endpoints, "endpoints-file", "", "where to write endpoints with API keys (default: LOG-DIR/endpoints.json)")
	f.DurationVar(&grace, "grace", launcher.DefaultTiming.Grace, "time between SIGTERM and SIGKILL when stopping an engine (default: the campaign's launch.stop_grace)")
	f.DurationVar(&noProgress, "start-timeout", launcher.DefaultTiming.NoProgress, "fail a start after this long without a new log line or readiness step (default: the campaign's launch.no_progress_timeout)")
	_ = cmd.MarkFlagRequired("model")
	cmd.AddCommand(newEngineShimCmd())
	return cmd
}

// selfEngines are the engines `npcorch serve` runs: the simulated one is
// this executable's sim-engine command, to which npcorch adds `serve
// MODEL` as it does for vLLM.
func selfEngines(exe string) launcher.Engines {
	return launcher.Engines{Sim: []string{exe, "sim-engine"}}
}

// served is what serve takes from the campaign file (or the registry):
// the model, the prepared folder engines may read images from, the host
// they listen on, the output folder, the launch settings, and the
// environment variables that hold the campaign's API keys (kept from the
// engines: launcher.Config.SecretEnv).
type served struct {
	model     configs.Model
	mediaRoot string
	host, out string
	launch    configs.LaunchSettings
	secrets   []string
}

// serveModel finds model name in the campaign file, or in the embedded
// registry when there is none.
func serveModel(campaignFile, name string) (served, error) {
	if campaignFile == "" {
		reg, err := configs.DefaultRegistry()
		if err != nil {
			return served{}, err
		}
		m, ok := reg.Get(name)
		if !ok {
			return served{}, fmt.Errorf("serve: model %q is not in the registry; known models: %s", name, strings.Join(reg.Names(), ", "))
		}
		return served{model: m, out: "npcorch-serve"}, nil
	}
	c, err := configs.LoadCampaign(campaignFile, nil)
	if err != nil {
		return served{}, err
	}
	m, ok := c.Model(name)
	if !ok {
		var names []string
		for _, r := range c.Resolved {
			names = append(names, r.Name)
		}
		return served{}, fmt.Errorf("serve: campaign %s has no model %q; it lists: %s", campaignFile, name, strings.Join(names, ", "))
	}
	return served{model: m, mediaRoot: c.Path(c.Dataset.Prepared), host: c.Host, out: c.Path(c.Output), launch: c.Launch,
		secrets: c.SecretEnv()}, nil
}

func parseGPUSets(flags []string) [][]string {
	var sets [][]string
	for _, f := range flags {
		var set []string
		for _, g := range strings.Split(f, ",") {
			if g = strings.TrimSpace(g); g != "" {
				set = append(set, g)
			}
		}
		if len(set) > 0 {
			sets = append(sets, set)
		}
	}
	return sets
}

// newEngineShimCmd is the hidden process every engine is started through
// (see launcher.ShimMain): it leads the engine's process group and kills
// the group when npcorch goes away, even by SIGKILL.
func newEngineShimCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "engine-shim [--lifeline-fd N] [--grace D] -- ENGINE ARGS...",
		Short:              "Run an engine in its own process group that dies with npcorch (internal)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			os.Exit(launcher.ShimMain(args, os.Stderr))
			return nil
		},
	}
}
