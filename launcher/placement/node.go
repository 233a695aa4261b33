package placement

import (
	"encoding/json"
	"fmt"
)

// LinkClass is how directly two GPUs talk to each other. Classes are
// ordered: a larger value is a better link. The zero value is the worst
// class, so an unknown link is never mistaken for a good one.
type LinkClass int

// Link classes, worst first. They follow NVML's topology levels.
const (
	// LinkCrossSocket joins GPUs under different CPU sockets (NVML SYSTEM).
	LinkCrossSocket LinkClass = iota
	// LinkSameNUMA joins GPUs on one NUMA node through the CPU (NVML NODE).
	LinkSameNUMA
	// LinkHostBridge joins GPUs under one PCIe host bridge (NVML HOSTBRIDGE).
	LinkHostBridge
	// LinkPCIeSwitch joins GPUs behind one PCIe switch (NVML SINGLE/MULTIPLE).
	LinkPCIeSwitch
	// LinkNVLink joins GPUs by NVLink, directly or through NVSwitch.
	LinkNVLink
)

// LinkSeparate joins GPUs of different machines (cluster nodes): they are
// never put in one TP group. It is below every class a node reports.
const LinkSeparate LinkClass = -1

var linkNames = [...]string{"cross-socket", "same-numa", "host-bridge", "pcie-switch", "nvlink"}

// String returns the class's short name, e.g. "nvlink".
func (c LinkClass) String() string {
	if c == LinkSeparate {
		return "separate-nodes"
	}
	if c < 0 || int(c) >= len(linkNames) {
		return fmt.Sprintf("link(%d)", int(c))
	}
	return linkNames[c]
}

// MarshalText writes the class's short name, so plans read well as JSON.
func (c LinkClass) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a short name written by MarshalText.
func (c *LinkClass) UnmarshalText(b []byte) error {
	if string(b) == LinkSeparate.String() {
		*c = LinkSeparate
		return nil
	}
	for i, n := range linkNames {
		if n == string(b) {
			*c = LinkClass(i)
			return nil
		}
	}
	return fmt.Errorf("unknown link class %q; want one of %v", b, linkNames)
}

// GPU is one device of a node as placement sees it.
type GPU struct {
	// Index is the device index (CUDA/NVML order) used in every message.
	Index int `json:"index"`
	// UUID identifies the device for CUDA_VISIBLE_DEVICES.
	UUID string `json:"uuid"`
	// Name is the product name, e.g. "NVIDIA A800-SXM4-80GB".
	Name string `json:"name,omitempty"`
	// MemTotal and MemFree are in bytes.
	MemTotal uint64 `json:"mem_total"`
	MemFree  uint64 `json:"mem_free"`
	// NUMA is the device's NUMA node (-1 when unknown).
	NUMA int `json:"numa"`
}

// Node is one machine's GPUs and how they are linked.
type Node struct {
	// Name labels the node in plans, e.g. "fake:a800-sxm-8".
	Name string `json:"name"`
	// GPUs lists the devices; Index values must be unique.
	GPUs []GPU `json:"gpus"`
	// Link returns the link class between the GPUs of index a and b. A nil
	// Link treats every pair as LinkCrossSocket.
	Link func(a, b int) LinkClass `json:"-"`
	// Speed is one GPU's throughput relative to an A800 (H100 ≈ 2). Zero
	// means 1.
	Speed float64 `json:"speed,omitempty"`
	// CPUs is the host's physical CPU cores for engine processes; it sizes
	// each engine's API servers (see APIServers). Zero means unknown: one
	// API server per engine, vLLM's default.
	CPUs int `json:"cpus,omitempty"`
}

// link returns the class between a and b, tolerating a nil Link.
func (n Node) link(a, b int) LinkClass {
	switch {
	case a == b:
		return LinkNVLink
	case n.Link == nil:
		return LinkCrossSocket
	}
	return n.Link(a, b)
}

// speed returns Speed with its zero value resolved.
func (n Node) speed() float64 {
	if n.Speed <= 0 {
		return 1
	}
	return n.Speed
}

// gpu returns the GPU of the given index.
func (n Node) gpu(index int) (GPU, bool) {
	for _, g := range n.GPUs {
		if g.Index == index {
			return g, true
		}
	}
	return GPU{}, false
}

// Validate reports a node that placement cannot reason about: no GPUs,
// duplicate indices, or free memory above total.
func (n Node) Validate() error {
	if len(n.GPUs) == 0 {
		return fmt.Errorf("node %q has no GPUs; check the GPU inventory (npcorch gpus)", n.Name)
	}
	seen := make(map[int]bool, len(n.GPUs))
	for _, g := range n.GPUs {
		if seen[g.Index] {
			return fmt.Errorf("node %q lists GPU %d twice", n.Name, g.Index)
		}
		seen[g.Index] = true
		if g.MemTotal == 0 {
			return fmt.Errorf("node %q: GPU %d reports no memory", n.Name, g.Index)
		}
		if g.MemFree > g.MemTotal {
			return fmt.Errorf("node %q: GPU %d reports %s free of %s total", n.Name, g.Index, GiB(g.MemFree), GiB(g.MemTotal))
		}
	}
	return nil
}

// LinkMatrix returns the node's link classes as a matrix in GPU order, for
// display and JSON.
func (n Node) LinkMatrix() [][]LinkClass {
	m := make([][]LinkClass, len(n.GPUs))
	for i, a := range n.GPUs {
		m[i] = make([]LinkClass, len(n.GPUs))
		for j, b := range n.GPUs {
			m[i][j] = n.link(a.Index, b.Index)
		}
	}
	return m
}

// MarshalJSON includes the link matrix, which the Link function cannot carry.
func (n Node) MarshalJSON() ([]byte, error) {
	type plain Node
	return json.Marshal(struct {
		plain
		Links [][]LinkClass `json:"links"`
	}{plain(n), n.LinkMatrix()})
}
