package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
	"github.com/npcorch/npcorch/launcher/schedule"
)

func newPlanCmd() *cobra.Command {
	var (
		campaign   string
		node       string
		simulate   bool
		asJSON     bool
		paperScale bool
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

Work is counted at the NPCBench paper's scale (--paper-scale) for the
campaign's tasks. Nodes: fake:a800-sxm-8, fake:a800-pcie-8, fake:h100-sxm-4,
fake:h200-1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !paperScale {
				return errors.New("plan: counting requests from a prepared dataset is not built yet; use --paper-scale")
			}
			cfg, err := planConfig(campaign, node, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			var opts schedule.SimOptions
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
				return enc.Encode(p)
			}
			return p.WriteText(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&campaign, "campaign", "c", "", "campaign file (default: every model of the registry, every task)")
	f.StringVar(&node, "node", "", "node to plan for: fake:NAME ("+strings.Join(placement.ShapeNames(), ", ")+"); default: the campaign's node, else fake:a800-sxm-8")
	f.BoolVar(&simulate, "simulate", false, "also print every event of the simulated campaign")
	f.BoolVar(&asJSON, "json", false, "print the plan as JSON")
	f.BoolVar(&paperScale, "paper-scale", true, "count requests at the NPCBench paper's scale (L3 + L6)")
	return cmd
}

// planConfig gathers the models, node and workloads a plan needs.
func planConfig(campaignPath, nodeFlag string, notes io.Writer) (schedule.Config, error) {
	var models []configs.Model
	var tasks []string
	nodeName := nodeFlag
	if campaignPath != "" {
		c, err := configs.LoadCampaign(campaignPath, nil)
		if err != nil {
			return schedule.Config{}, err
		}
		models, tasks = c.Resolved, c.TaskList()
		if nodeName == "" {
			nodeName = c.Node
		}
	} else {
		reg, err := configs.DefaultRegistry()
		if err != nil {
			return schedule.Config{}, err
		}
		for _, name := range reg.Names() {
			m, _ := reg.Get(name)
			models = append(models, m)
		}
	}
	if nodeName == "" {
		nodeName = "fake:" + placement.ShapeA800SXM8
		fmt.Fprintf(notes, "plan: no node given; planning for %s\n", nodeName)
	}
	if !strings.HasPrefix(nodeName, "fake:") {
		return schedule.Config{}, fmt.Errorf("plan: node %q: planning on this machine's GPUs is not wired yet; use --node fake:NAME (%s)",
			nodeName, strings.Join(placement.ShapeNames(), ", "))
	}
	n, err := placement.FakeNode(nodeName)
	if err != nil {
		return schedule.Config{}, fmt.Errorf("plan: %w", err)
	}
	wls, err := schedule.PaperScaleAll(models, tasks)
	if err != nil {
		return schedule.Config{}, fmt.Errorf("plan: %w", err)
	}
	return schedule.Config{Node: n, Models: models, Workloads: wls}, nil
}
