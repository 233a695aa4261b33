package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

func newMonitorCmd() *cobra.Command {
	var (
		listen, out, node string
		duration, every   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "monitor",
		Short: "Sample GPU load, export it to Prometheus and log it as JSON lines",
		Long: `monitor samples every GPU (utilization, SM activity where GPM exists, memory,
power, energy, temperature, clocks, throttling, processes) and the host's CPU
and memory once per --interval. With --listen it serves the samples at
/metrics under dcgm-exporter's metric names and labels; with --out it appends
one JSON object per sample to FILE. It stops after --duration (or on Ctrl-C)
and prints a per-GPU summary.`,
		Args: cobra.NoArgs,
		PreRunE: refuseOutOfRange(flagRange{"duration", 0, "give a duration such as 30s, or 0 to run until interrupted"},
			flagRange{"interval", 1e-9, "give a duration such as 1s"}),
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := gpu.ParseNodeSpec(node)
			if err != nil {
				return fmt.Errorf("monitor: --node: %w", err)
			}
			src, err := nvml.Open(spec)
			if err != nil {
				return err
			}
			defer src.Close()
			inv, err := src.Inventory(cmd.Context())
			if err != nil {
				return err
			}
			if len(inv.GPUs) == 0 {
				if err := gpu.WriteInventoryText(cmd.OutOrStdout(), inv, gpu.Topology{}); err != nil {
					return err
				}
				return fakeNodeNote(cmd.OutOrStdout(), spec)
			}
			m := &gpu.Monitor{
				Sampler:  &gpu.Sampler{Source: src, Host: gpu.SystemHost{}, Interval: every},
				Listen:   listen,
				Duration: duration,
				OnListen: func(a net.Addr) { fmt.Fprintf(cmd.ErrOrStderr(), "serving GPU metrics at http://%s/metrics\n", a) },
			}
			if listen != "" {
				if m.Collector, err = gpu.NewCollector(cmd.Context(), src, inv.Node); err != nil {
					return err
				}
			}
			if out != "" {
				f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					return fmt.Errorf("monitor: opening the sample log: %w", err)
				}
				defer f.Close()
				m.Log = f
			}
			var totals gpu.Totals
			m.OnSample = totals.Add
			if err := m.Run(cmd.Context()); err != nil {
				return err
			}
			return writeSummary(cmd.OutOrStdout(), inv.Node, out, totals)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "", "serve Prometheus metrics at ADDR/metrics, e.g. :9400 (empty: no exporter)")
	f.StringVar(&out, "out", "", "append one JSON line per sample to FILE")
	f.DurationVar(&duration, "duration", 0, "stop after this long, e.g. 30s (0: until interrupted)")
	f.DurationVar(&every, "interval", gpu.DefaultInterval, "time between samples")
	f.StringVar(&node, "node", "auto", "GPUs to read: auto, nvml, or fake:NAME (a800-sxm-8, a800-pcie-8, h100-sxm-4, h200-1)")
	return cmd
}

func writeSummary(w io.Writer, node, out string, totals gpu.Totals) error {
	fmt.Fprintf(w, "GPU summary for %s", node)
	if out != "" {
		fmt.Fprintf(w, " (samples in %s)", out)
	}
	fmt.Fprintln(w)
	return gpu.WriteTotalsText(w, totals.GPUs())
}
