//go:build cgo

package nvml

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/google/uuid"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/npcorch/npcorch/gpu"
)

// Fake is a fake GPU node built on go-nvml's mock servers (dgxa100,
// dgxh100, dgxh200) with topology, telemetry and process calls filled in.
// Tests set free memory, processes and a timeline per GPU; every call of
// the Source's Sample reads the next timeline step. A Fake is safe for
// concurrent use.
type Fake struct {
	name string
	spec nodeSpec
	srv  *server.Server

	mu    sync.Mutex
	step  int
	gpus  []*fakeGPU
	procs map[int]FakeProcess // by pid, for the process inspector
}

type fakeGPU struct {
	dev      *server.Device
	usedB    uint64
	procs    []FakeProcess
	timeline func(step int) Reading
}

// NewFake builds the fake node of that name (see [gpu.FakeNodeNames]) with no
// processes, all memory free and the default timeline.
func NewFake(name string) (*Fake, error) {
	spec, ok := nodeSpecs(name)
	if !ok {
		return nil, gpu.UnknownFakeNode(name)
	}
	cfgs := make([]gpus.Config, spec.count)
	for i := range cfgs {
		cfgs[i] = spec.gpu
	}
	f := &Fake{name: name, spec: spec, srv: spec.build(cfgs...), procs: map[int]FakeProcess{}}
	for i, d := range f.srv.Devices {
		dev := d.(*server.Device)
		dev.UUID = "GPU-" + uuid.NewSHA1(uuid.NameSpaceOID, fmt.Appendf(nil, "npcorch/fake/%s/%d", name, i)).String()
		dev.PciBusID = spec.busID(i)
		g := &fakeGPU{dev: dev}
		g.timeline = f.defaultTimeline(i)
		f.gpus = append(f.gpus, g)
		f.wire(i, g)
	}
	f.srv.GpmSampleAllocFunc = func() (nv.GpmSample, nv.Return) { return &fakeGpmSample{}, nv.SUCCESS }
	f.srv.GpmMetricsGetFunc = f.gpmMetrics
	return f, nil
}

// Name returns the node's name, e.g. "a800-sxm-8".
func (f *Fake) Name() string { return f.name }

func (f *Fake) device(index int) (*fakeGPU, error) {
	if index < 0 || index >= len(f.gpus) {
		return nil, fmt.Errorf("fake node %s: %w", f.name, &gpu.IndexError{Index: index, Count: len(f.gpus)})
	}
	return f.gpus[index], nil
}

// SetFree sets the free memory of GPU index; the rest of the non-reserved
// memory becomes used.
func (f *Fake) SetFree(index int, free uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, err := f.device(index)
	if err != nil {
		return err
	}
	avail := f.totalB() - f.reservedB()
	if free > avail {
		return fmt.Errorf("fake node %s GPU %d: free %d bytes exceeds the %d bytes not reserved", f.name, index, free, avail)
	}
	g.usedB = avail - free
	return nil
}

// SetProcesses replaces the processes running on GPU index.
func (f *Fake) SetProcesses(index int, procs ...FakeProcess) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	g, err := f.device(index)
	if err != nil {
		return err
	}
	for _, p := range g.procs {
		delete(f.procs, p.PID)
	}
	g.procs = append([]FakeProcess(nil), procs...)
	for _, p := range procs {
		f.procs[p.PID] = p
	}
	return nil
}

