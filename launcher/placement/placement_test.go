package placement

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/gpu"
)

// Fixtures shaped like registry entries (heads and sizes from config.json).
func lingshu7B() configs.Model {
	return configs.Model{Name: "Lingshu-7B", ParamsB: 8.3, WeightBytes: 16_600_000_000,
		AttentionHeads: 28, KVHeads: 4, VisionHeads: 16, VocabSize: 152064, Engine: configs.Engine{Kind: "vllm"}}
}

func qwen27B() configs.Model {
	return configs.Model{Name: "Qwen3.5-27B", ParamsB: 27.8, WeightBytes: 55_600_000_000,
		AttentionHeads: 24, KVHeads: 4, VisionHeads: 16, VocabSize: 248320, Engine: configs.Engine{Kind: "vllm"}}
}

func internVL38B() configs.Model {
	return configs.Model{Name: "InternVL3.5-38B", ParamsB: 38.4, WeightBytes: 76_800_000_000,
		AttentionHeads: 64, KVHeads: 8, VisionHeads: 32, VocabSize: 151936, Engine: configs.Engine{Kind: "vllm"}}
}

func messages(rej []Rejection) []string {
	out := make([]string, len(rej))
	for i, r := range rej {
		out[i] = r.Message
	}
	return out
}

func TestValidTP(t *testing.T) {
	cases := []struct {
		name  string
		m     configs.Model
		valid []int
		msgs  []string
	}{
		{"28 heads", lingshu7B(), []int{1, 2, 4},
			[]string{"Lingshu-7B cannot use TP 8: its 28 attention heads are not divisible by 8"}},
		{"KV heads replicated when TP exceeds them",
			configs.Model{Name: "m", AttentionHeads: 16, KVHeads: 2}, []int{1, 2, 4, 8}, nil},
		{"KV heads neither divide nor divisible",
			configs.Model{Name: "m", AttentionHeads: 24, KVHeads: 6}, []int{1, 2},
			[]string{"m cannot use TP 4: its 6 KV heads neither divide nor are divisible by 4",
				"m cannot use TP 8: its 6 KV heads neither divide nor are divisible by 8"}},
		{"vision heads", configs.Model{Name: "InternViT", AttentionHeads: 64, VisionHeads: 25}, []int{1},
			[]string{"InternViT cannot use TP 2: its vision tower's 25 heads are not divisible by 2",
				"InternViT cannot use TP 4: its vision tower's 25 heads are not divisible by 4",
				"InternViT cannot use TP 8: its vision tower's 25 heads are not divisible by 8"}},
		{"vocabulary", configs.Model{Name: "v", AttentionHeads: 64, VocabSize: 151674}, []int{1, 2},
			[]string{"v cannot use TP 4: its vocabulary of 151674 tokens is not divisible by 4",
				"v cannot use TP 8: its vocabulary of 151674 tokens is not divisible by 8"}},
		{"unknown shape allows every size", configs.Model{Name: "sim"}, []int{1, 2, 4, 8}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			valid, rej := ValidTP(c.m, 8)
			if !reflect.DeepEqual(valid, c.valid) {
				t.Errorf("valid = %v, want %v", valid, c.valid)
			}
			if got := messages(rej); !reflect.DeepEqual(got, c.msgs) && !(len(got) == 0 && len(c.msgs) == 0) {
				t.Errorf("rejections:\n got %q\nwant %q", got, c.msgs)
			}
			for _, r := range rej {
				if r.Reason != ReasonTPShape || r.Model != c.m.Name {
					t.Errorf("rejection %+v: want reason %s for %s", r, ReasonTPShape, c.m.Name)
				}
			}
		})
	}
}

