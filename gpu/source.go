package gpu

import (
	"context"
	"errors"
	"fmt"
)

// Source is one node's GPUs as npcorch sees them. The NVML adapter and the
// fake nodes in gpu/nvml implement it; [Absent] stands for a node without a
// usable driver. Implementations are safe for concurrent use.
type Source interface {
	// Inventory reads what the GPUs are: identity, memory, PCI and NUMA
	// placement, driver versions and running processes.
	Inventory(ctx context.Context) (Inventory, error)
	// Topology reads how every pair of GPUs is linked.
	Topology(ctx context.Context) (Topology, error)
	// Processes lists the compute processes running on the GPU at index.
	Processes(ctx context.Context, index int) ([]Process, error)
	// Sample reads the current load of every GPU, in index order.
	Sample(ctx context.Context) ([]DeviceSample, error)
	// Close releases the driver.
	Close() error
}

// ProcessInspector describes a process found on a GPU: its command line and,
// when npcorch launched it, the model and replica it serves.
type ProcessInspector interface {
	Describe(ctx context.Context, pid int) ProcessInfo
}

// ProcessInfo is what a [ProcessInspector] learned about one process; a
// field it could not learn is nil.
type ProcessInfo struct {
	Command *string
	Model   *string
	Replica *string
}

// Environment variables the launcher sets on every engine process it starts;
// [HostProcesses] finds them on the process or one of its ancestors.
const (
	EnvModel   = "NPCORCH_MODEL"
	EnvReplica = "NPCORCH_REPLICA"
)

var (
	// ErrNoDriver means the NVIDIA driver (libnvidia-ml.so.1) is not
	// installed or not loadable on this machine.
	ErrNoDriver = errors.New("no NVIDIA driver found (libnvidia-ml.so.1 is not loadable)")
	// ErrNVMLNotCompiled means this npcorch binary was built with
	// CGO_ENABLED=0 and cannot talk to NVML.
	ErrNVMLNotCompiled = errors.New("NVML support not compiled in (npcorch was built with CGO_ENABLED=0; rebuild with cgo enabled)")
)

// Absent is the [Source] of a node without usable GPUs: its inventory is
// empty and says why; it has no topology, processes or samples.
type Absent struct {
	// Node names the machine, for reports.
	Node string
	// Reason says why there are no GPUs, in words a user can act on.
	Reason string
}

// Inventory returns an empty inventory carrying the reason.
func (a Absent) Inventory(context.Context) (Inventory, error) {
	return Inventory{Node: a.Node, GPUs: []GPU{}, Reason: a.Reason}, nil
}

// Topology returns an empty topology.
func (a Absent) Topology(context.Context) (Topology, error) {
	return Topology{GPUs: []TopologyGPU{}, Links: []Link{}}, nil
}

// Processes reports that there is no GPU at any index.
func (a Absent) Processes(_ context.Context, index int) ([]Process, error) {
	return nil, &IndexError{Index: index, Count: 0}
}

// Sample returns no device samples.
func (a Absent) Sample(context.Context) ([]DeviceSample, error) { return []DeviceSample{}, nil }

// Close does nothing.
func (a Absent) Close() error { return nil }

// IndexError reports a GPU index outside the node.
type IndexError struct {
	Index int
	Count int
}

// Error says which index was asked for and which exist.
func (e *IndexError) Error() string {
	if e.Count == 0 {
		return fmt.Sprintf("GPU %d: this node has no GPUs", e.Index)
	}
	return fmt.Sprintf("GPU %d: no such GPU (this node has GPUs 0..%d)", e.Index, e.Count-1)
}