// SetTimeline scripts GPU index: the n-th Sample call reads readings[n],
// and the last reading repeats once the script ends.
func (f *Fake) SetTimeline(index int, readings ...Reading) error {
	if len(readings) == 0 {
		return fmt.Errorf("fake node %s GPU %d: empty timeline", f.name, index)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	g, err := f.device(index)
	if err != nil {
		return err
	}
	script := append([]Reading(nil), readings...)
	g.timeline = func(step int) Reading { return script[min(step, len(script)-1)] }
	return nil
}

func (f *Fake) totalB() uint64    { return f.spec.gpu.MemoryMB << 20 }
func (f *Fake) reservedB() uint64 { return f.spec.reservedMiB << 20 }

// reading returns GPU i's current timeline step.
func (f *Fake) reading(i int) Reading {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.gpus[i].timeline(f.step)
}

// defaultTimeline is a gentle deterministic load: a triangle wave of period
// 40 steps, shifted per GPU, with power following utilization and the
// energy counter advancing as if each step lasted one second.
func (f *Fake) defaultTimeline(i int) func(int) Reading {
	const period = 40
	util := func(s int) uint32 {
		p := (s + 7*i) % period
		if p >= period/2 {
			p = period - p
		}
		return uint32(p * 100 / (period / 2)) // 0..100
	}
	powerMW := func(s int) uint32 {
		return uint32((f.spec.idleW + (f.spec.maxW-f.spec.idleW)*float64(util(s))/100) * 1000)
	}
	var perPeriod uint64
	for s := range period {
		perPeriod += uint64(powerMW(s))
	}
	base := uint64(1_000_000_000) * uint64(i+1) // energy since driver load, mJ
	return func(s int) Reading {
		u := util(s)
		r := Reading{
			GPUUtil: u, MemUtil: u / 2, SMActivity: float64(u) * 0.6, PowerMilliwatts: powerMW(s),
			TemperatureC: 34 + u*2/5, SMClockMHz: f.spec.boostMHz,
		}
		energy := base + uint64(s/period)*perPeriod // one mW for one second is one mJ
		for k := s - s%period; k < s; k++ {
			energy += uint64(powerMW(k))
		}
		r.EnergyMillijoule = energy
		switch {
		case u == 0:
			r.Throttle, r.SMClockMHz = 0x1, 210
		case u >= 90:
			r.Throttle = 0x4
		}
		return r
	}
}

// wire fills in the mock device's calls that go-nvml's servers leave unset.
func (f *Fake) wire(i int, g *fakeGPU) {
	f.wirePlacement(i, g)
	f.wireNVLink(i, g.dev)
	f.wireProcesses(g)
	f.wireTelemetry(i, g.dev)
}

// wirePlacement answers GPU i's memory, PCI address, NUMA node, CPU
// affinity and common ancestor with each other GPU.
func (f *Fake) wirePlacement(i int, g *fakeGPU) {
	d, spec := g.dev, f.spec
	other := func(o nv.Device) int { return o.(*server.Device).Index }
	d.GetMemoryInfo_v2Func = func() (nv.Memory_v2, nv.Return) {
		f.mu.Lock()
		defer f.mu.Unlock()
		total, reserved := f.totalB(), f.reservedB()
		return nv.Memory_v2{Total: total, Reserved: reserved, Used: g.usedB, Free: total - reserved - g.usedB}, nv.SUCCESS
	}
	d.GetPciInfoFunc = func() (nv.PciInfo, nv.Return) {
		p := nv.PciInfo{PciDeviceId: spec.gpu.PciDeviceId}
		for k, c := range []byte(d.PciBusID) {
			p.BusId[k] = int8(c)
		}
		return p, nv.SUCCESS
	}
	d.GetNumaNodeIdFunc = func() (int, nv.Return) { return spec.numa[i], nv.SUCCESS }
	d.GetCpuAffinityFunc = func(n int) ([]uint, nv.Return) {
		return cpuMask(spec.cpus[spec.numa[i]], n), nv.SUCCESS
	}
	d.GetTopologyCommonAncestorFunc = func(o nv.Device) (nv.GpuTopologyLevel, nv.Return) {
		return spec.ancestor(i, other(o)), nv.SUCCESS
	}
}

// wireNVLink answers GPU i's NVLink lanes: into the switch first, then to
// each peer in index order; and which peers it reaches over NVLink.
func (f *Fake) wireNVLink(i int, d *server.Device) {
	spec := f.spec
	other := func(o nv.Device) int { return o.(*server.Device).Index }
	type lane struct {
		toSwitch bool
		peer     int
	}
	var lanes []lane
	for range spec.switchLanes {
		lanes = append(lanes, lane{toSwitch: true})
	}
	for p := range spec.count {
		if p != i && spec.nvlink != nil {
			for range spec.nvlink(i, p) {
				lanes = append(lanes, lane{peer: p})
			}
		}
	}
	d.GetP2PStatusFunc = func(o nv.Device, idx nv.GpuP2PCapsIndex) (nv.GpuP2PStatus, nv.Return) {
		if idx != nv.P2P_CAPS_INDEX_NVLINK {
			return nv.P2P_STATUS_OK, nv.SUCCESS
		}
		if spec.switchLanes > 0 || (spec.nvlink != nil && spec.nvlink(i, other(o)) > 0) {
			return nv.P2P_STATUS_OK, nv.SUCCESS
		}
		return nv.P2P_STATUS_NOT_SUPPORTED, nv.SUCCESS
	}
	d.GetNvLinkStateFunc = func(link int) (nv.EnableState, nv.Return) {
		if link < 0 || link >= len(lanes) {
			return 0, nv.ERROR_INVALID_ARGUMENT
		}
		return nv.FEATURE_ENABLED, nv.SUCCESS
	}
	d.GetNvLinkRemoteDeviceTypeFunc = func(link int) (nv.IntNvLinkDeviceType, nv.Return) {
		if link < 0 || link >= len(lanes) {
			return 0, nv.ERROR_INVALID_ARGUMENT
		}
		if lanes[link].toSwitch {
			return nv.NVLINK_DEVICE_TYPE_SWITCH, nv.SUCCESS
		}
		return nv.NVLINK_DEVICE_TYPE_GPU, nv.SUCCESS
	}
	d.GetNvLinkRemotePciInfoFunc = func(link int) (nv.PciInfo, nv.Return) {
		if link < 0 || link >= len(lanes) {
			return nv.PciInfo{}, nv.ERROR_INVALID_ARGUMENT
		}
		id := "00000000:FF:00.0" // the NVSwitch
		if !lanes[link].toSwitch {
			id = spec.busID(lanes[link].peer)
		}
		var p nv.PciInfo
		for k, c := range []byte(id) {
			p.BusId[k] = int8(c)
		}
		return p, nv.SUCCESS
	}
}

// wireProcesses answers the compute processes the test set on the GPU.
func (f *Fake) wireProcesses(g *fakeGPU) {
	d := g.dev
	d.GetComputeRunningProcessesFunc = func() ([]nv.ProcessInfo, nv.Return) {
		f.mu.Lock()
		defer f.mu.Unlock()
		out := make([]nv.ProcessInfo, len(g.procs))
		for k, p := range g.procs {
			out[k] = nv.ProcessInfo{Pid: uint32(p.PID), UsedGpuMemory: p.MemoryBytes}
		}
		return out, nv.SUCCESS
	}
}

// wireTelemetry answers GPU i's utilization, power, energy, temperature,
// clocks, throttle reasons and GPM samples from its timeline's reading.
func (f *Fake) wireTelemetry(i int, d *server.Device) {
	spec := f.spec
	d.GetUtilizationRatesFunc = func() (nv.Utilization, nv.Return) {
		r := f.reading(i)
		return nv.Utilization{Gpu: r.GPUUtil, Memory: r.MemUtil}, nv.SUCCESS
	}
	d.GetPowerUsageFunc = func() (uint32, nv.Return) { return f.reading(i).PowerMilliwatts, nv.SUCCESS }
	d.GetTotalEnergyConsumptionFunc = func() (uint64, nv.Return) { return f.reading(i).EnergyMillijoule, nv.SUCCESS }
	d.GetTemperatureFunc = func(s nv.TemperatureSensors) (uint32, nv.Return) {
		return f.reading(i).TemperatureC, nv.SUCCESS
	}
	d.GetClockInfoFunc = func(c nv.ClockType) (uint32, nv.Return) {
		if c != nv.CLOCK_SM {
			return 0, nv.ERROR_NOT_SUPPORTED
		}
		return f.reading(i).SMClockMHz, nv.SUCCESS
	}
	d.GetCurrentClocksEventReasonsFunc = func() (uint64, nv.Return) { return f.reading(i).Throttle, nv.SUCCESS }
	d.GpmQueryDeviceSupportFunc = func() (nv.GpmSupport, nv.Return) {
		if !spec.gpm {
			return nv.GpmSupport{Version: nv.GPM_SUPPORT_VERSION}, nv.SUCCESS
		}
		return nv.GpmSupport{Version: nv.GPM_SUPPORT_VERSION, IsSupportedDevice: 1}, nv.SUCCESS
	}
	d.GpmSampleGetFunc = func(s nv.GpmSample) nv.Return {
		fs, ok := s.(*fakeGpmSample)
		if !ok || !spec.gpm {
			return nv.ERROR_NOT_SUPPORTED
		}
		fs.reading, fs.taken = f.reading(i), true
		return nv.SUCCESS
	}
}

// fakeGpmSample is a GPM sample of a fake GPU: the reading it was taken at.
type fakeGpmSample struct {
	reading Reading
	taken   bool
}

// Free, Get and MigGet satisfy nv.GpmSample; the mock device's
// GpmSampleGet fills the sample instead of Get.
func (s *fakeGpmSample) Free() nv.Return                 { return nv.SUCCESS }
func (s *fakeGpmSample) Get(nv.Device) nv.Return         { return nv.ERROR_NOT_SUPPORTED }
func (s *fakeGpmSample) MigGet(nv.Device, int) nv.Return { return nv.ERROR_NOT_SUPPORTED }

// gpmMetrics answers SM_UTIL from the later of the two samples, as the SM
// activity over the interval that ends there.
func (f *Fake) gpmMetrics(m *nv.GpmMetricsGetType) nv.Return {
	s1, ok1 := m.Sample1.(*fakeGpmSample)
	s2, ok2 := m.Sample2.(*fakeGpmSample)
	if !ok1 || !ok2 || !s1.taken || !s2.taken {
		return nv.ERROR_INVALID_ARGUMENT
	}
	for k := range min(int(m.NumMetrics), len(m.Metrics)) {
		met := &m.Metrics[k]
		if nv.GpmMetricId(met.MetricId) == nv.GPM_METRIC_SM_UTIL {
			met.Value, met.NvmlReturn = s2.reading.SMActivity, uint32(nv.SUCCESS)
		} else {
			met.NvmlReturn = uint32(nv.ERROR_NOT_SUPPORTED)
		}
	}
	return nv.SUCCESS
}

// Describe is the fake's process inspector: it knows the processes tests
// placed on its GPUs and nothing else.
func (f *Fake) Describe(_ context.Context, pid int) gpu.ProcessInfo {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.procs[pid]
	if !ok {
		return gpu.ProcessInfo{}
	}
	nonEmpty := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	info := gpu.ProcessInfo{Command: nonEmpty(p.Command), Model: nonEmpty(p.Model)}
	if info.Model != nil {
		info.Replica = nonEmpty(p.Replica)
	}
	return info
}

// Source returns the fake node as a gpu.Source: the NVML adapter over the
// mock server, so the fake exercises the same code as a real node. Each
// Sample call reads the current timeline step and then advances it.
func (f *Fake) Source() gpu.Source {
	s, err := newSource(f.srv, Options{Node: f.name, Inspector: f})
	if err != nil { // the mock server always answers
		return gpu.Absent{Node: f.name, Reason: err.Error()}
	}
	return &fakeSource{source: s, fake: f}
}

// fakeSource advances the fake's timeline after every sample.
type fakeSource struct {
	*source
	fake *Fake
}

// Sample reads the current step of every GPU, then advances the timeline.
func (s *fakeSource) Sample(ctx context.Context) ([]gpu.DeviceSample, error) {
	out, err := s.source.Sample(ctx)
	s.fake.mu.Lock()
	s.fake.step++
	s.fake.mu.Unlock()
	return out, err
}

// cpuMask turns a Linux CPU list into NVML's affinity words of 64 CPUs.
func cpuMask(list string, numCPUs int) []uint {
	words := make([]uint, (numCPUs+63)/64)
	var lo, hi int
	for _, part := range strings.Split(list, ",") {
		if n, _ := fmt.Sscanf(part, "%d-%d", &lo, &hi); n < 2 {
			hi = lo
		}
		for c := lo; c <= hi && c < numCPUs; c++ {
			words[c/64] |= 1 << (c % 64)
		}
	}
	return words
}
