//go:build cgo

package nvml

import (
	"context"
	"fmt"
	"slices"
	"sync"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/npcorch/npcorch/gpu"
)

// maxCPUs bounds the CPU affinity mask read from NVML.
const maxCPUs = 1024

// valueNotAvailable is NVML's marker for a process memory it cannot see.
const valueNotAvailable = ^uint64(0)

// Options configures [New].
type Options struct {
	// Node names the machine in inventories and reports.
	Node string
	// Inspector describes the processes found on the GPUs; nil means
	// &gpu.HostProcesses{}.
	Inspector gpu.ProcessInspector
	// Close is called by Source.Close after NVML is shut down; may be nil.
	Close func() error
}

// source is the gpu.Source over an initialised nv.Interface.
type source struct {
	lib     nv.Interface
	node    string
	inspect gpu.ProcessInspector
	onClose func() error
	devs    []nv.Device

	mu  sync.Mutex // guards gpm
	gpm []*gpmState
}

// gpmState holds a device's previous GPM sample, for SM activity.
type gpmState struct {
	prev, cur nv.GpmSample
	primed    bool
}

// New wraps an initialised NVML library (the real one, or a go-nvml mock)
// as a gpu.Source. It reads the device handles once; NVML must stay
// initialised until Close.
func New(lib nv.Interface, opts Options) (gpu.Source, error) {
	return newSource(lib, opts)
}

func newSource(lib nv.Interface, opts Options) (*source, error) {
	n, ret := lib.DeviceGetCount()
	if ret != nv.SUCCESS {
		return nil, fmt.Errorf("counting GPUs through NVML: %v; check the driver with nvidia-smi", ret)
	}
	s := &source{lib: lib, node: opts.Node, inspect: opts.Inspector, onClose: opts.Close}
	if s.inspect == nil {
		s.inspect = &gpu.HostProcesses{}
	}
	for i := range n {
		d, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nv.SUCCESS {
			return nil, fmt.Errorf("GPU %d: getting its NVML handle: %v; check the GPU with nvidia-smi -i %d", i, ret, i)
		}
		s.devs = append(s.devs, d)
	}
	s.gpm = make([]*gpmState, n)
	for i, d := range s.devs {
		if sup, ret := d.GpmQueryDeviceSupport(); ret != nv.SUCCESS || sup.IsSupportedDevice == 0 {
			continue
		}
		prev, ret1 := lib.GpmSampleAlloc()
		cur, ret2 := lib.GpmSampleAlloc()
		if ret1 != nv.SUCCESS || ret2 != nv.SUCCESS {
			continue
		}
		s.gpm[i] = &gpmState{prev: prev, cur: cur}
	}
	return s, nil
}

// known turns an NVML (value, return) into a pointer: nil unless SUCCESS.
func known[T any](v T, ret nv.Return) *T {
	if ret != nv.SUCCESS {
		return nil
	}
	return &v
}

func cString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

func (s *source) busID(d nv.Device) *string {
	pci, ret := d.GetPciInfo()
	if ret != nv.SUCCESS {
		return nil
	}
	if id := cString(pci.BusId[:]); id != "" {
		return &id
	}
	return nil
}

// Inventory reads every GPU's identity, memory, placement and processes.
func (s *source) Inventory(ctx context.Context) (gpu.Inventory, error) {
	inv := gpu.Inventory{Node: s.node, GPUs: make([]gpu.GPU, len(s.devs))}
	inv.DriverVersion = known(s.lib.SystemGetDriverVersion())
	if v, ret := s.lib.SystemGetCudaDriverVersion(); ret == nv.SUCCESS && v > 0 {
		inv.CUDAVersion = gpu.Ptr(fmt.Sprintf("%d.%d", v/1000, v%1000/10))
	}
	for i, d := range s.devs {
		g := gpu.GPU{Index: i}
		g.UUID = known(d.GetUUID())
		g.Name = known(d.GetName())
		if m, ret := d.GetMemoryInfo_v2(); ret == nv.SUCCESS {
			g.MemoryTotalBytes, g.MemoryReservedBytes = &m.Total, &m.Reserved
			g.MemoryUsedBytes, g.MemoryFreeBytes = &m.Used, &m.Free
		}
		g.PCIBusID = s.busID(d)
		g.NUMANode, g.CPUAffinity = s.placement(d)
		if major, minor, ret := d.GetCudaComputeCapability(); ret == nv.SUCCESS {
			g.ComputeCapability = gpu.Ptr(fmt.Sprintf("%d.%d", major, minor))
		}
		if cur, _, ret := d.GetMigMode(); ret == nv.SUCCESS {
			g.MIGEnabled = gpu.Ptr(cur == nv.DEVICE_MIG_ENABLE)
		}
		g.Processes = s.processes(ctx, d)
		inv.GPUs[i] = g
	}
	return inv, nil
}