// TestTextModelsOfTheRegistry: the text-only models of models.yaml get
// the TP sizes their heads, KV heads and vocabulary allow on an 8-GPU
// node, and the smallest TP whose memory fits an A800 at utilization 0.9
// (weights × 1.2 + 2 GiB per group).
func TestTextModelsOfTheRegistry(t *testing.T) {
	reg, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		valid []int
		minTP int
	}{
		"HuatuoGPT-o1-72B": {[]int{1, 2, 4, 8}, 4}, // 64 heads, 8 KV, 152,064; 145 GB
		"HuatuoGPT-o1-7B":  {[]int{1, 2, 4}, 1},    // 28 heads
		"Baichuan-M2-32B":  {[]int{1, 2, 4, 8}, 2}, // 40 heads, 8 KV; 65.5 GB
		"Fleming-R1-32B":   {[]int{1, 2, 4, 8}, 2}, // 64 heads, 8 KV, 151,936
		"Fleming-R1-7B":    {[]int{1, 2, 4}, 1},    // 28 heads
		"Qwen3-30B-A3B":    {[]int{1, 2, 4, 8}, 1}, // 32 heads, 4 KV (replicated at TP 8)
		"GPT-OSS-20B":      {[]int{1, 2, 4, 8}, 1}, // 64 heads, 8 KV, 201,088; 13.8 GB MXFP4
		"GPT-OSS-120B":     {[]int{1, 2, 4, 8}, 2}, // 65.3 GB MXFP4: 80.5 GB estimated > 77.3
		// CliniCARE-Bench's open-weight agents (estimates, "verify"): 0 =
		// larger than one A800 node (TestLargerThanNodeSaysSoInWords).
		"DeepSeek-V4-Pro":   {[]int{1, 2, 4, 8}, 0}, // 865 GB
		"DeepSeek-V4-Flash": {[]int{1, 2, 4, 8}, 4}, // 160 GB: 194 GB / 4 = 48.5
		"GLM-5.2":           {[]int{1, 2, 4, 8}, 0}, // 1.49 TB bf16
		"Qwen-3.7-Plus":     {[]int{1, 2, 4, 8}, 0}, // 794 GB bf16
		"MiniMax-M3":        {[]int{1, 2, 4, 8}, 4}, // 230 GB FP8: 278 GB / 4 = 69.5
		"Kimi-K2.7-Code":    {[]int{1, 2, 4, 8}, 0}, // 594 GB INT4: 715 GB / 8 = 89.4
	}
	seen := 0
	for _, name := range reg.Names() {
		m, _ := reg.Get(name)
		if !m.TextOnly || m.Engine.Kind == configs.EngineExternal {
			continue
		}
		seen++
		w, ok := want[name]
		if !ok {
			t.Errorf("text-only model %s has no expectation here; add one", name)
			continue
		}
		valid, rej := ValidTP(m, 8)
		if !reflect.DeepEqual(valid, w.valid) {
			t.Errorf("%s: valid TP %v, want %v (%q)", name, valid, w.valid, messages(rej))
		}
		res := Evaluate(m, A800SXM8(), Constraints{})
		minTP := 0
		for _, p := range res.Options {
			if minTP == 0 || p.TP < minTP {
				minTP = p.TP
			}
		}
		if minTP != w.minTP {
			t.Errorf("%s: smallest TP that fits an A800 %d, want %d (%q)", name, minTP, w.minTP, messages(res.Rejections))
		}
	}
	if seen != len(want) {
		t.Errorf("%d local text-only models in the registry, want %d", seen, len(want))
	}
}

func TestEvaluateSkipsInvalidTP(t *testing.T) {
	res := Evaluate(lingshu7B(), A800SXM8(), Constraints{})
	for _, p := range res.Options {
		if p.TP == 8 {
			t.Fatalf("option %v uses TP 8, which 28 heads forbid", p)
		}
	}
}

