package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/campaign"
)

func newPlanCmd() *cobra.Command {
	var (
		campaignFile string
		node         string
		simulate     bool
		asJSON       bool
		paperScale   bool
		speedError   float64
		speedSeed    uint64
	)
	cmd := &cobra.Command{
		Use:   "plan [-c CAMPAIGN] [--node fake:NAME] [--simulate] [--json]",
		Short: "Plan which model runs where and when, and estimate the campaign's makespan",
		Long: `plan places every model of a campaign (or of the whole registry) on a node:
the valid tensor-parallel sizes, the GPU groups on the best links, replicas
versus TP, and why every other choice was rejected. It then runs the
campaign's scheduler as a discrete-event simulation and prints the placement
waves, the estimated makespan, the lower bound, and two baselines: one model
at a time with one engine each (naive), and one model at a time at its best
TP × replicas (sequential). --simulate also prints every simulated event.

--speed-error F makes every model's true speed differ from the registry's
by a factor drawn log-uniform in [1/F, F] (--speed-seed), unknown to the
scheduler: engines report noisy speed samples every 5 minutes, the
scheduler re-plans on them, and the plan lists each re-plan and the
measured speeds, beside the makespans of today's static plan under the
same errors and of a plan that knew the true speeds.

Work is counted at the NPCBench paper's scale (--paper-scale, the default)
for the campaign's tasks, or in the campaign's prepared dataset
(--paper-scale=false). Nodes: this machine's GPUs (nvml, auto), or
fake:a800-sxm-8, fake:a800-pcie-8, fake:h100-sxm-4, fake:h200-1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := planConfig(cmd.Context(), campaignFile, node, paperScale, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if !(speedError == 0 || speedError >= 1 && speedError <= 100) {
				return fmt.Errorf("plan: --speed-error %g: give a factor from 1 to 100 (2: true speeds between half and twice the registry's), or 0 for none", speedError)
			}
			var opts schedule.SimOptions
			if speedError >= 1 {
				opts.Truth = speedTruth(cfg.Models, speedError, speedSeed)
			}
			if simulate {
				opts.Trace = cmd.OutOrStdout()
				if asJSON {
					opts.Trace = cmd.ErrOrStderr() // keep stdout valid JSON
				}
			}
			p, err := schedule.Simulate(cmd.Context(), cfg, opts)
			if err != nil {
				return fmt.Errorf("plan: %w", err)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(p); err != nil {
					return err
				}
			} else if err := p.WriteText(cmd.OutOrStdout()); err != nil {
				return err
			}
			if err := unplaceable(p); err != nil {
				return err
			}
			if speedError < 1 {
				return nil
			}
			notes := cmd.OutOrStdout()
			if asJSON {
				notes = cmd.ErrOrStderr()
			}
			return compareSpeedError(cmd.Context(), cfg, opts.Truth, p, notes)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&campaignFile, "campaign", "c", "", "campaign file (default: every model of the registry, every task)")
	f.StringVar(&node, "node", "", "node to plan for: nvml, auto or fake:NAME ("+strings.Join(gpu.FakeNodeNames(), ", ")+"); default: the campaign's node, else fake:a800-sxm-8")
	f.BoolVar(&simulate, "simulate", false, "also print every event of the simulated campaign")
	f.BoolVar(&asJSON, "json", false, "print the plan as JSON")
	f.BoolVar(&paperScale, "paper-scale", true, "count requests at the NPCBench paper's scale (L1–L6)")
	f.Float64Var(&speedError, "speed-error", 0, "simulate true speeds off the registry's by a random factor in [1/F, F] per model, and re-planning on measured speeds")
	f.Uint64Var(&speedSeed, "speed-seed", 1, "seed of the --speed-error factors and of the samples' noise")
	return cmd
}

// speedTruth draws each model's true speed within [1/spread, spread] × the
// registry's; engines report a sample every 5 minutes with 20 % noise over
// a minute.
func speedTruth(models []configs.Model, spread float64, seed uint64) schedule.SpeedTruth {
	return schedule.SpeedTruth{Factors: schedule.RandomSpeedFactors(models, spread, seed), SampleEvery: 5 * time.Minute, Noise: 0.2, Seed: seed}
}

// compareSpeedError simulates the campaign again under the same speed
// errors without re-planning, and with a registry that knew the true
// speeds, and writes the three makespans.
func compareSpeedError(ctx context.Context, cfg schedule.Config, truth schedule.SpeedTruth, replanned *schedule.Plan, w io.Writer) error {
	static := cfg
	static.Policy.Replan.Off = true
	sp, err := schedule.Simulate(ctx, static, schedule.SimOptions{Truth: truth})
	if err != nil {
		return fmt.Errorf("plan: the static plan under the same speed errors: %w", err)
	}
	oracle := cfg
	oracle.Models = schedule.WithSpeedFactors(cfg.Models, truth.Factors, cfg.Estimator)
	op, err := schedule.Simulate(ctx, oracle, schedule.SimOptions{})
	if err != nil {
		return fmt.Errorf("plan: the plan that knew the true speeds: %w", err)
	}
	ratio := func(p *schedule.Plan) float64 { return float64(p.Makespan) / float64(op.Makespan) }
	_, err = fmt.Fprintf(w, "\nspeed errors (seed %d): re-planned %s (%.3f× the plan that knew the true speeds, %s); static plan %s (%.3f×); %d re-plans\n",
		truth.Seed, replanned.Makespan, ratio(replanned), op.Makespan, sp.Makespan, ratio(sp), len(replanned.Replans))
	return err
}

// planConfig gathers the models, node and workloads a plan needs: work at
// the paper's scale, or counted in the campaign's prepared dataset.
func planConfig(ctx context.Context, campaignPath, nodeName string, paperScale bool, notes io.Writer) (schedule.Config, error) {
	var models []configs.Model
	var tasks []string
	var c *configs.Campaign
	var campaignNode gpu.NodeSpec
	if campaignPath != "" {
		var err error
		c, err = configs.LoadCampaign(campaignPath, nil)
		if err != nil {
			return schedule.Config{}, err
		}
		// The campaign's node: is checked even where --node overrides it:
		// the file is wrong either way.
		if campaignNode, err = gpu.ParseNodeSpec(c.Node); err != nil {
			return schedule.Config{}, c.Errorf("node", "%v", err)
		}
		if tasks, err = campaign.CheckTasks(campaign.Benchmark(), c); err != nil {
			return schedule.Config{}, err
		}
		models = c.Resolved
		if note := campaign.UnjudgedNote(c, campaign.Benchmark(), tasks); note != "" {
			fmt.Fprintln(notes, "plan:", note)
		}
	} else {
		if !paperScale {
			return schedule.Config{}, errors.New("plan: counting work from a dataset needs a campaign (-c); without one, use --paper-scale")
		}
		reg, err := configs.DefaultRegistry()
		if err != nil {
			return schedule.Config{}, err
		}
		if err := campaign.Benchmark().CheckTaskRefs(reg.TaskRefs); err != nil {
			return schedule.Config{}, err
		}
		for _, name := range reg.Names() {
			if m, _ := reg.Get(name); m.Benchmark == "" { // NPCBench's roster
				models = append(models, m)
			}
		}
	}
	spec, err := planNode(nodeName, c, campaignNode, notes)
	if err != nil {
		return schedule.Config{}, err
	}
	src, err := nvml.Open(spec)
	if err != nil {
		return schedule.Config{}, fmt.Errorf("plan: node %s: %w%s", spec, err, fakeNodeHint(err))
	}
	defer src.Close()
	n, nodeNotes, err := placement.ReadNode(ctx, spec, src)
	if err != nil {
		return schedule.Config{}, fmt.Errorf("plan: %w%s", err, fakeNodeHint(err))
	}
	for _, note := range nodeNotes {
		fmt.Fprintln(notes, "plan:", note)
	}
	var wls []schedule.Workload
	var after map[string][]string
	if paperScale {
		wls, err = campaign.Benchmark().PaperScale(models, tasks)
		if err == nil && c != nil && len(c.ResolvedJudges) > 0 {
			var jw []schedule.Workload
			jw, after, err = campaign.Benchmark().PaperJudging(c.ResolvedJudges, models, tasks)
			wls = append(wls, jw...)
			models = append(slices.Clone(models), c.ResolvedJudges...)
		}
	} else {
		var problems campaign.Problems
		wls, problems, err = campaign.DatasetWorkloads(c)
		problems.Report(notes)
		models, after = append(slices.Clone(models), c.ResolvedJudges...), campaign.JudgeAfter(c)
	}
	if err != nil {
		return schedule.Config{}, fmt.Errorf("plan: %w", err)
	}
	return schedule.Config{Node: n, Models: models, Workloads: wls, After: after}, nil
}

// planNode is the node a plan is for: --node (flag), else the node of
// campaign c (parsed when it was loaded), else fake:a800-sxm-8, which it
// says in notes.
func planNode(flag string, c *configs.Campaign, campaignNode gpu.NodeSpec, notes io.Writer) (gpu.NodeSpec, error) {
	switch {
	case flag != "":
		spec, err := gpu.ParseNodeSpec(flag)
		if err != nil {
			return spec, fmt.Errorf("plan: --node: %w", err)
		}
		return spec, nil
	case c != nil:
		return campaignNode, nil
	}
	spec := gpu.FakeNode(gpu.FakeA800SXM8)
	fmt.Fprintf(notes, "plan: no node given; planning for %s\n", spec)
	return spec, nil
}

// unplaceable is the error of a plan with models the node cannot hold
// (after the plan is printed): a campaign that would abandon them is no
// plan to run.
func unplaceable(p *schedule.Plan) error {
	var errs []error
	for _, m := range p.Models {
		if m.Status == schedule.StatusUnplaceable {
			errs = append(errs, fmt.Errorf("plan: model %s cannot be placed on %s: %s; give it a node with more GPU memory, or leave it out of the campaign", m.Model, p.Node, m.Note))
		}
	}
	return errors.Join(errs...)
}

// fakeNodeHint tells a plan on a machine without GPUs how to plan for a
// fake node instead ("" for other errors).
func fakeNodeHint(err error) string {
	if errors.Is(err, placement.ErrNoGPU) || errors.Is(err, gpu.ErrNoDriver) || errors.Is(err, gpu.ErrNVMLNotCompiled) {
		return "; or plan for a fake node with --node fake:NAME (" + gpu.FakeNodeSpecs() + ")"
	}
	return ""
}
