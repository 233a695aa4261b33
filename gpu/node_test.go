package gpu

import (
	"strings"
	"testing"
)

// TestParseNodeSpec reads every form a node is written in, and back.
func TestParseNodeSpec(t *testing.T) {
	for in, want := range map[string]NodeSpec{
		"":                {Kind: NodeAuto},
		"auto":            {Kind: NodeAuto},
		"nvml":            {Kind: NodeNVML},
		"fake:a800-sxm-8": {Kind: NodeFake, Fake: FakeA800SXM8},
		"fake:h200-1":     FakeNode(FakeH200x1),
	} {
		got, err := ParseNodeSpec(in)
		if err != nil || got != want {
			t.Errorf("ParseNodeSpec(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back := got.String(); in != "" && back != in {
			t.Errorf("ParseNodeSpec(%q).String() = %q", in, back)
		}
	}
	for _, name := range FakeNodeNames() {
		if s, err := ParseNodeSpec("fake:" + name); err != nil || !s.IsFake() || s.Fake != name {
			t.Errorf("fake node %s: %+v, %v", name, s, err)
		}
	}
}

// TestParseNodeSpecRefuses names the bad spec and lists every choice, in
// one wording for a fake node npcorch does not have and one for a spec
// that is no node at all.
func TestParseNodeSpecRefuses(t *testing.T) {
	for in, want := range map[string]string{
		"fake:a800-pcie8": `"fake:a800-pcie8" is not a fake node; use one of fake:a800-sxm-8, fake:a800-pcie-8, fake:h100-sxm-4, fake:h200-1, or auto (or nvml) for this machine's GPUs`,
		"fake:":           `"fake:" is not a fake node; use one of fake:a800-sxm-8`,
		"a800-sxm-8":      `"a800-sxm-8" is not a node; use auto, nvml or fake:NAME (fake:a800-sxm-8, fake:a800-pcie-8, fake:h100-sxm-4, fake:h200-1)`,
		"NVML":            `"NVML" is not a node; use auto, nvml or fake:NAME`,
	} {
		_, err := ParseNodeSpec(in)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("ParseNodeSpec(%q) = %v; want an error starting %q", in, err, want)
		}
	}
}

func FuzzParseNodeSpec(f *testing.F) {
	for _, s := range []string{"auto", "nvml", "fake:h100-sxm-4", "fake:", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNodeSpec(s)
		if err != nil {
			return
		}
		if again, err := ParseNodeSpec(n.String()); err != nil || again != n {
			t.Fatalf("%q parses to %+v, whose String %q parses to %+v, %v", s, n, n.String(), again, err)
		}
	})
}