// placement reads a GPU's NUMA node and CPU affinity.
func (s *source) placement(d nv.Device) (*int, *string) {
	numa := known(d.GetNumaNodeId())
	if numa != nil && *numa < 0 {
		numa = nil
	}
	var cpus *string
	if mask, ret := d.GetCpuAffinity(maxCPUs); ret == nv.SUCCESS {
		words := make([]uint64, len(mask))
		for i, w := range mask {
			words[i] = uint64(w)
		}
		if list := gpu.FormatCPUList(gpu.CPUsFromMask(words)); list != "" {
			cpus = &list
		}
	}
	return numa, cpus
}

// Processes lists the compute processes on the GPU at index.
func (s *source) Processes(ctx context.Context, index int) ([]gpu.Process, error) {
	if index < 0 || index >= len(s.devs) {
		return nil, &gpu.IndexError{Index: index, Count: len(s.devs)}
	}
	return s.processes(ctx, s.devs[index]), nil
}

func (s *source) processes(ctx context.Context, d nv.Device) []gpu.Process {
	infos, ret := d.GetComputeRunningProcesses()
	if ret != nv.SUCCESS {
		return nil
	}
	out := make([]gpu.Process, 0, len(infos))
	for _, p := range infos {
		proc := gpu.Process{PID: int(p.Pid)}
		if p.UsedGpuMemory != valueNotAvailable {
			proc.GPUMemoryBytes = gpu.Ptr(p.UsedGpuMemory)
		}
		info := s.inspect.Describe(ctx, proc.PID)
		proc.Command, proc.Model, proc.Replica = info.Command, info.Model, info.Replica
		out = append(out, proc)
	}
	slices.SortFunc(out, func(a, b gpu.Process) int { return a.PID - b.PID })
	return out
}

// nvlinks is one GPU's active NVLink lanes: into an NVSwitch fabric, and
// directly to peers keyed by PCI bus id.
type nvlinks struct {
	switched int
	peers    map[string]int
}

func readNVLinks(d nv.Device) nvlinks {
	l := nvlinks{peers: map[string]int{}}
	for link := range nv.NVLINK_MAX_LINKS {
		state, ret := d.GetNvLinkState(link)
		if ret != nv.SUCCESS || state != nv.FEATURE_ENABLED {
			continue
		}
		if kind, ret := d.GetNvLinkRemoteDeviceType(link); ret == nv.SUCCESS && kind == nv.NVLINK_DEVICE_TYPE_SWITCH {
			l.switched++
			continue
		}
		if pci, ret := d.GetNvLinkRemotePciInfo(link); ret == nv.SUCCESS {
			l.peers[cString(pci.BusId[:])]++
		}
	}
	return l
}

// pcieClass maps NVML's closest common PCIe ancestor to a link class.
func pcieClass(level nv.GpuTopologyLevel) gpu.LinkClass {
	switch level {
	case nv.TOPOLOGY_INTERNAL, nv.TOPOLOGY_SINGLE, nv.TOPOLOGY_MULTIPLE:
		return gpu.LinkPCIeSwitch
	case nv.TOPOLOGY_HOSTBRIDGE:
		return gpu.LinkHostBridge
	case nv.TOPOLOGY_NODE:
		return gpu.LinkNUMANode
	case nv.TOPOLOGY_SYSTEM:
		return gpu.LinkCrossSocket
	}
	return gpu.LinkUnknown
}

