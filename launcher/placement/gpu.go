package placement

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/npcorch/npcorch/gpu"
)

// NodeFromGPU turns an NVML inventory and topology into the placement's
// view of the node. A GPU whose memory or UUID NVML could not read is left
// out, with the reason in the returned notes: placing work on a GPU we
// cannot measure would be a guess.
func NodeFromGPU(inv gpu.Inventory, topo gpu.Topology) (Node, []string) {
	n := Node{Name: inv.Node}
	var notes []string
	for _, g := range inv.GPUs {
		if g.UUID == nil || g.MemoryTotalBytes == nil || g.MemoryFreeBytes == nil {
			notes = append(notes, fmt.Sprintf("GPU %d: NVML did not report its UUID or memory; it is left out of the plan", g.Index))
			continue
		}
		pg := GPU{Index: g.Index, UUID: *g.UUID, MemTotal: *g.MemoryTotalBytes, MemFree: *g.MemoryFreeBytes, NUMA: -1}
		if g.Name != nil {
			pg.Name = *g.Name
		}
		if g.NUMANode != nil {
			pg.NUMA = *g.NUMANode
		}
		n.GPUs = append(n.GPUs, pg)
	}
	n.Link = func(a, b int) LinkClass { return linkClass(topo.Between(a, b).Class) }
	// Physical cores bound how many API servers engines can be given.
	if cores, err := cpu.Counts(false); err == nil {
		n.CPUs = cores
	}
	if len(n.GPUs) > 0 {
		n.Speed = speedOf(n.GPUs[0].Name)
	}
	return n, notes
}

// ErrNoGPU means the node has no GPU to plan on; the caller says how to
// choose a fake node instead (a flag, or the campaign's node:).
var ErrNoGPU = errors.New("no GPU to plan on")

// ReadNode returns the node a campaign plans on: a fake node's shape, or
// the GPUs src (NVML, for nvml and auto) finds, with notes on GPUs left
// out. A machine without GPUs is an ErrNoGPU that says why.
func ReadNode(ctx context.Context, spec gpu.NodeSpec, src gpu.Source) (Node, []string, error) {
	if spec.IsFake() {
		n, err := FakeNode(spec.Fake)
		return n, nil, err
	}
	inv, err := src.Inventory(ctx)
	if err != nil {
		return Node{}, nil, fmt.Errorf("reading the GPUs: %w", err)
	}
	if len(inv.GPUs) == 0 {
		return Node{}, nil, fmt.Errorf("node %s has %w: %s", spec, ErrNoGPU, inv.Reason)
	}
	topo, err := src.Topology(ctx)
	if err != nil {
		return Node{}, nil, fmt.Errorf("reading the GPU topology: %w", err)
	}
	n, notes := NodeFromGPU(inv, topo)
	return n, notes, nil
}

// linkClass maps NVML's link classes onto the placement's.
func linkClass(c gpu.LinkClass) LinkClass {
	switch c {
	case gpu.LinkNVLink:
		return LinkNVLink
	case gpu.LinkPCIeSwitch:
		return LinkPCIeSwitch
	case gpu.LinkHostBridge:
		return LinkHostBridge
	case gpu.LinkNUMANode:
		return LinkSameNUMA
	default:
		return LinkCrossSocket
	}
}

// speedOf is a GPU's throughput relative to an A800, from its product name.
func speedOf(name string) float64 {
	n := strings.ToUpper(name)
	switch {
	case strings.Contains(n, "H200"):
		return 2.3
	case strings.Contains(n, "H100"), strings.Contains(n, "H800"):
		return 2
	default:
		return 1
	}
}
