//go:build cgo

package nvml

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/npcorch/npcorch/gpu"
)

func openFake(t *testing.T, name string) (*Fake, gpu.Source) {
	t.Helper()
	f, err := NewFake(name)
	if err != nil {
		t.Fatal(err)
	}
	src := f.Source()
	t.Cleanup(func() { src.Close() })
	return f, src
}

func TestInventoryOfEveryFakeNode(t *testing.T) {
	want := map[string]struct {
		count    int
		name, cc string
		totalMiB uint64
		numa     []int
	}{
		"a800-sxm-8":  {8, "NVIDIA A800-SXM4-80GB", "8.0", 81920, []int{0, 0, 0, 0, 1, 1, 1, 1}},
		"a800-pcie-8": {8, "NVIDIA A800 80GB PCIe", "8.0", 81920, []int{0, 0, 0, 0, 1, 1, 1, 1}},
		"h100-sxm-4":  {4, "NVIDIA H100 80GB HBM3", "9.0", 81920, []int{0, 0, 1, 1}},
		"h200-1":      {1, "NVIDIA H200 141GB HBM3e", "9.0", 144384, []int{0}},
	}
	for _, name := range gpu.FakeNodeNames() {
		t.Run(name, func(t *testing.T) {
			_, src := openFake(t, name)
			inv, err := src.Inventory(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			w := want[name]
			if inv.Node != name || len(inv.GPUs) != w.count {
				t.Fatalf("node %q with %d GPUs, want %q with %d", inv.Node, len(inv.GPUs), name, w.count)
			}
			if *inv.DriverVersion != "550.54.15" || *inv.CUDAVersion != "12.4" {
				t.Errorf("driver %s CUDA %s", *inv.DriverVersion, *inv.CUDAVersion)
			}
			uuids := map[string]bool{}
			for i, g := range inv.GPUs {
				if g.Index != i || *g.Name != w.name || *g.ComputeCapability != w.cc || *g.NUMANode != w.numa[i] {
					t.Errorf("GPU %d: %+v", i, g)
				}
				if *g.MemoryTotalBytes != w.totalMiB<<20 || *g.MemoryUsedBytes != 0 ||
					*g.MemoryFreeBytes != *g.MemoryTotalBytes-*g.MemoryReservedBytes {
					t.Errorf("GPU %d memory total %d used %d free %d reserved %d", i, *g.MemoryTotalBytes,
						*g.MemoryUsedBytes, *g.MemoryFreeBytes, *g.MemoryReservedBytes)
				}
				if !strings.HasPrefix(*g.UUID, "GPU-") || uuids[*g.UUID] {
					t.Errorf("GPU %d UUID %q not unique", i, *g.UUID)
				}
				uuids[*g.UUID] = true
				if g.PCIBusID == nil || len(*g.PCIBusID) != len("00000000:07:00.0") || g.CPUAffinity == nil || *g.MIGEnabled {
					t.Errorf("GPU %d bus %v cpus %v mig %v", i, g.PCIBusID, g.CPUAffinity, *g.MIGEnabled)
				}
			}
			// Same node, same UUIDs: campaign files may name GPUs by UUID.
			_, again := openFake(t, name)
			inv2, _ := again.Inventory(context.Background())
			if *inv2.GPUs[0].UUID != *inv.GPUs[0].UUID {
				t.Errorf("UUIDs differ between two fakes of %s", name)
			}
		})
	}
}

func TestCPUAffinityFollowsNUMANode(t *testing.T) {
	_, src := openFake(t, "a800-sxm-8")
	inv, _ := src.Inventory(context.Background())
	if got := *inv.GPUs[0].CPUAffinity; got != "0-31,64-95" {
		t.Errorf("GPU 0 CPUs %q", got)
	}
	if got := *inv.GPUs[7].CPUAffinity; got != "32-63,96-127" {
		t.Errorf("GPU 7 CPUs %q", got)
	}
}

func TestSetFreeAndProcesses(t *testing.T) {
	f, src := openFake(t, "a800-sxm-8")
	if err := f.SetFree(3, 10<<30); err != nil {
		t.Fatal(err)
	}
	if err := f.SetFree(3, 81<<30); err == nil {
		t.Error("free beyond the card's memory accepted")
	}
	if err := f.SetFree(8, 0); err == nil || !strings.Contains(err.Error(), "0..7") {
		t.Errorf("GPU 8 on an 8-GPU node: %v", err)
	}
	f.SetProcesses(3,
		FakeProcess{PID: 4242, MemoryBytes: 60 << 30, Command: "python -m vllm.entrypoints.openai.api_server", Model: "qwen2.5-vl-7b", Replica: "1"},
		FakeProcess{PID: 17, MemoryBytes: 1 << 30, Command: "python train.py"},
	)
	inv, _ := src.Inventory(context.Background())
	g := inv.GPUs[3]
	if *g.MemoryFreeBytes != 10<<30 || *g.MemoryUsedBytes != (81920-512-10240)<<20 {
		t.Errorf("free %d used %d", *g.MemoryFreeBytes, *g.MemoryUsedBytes)
	}
	if len(g.Processes) != 2 || g.Processes[0].PID != 17 || g.Processes[1].PID != 4242 {
		t.Fatalf("processes %+v, want pids 17 and 4242 in order", g.Processes)
	}
	p := g.Processes[1]
	if *p.GPUMemoryBytes != 60<<30 || *p.Model != "qwen2.5-vl-7b" || *p.Replica != "1" || !strings.Contains(*p.Command, "vllm") {
		t.Errorf("engine process %+v", p)
	}
	if g.Processes[0].Model != nil || g.Processes[0].Replica != nil {
		t.Errorf("a process npcorch did not start has a model: %+v", g.Processes[0])
	}
	procs, err := src.Processes(context.Background(), 3)
	if err != nil || len(procs) != 2 {
		t.Errorf("Processes(3) = %v, %v", procs, err)
	}
	if _, err := src.Processes(context.Background(), 9); err == nil {
		t.Error("Processes(9) on an 8-GPU node succeeded")
	}
	if len(inv.GPUs[0].Processes) != 0 {
		t.Errorf("GPU 0 has processes %+v", inv.GPUs[0].Processes)
	}
}

// linkCells renders a topology as a map "a-b" -> cell for compact checks.
func classOf(t *testing.T, topo gpu.Topology, a, b int) string {
	t.Helper()
	l := topo.Between(a, b)
	if l.Class == gpu.LinkNVLink {
		return fmt.Sprintf("NV%d", l.NVLinks)
	}
	return l.Class.String()
}

func TestTopologyOfEveryKind(t *testing.T) {
	cases := map[string]map[[2]int]string{
		"a800-sxm-8": {{0, 1}: "NV8", {0, 4}: "NV8", {3, 7}: "NV8", {6, 7}: "NV8"},
		"a800-pcie-8": {
			{0, 1}: "NV8", {2, 3}: "NV8", {4, 5}: "NV8", {6, 7}: "NV8",
			{4, 6}: "pcie-switch", {5, 7}: "pcie-switch",
			{0, 2}: "host-bridge", {1, 3}: "host-bridge",
			{4, 7}: "numa-node", {5, 6}: "numa-node",
			{0, 4}: "cross-socket", {3, 7}: "cross-socket", {1, 6}: "cross-socket",
		},
		"h100-sxm-4": {{0, 1}: "NV6", {0, 3}: "NV6", {1, 2}: "NV6"},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			_, src := openFake(t, name)
			topo, err := src.Topology(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n := len(topo.GPUs)
			if len(topo.Links) != n*(n-1)/2 {
				t.Fatalf("%d links for %d GPUs", len(topo.Links), n)
			}
			for pair, cell := range want {
				if got := classOf(t, topo, pair[0], pair[1]); got != cell {
					t.Errorf("GPU%d-GPU%d = %s, want %s", pair[0], pair[1], got, cell)
				}
				if got := classOf(t, topo, pair[1], pair[0]); got != cell {
					t.Errorf("GPU%d-GPU%d (reversed) = %s, want %s", pair[1], pair[0], got, cell)
				}
			}
			for _, l := range topo.Links {
				if l.Class == gpu.LinkUnknown {
					t.Errorf("link %+v unknown", l)
				}
				if l.NVSwitch != (name == "a800-sxm-8") {
					t.Errorf("link %+v: NVSwitch flag wrong for %s", l, name)
				}
			}
		})
	}
	_, src := openFake(t, "h200-1")
	topo, _ := src.Topology(context.Background())
	if len(topo.GPUs) != 1 || len(topo.Links) != 0 {
		t.Errorf("h200-1 topology %+v", topo)
	}
}

