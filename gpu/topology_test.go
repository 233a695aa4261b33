package gpu_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/gpu"
)

func TestLinkClassesOrderedBestFirst(t *testing.T) {
	order := []gpu.LinkClass{gpu.LinkNVLink, gpu.LinkPCIeSwitch, gpu.LinkHostBridge, gpu.LinkNUMANode, gpu.LinkCrossSocket, gpu.LinkUnknown}
	if !slices.IsSorted(order) {
		t.Fatal("link classes are not ordered best first")
	}
	for _, c := range order {
		b, _ := c.MarshalText()
		var back gpu.LinkClass
		if err := back.UnmarshalText(b); err != nil || back != c {
			t.Errorf("%s round trip: %v %v", c, back, err)
		}
	}
	var c gpu.LinkClass
	if err := c.UnmarshalText([]byte("infiniband")); err == nil || !strings.Contains(err.Error(), "cross-socket") {
		t.Errorf("bad class error %v", err)
	}
}

// handTopology is a 4-GPU node: 0-1 NVLink, 2-3 PCIe switch, the rest
// cross-socket, with GPU 3's NUMA node unknown.
func handTopology() gpu.Topology {
	n := func(v int) *int { return &v }
	topo := gpu.Topology{GPUs: []gpu.TopologyGPU{{Index: 0, NUMANode: n(0)}, {Index: 1, NUMANode: n(0)}, {Index: 2, NUMANode: n(1)}, {Index: 3}}}
	for a := range 4 {
		for b := a + 1; b < 4; b++ {
			l := gpu.Link{A: a, B: b, Class: gpu.LinkCrossSocket}
			switch {
			case a == 0 && b == 1:
				l.Class, l.NVLinks = gpu.LinkNVLink, 4
			case a == 2 && b == 3:
				l.Class = gpu.LinkPCIeSwitch
			}
			topo.Links = append(topo.Links, l)
		}
	}
	return topo
}

func TestTPSetsRankAndEdgeCases(t *testing.T) {
	topo := handTopology()
	sets := gpu.TPSets(topo, 2, nil)
	if len(sets) != 6 || !slices.Equal(sets[0].GPUs, []int{0, 1}) || sets[0].MinNVLinks != 4 || sets[0].NUMANodes != 1 {
		t.Fatalf("TP-2 %v", sets)
	}
	if !slices.Equal(sets[1].GPUs, []int{2, 3}) || sets[1].Worst != gpu.LinkPCIeSwitch || sets[1].NUMANodes != 2 {
		t.Errorf("second %v: unknown NUMA must count as another node", sets[1])
	}
	for _, bad := range []int{0, -1, 5} {
		if got := gpu.TPSets(topo, bad, nil); got != nil {
			t.Errorf("TPSets size %d = %v", bad, got)
		}
	}
	if got := gpu.TPSets(topo, 2, []int{3, 3, 2}); len(got) != 1 || !slices.Equal(got[0].GPUs, []int{2, 3}) {
		t.Errorf("duplicates in available: %v", got)
	}
	if l := topo.Between(3, 2); l.Class != gpu.LinkPCIeSwitch || l.A != 2 {
		t.Errorf("Between(3,2) = %+v", l)
	}
	if l := topo.Between(0, 9); l.Class != gpu.LinkUnknown {
		t.Errorf("Between a missing GPU = %+v", l)
	}
}

func TestTopologyMatrixLayout(t *testing.T) {
	var buf bytes.Buffer
	if err := gpu.WriteTopologyMatrix(&buf, handTopology()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if f := strings.Fields(lines[0]); !slices.Equal(f[:4], []string{"GPU0", "GPU1", "GPU2", "GPU3"}) {
		t.Errorf("header %q", lines[0])
	}
	if f := strings.Fields(lines[1]); !slices.Equal(f[:5], []string{"GPU0", "X", "NV4", "SYS", "SYS"}) {
		t.Errorf("row 0 %q", lines[1])
	}
	if f := strings.Fields(lines[4]); !slices.Equal(f, []string{"GPU3", "SYS", "SYS", "PIX", "X", "N/A", "N/A"}) {
		t.Errorf("row 3 %q", lines[4])
	}
	if !strings.Contains(buf.String(), "Legend:") {
		t.Error("no legend")
	}
}

func TestInventoryJSONUnknownIsNull(t *testing.T) {
	inv := gpu.Inventory{Node: "n", GPUs: []gpu.GPU{{Index: 0, Name: gpu.Ptr("X"), Processes: []gpu.Process{{PID: 5}}}}}
	var buf bytes.Buffer
	if err := gpu.WriteInventoryJSON(&buf, inv, handTopology()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		DriverVersion *string          `json:"driver_version"`
		GPUs          []map[string]any `json:"gpus"`
		Topology      gpu.Topology     `json:"topology"`
		TPSets        []gpu.GPUSet     `json:"tp_sets"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	g := got.GPUs[0]
	for _, k := range []string{"uuid", "memory_total_bytes", "memory_free_bytes", "numa_node", "mig_enabled", "compute_capability"} {
		v, present := g[k]
		if !present || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, present)
		}
	}
	if p := g["processes"].([]any)[0].(map[string]any); p["gpu_memory_bytes"] != nil || p["model"] != nil {
		t.Errorf("process %v", p)
	}
	if got.Topology.Between(0, 1).Class != gpu.LinkNVLink || len(got.TPSets) == 0 || got.TPSets[0].Worst != gpu.LinkNVLink {
		t.Errorf("topology in JSON: %+v %v", got.Topology, got.TPSets)
	}
}

func TestInventoryTextAndAbsent(t *testing.T) {
	a := gpu.Absent{Node: "laptop", Reason: "no NVIDIA driver found"}
	inv, _ := a.Inventory(context.Background())
	topo, _ := a.Topology(context.Background())
	var buf bytes.Buffer
	gpu.WriteInventoryText(&buf, inv, topo)
	if got := buf.String(); got != "no GPUs on laptop: no NVIDIA driver found\n" {
		t.Errorf("absent text %q", got)
	}
	if _, err := a.Processes(context.Background(), 0); err == nil {
		t.Error("Absent has processes")
	}
	_, src := newFake(t, "h100-sxm-4")
	inv, _ = src.Inventory(context.Background())
	topo, _ = src.Topology(context.Background())
	buf.Reset()
	if err := gpu.WriteInventoryText(&buf, inv, topo); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NVIDIA H100 80GB HBM3", "0MiB / 81920MiB", "NV6", "TP", "{0,1} nvlink/1 NUMA", "{0,1,2,3} nvlink/2 NUMA"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}