func TestMemoryRejections(t *testing.T) {
	t.Run("too big for one GPU", func(t *testing.T) {
		res := Evaluate(internVL38B(), A800SXM8(), Constraints{})
		want := "InternVL3.5-38B at TP 1 needs 87.8 GiB per GPU (71.5 GiB of weights × 1.2 + 2 GiB), more than the 72 GiB that utilization 0.9 of 80 GiB allows"
		if !slices.Contains(messages(res.Rejections), want) {
			t.Fatalf("rejections %q\nlack %q", messages(res.Rejections), want)
		}
		for _, p := range res.Options {
			if p.TP == 1 {
				t.Errorf("option %v at TP 1 should be impossible", p)
			}
		}
	})
	t.Run("free memory below utilization × total", func(t *testing.T) {
		n := A800SXM8()
		n.GPUs[3].MemFree = 40 * gib
		n.GPUs[5].MemFree = 40 * gib
		res := Evaluate(internVL38B(), n, Constraints{Exclude: []int{0, 1, 2, 4, 6, 7}})
		want := "InternVL3.5-38B needs 2 GPUs with 72 GiB free at utilization 0.9; GPUs 3 and 5 have 40 GiB free"
		got := messages(res.Rejections)
		if !slices.Contains(got, want) {
			t.Fatalf("rejections %q\nlack %q", got, want)
		}
		if len(res.Options) != 0 {
			t.Errorf("options %v, want none", res.Options)
		}
	})
	t.Run("lower utilization fits", func(t *testing.T) {
		m := qwen27B()
		m.Engine.GPUMemoryUtilization = 0.45
		n := A800SXM8()
		n.GPUs[3].MemFree = 40 * gib
		n.GPUs[5].MemFree = 40 * gib
		res := Evaluate(m, n, Constraints{Exclude: []int{0, 1, 2, 4, 6, 7}})
		best, ok := res.Best()
		if !ok || best.TP != 2 || !reflect.DeepEqual(best.GPUs(), []int{3, 5}) {
			t.Fatalf("best = %v (%v), want TP2 on GPUs 3 and 5; rejections %q", best, ok, messages(res.Rejections))
		}
	})
	t.Run("mixed free amounts", func(t *testing.T) {
		n := A800SXM8()
		n.GPUs[2].MemFree = 12 * gib
		n.GPUs[6].MemFree = 40*gib + 512*mib
		res := Evaluate(lingshu7B(), n, Constraints{Exclude: []int{0, 1, 3, 4, 5, 7}})
		want := "Lingshu-7B needs 1 GPU with 72 GiB free at utilization 0.9; GPU 2 has 12 GiB free; GPU 6 has 40.5 GiB free"
		if got := messages(res.Rejections); !slices.Contains(got, want) {
			t.Fatalf("rejections %q\nlack %q", got, want)
		}
	})
	t.Run("unknown size", func(t *testing.T) {
		res := Evaluate(configs.Model{Name: "X", AttentionHeads: 8}, A800SXM8(), Constraints{})
		if len(res.Options) != 0 || len(res.Rejections) != 1 || res.Rejections[0].Reason != ReasonNoSize {
			t.Fatalf("got %+v, want one %s rejection", res, ReasonNoSize)
		}
	})
}

func TestPinned(t *testing.T) {
	t.Run("pinned TP honoured", func(t *testing.T) {
		m := lingshu7B()
		m.Engine.TensorParallel = 4
		res := Evaluate(m, A800SXM8(), Constraints{})
		for _, p := range res.Options {
			if p.TP != 4 {
				t.Fatalf("option %v ignores pinned TP 4", p)
			}
		}
		if best, _ := res.Best(); best.Replicas != 2 {
			t.Errorf("best = %v, want 2 replicas of TP 4", best)
		}
	})
	t.Run("pinned TP the heads forbid", func(t *testing.T) {
		m := lingshu7B()
		m.Engine.TensorParallel = 8
		res := Evaluate(m, A800SXM8(), Constraints{})
		want := "Lingshu-7B pins tensor_parallel 8, which its shape does not allow (its 28 attention heads are not divisible by 8); valid sizes: 1, 2, 4"
		if len(res.Options) != 0 || !slices.Contains(messages(res.Rejections), want) {
			t.Fatalf("got options %v rejections %q; want none and %q", res.Options, messages(res.Rejections), want)
		}
	})
	t.Run("pinned TP larger than the node", func(t *testing.T) {
		m := lingshu7B()
		m.Engine.TensorParallel = 8
		res := Evaluate(m, H100SXM4(), Constraints{})
		want := "Lingshu-7B pins tensor_parallel 8 but node fake:h100-sxm-4 has 4 GPUs; valid sizes here: 1, 2, 4"
		if !slices.Contains(messages(res.Rejections), want) {
			t.Fatalf("rejections %q lack %q", messages(res.Rejections), want)
		}
	})
	t.Run("pinned replicas that do not fit", func(t *testing.T) {
		m := qwen27B()
		m.Engine.TensorParallel = 2
		m.Engine.Replicas = 3
		res := Evaluate(m, H100SXM4(), Constraints{})
		want := "Qwen3.5-27B pins 3 replicas of TP 2 (6 GPUs); only 2 such groups fit on GPUs 0, 1, 2 and 3"
		if len(res.Options) != 0 || !slices.Contains(messages(res.Rejections), want) {
			t.Fatalf("got options %v rejections %q; want none and %q", res.Options, messages(res.Rejections), want)
		}
	})
	t.Run("pinned replicas honoured", func(t *testing.T) {
		m := lingshu7B()
		m.Engine.Replicas = 3
		res := Evaluate(m, A800SXM8(), Constraints{})
		for _, p := range res.Options {
			if p.Replicas != 3 {
				t.Fatalf("option %v ignores pinned 3 replicas", p)
			}
		}
		if best, _ := res.Best(); best.TP != 2 {
			t.Errorf("best = %v, want TP2×3 (6 GPUs beat 3)", best)
		}
	})
}