func TestTPSetsOnPCIeNodePreferBridgedPairsAndOneSocket(t *testing.T) {
	_, src := openFake(t, "a800-pcie-8")
	topo, _ := src.Topology(context.Background())
	tp2 := gpu.TPSets(topo, 2, nil)
	if len(tp2) != 28 {
		t.Fatalf("%d TP-2 sets, want 28", len(tp2))
	}
	var firstFour [][]int
	for _, s := range tp2[:4] {
		firstFour = append(firstFour, s.GPUs)
		if s.Worst != gpu.LinkNVLink {
			t.Errorf("TP-2 set %v worst %s", s.GPUs, s.Worst)
		}
	}
	if !slices.EqualFunc(firstFour, [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}, slices.Equal) {
		t.Errorf("best TP-2 sets %v, want the bridged pairs", firstFour)
	}
	if tp2[4].Worst != gpu.LinkPCIeSwitch || tp2[len(tp2)-1].Worst != gpu.LinkCrossSocket {
		t.Errorf("TP-2 ranking after pairs: %s ... %s", tp2[4], tp2[len(tp2)-1])
	}
	tp4 := gpu.TPSets(topo, 4, nil)
	if !slices.Equal(tp4[0].GPUs, []int{0, 1, 2, 3}) || tp4[0].Worst != gpu.LinkHostBridge || tp4[0].NUMANodes != 1 {
		t.Errorf("best TP-4 set %s, want {0,1,2,3} host-bridge on one NUMA node", tp4[0])
	}
	if !slices.Equal(tp4[1].GPUs, []int{4, 5, 6, 7}) || tp4[1].Worst != gpu.LinkNUMANode {
		t.Errorf("second TP-4 set %s, want {4,5,6,7} numa-node", tp4[1])
	}
	if tp8 := gpu.TPSets(topo, 8, nil); len(tp8) != 1 || tp8[0].Worst != gpu.LinkCrossSocket || tp8[0].NUMANodes != 2 {
		t.Errorf("TP-8 %v", tp8)
	}
	// Only GPUs 1, 2, 4, 5 free: the bridged pair wins.
	if got := gpu.TPSets(topo, 2, []int{5, 1, 4, 2}); !slices.Equal(got[0].GPUs, []int{4, 5}) {
		t.Errorf("best free TP-2 set %s", got[0])
	}
}