// Topology reads every pair's NVLink status and common PCIe ancestor.
func (s *source) Topology(context.Context) (gpu.Topology, error) {
	t := gpu.Topology{GPUs: make([]gpu.TopologyGPU, len(s.devs)), Links: []gpu.Link{}}
	links := make([]nvlinks, len(s.devs))
	bus := make([]string, len(s.devs))
	for i, d := range s.devs {
		t.GPUs[i].Index = i
		t.GPUs[i].NUMANode, t.GPUs[i].CPUAffinity = s.placement(d)
		links[i] = readNVLinks(d)
		if id := s.busID(d); id != nil {
			bus[i] = *id
		}
	}
	for a := range s.devs {
		for b := a + 1; b < len(s.devs); b++ {
			l := gpu.Link{A: a, B: b, Class: gpu.LinkUnknown}
			if level, ret := s.devs[a].GetTopologyCommonAncestor(s.devs[b]); ret == nv.SUCCESS {
				l.Class = pcieClass(level)
			}
			if st, ret := s.devs[a].GetP2PStatus(s.devs[b], nv.P2P_CAPS_INDEX_NVLINK); ret == nv.SUCCESS && st == nv.P2P_STATUS_OK {
				direct := links[a].peers[bus[b]]
				switched := 0
				if links[a].switched > 0 && links[b].switched > 0 {
					switched = min(links[a].switched, links[b].switched)
				}
				// NVML says the pair talks over NVLink; the lane count stays 0
				// if the per-link calls could not attribute any lane.
				l.Class, l.NVLinks, l.NVSwitch = gpu.LinkNVLink, direct+switched, switched > 0
			}
			t.Links = append(t.Links, l)
		}
	}
	return t, nil
}

// Sample reads every GPU's load once.
func (s *source) Sample(ctx context.Context) ([]gpu.DeviceSample, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]gpu.DeviceSample, len(s.devs))
	for i, d := range s.devs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ds := gpu.DeviceSample{Index: i, UUID: known(d.GetUUID())}
		if u, ret := d.GetUtilizationRates(); ret == nv.SUCCESS {
			ds.GPUUtilPercent, ds.MemUtilPercent = gpu.Ptr(float64(u.Gpu)), gpu.Ptr(float64(u.Memory))
		}
		ds.SMActivityPercent = s.smActivity(i, d)
		if m, ret := d.GetMemoryInfo_v2(); ret == nv.SUCCESS {
			ds.MemUsedBytes, ds.MemFreeBytes, ds.MemTotalBytes = &m.Used, &m.Free, &m.Total
		}
		if mw, ret := d.GetPowerUsage(); ret == nv.SUCCESS {
			ds.PowerWatts = gpu.Ptr(float64(mw) / 1000)
		}
		ds.EnergyMillijoules = known(d.GetTotalEnergyConsumption())
		if c, ret := d.GetTemperature(nv.TEMPERATURE_GPU); ret == nv.SUCCESS {
			ds.TemperatureC = gpu.Ptr(int(c))
		}
		if mhz, ret := d.GetClockInfo(nv.CLOCK_SM); ret == nv.SUCCESS {
			ds.SMClockMHz = gpu.Ptr(int(mhz))
		}
		ds.ThrottleReasons = known(d.GetCurrentClocksEventReasons())
		ds.Processes = s.processes(ctx, d)
		out[i] = ds
	}
	return out, nil
}

// smActivity takes a GPM sample of device i and returns the SM activity
// since the previous one; nil without GPM or on the first call.
func (s *source) smActivity(i int, d nv.Device) *float64 {
	st := s.gpm[i]
	if st == nil {
		return nil
	}
	if ret := d.GpmSampleGet(st.cur); ret != nv.SUCCESS {
		st.primed = false
		return nil
	}
	defer func() { st.prev, st.cur, st.primed = st.cur, st.prev, true }()
	if !st.primed {
		return nil
	}
	m := nv.GpmMetricsGetType{Version: nv.GPM_METRICS_GET_VERSION, NumMetrics: 1, Sample1: st.prev, Sample2: st.cur}
	m.Metrics[0].MetricId = uint32(nv.GPM_METRIC_SM_UTIL)
	if ret := s.lib.GpmMetricsGet(&m); ret != nv.SUCCESS || m.Metrics[0].NvmlReturn != uint32(nv.SUCCESS) {
		return nil
	}
	return gpu.Ptr(m.Metrics[0].Value)
}

// Close frees GPM samples and shuts NVML down.
func (s *source) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.gpm {
		if st != nil {
			st.prev.Free()
			st.cur.Free()
		}
	}
	s.gpm = make([]*gpmState, len(s.devs))
	var err error
	if ret := s.lib.Shutdown(); ret != nv.SUCCESS {
		err = fmt.Errorf("shutting NVML down: %v", ret)
	}
	if s.onClose != nil {
		if cerr := s.onClose(); err == nil {
			err = cerr
		}
	}
	return err
}
