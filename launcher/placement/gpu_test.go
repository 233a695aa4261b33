package placement

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/gpu"
)

func ptr[T any](v T) *T { return &v }

// TestNodeFromGPU keeps the GPUs NVML measured, leaves out (with a note)
// one whose UUID or memory it could not read, maps the links and takes the
// node's speed from its first GPU's product name.
func TestNodeFromGPU(t *testing.T) {
	gib := uint64(1) << 30
	inv := gpu.Inventory{Node: "n1", GPUs: []gpu.GPU{
		{Index: 0, UUID: ptr("GPU-a"), Name: ptr("NVIDIA H100 80GB HBM3"), MemoryTotalBytes: ptr(80 * gib), MemoryFreeBytes: ptr(79 * gib), NUMANode: ptr(1)},
		{Index: 1, UUID: ptr("GPU-b"), MemoryTotalBytes: ptr(80 * gib)}, // no free memory read
		{Index: 2, UUID: ptr("GPU-c"), Name: ptr("NVIDIA H100 80GB HBM3"), MemoryTotalBytes: ptr(80 * gib), MemoryFreeBytes: ptr(80 * gib)},
	}}
	topo := gpu.Topology{Links: []gpu.Link{{A: 0, B: 2, Class: gpu.LinkNVLink}}}
	n, notes := NodeFromGPU(inv, topo)
	if n.Name != "n1" || len(n.GPUs) != 2 || n.GPUs[0].UUID != "GPU-a" || n.GPUs[1].Index != 2 {
		t.Fatalf("node %+v", n)
	}
	if n.GPUs[0].NUMA != 1 || n.GPUs[1].NUMA != -1 {
		t.Errorf("NUMA nodes %d, %d; want 1 and -1 (unknown)", n.GPUs[0].NUMA, n.GPUs[1].NUMA)
	}
	if len(notes) != 1 || !strings.HasPrefix(notes[0], "GPU 1: NVML did not report its UUID or memory") {
		t.Errorf("notes %q", notes)
	}
	if got := n.Link(0, 2); got != LinkNVLink {
		t.Errorf("link 0-2 = %v, want NVLink", got)
	}
	if got := n.Link(0, 1); got != LinkCrossSocket {
		t.Errorf("an unlisted pair = %v, want the worst class", got)
	}
	if n.Speed != 2 {
		t.Errorf("an H100 node's speed = %v, want 2", n.Speed)
	}
}

func TestSpeedOf(t *testing.T) {
	for name, want := range map[string]float64{"NVIDIA H200": 2.3, "NVIDIA H100 80GB HBM3": 2, "NVIDIA H800": 2, "NVIDIA A800-SXM4-80GB": 1, "": 1} {
		if got := speedOf(name); got != want {
			t.Errorf("speedOf(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestReadNode builds a fake node's shape without reading the source, and
// says why a machine without GPUs has no node to plan on.
func TestReadNode(t *testing.T) {
	n, notes, err := ReadNode(context.Background(), gpu.FakeNode(gpu.FakeH100SXM4), nil)
	if err != nil || n.Name != "fake:h100-sxm-4" || len(n.GPUs) != 4 || notes != nil {
		t.Errorf("fake node: %s, %d GPUs, %q, %v", n.Name, len(n.GPUs), notes, err)
	}
	_, _, err = ReadNode(context.Background(), gpu.NodeSpec{}, gpu.Absent{Node: "h", Reason: "no driver"})
	if !errors.Is(err, ErrNoGPU) || err.Error() != "node auto has no GPU to plan on: no driver" {
		t.Errorf("no GPU: %v", err)
	}
}