func TestTPSetsOnSXMNodeStayOnOneNUMANode(t *testing.T) {
	_, src := openFake(t, "a800-sxm-8")
	topo, _ := src.Topology(context.Background())
	tp4 := gpu.TPSets(topo, 4, nil)
	if len(tp4) != 70 {
		t.Fatalf("%d TP-4 sets", len(tp4))
	}
	if !slices.Equal(tp4[0].GPUs, []int{0, 1, 2, 3}) || !slices.Equal(tp4[1].GPUs, []int{4, 5, 6, 7}) || tp4[2].NUMANodes != 2 {
		t.Errorf("TP-4 ranking %s, %s, %s", tp4[0], tp4[1], tp4[2])
	}
	for _, s := range tp4 {
		if s.Worst != gpu.LinkNVLink || s.MinNVLinks != 8 {
			t.Errorf("set %s on NVSwitch", s)
		}
	}
}

func TestSampleFollowsScriptedTimeline(t *testing.T) {
	f, src := openFake(t, "h100-sxm-4")
	f.SetTimeline(2,
		Reading{GPUUtil: 10, MemUtil: 5, SMActivity: 3.5, PowerMilliwatts: 120_500, EnergyMillijoule: 1000, TemperatureC: 40, SMClockMHz: 1755, Throttle: 0},
		Reading{GPUUtil: 97, MemUtil: 60, SMActivity: 71.25, PowerMilliwatts: 650_000, EnergyMillijoule: 651_000, TemperatureC: 70, SMClockMHz: 1980, Throttle: 0x4},
	)
	f.SetProcesses(2, FakeProcess{PID: 900, MemoryBytes: 70 << 30, Model: "m", Replica: "0"})
	f.SetFree(2, 8<<30)
	ctx := context.Background()
	first, err := src.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second, _ := src.Sample(ctx)
	third, _ := src.Sample(ctx)
	d := first[2]
	if *d.GPUUtilPercent != 10 || *d.MemUtilPercent != 5 || *d.PowerWatts != 120.5 || *d.EnergyMillijoules != 1000 ||
		*d.TemperatureC != 40 || *d.SMClockMHz != 1755 || *d.ThrottleReasons != 0 || *d.MemFreeBytes != 8<<30 {
		t.Errorf("first sample %+v", d)
	}
	if d.SMActivityPercent != nil {
		t.Errorf("SM activity on the first GPM sample: %v", *d.SMActivityPercent)
	}
	d = second[2]
	if *d.GPUUtilPercent != 97 || *d.PowerWatts != 650 || *d.EnergyMillijoules != 651_000 || *d.ThrottleReasons != 0x4 {
		t.Errorf("second sample %+v", d)
	}
	if d.SMActivityPercent == nil || *d.SMActivityPercent != 71.25 {
		t.Errorf("second SM activity %v, want 71.25", d.SMActivityPercent)
	}
	if *third[2].GPUUtilPercent != 97 || *third[2].EnergyMillijoules != 651_000 {
		t.Errorf("timeline did not hold its last reading: %+v", third[2])
	}
	if len(d.Processes) != 1 || *d.Processes[0].GPUMemoryBytes != 70<<30 || *d.Processes[0].Model != "m" {
		t.Errorf("processes in sample %+v", d.Processes)
	}
	if *first[2].UUID == *first[1].UUID {
		t.Error("samples carry the same UUID for two GPUs")
	}
}