func groupsOf(p Placement) [][]int {
	out := make([][]int, len(p.Groups))
	for i, g := range p.Groups {
		out[i] = g.GPUs
	}
	return out
}

// tp returns the best option of exactly tp GPUs per group and r replicas.
func optionOf(t *testing.T, res Result, tp, r int) Placement {
	t.Helper()
	for _, p := range res.Options {
		if p.TP == tp && p.Replicas == r {
			return p
		}
	}
	t.Fatalf("no TP%d×%d option among %v (rejections %q)", tp, r, res.Options, messages(res.Rejections))
	return Placement{}
}

func TestTopologyPCIe(t *testing.T) {
	m := qwen27B()
	n := A800PCIe8()
	t.Run("TP2 groups are bridged pairs", func(t *testing.T) {
		p := optionOf(t, Evaluate(m, n, Constraints{}), 2, 4)
		want := [][]int{{0, 1}, {2, 3}, {4, 5}, {6, 7}}
		if !reflect.DeepEqual(groupsOf(p), want) {
			t.Fatalf("groups %v, want %v", groupsOf(p), want)
		}
		for _, g := range p.Groups {
			if g.Link != LinkNVLink || !g.SameNUMA {
				t.Errorf("group %v: link %s same NUMA %v", g.GPUs, g.Link, g.SameNUMA)
			}
		}
	})
	t.Run("busy partners: the free bridged pair first, then same socket, never across", func(t *testing.T) {
		res := Evaluate(m, n, Constraints{Exclude: []int{1, 3}})
		p := optionOf(t, res, 2, 3)
		want := [][]int{{4, 5}, {6, 7}, {0, 2}}
		if !reflect.DeepEqual(groupsOf(p), want) {
			t.Fatalf("groups %v, want %v", groupsOf(p), want)
		}
		if p.Groups[2].Link != LinkSameNUMA {
			t.Errorf("group {0,2}: link %s, want %s", p.Groups[2].Link, LinkSameNUMA)
		}
	})
	t.Run("no bridged pair free: same socket beats cross-socket", func(t *testing.T) {
		p := optionOf(t, Evaluate(m, n, Constraints{Exclude: []int{1, 3, 5, 7}}), 2, 1)
		if got := p.GPUs(); !reflect.DeepEqual(got, []int{0, 2}) {
			t.Fatalf("GPUs %v, want [0 2]", got)
		}
	})
	t.Run("only cross-socket left", func(t *testing.T) {
		p := optionOf(t, Evaluate(m, n, Constraints{Exclude: []int{1, 2, 3, 5, 6, 7}}), 2, 1)
		if p.Groups[0].Link != LinkCrossSocket || p.Throughput >= optionOf(t, Evaluate(m, n, Constraints{}), 2, 1).Throughput {
			t.Fatalf("group %+v: want a cross-socket group slower than a bridged pair", p.Groups[0])
		}
	})
	t.Run("lone TP1 engine keeps a bridged pair whole", func(t *testing.T) {
		p := optionOf(t, Evaluate(lingshu7B(), n, Constraints{Exclude: []int{1, 3, 6, 7}}), 1, 1)
		if got := p.GPUs(); !reflect.DeepEqual(got, []int{0}) {
			t.Fatalf("TP1 on %v; want GPU 0 (GPU 2 would do too) so that 4-5 stays free", got)
		}
		p = optionOf(t, Evaluate(lingshu7B(), n, Constraints{Exclude: []int{0, 1, 2, 3, 6}}), 1, 1)
		if got := p.GPUs(); !reflect.DeepEqual(got, []int{7}) {
			t.Fatalf("TP1 on %v; want GPU 7, whose partner is busy", got)
		}
	})
	t.Run("TP4 stays on one socket", func(t *testing.T) {
		p := optionOf(t, Evaluate(lingshu7B(), n, Constraints{}), 4, 2)
		if want := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}; !reflect.DeepEqual(groupsOf(p), want) {
			t.Fatalf("groups %v, want %v", groupsOf(p), want)
		}
	})
}

