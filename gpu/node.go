package gpu

import (
	"fmt"
	"slices"
	"strings"
)

// The fake nodes, by name; a node spec names one as "fake:NAME". Package
// gpu/nvml builds each as a fake NVML node, package launcher/placement as
// the node a plan places on.
const (
	FakeA800SXM8  = "a800-sxm-8"  // 8×A800-SXM4-80GB on one NVSwitch fabric
	FakeA800PCIe8 = "a800-pcie-8" // 8×A800-80GB PCIe, NVLink-bridged pairs
	FakeH100SXM4  = "h100-sxm-4"  // 4×H100-80GB SXM, all NVLink
	FakeH200x1    = "h200-1"      // one H200-141GB
)

// FakeNodeNames lists the fake nodes, in the order messages name them.
func FakeNodeNames() []string {
	return []string{FakeA800SXM8, FakeA800PCIe8, FakeH100SXM4, FakeH200x1}
}

// FakeNodeSpecs lists the fake nodes as a node is named, for messages:
// "fake:a800-sxm-8, fake:a800-pcie-8, …".
func FakeNodeSpecs() string {
	return fakePrefix + strings.Join(FakeNodeNames(), ", "+fakePrefix)
}

const fakePrefix = "fake:"

// NodeKind says which GPUs a node spec names.
type NodeKind int

const (
	// NodeAuto is this machine's GPUs through NVML, or none (an empty
	// inventory that says why) where there is no driver.
	NodeAuto NodeKind = iota
	// NodeNVML is this machine's GPUs through NVML; no driver is an error.
	NodeNVML
	// NodeFake is one of the fake nodes (FakeNodeNames).
	NodeFake
)

// NodeSpec is a node as a campaign file's node: or a --node flag names it,
// parsed: "auto", "nvml" or "fake:NAME". The zero value is auto.
type NodeSpec struct {
	Kind NodeKind
	// Fake is the fake node's name (one of FakeNodeNames) when Kind is
	// NodeFake.
	Fake string
}

// FakeNode is the spec of the fake node of that name (one of
// FakeNodeNames).
func FakeNode(name string) NodeSpec { return NodeSpec{Kind: NodeFake, Fake: name} }

// ParseNodeSpec reads "auto" (or ""), "nvml" or "fake:NAME". Anything else,
// and a fake node npcorch does not have, is an error that lists the
// choices.
func ParseNodeSpec(s string) (NodeSpec, error) {
	switch s {
	case "", "auto":
		return NodeSpec{Kind: NodeAuto}, nil
	case "nvml":
		return NodeSpec{Kind: NodeNVML}, nil
	}
	name, fake := strings.CutPrefix(s, fakePrefix)
	if !fake {
		return NodeSpec{}, fmt.Errorf("%q is not a node; use auto, nvml or fake:NAME (%s)", s, FakeNodeSpecs())
	}
	if !slices.Contains(FakeNodeNames(), name) {
		return NodeSpec{}, UnknownFakeNode(name)
	}
	return FakeNode(name), nil
}

// UnknownFakeNode is the error of a fake node npcorch does not have (a
// typo): it names the node as it was written and lists the fake nodes.
func UnknownFakeNode(name string) error {
	return fmt.Errorf("%q is not a fake node; use one of %s, or auto (or nvml) for this machine's GPUs", fakePrefix+name, FakeNodeSpecs())
}

// IsFake says whether the spec names a fake node.
func (n NodeSpec) IsFake() bool { return n.Kind == NodeFake }

// String is the spec as it is written: "auto", "nvml" or "fake:NAME".
func (n NodeSpec) String() string {
	switch n.Kind {
	case NodeNVML:
		return "nvml"
	case NodeFake:
		return fakePrefix + n.Fake
	}
	return "auto"
}