func TestSMActivityIsNullWithoutGPM(t *testing.T) {
	_, src := openFake(t, "a800-sxm-8")
	for range 3 {
		s, err := src.Sample(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if s[0].SMActivityPercent != nil {
			t.Fatalf("A800 reports SM activity %v; it has no GPM", *s[0].SMActivityPercent)
		}
		if s[0].GPUUtilPercent == nil || s[0].PowerWatts == nil || s[0].EnergyMillijoules == nil {
			t.Fatalf("missing telemetry %+v", s[0])
		}
	}
}

func TestDefaultTimelineEnergyMatchesPower(t *testing.T) {
	f, err := NewFake("a800-pcie-8")
	if err != nil {
		t.Fatal(err)
	}
	tl := f.defaultTimeline(3)
	for s := 1; s < 130; s++ {
		prev, cur := tl(s-1), tl(s)
		if cur.EnergyMillijoule-prev.EnergyMillijoule != uint64(prev.PowerMilliwatts) {
			t.Fatalf("step %d: energy grew %d mJ, power was %d mW for 1 s", s,
				cur.EnergyMillijoule-prev.EnergyMillijoule, prev.PowerMilliwatts)
		}
		if cur.GPUUtil > 100 || cur.PowerMilliwatts < 45_000 || cur.PowerMilliwatts > 300_000 {
			t.Fatalf("step %d reading out of range: %+v", s, cur)
		}
	}
}

func TestOpenSpecs(t *testing.T) {
	src, err := openSpec("fake:h200-1")
	if err != nil {
		t.Fatal(err)
	}
	inv, _ := src.Inventory(context.Background())
	src.Close()
	if len(inv.GPUs) != 1 || inv.Node != "h200-1" {
		t.Errorf("fake:h200-1 inventory %+v", inv)
	}
	if _, err := NewFake("dgx-9"); err == nil || err.Error() != gpu.UnknownFakeNode("dgx-9").Error() {
		t.Errorf("NewFake(dgx-9) = %v; want the one wording of an unknown fake node", err)
	}
	for _, bad := range []string{"fake:dgx-9", "fake:", "cuda", "fake:A800-SXM-8"} {
		_, err := openSpec(bad)
		if err == nil {
			t.Errorf("Open(%q) succeeded", bad)
			continue
		}
		for _, n := range gpu.FakeNodeNames() {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("Open(%q) error %q does not list %s", bad, err, n)
			}
		}
	}
}

