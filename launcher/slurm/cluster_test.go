package slurm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/placement"
)

// nodesOut is `scontrol show node -d -o` of a small cluster: an idle
// 4-GPU node, a mixed one with one GPU taken, a drained one, a CPU node,
// and a typed-GRES node in another partition.
const nodesOut = `NodeName=gpu01 Arch=x86_64 CoresPerSocket=32 CPUAlloc=0 Gres=gpu:4 GresDrain=N/A GresUsed=gpu:0(IDX:N/A) NodeAddr=10.0.0.11 NodeHostName=gpu01 Version=22.05.8 OS=Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) RealMemory=512000 State=IDLE ThreadsPerCore=1 Partitions=gpu,debug ActiveFeatures=a800,nvlink AvailableFeatures=a800,nvlink
NodeName=gpu02 Arch=x86_64 Gres=gpu:4(S:0-1) GresUsed=gpu:1(IDX:2) NodeAddr=10.0.0.12 State=MIXED Partitions=gpu ActiveFeatures=a800,nvlink
NodeName=gpu03 Gres=gpu:8 GresUsed=gpu:0(IDX:N/A) NodeAddr=10.0.0.13 State=IDLE+DRAIN Reason=bad fan [root@2026-01-01T00:00:00] Partitions=gpu ActiveFeatures=a800
NodeName=cpu01 Gres=(null) GresUsed= NodeAddr=10.0.0.21 State=IDLE Partitions=gpu
NodeName=h100a Gres=gpu:h100:8,shard:16 GresUsed=gpu:h100:2(IDX:0-1),shard:0 NodeAddr=h100a.cluster State=MIXED Partitions=big ActiveFeatures=h100
`

func TestParseNodesReadsGRESAddressesAndStates(t *testing.T) {
	nodes, err := ParseNodes([]byte(nodesOut), "gpu")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Node{}
	for _, n := range nodes {
		got[n.Name] = n
	}
	want := map[string]struct {
		addr        string
		total, used int
		usable      bool
	}{
		"gpu01": {"10.0.0.11", 4, 0, true},
		"gpu02": {"10.0.0.12", 4, 1, true},
		"gpu03": {"10.0.0.13", 8, 0, false},
		"cpu01": {"10.0.0.21", 0, 0, true},
		"h100a": {"h100a.cluster", 8, 2, true},
	}
	for name, w := range want {
		n, ok := got[name]
		if !ok {
			t.Fatalf("node %s missing from %v", name, nodes)
		}
		ok, why := n.Usable()
		if n.Addr != w.addr || n.GPUs != w.total || n.GPUsUsed != w.used || ok != w.usable {
			t.Errorf("%s: addr %s gpus %d used %d usable %v (%s); want %+v", name, n.Addr, n.GPUs, n.GPUsUsed, ok, why, w)
		}
	}
	if r := got["gpu03"].Reason; r != "bad fan [root@2026-01-01T00:00:00]" {
		t.Errorf("a reason with spaces was read as %q", r)
	}
	if _, why := got["gpu03"].Usable(); !strings.Contains(why, "DRAIN") || !strings.Contains(why, "bad fan") {
		t.Errorf("the drained node's explanation %q names neither state nor reason", why)
	}
	if !slices.Equal(got["gpu01"].Partitions, []string{"gpu", "debug"}) {
		t.Errorf("partitions %v", got["gpu01"].Partitions)
	}
}

func TestGRESCount(t *testing.T) {
	for _, c := range []struct {
		list, want string
		n          int
	}{
		{"gpu:8", "gpu", 8},
		{"gpu:a100:4(S:0-1)", "gpu", 4},
		{"gpu:a100:4(S:0-1)", "gpu:a100", 4},
		{"gpu:a100:4(S:0-1)", "gpu:v100", 0},
		{"gpu:a100:2(S:0),gpu:v100:2(S:1),shard:8", "gpu", 4},
		{"gpu:a100:2(S:0),gpu:v100:3(S:1)", "gpu:v100", 3},
		{"gpu:3(IDX:0-2)", "gpu", 3},
		{"gpu:a100:0(IDX:N/A)", "gpu", 0},
		{"gpu", "gpu", 1},
		{"(null)", "gpu", 0},
		{"", "gpu", 0},
		{"mps:400,nic:2", "gpu", 0},
	} {
		n, err := GRESCount(c.list, c.want)
		if err != nil || n != c.n {
			t.Errorf("GRESCount(%q, %q) = %d, %v; want %d", c.list, c.want, n, err, c.n)
		}
	}
	if _, err := GRESCount("gpu:a100:x", "gpu"); err == nil {
		t.Error("an entry without a count was accepted")
	}
}

// fakeCmd answers Slurm's commands from canned outputs, by command name and
// first argument.
type fakeCmd map[string]string

func (f fakeCmd) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	key := name
	if len(args) > 0 {
		key += " " + args[0] + " " + args[1]
	}
	out, ok := f[key]
	if !ok {
		return nil, fmt.Errorf("%s: unexpected command %s %v", key, name, args)
	}
	return []byte(out), nil
}

