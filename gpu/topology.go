package gpu

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// LinkClass is how two GPUs reach each other, ordered best first: a smaller
// value is a faster path, so placement code may compare classes with <.
type LinkClass int

// Link classes, best first. They follow nvidia-smi topo -m: NV#, PIX/PXB,
// PHB, NODE, SYS.
const (
	// LinkNVLink: NVLink, directly (bridge, HGX board) or through NVSwitch.
	LinkNVLink LinkClass = iota
	// LinkPCIeSwitch: PCIe through one or more switches, no host bridge
	// (nvidia-smi PIX, PXB).
	LinkPCIeSwitch
	// LinkHostBridge: PCIe through the CPU's host bridge (PHB).
	LinkHostBridge
	// LinkNUMANode: across host bridges inside one NUMA node (NODE).
	LinkNUMANode
	// LinkCrossSocket: across the inter-socket interconnect (SYS).
	LinkCrossSocket
	// LinkUnknown: the driver did not say; ranks worst.
	LinkUnknown
)

var linkClassNames = [...]string{"nvlink", "pcie-switch", "host-bridge", "numa-node", "cross-socket", "unknown"}

// String returns the class's stable name, used in JSON and reports.
func (c LinkClass) String() string {
	if c < 0 || int(c) >= len(linkClassNames) {
		return fmt.Sprintf("LinkClass(%d)", int(c))
	}
	return linkClassNames[c]
}

// MarshalText writes the class's name.
func (c LinkClass) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a class name written by MarshalText.
func (c *LinkClass) UnmarshalText(b []byte) error {
	i := slices.Index(linkClassNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("unknown GPU link class %q (want one of %s)", b, strings.Join(linkClassNames[:], ", "))
	}
	*c = LinkClass(i)
	return nil
}

// Link is the path between two GPUs, A < B.
type Link struct {
	A     int       `json:"a"`
	B     int       `json:"b"`
	Class LinkClass `json:"class"`
	// NVLinks counts the active NVLink lanes joining the pair (through
	// NVSwitch: the lanes of the GPU into the fabric); 0 without NVLink, or
	// when the driver said "NVLink" but not over which lanes.
	NVLinks int `json:"nvlinks"`
	// NVSwitch says the NVLink path runs through an NVSwitch fabric.
	NVSwitch bool `json:"nvswitch"`
}

// Topology is the pairwise link matrix of a node.
type Topology struct {
	GPUs  []TopologyGPU `json:"gpus"`
	Links []Link        `json:"links"`
}

// TopologyGPU is one GPU's host-side placement within a [Topology].
type TopologyGPU struct {
	Index       int     `json:"index"`
	NUMANode    *int    `json:"numa_node"`
	CPUAffinity *string `json:"cpu_affinity"`
}

// Between returns the link joining GPUs a and b. A pair the topology does
// not list is LinkUnknown.
func (t Topology) Between(a, b int) Link {
	if a > b {
		a, b = b, a
	}
	for _, l := range t.Links {
		if l.A == a && l.B == b {
			return l
		}
	}
	return Link{A: a, B: b, Class: LinkUnknown}
}

// GPUSet is a group of GPUs considered for one tensor-parallel replica.
type GPUSet struct {
	// GPUs are the indices, ascending.
	GPUs []int `json:"gpus"`
	// Worst is the slowest link between any two members.
	Worst LinkClass `json:"worst_link"`
	// MinNVLinks is the fewest NVLink lanes between any two members (0 when
	// some pair has no NVLink).
	MinNVLinks int `json:"min_nvlinks"`
	// NUMANodes counts the distinct NUMA nodes the members sit on; a member
	// of unknown NUMA node counts as one more.
	NUMANodes int `json:"numa_nodes"`
}

// String writes the set as "{0,1,2,3} nvlink/1 NUMA".
func (s GPUSet) String() string {
	ids := make([]string, len(s.GPUs))
	for i, g := range s.GPUs {
		ids[i] = fmt.Sprint(g)
	}
	return fmt.Sprintf("{%s} %s/%d NUMA", strings.Join(ids, ","), s.Worst, s.NUMANodes)
}

