package gpu

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Inventory is what the GPUs of one node are. Fields the driver did not
// report are nil (null in JSON), never zero.
type Inventory struct {
	// Node names the machine: its hostname, or the fake node's name.
	Node string `json:"node"`
	// DriverVersion is the NVIDIA driver version, e.g. "550.54.15".
	DriverVersion *string `json:"driver_version"`
	// CUDAVersion is the newest CUDA version the driver supports, e.g. "12.4".
	CUDAVersion *string `json:"cuda_version"`
	// GPUs lists the devices in NVML index order.
	GPUs []GPU `json:"gpus"`
	// Reason says why GPUs is empty (no driver, no cgo); empty otherwise.
	Reason string `json:"reason,omitempty"`
}

// GPU is one device of an [Inventory].
type GPU struct {
	// Index is the NVML index (nvidia-smi's "GPU" column).
	Index int `json:"index"`
	// UUID is the stable device identity, e.g. "GPU-5f3c…".
	UUID *string `json:"uuid"`
	// Name is the product name, e.g. "NVIDIA A800-SXM4-80GB".
	Name *string `json:"name"`
	// MemoryTotalBytes is the framebuffer size.
	MemoryTotalBytes *uint64 `json:"memory_total_bytes"`
	// MemoryReservedBytes is what the driver keeps for itself.
	MemoryReservedBytes *uint64 `json:"memory_reserved_bytes"`
	// MemoryUsedBytes is what processes use (NVML memory info v2, as
	// nvidia-smi shows it; excludes the reserved memory).
	MemoryUsedBytes *uint64 `json:"memory_used_bytes"`
	// MemoryFreeBytes is what a new engine can still allocate.
	MemoryFreeBytes *uint64 `json:"memory_free_bytes"`
	// PCIBusID is the PCI address, e.g. "00000000:07:00.0".
	PCIBusID *string `json:"pci_bus_id"`
	// NUMANode is the host NUMA node closest to the GPU.
	NUMANode *int `json:"numa_node"`
	// CPUAffinity is the host CPUs closest to the GPU, as a Linux CPU list
	// ("0-31,64-95").
	CPUAffinity *string `json:"cpu_affinity"`
	// ComputeCapability is the CUDA compute capability, e.g. "8.0".
	ComputeCapability *string `json:"compute_capability"`
	// MIGEnabled says whether MIG mode is on; nil where MIG is unsupported.
	MIGEnabled *bool `json:"mig_enabled"`
	// Processes lists the compute processes using the GPU.
	Processes []Process `json:"processes"`
}

// Process is a compute process using a GPU.
type Process struct {
	// PID is the process id in the host's namespace.
	PID int `json:"pid"`
	// GPUMemoryBytes is the GPU memory the process holds on this GPU.
	GPUMemoryBytes *uint64 `json:"gpu_memory_bytes"`
	// Command is the command line, when the process is visible to us.
	Command *string `json:"command"`
	// Model is the model npcorch launched the process for (NPCORCH_MODEL on
	// the process or an ancestor); nil for processes npcorch did not start.
	Model *string `json:"model"`
	// Replica is the replica (NPCORCH_REPLICA), set together with Model.
	Replica *string `json:"replica"`
}

// Ptr returns a pointer to v; adapters use it to mark a value as known.
func Ptr[T any](v T) *T { return &v }

// WriteInventoryJSON writes inv as indented JSON. An inventory without GPUs
// is written as {"gpus": [], "reason": "..."} and nothing else.
func WriteInventoryJSON(w io.Writer, inv Inventory, topo Topology) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if len(inv.GPUs) == 0 {
		return enc.Encode(struct {
			GPUs   []GPU  `json:"gpus"`
			Reason string `json:"reason"`
		}{[]GPU{}, inv.Reason})
	}
	return enc.Encode(struct {
		Inventory
		Topology Topology `json:"topology"`
		TPSets   []GPUSet `json:"tp_sets"`
	}{inv, topo, rankedSetsForReport(topo)})
}

// rankedSetsForReport lists the best few sets per TP size for the CLI.
func rankedSetsForReport(topo Topology) []GPUSet {
	out := []GPUSet{}
	for _, size := range []int{2, 4, 8} {
		sets := TPSets(topo, size, nil)
		if len(sets) > 4 {
			sets = sets[:4]
		}
		out = append(out, sets...)
	}
	return out
}

// WriteInventoryText writes inv, its processes and the topology matrix in
// the layout of nvidia-smi. An inventory without GPUs is one line saying why.
func WriteInventoryText(w io.Writer, inv Inventory, topo Topology) error {
	if len(inv.GPUs) == 0 {
		reason := inv.Reason
		if reason == "" {
			reason = "no GPUs found"
		}
		_, err := fmt.Fprintf(w, "no GPUs on %s: %s\n", orDash(&inv.Node), reason)
		return err
	}
	fmt.Fprintf(w, "node %s  driver %s  CUDA %s\n\n", inv.Node, orDash(inv.DriverVersion), orDash(inv.CUDAVersion))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GPU\tNAME\tMEMORY USED/TOTAL\tFREE\tBUS ID\tNUMA\tCPUS\tCC\tMIG\tUUID")
	for _, g := range inv.GPUs {
		mig := "-"
		if g.MIGEnabled != nil {
			mig = map[bool]string{true: "on", false: "off"}[*g.MIGEnabled]
		}
		fmt.Fprintf(tw, "%d\t%s\t%s / %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Index, orDash(g.Name),
			mib(g.MemoryUsedBytes), mib(g.MemoryTotalBytes), mib(g.MemoryFreeBytes), orDash(g.PCIBusID),
			intOrDash(g.NUMANode), orDash(g.CPUAffinity), orDash(g.ComputeCapability), mig, orDash(g.UUID))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var procs []string
	for _, g := range inv.GPUs {
		for _, p := range g.Processes {
			model := "-"
			if p.Model != nil {
				model = *p.Model
				if p.Replica != nil {
					model += "#" + *p.Replica
				}
			}
			procs = append(procs, fmt.Sprintf("%d\t%d\t%s\t%s\t%s", g.Index, p.PID, mib(p.GPUMemoryBytes), model, orDash(p.Command)))
		}
	}
	if len(procs) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "GPU\tPID\tGPU MEMORY\tMODEL\tCOMMAND")
		fmt.Fprintln(tw, strings.Join(procs, "\n"))
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if err := WriteTopologyMatrix(w, topo); err != nil {
		return err
	}
	if len(topo.GPUs) < 2 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TP\tBEST GPU SETS (worst internal link, NUMA nodes)")
	for _, size := range []int{2, 4, 8} {
		sets := TPSets(topo, size, nil)
		if len(sets) == 0 {
			continue
		}
		var cells []string
		for i, s := range sets {
			if i == 4 {
				cells = append(cells, fmt.Sprintf("… %d more", len(sets)-4))
				break
			}
			cells = append(cells, s.String())
		}
		fmt.Fprintf(tw, "%d\t%s\n", size, strings.Join(cells, "  "))
	}
	return tw.Flush()
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

func intOrDash(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// mib formats a byte count in MiB, as nvidia-smi does.
func mib(b *uint64) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprintf("%dMiB", *b>>20)
}