func TestDiscoverKeepsUsableGPUNodesOfThePartitionAndSaysWhy(t *testing.T) {
	cmd := fakeCmd{
		"scontrol show partition": "PartitionName=debug Default=NO Nodes=gpu01\nPartitionName=gpu AllowGroups=ALL Default=YES Nodes=gpu[01-03],cpu01\n",
		"scontrol show node":      nodesOut,
	}
	c, err := Discover(context.Background(), cmd, configs.SlurmSettings{GRES: "gpu"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Partition != "gpu" {
		t.Errorf("default partition %q, want gpu", c.Partition)
	}
	var names []string
	for _, n := range c.Nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"gpu01", "gpu02"}) {
		t.Errorf("usable nodes %v, want gpu01 gpu02 (gpu03 drained, cpu01 without GPUs, h100a in another partition)", names)
	}
	skipped := strings.Join(c.Skipped, "\n")
	for _, w := range []string{"gpu03", "cpu01"} {
		if !strings.Contains(skipped, w) {
			t.Errorf("no reason given for leaving out %s: %q", w, skipped)
		}
	}

	c, err = Discover(context.Background(), cmd, configs.SlurmSettings{GRES: "gpu:h100", Partition: "big", Constraint: "h100"})
	if err != nil || len(c.Nodes) != 1 || c.Nodes[0].FreeGPUs() != 6 {
		t.Fatalf("typed GRES in partition big: %+v, %v; want h100a with 6 free", c, err)
	}
	_, err = Discover(context.Background(), cmd, configs.SlurmSettings{GRES: "gpu", Partition: "gpu", Constraint: "h100"})
	if err == nil || !strings.Contains(err.Error(), "lacks feature h100") {
		t.Errorf("a constraint no node meets: %v", err)
	}
}

// TestPlacementNodeKeepsTPGroupsOnOneNode plans on a cluster of two 4-GPU
// nodes, one with a GPU taken: a TP-8 engine cannot be placed at all, and
// every TP-2 or TP-4 group lies within one node.
func TestPlacementNodeKeepsTPGroupsOnOneNode(t *testing.T) {
	nodes, err := ParseNodes([]byte(nodesOut), "gpu")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Partition: "gpu", Nodes: nodes[1:3]} // gpu01, gpu02 (sorted: cpu01, gpu01, gpu02, gpu03, h100a)
	if c.Nodes[0].Name != "gpu01" || c.Nodes[1].Name != "gpu02" {
		t.Fatalf("nodes %v", c.Nodes)
	}
	s := configs.SlurmSettings{GRES: "gpu", GPUMemoryGiB: 80, GPUSpeed: 1}
	pn := c.PlacementNode(s)
	if len(pn.GPUs) != 8 {
		t.Fatalf("%d GPU slots, want 8", len(pn.GPUs))
	}
	free := 0
	for _, g := range pn.GPUs {
		if g.MemFree > 0 {
			free++
		}
	}
	if free != 7 {
		t.Errorf("%d free slots, want 7 (one GPU of gpu02 is taken)", free)
	}
	nodeOf := func(i int) string {
		n, ok := SlotNode(pn.GPUs[i].UUID)
		if !ok {
			t.Fatalf("slot %q names no node", pn.GPUs[i].UUID)
		}
		return n
	}
	for _, tp := range []int{2, 4, 8} {
		m := configs.Model{Name: fmt.Sprintf("m-tp%d", tp), ParamsB: 8, Engine: configs.Engine{TensorParallel: tp}}
		res := placement.Evaluate(m, pn, placement.Constraints{})
		if tp == 8 {
			if len(res.Options) != 0 {
				t.Errorf("TP 8 over two 4-GPU nodes was placed: %v", res.Options)
			}
			continue
		}
		if len(res.Options) == 0 {
			t.Fatalf("TP %d found no placement: %v", tp, res.Rejections)
		}
		for _, p := range res.Options {
			for _, g := range p.Groups {
				for _, i := range g.GPUs[1:] {
					if nodeOf(i) != nodeOf(g.GPUs[0]) {
						t.Errorf("TP %d group %v spans nodes %s and %s", tp, g.GPUs, nodeOf(g.GPUs[0]), nodeOf(i))
					}
				}
			}
		}
		best, _ := res.Best()
		if want := map[int]int{2: 3, 4: 1}[tp]; best.Replicas != want {
			t.Errorf("TP %d: best placement %v has %d replicas, want %d (7 free GPUs, groups within a node)", tp, best, best.Replicas, want)
		}
	}
}

func TestSlotNode(t *testing.T) {
	for uuid, want := range map[string]string{"slurm:gpu01:3": "gpu01", "slurm:a:b:0": "a:b", "GPU-1234": "", "slurm:x": ""} {
		got, ok := SlotNode(uuid)
		if got != want || ok != (want != "") {
			t.Errorf("SlotNode(%q) = %q, %v; want %q", uuid, got, ok, want)
		}
	}
}