// TPSets lists every set of size GPUs drawn from available (all GPUs of t
// when available is nil), ranked best first: by worst internal link class,
// then fewer NUMA nodes, then more NVLink lanes, then lower indices. It
// returns nil when size is below 1 or more than the GPUs available.
func TPSets(t Topology, size int, available []int) []GPUSet {
	if available == nil {
		for _, g := range t.GPUs {
			available = append(available, g.Index)
		}
	}
	pool := slices.Clone(available)
	slices.Sort(pool)
	pool = slices.Compact(pool)
	if size < 1 || size > len(pool) {
		return nil
	}
	numa := map[int]*int{}
	for _, g := range t.GPUs {
		numa[g.Index] = g.NUMANode
	}
	var sets []GPUSet
	combinations(pool, size, func(members []int) {
		s := GPUSet{GPUs: slices.Clone(members), Worst: LinkNVLink, MinNVLinks: -1}
		for i := range members {
			for j := i + 1; j < len(members); j++ {
				l := t.Between(members[i], members[j])
				s.Worst = max(s.Worst, l.Class)
				if s.MinNVLinks < 0 || l.NVLinks < s.MinNVLinks {
					s.MinNVLinks = l.NVLinks
				}
			}
		}
		s.MinNVLinks = max(s.MinNVLinks, 0)
		seen := map[int]bool{}
		for _, g := range members {
			if n := numa[g]; n != nil {
				seen[*n] = true
			} else {
				s.NUMANodes++
			}
		}
		s.NUMANodes += len(seen)
		sets = append(sets, s)
	})
	slices.SortStableFunc(sets, func(a, b GPUSet) int {
		return cmp.Or(
			cmp.Compare(a.Worst, b.Worst),
			cmp.Compare(a.NUMANodes, b.NUMANodes),
			cmp.Compare(b.MinNVLinks, a.MinNVLinks),
			slices.Compare(a.GPUs, b.GPUs),
		)
	})
	return sets
}

// combinations calls yield with every k-subset of pool, in lexicographic
// order; yield must not keep the slice.
func combinations(pool []int, k int, yield func([]int)) {
	pick := make([]int, 0, k)
	var rec func(start int)
	rec = func(start int) {
		if len(pick) == k {
			yield(pick)
			return
		}
		for i := start; i <= len(pool)-(k-len(pick)); i++ {
			pick = append(pick, pool[i])
			rec(i + 1)
			pick = pick[:len(pick)-1]
		}
	}
	rec(0)
}

// matrixCell is a link as nvidia-smi topo -m writes it.
func matrixCell(l Link) string {
	switch l.Class {
	case LinkNVLink:
		if l.NVLinks == 0 {
			return "NV?"
		}
		return fmt.Sprintf("NV%d", l.NVLinks)
	case LinkPCIeSwitch:
		return "PIX"
	case LinkHostBridge:
		return "PHB"
	case LinkNUMANode:
		return "NODE"
	case LinkCrossSocket:
		return "SYS"
	}
	return "?"
}

// WriteTopologyMatrix writes t as nvidia-smi topo -m does: one row and
// column per GPU, then CPU and NUMA affinity, then a legend.
func WriteTopologyMatrix(w io.Writer, t Topology) error {
	if len(t.GPUs) == 0 {
		_, err := fmt.Fprintln(w, "no GPU topology")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := []string{""}
	for _, g := range t.GPUs {
		header = append(header, fmt.Sprintf("GPU%d", g.Index))
	}
	header = append(header, "CPU Affinity", "NUMA Affinity")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, a := range t.GPUs {
		row := []string{fmt.Sprintf("GPU%d", a.Index)}
		for _, b := range t.GPUs {
			if a.Index == b.Index {
				row = append(row, "X")
				continue
			}
			row = append(row, matrixCell(t.Between(a.Index, b.Index)))
		}
		numa := "N/A"
		if a.NUMANode != nil {
			numa = fmt.Sprint(*a.NUMANode)
		}
		cpus := "N/A"
		if a.CPUAffinity != nil {
			cpus = *a.CPUAffinity
		}
		row = append(row, cpus, numa)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprint(w, `
Legend:
  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (cross-socket)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PIX  = Connection traversing one or more PCIe bridges without a PCIe Host Bridge (PIX/PXB)
  NV#  = Connection traversing a bonded set of # NVLinks (directly or through NVSwitch)
`)
	return err
}