func TestTopologySXMPrefersOneNUMANode(t *testing.T) {
	p := optionOf(t, Evaluate(lingshu7B(), A800SXM8(), Constraints{Exclude: []int{0}}), 4, 1)
	if got := p.GPUs(); !reflect.DeepEqual(got, []int{4, 5, 6, 7}) {
		t.Fatalf("TP4 on %v; want 4-7, the only free NUMA node of four", got)
	}
}

func TestReplicasVersusTP(t *testing.T) {
	n := A800SXM8()
	t.Run("small model: eight TP1 replicas beat one TP8 engine", func(t *testing.T) {
		m := configs.Model{Name: "Qwen3-VL-8B", ParamsB: 8.8, WeightBytes: 17_500_000_000, AttentionHeads: 32, KVHeads: 8, VisionHeads: 16, VocabSize: 151936}
		res := Evaluate(m, n, Constraints{})
		best, _ := res.Best()
		if best.TP != 1 || best.Replicas != 8 {
			t.Fatalf("best = %v, want TP1×8", best)
		}
		tp8 := optionOf(t, res, 8, 1)
		if !(best.Throughput > 2*tp8.Throughput) {
			t.Errorf("TP1×8 %.2f vs TP8×1 %.2f: want more than twice", best.Throughput, tp8.Throughput)
		}
		single, _ := res.BestSingle()
		if single.TP != 8 {
			t.Errorf("best single engine = %v, want TP8", single)
		}
	})
	t.Run("27B fits one GPU but leaves no KV room: TP2 replicas win", func(t *testing.T) {
		res := Evaluate(qwen27B(), n, Constraints{})
		tp1 := optionOf(t, res, 1, 8)
		best, _ := res.Best()
		if best.TP != 2 || best.Replicas != 4 || best.Throughput <= tp1.Throughput {
			t.Fatalf("best = %v (%.2f); TP1×8 %.2f; want TP2×4 ahead", best, best.Throughput, tp1.Throughput)
		}
		eff, _ := res.MostEfficient()
		if eff.TP != 2 || eff.Replicas != 1 {
			t.Errorf("most efficient = %v, want one TP2 group", eff)
		}
	})
	t.Run("BestWithin respects the GPU budget", func(t *testing.T) {
		res := Evaluate(lingshu7B(), n, Constraints{})
		p, ok := res.BestWithin(3)
		if !ok || p.GPUCount() != 3 || p.TP != 1 {
			t.Fatalf("BestWithin(3) = %v, %v; want TP1×3", p, ok)
		}
	})
	t.Run("faster GPUs, more throughput", func(t *testing.T) {
		a := optionOf(t, Evaluate(lingshu7B(), A800SXM8(), Constraints{}), 1, 1)
		h := optionOf(t, Evaluate(lingshu7B(), H100SXM4(), Constraints{}), 1, 1)
		if h.Throughput != 2*a.Throughput {
			t.Errorf("H100 TP1 %.2f, A800 TP1 %.2f: want twice", h.Throughput, a.Throughput)
		}
	})
}

func TestAvoidFailedGroups(t *testing.T) {
	n := H100SXM4()
	res := Evaluate(qwen27B(), n, Constraints{Avoid: [][]int{{1, 0}}, MaxGPUs: 2})
	best, ok := res.Best()
	if !ok || reflect.DeepEqual(best.GPUs(), []int{0, 1}) {
		t.Fatalf("best = %v; the failed set 0,1 must not be offered", best)
	}
	res = Evaluate(qwen27B(), n, Constraints{Avoid: [][]int{{2, 3}}, Exclude: []int{0, 1}})
	for _, p := range res.Options {
		if p.TP == 2 {
			t.Fatalf("option %v reuses the failed set", p)
		}
	}
	want := "Qwen3.5-27B at TP 2 already failed to start on every usable set of 2 among GPUs 2 and 3"
	if !slices.Contains(messages(res.Rejections), want) {
		t.Fatalf("rejections %q lack %q", messages(res.Rejections), want)
	}
}

func TestOptionsOrder(t *testing.T) {
	res := Evaluate(lingshu7B(), A800SXM8(), Constraints{})
	for i := 1; i < len(res.Options); i++ {
		if res.Options[i].Throughput > res.Options[i-1].Throughput {
			t.Fatalf("option %d (%v, %.3f) ahead of %d (%v, %.3f)", i, res.Options[i], res.Options[i].Throughput,
				i-1, res.Options[i-1], res.Options[i-1].Throughput)
		}
	}
	again := Evaluate(lingshu7B(), A800SXM8(), Constraints{})
	if !reflect.DeepEqual(res, again) {
		t.Fatal("two evaluations of the same input differ")
	}
}

