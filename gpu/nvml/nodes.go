//go:build cgo

package nvml

import (
	"fmt"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/npcorch/npcorch/gpu"
)

// nodeSpec describes a fake node: its GPUs and how they are wired.
type nodeSpec struct {
	gpu      gpus.Config
	count    int
	build    func(...gpus.Config) *server.Server // one of go-nvml's mock servers
	busIDs   []string
	numa     []int    // per GPU
	cpus     []string // per NUMA node, Linux CPU list
	ancestor func(a, b int) nv.GpuTopologyLevel
	// nvlink gives the lanes joining a and b directly; nil for none.
	nvlink func(a, b int) int
	// switchLanes is each GPU's lanes into an NVSwitch fabric; 0 for none.
	switchLanes int
	reservedMiB uint64
	gpm         bool
	idleW, maxW float64 // power range of the default timeline
	boostMHz    uint32
}

// A800 variants: an A100 with NVLink capped at 400 GB/s (8 lanes).
var (
	a800SXM = gpus.Config{
		Name: "NVIDIA A800-SXM4-80GB", Architecture: nv.DEVICE_ARCH_AMPERE, Brand: nv.BRAND_NVIDIA,
		MemoryMB: 81920, CudaMajor: 8, CudaMinor: 0, PciDeviceId: 0x20F310DE,
		MIGProfiles: gpus.A100_SXM4_80GB.MIGProfiles,
	}
	a800PCIe = gpus.Config{
		Name: "NVIDIA A800 80GB PCIe", Architecture: nv.DEVICE_ARCH_AMPERE, Brand: nv.BRAND_NVIDIA,
		MemoryMB: 81920, CudaMajor: 8, CudaMinor: 0, PciDeviceId: 0x20F510DE,
		MIGProfiles: gpus.A100_PCIE_80GB.MIGProfiles,
	}
)

// sameGroup reports whether a and b fall in the same group of n.
func sameGroup(a, b, n int) bool { return a/n == b/n }

// nodeSpecs returns the fake node of that name.
func nodeSpecs(name string) (nodeSpec, bool) {
	switch name {
	case gpu.FakeA800SXM8:
		// DGX/HGX A800: every GPU 8 lanes into NVSwitch; PCIe pairs under a
		// switch, pairs of pairs in a NUMA node, two NUMA nodes of four.
		return nodeSpec{
			gpu: a800SXM, count: 8, build: dgxa100.NewWithGPUs,
			busIDs: []string{"07", "0F", "47", "4E", "87", "90", "B7", "BD"},
			numa:   []int{0, 0, 0, 0, 1, 1, 1, 1}, cpus: []string{"0-31,64-95", "32-63,96-127"},
			ancestor: func(a, b int) nv.GpuTopologyLevel {
				switch {
				case sameGroup(a, b, 2):
					return nv.TOPOLOGY_MULTIPLE
				case sameGroup(a, b, 4):
					return nv.TOPOLOGY_NODE
				}
				return nv.TOPOLOGY_SYSTEM
			},
			switchLanes: 8, reservedMiB: 512, idleW: 60, maxW: 400, boostMHz: 1410,
		}, true
	case gpu.FakeA800PCIe8:
		// PCIe cards, NVLink bridges on pairs (0,1) (2,3) (4,5) (6,7).
		// Socket 0: host bridge 0 with switch S0 {0,1} and switch S1 {2,3}.
		// Socket 1: host bridge 1 with switch S2 {4,6}, host bridge 2 with
		// switch S3 {5,7}; the bridged pairs there span host bridges.
		switchOf := []int{0, 0, 1, 1, 2, 3, 2, 3}
		hostBridgeOf := []int{0, 0, 0, 0, 1, 2, 1, 2}
		return nodeSpec{
			gpu: a800PCIe, count: 8, build: dgxa100.NewWithGPUs,
			busIDs: []string{"1B", "1C", "3D", "3E", "89", "8A", "B1", "B2"},
			numa:   []int{0, 0, 0, 0, 1, 1, 1, 1}, cpus: []string{"0-27,56-83", "28-55,84-111"},
			ancestor: func(a, b int) nv.GpuTopologyLevel {
				switch {
				case switchOf[a] == switchOf[b]:
					return nv.TOPOLOGY_SINGLE
				case hostBridgeOf[a] == hostBridgeOf[b]:
					return nv.TOPOLOGY_HOSTBRIDGE
				case sameGroup(a, b, 4):
					return nv.TOPOLOGY_NODE
				}
				return nv.TOPOLOGY_SYSTEM
			},
			nvlink: func(a, b int) int {
				if sameGroup(a, b, 2) {
					return 8
				}
				return 0
			},
			reservedMiB: 512, idleW: 45, maxW: 300, boostMHz: 1410,
		}, true
	case gpu.FakeH100SXM4:
		// HGX H100 4-GPU: every pair joined directly by 6 NVLink lanes, no
		// NVSwitch; two NUMA nodes of two.
		return nodeSpec{
			gpu: gpus.H100_SXM5_80GB, count: 4, build: dgxh100.NewWithGPUs,
			busIDs: []string{"19", "3B", "9A", "BA"},
			numa:   []int{0, 0, 1, 1}, cpus: []string{"0-47", "48-95"},
			ancestor: func(a, b int) nv.GpuTopologyLevel {
				if sameGroup(a, b, 2) {
					return nv.TOPOLOGY_NODE
				}
				return nv.TOPOLOGY_SYSTEM
			},
			nvlink:      func(a, b int) int { return 6 },
			reservedMiB: 600, gpm: true, idleW: 70, maxW: 700, boostMHz: 1980,
		}, true
	case gpu.FakeH200x1:
		return nodeSpec{
			gpu: gpus.H200_SXM5_141GB, count: 1, build: dgxh200.NewWithGPUs,
			busIDs: []string{"18"}, numa: []int{0}, cpus: []string{"0-31"},
			ancestor:    func(a, b int) nv.GpuTopologyLevel { return nv.TOPOLOGY_SYSTEM },
			reservedMiB: 600, gpm: true, idleW: 75, maxW: 700, boostMHz: 1980,
		}, true
	}
	return nodeSpec{}, false
}

// busID writes a fake GPU's PCI address as NVML does.
func (n nodeSpec) busID(i int) string { return fmt.Sprintf("00000000:%s:00.0", n.busIDs[i]) }
