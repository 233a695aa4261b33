package placement

import (
	"fmt"

	"github.com/npcorch/npcorch/gpu"
)

const (
	mib = uint64(1) << 20
	gib = uint64(1) << 30
	// idleReserve is what an idle GPU shows as used (driver, ECC pages).
	idleReserve = 512 * mib
)

// FakeNode returns the idle shape of the fake node of that name (one of
// gpu.FakeNodeNames, without "fake:").
func FakeNode(name string) (Node, error) {
	switch name {
	case gpu.FakeA800SXM8:
		return A800SXM8(), nil
	case gpu.FakeA800PCIe8:
		return A800PCIe8(), nil
	case gpu.FakeH100SXM4:
		return H100SXM4(), nil
	case gpu.FakeH200x1:
		return H200x1(), nil
	}
	return Node{}, gpu.UnknownFakeNode(name)
}

// uniformGPUs builds n idle GPUs of one product, with NUMA node numa(i).
func uniformGPUs(tag, product string, n int, total uint64, numa func(i int) int) []GPU {
	gpus := make([]GPU, n)
	for i := range gpus {
		gpus[i] = GPU{
			Index:    i,
			UUID:     fmt.Sprintf("GPU-fake-%s-%d", tag, i),
			Name:     product,
			MemTotal: total,
			MemFree:  total - idleReserve,
			NUMA:     numa(i),
		}
	}
	return gpus
}

func allNVLink(a, b int) LinkClass { return LinkNVLink }

// A800SXM8 is an idle 8×A800-SXM4-80GB node: every pair on one NVSwitch
// fabric, GPUs 0-3 on NUMA node 0 and 4-7 on NUMA node 1, and 64 CPU cores
// (two 32-core Xeons, as in common HGX A800 servers).
func A800SXM8() Node {
	return Node{
		Name:  gpu.FakeNode(gpu.FakeA800SXM8).String(),
		GPUs:  uniformGPUs("a800sxm", "NVIDIA A800-SXM4-80GB", 8, 80*gib, func(i int) int { return i / 4 }),
		Link:  allNVLink,
		Speed: 1,
		CPUs:  64,
	}
}

// A800PCIe8 is an idle 8×A800-80GB PCIe node: NVLink bridges join the pairs
// 0-1, 2-3, 4-5 and 6-7; GPUs 0-3 sit under socket 0 (NUMA 0) and 4-7 under
// socket 1, so other pairs go through the CPU, or across the sockets.
// 64 CPU cores.
func A800PCIe8() Node {
	return Node{
		Name: gpu.FakeNode(gpu.FakeA800PCIe8).String(),
		GPUs: uniformGPUs("a800pcie", "NVIDIA A800 80GB PCIe", 8, 80*gib, func(i int) int { return i / 4 }),
		Link: func(a, b int) LinkClass {
			switch {
			case a/2 == b/2:
				return LinkNVLink
			case a/4 == b/4:
				return LinkSameNUMA
			}
			return LinkCrossSocket
		},
		Speed: 1,
		CPUs:  64,
	}
}

// H100SXM4 is an idle 4×H100-80GB SXM node: all NVLink, GPUs 0-1 on NUMA
// node 0 and 2-3 on NUMA node 1. Speed 2 (about twice an A800 in serving);
// 64 CPU cores.
func H100SXM4() Node {
	return Node{
		Name:  gpu.FakeNode(gpu.FakeH100SXM4).String(),
		GPUs:  uniformGPUs("h100sxm", "NVIDIA H100 80GB HBM3", 4, 81559*mib, func(i int) int { return i / 2 }),
		Link:  allNVLink,
		Speed: 2,
		CPUs:  64,
	}
}

// H200x1 is an idle single H200-141GB with 16 CPU cores. Speed 2.3 (more
// memory bandwidth than an H100).
func H200x1() Node {
	return Node{
		Name:  gpu.FakeNode(gpu.FakeH200x1).String(),
		GPUs:  uniformGPUs("h200", "NVIDIA H200", 1, 143771*mib, func(int) int { return 0 }),
		Link:  allNVLink,
		Speed: 2.3,
		CPUs:  16,
	}
}