func TestNodes(t *testing.T) {
	for _, name := range gpu.FakeNodeNames() {
		n, err := FakeNode(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		b, err := json.Marshal(n)
		if err != nil || !strings.Contains(string(b), `"links":[[`) {
			t.Errorf("%s: JSON %s, %v", name, b, err)
		}
	}
	if _, err := FakeNode("dgx-9000"); err == nil || err.Error() != gpu.UnknownFakeNode("dgx-9000").Error() {
		t.Errorf("unknown node: err %v, want one listing the shapes", err)
	}
	bad := Node{Name: "n", GPUs: []GPU{{Index: 0, MemTotal: gib}, {Index: 0, MemTotal: gib}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "GPU 0 twice") {
		t.Errorf("duplicate index: %v", err)
	}
	res := Evaluate(lingshu7B(), Node{Name: "empty"}, Constraints{})
	if len(res.Rejections) != 1 || res.Rejections[0].Reason != ReasonNode {
		t.Errorf("empty node: %+v", res)
	}
	pcie := A800PCIe8()
	if pcie.Link(0, 1) != LinkNVLink || pcie.Link(0, 3) != LinkSameNUMA || pcie.Link(3, 4) != LinkCrossSocket {
		t.Error("PCIe node links are not as documented")
	}
}

func TestFormatting(t *testing.T) {
	cases := map[string]string{
		GiB(72 * gib):            "72 GiB",
		GiB(40*gib + 512*mib):    "40.5 GiB",
		GPUList([]int{3}):        "GPU 3",
		GPUList([]int{3, 5}):     "GPUs 3 and 5",
		GPUList([]int{1, 3, 5}):  "GPUs 1, 3 and 5",
		LinkNVLink.String():      "nvlink",
		LinkCrossSocket.String(): "cross-socket",
		Placement{TP: 2, Replicas: 2, Groups: []Group{{GPUs: []int{0, 1}}, {GPUs: []int{2, 3}}}}.String(): "TP2×2 on [0 1] [2 3]",
	}
	for got, want := range cases {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	var c LinkClass
	if err := c.UnmarshalText([]byte("pcie-switch")); err != nil || c != LinkPCIeSwitch {
		t.Errorf("UnmarshalText: %v %v", c, err)
	}
	if err := c.UnmarshalText([]byte("carrier-pigeon")); err == nil {
		t.Error("UnmarshalText accepted an unknown class")
	}
}

func TestGreedyGrowOnLargeNodes(t *testing.T) {
	// 32 GPUs in NVLink islands of 8: C(32,8) is too many subsets to try, so
	// groups are grown; they must still stay inside an island.
	n := Node{Name: "big", Link: func(a, b int) LinkClass {
		if a/8 == b/8 {
			return LinkNVLink
		}
		return LinkCrossSocket
	}}
	for i := range 32 {
		n.GPUs = append(n.GPUs, GPU{Index: i, MemTotal: 80 * gib, MemFree: 80 * gib, NUMA: i / 8})
	}
	m := configs.Model{Name: "m", WeightBytes: 10 << 30, AttentionHeads: 64}
	p := optionOf(t, Evaluate(m, n, Constraints{}), 8, 4)
	for _, g := range p.Groups {
		if g.Link != LinkNVLink {
			t.Fatalf("group %v spans islands", g.GPUs)
		}
	}
}

// TestFeasibilityFiltersNameTheirReason walks Evaluate's filters one by
// one: each lets a feasible input through and rules out an infeasible one
// with its own reason.
func TestFeasibilityFiltersNameTheirReason(t *testing.T) {
	n, err := FakeNode(gpu.FakeA800SXM8)
	if err != nil {
		t.Fatal(err)
	}
	full := n
	full.GPUs = slices.Clone(n.GPUs)
	for i := range full.GPUs {
		full.GPUs[i].MemFree = 1 << 30 // 1 GiB free on each
	}
	idx := func(gs []GPU) []int { return indices(gs) }
	huge := lingshu7B()
	huge.WeightBytes = 900_000_000_000
	pinned := func(tp, r int) configs.Model {
		m := lingshu7B()
		m.Engine.TensorParallel, m.Engine.Replicas = tp, r
		return m
	}
	avail := available(n, nil)
	cases := []struct {
		name       string
		ok, reject func() *Rejection
		want       Reason
	}{
		{"node", func() *Rejection { return nodeUsable(lingshu7B(), n) },
			func() *Rejection { return nodeUsable(lingshu7B(), Node{Name: "empty"}) }, ReasonNode},
		{"size", func() *Rejection { return sized(lingshu7B()) },
			func() *Rejection { return sized(configs.Model{Name: "unsized"}) }, ReasonNoSize},
		{"pinned TP beyond the node", func() *Rejection { _, r := pinnedTP(pinned(2, 0), n, []int{1, 2, 4}); return r },
			func() *Rejection { _, r := pinnedTP(pinned(16, 0), n, []int{1, 2, 4}); return r }, ReasonPinnedTP},
		{"pinned TP against the shape", func() *Rejection { _, r := pinnedTP(pinned(4, 0), n, []int{1, 2, 4}); return r },
			func() *Rejection { _, r := pinnedTP(pinned(8, 0), n, []int{1, 2, 4}); return r }, ReasonPinnedTP},
		{"memory", func() *Rejection { _, r := memoryFits(lingshu7B(), n, 1, avail, 0.9); return r },
			func() *Rejection { _, r := memoryFits(huge, n, 1, avail, 0.9); return r }, ReasonMemory},
		{"free memory", func() *Rejection { _, r := memoryFits(lingshu7B(), n, 2, avail, 0.9); return r },
			func() *Rejection { _, r := memoryFits(lingshu7B(), full, 2, available(full, nil), 0.9); return r }, ReasonFreeMemory},
		{"failed start", func() *Rejection { _, r := untriedGroups(lingshu7B(), n, 4, idx(avail), nil); return r },
			func() *Rejection {
				_, r := untriedGroups(lingshu7B(), n, 8, idx(avail), avoidSet([][]int{{7, 6, 5, 4, 3, 2, 1, 0}}))
				return r
			}, ReasonFailedStart},
		{"pinned replicas", func() *Rejection { return pinnedReplicas(pinned(2, 4), 2, 4, idx(avail)) },
			func() *Rejection { return pinnedReplicas(pinned(2, 5), 2, 4, idx(avail)) }, ReasonPinnedReplicas},
	}
	for _, c := range cases {
		if r := c.ok(); r != nil {
			t.Errorf("%s: a feasible input was rejected: %s", c.name, r.Message)
		}
		r := c.reject()
		if r == nil {
			t.Errorf("%s: an infeasible input passed", c.name)
			continue
		}
		if r.Reason != c.want || r.Model == "" || r.Message == "" {
			t.Errorf("%s: rejection %+v; want reason %s with the model and a message", c.name, *r, c.want)
		}
	}
}

// TestLargerThanNodeSaysSoInWords: a model that even all GPUs of the node
// cannot hold is rejected once, in words: how many GPUs of this kind it
// needs, and that it is larger than one node (multi-node placement is
// issue 30) — not as one memory rejection per TP size.
func TestLargerThanNodeSaysSoInWords(t *testing.T) {
	reg, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	glm, ok := reg.Get("GLM-5.2")
	if !ok {
		t.Fatal("GLM-5.2 is not in the registry")
	}
	res := Evaluate(glm, A800SXM8(), Constraints{})
	if len(res.Options) != 0 || len(res.Rejections) != 1 || res.Rejections[0].Reason != ReasonLargerThanNode {
		t.Fatalf("options %d, rejections %q; want one %s rejection", len(res.Options), messages(res.Rejections), ReasonLargerThanNode)
	}
	// 1,385.8 GiB × 1.2 + 2 GiB = 1,665 GiB over 0.9 × 80 GiB = 72 GiB per GPU: 24 GPUs.
	msg := res.Rejections[0].Message
	for _, want := range []string{"GLM-5.2 needs at least 24 GPUs of this kind", "larger than one node", "has 8 GPUs", "does not yet place one engine across several nodes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	// A model that fits at TP 8 is not ruled out by it.
	big := lingshu7B()
	big.WeightBytes = 450_000_000_000 // 542 GB / 8 = 67.7 GB per GPU
	if rej := largerThanNode(big, A800SXM8()); rej != nil {
		t.Errorf("a model that fits at TP 8 was called larger than the node: %s", rej.Message)
	}
}
