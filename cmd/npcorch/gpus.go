package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

func newGpusCmd() *cobra.Command {
	var (
		asJSON bool
		node   string
	)
	cmd := &cobra.Command{
		Use:   "gpus",
		Short: "Show this node's GPUs, their processes and how they are linked",
		Long: `gpus lists every GPU (memory, PCI and NUMA placement, compute capability,
MIG mode, processes and the model npcorch launched them for), the link matrix
in the layout of 'nvidia-smi topo -m', and the best GPU sets for tensor
parallelism 2, 4 and 8. On a machine without the NVIDIA driver it says so in
one line and exits 0; --json then prints {"gpus": [], "reason": "..."}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			spec, err := gpu.ParseNodeSpec(node)
			if err != nil {
				return fmt.Errorf("gpus: --node: %w", err)
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
			topo, err := src.Topology(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return gpu.WriteInventoryJSON(cmd.OutOrStdout(), inv, topo)
			}
			if err := gpu.WriteInventoryText(cmd.OutOrStdout(), inv, topo); err != nil || len(inv.GPUs) > 0 {
				return err
			}
			return fakeNodeNote(cmd.OutOrStdout(), spec)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (unknown values are null)")
	cmd.Flags().StringVar(&node, "node", "auto", "GPUs to read: auto, nvml, or fake:NAME (a800-sxm-8, a800-pcie-8, h100-sxm-4, h200-1)")
	return cmd
}

// fakeNodeNote says, after "no GPUs", how to look at a simulated node
// instead, unless one was asked for.
func fakeNodeNote(w io.Writer, node gpu.NodeSpec) error {
	if node.IsFake() {
		return nil
	}
	_, err := fmt.Fprintf(w, "(--node fake:NAME shows a simulated node: %s)\n", gpu.FakeNodeSpecs())
	return err
}