// TestNoDriverMachine runs against this machine's real NVML loader. On a
// machine without the NVIDIA driver (CI, laptops) it checks the clear
// no-driver state; with a driver it checks that NVML answers.
func TestNoDriverMachine(t *testing.T) {
	src, err := Load("here")
	if err == nil {
		defer src.Close()
		inv, err := src.Inventory(context.Background())
		if err != nil || len(inv.GPUs) == 0 {
			t.Fatalf("NVML loaded but inventory %+v, %v", inv, err)
		}
		t.Skipf("this machine has an NVIDIA driver and %d GPUs; no-driver path not testable here", len(inv.GPUs))
	}
	if !errors.Is(err, gpu.ErrNoDriver) {
		t.Fatalf("Load without driver: %v, want ErrNoDriver", err)
	}
	if _, err := openSpec("nvml"); !errors.Is(err, gpu.ErrNoDriver) {
		t.Errorf("Open(nvml) = %v", err)
	}
	auto, err := openSpec("auto")
	if err != nil {
		t.Fatalf("Open(auto) without driver: %v", err)
	}
	inv, err := auto.Inventory(context.Background())
	if err != nil || len(inv.GPUs) != 0 || !strings.Contains(inv.Reason, "no NVIDIA driver") {
		t.Errorf("auto inventory %+v, %v", inv, err)
	}
	var buf bytes.Buffer
	topo, _ := auto.Topology(context.Background())
	gpu.WriteInventoryJSON(&buf, inv, topo)
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["gpus"] == nil || len(got["gpus"].([]any)) != 0 || got["reason"] != inv.Reason {
		t.Errorf("no-driver JSON %s", buf.String())
	}
}

// TestFailedCallsAreNull breaks some NVML calls on a fake the way old
// drivers or unsupported boards do: their fields must be nil, not zero.
func TestFailedCallsAreNull(t *testing.T) {
	f, err := NewFake("a800-sxm-8")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.srv.Devices {
		dev := d.(*server.Device)
		dev.GetPowerUsageFunc = func() (uint32, nv.Return) { return 0, nv.ERROR_NOT_SUPPORTED }
		dev.GetNumaNodeIdFunc = func() (int, nv.Return) { return 0, nv.ERROR_FUNCTION_NOT_FOUND }
		dev.GetMigModeFunc = func() (int, int, nv.Return) { return 0, 0, nv.ERROR_NOT_SUPPORTED }
		dev.GetNvLinkRemoteDeviceTypeFunc = func(int) (nv.IntNvLinkDeviceType, nv.Return) {
			return 0, nv.ERROR_FUNCTION_NOT_FOUND
		}
		dev.GetComputeRunningProcessesFunc = func() ([]nv.ProcessInfo, nv.Return) {
			return []nv.ProcessInfo{{Pid: 77, UsedGpuMemory: valueNotAvailable}}, nv.SUCCESS
		}
	}
	src := f.Source()
	defer src.Close()
	ctx := context.Background()
	inv, _ := src.Inventory(ctx)
	g := inv.GPUs[0]
	if g.NUMANode != nil || g.MIGEnabled != nil || g.Name == nil {
		t.Errorf("NUMA %v MIG %v name %v", g.NUMANode, g.MIGEnabled, g.Name)
	}
	if len(g.Processes) != 1 || g.Processes[0].GPUMemoryBytes != nil {
		t.Errorf("process memory NVML could not see: %+v", g.Processes)
	}
	s, _ := src.Sample(ctx)
	if s[0].PowerWatts != nil || s[0].EnergyMillijoules == nil {
		t.Errorf("power %v energy %v", s[0].PowerWatts, s[0].EnergyMillijoules)
	}
	topo, _ := src.Topology(ctx)
	if l := topo.Between(0, 5); l.Class != gpu.LinkNVLink || l.NVLinks != 0 {
		t.Errorf("NVLink pair whose lanes cannot be attributed: %+v", l)
	}
	if sets := gpu.TPSets(topo, 8, nil); sets[0].NUMANodes != 8 {
		t.Errorf("unknown NUMA nodes must each count: %v", sets[0])
	}
	var buf bytes.Buffer
	gpu.WriteTopologyMatrix(&buf, topo)
	if !strings.Contains(buf.String(), "NV?") || !strings.Contains(buf.String(), "N/A") {
		t.Errorf("matrix:\n%s", buf.String())
	}
}
