package main

import (
	"strings"
	"testing"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/gpu/nvml"
)

// TestNoGPUsSaysHowToSeeAFakeNode: gpus and monitor on a machine without
// the driver say so and how to look at a simulated node (the driver's
// message no longer names --node, which run has not); asked for a fake
// node, they do not.
func TestNoGPUsSaysHowToSeeAFakeNode(t *testing.T) {
	if src, err := nvml.Open(gpu.NodeSpec{Kind: gpu.NodeNVML}); err == nil {
		_ = src.Close()
		t.Skip("this machine has the NVIDIA driver")
	}
	for _, args := range [][]string{{"gpus"}, {"monitor", "--duration", "1s"}} {
		out, err := runCLI(t, args...)
		if err != nil || !strings.Contains(out, "no GPUs on ") || !strings.Contains(out, "(--node fake:NAME shows a simulated node: fake:a800-sxm-8") {
			t.Errorf("%s: %v\n%s", args[0], err, out)
		}
	}
	if out, err := runCLI(t, "gpus", "--node", "fake:h200-1"); err != nil || strings.Contains(out, "--node fake:NAME") {
		t.Errorf("gpus on a fake node: %v\n%s", err, out)
	}
}
