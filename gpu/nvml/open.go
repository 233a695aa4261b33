package nvml

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/gpu"
)

// FakeNodeNames lists the fake nodes Open accepts as "fake:NAME".
func FakeNodeNames() []string {
	return []string{"a800-sxm-8", "a800-pcie-8", "h100-sxm-4", "h200-1"}
}

// FakeNodeSpecs lists the fake nodes as a node is named, for messages:
// "fake:a800-sxm-8, fake:a800-pcie-8, …".
func FakeNodeSpecs() string {
	return "fake:" + strings.Join(FakeNodeNames(), ", fake:")
}

// Open returns the GPUs named by spec:
//
//   - "auto" (or ""): this machine's GPUs through NVML; without a driver, or
//     in a CGO_ENABLED=0 build, a [gpu.Absent] source whose inventory is empty
//     and says why, so callers never need a special case;
//   - "nvml": this machine's GPUs through NVML, or an error matching
//     [gpu.ErrNoDriver] or [gpu.ErrNVMLNotCompiled];
//   - "fake:NAME": a fake node, one of [FakeNodeNames], with its default
//     timeline (a gentle load that changes every sample).
//
// The caller must Close the source.
func Open(spec string) (gpu.Source, error) {
	host, _ := os.Hostname()
	switch {
	case spec == "" || spec == "auto":
		src, err := Load(host)
		if errors.Is(err, gpu.ErrNoDriver) || errors.Is(err, gpu.ErrNVMLNotCompiled) {
			return gpu.Absent{Node: host, Reason: err.Error()}, nil
		}
		return src, err
	case spec == "nvml":
		return Load(host)
	case strings.HasPrefix(spec, "fake:"):
		name := strings.TrimPrefix(spec, "fake:")
		if !slices.Contains(FakeNodeNames(), name) {
			return nil, fmt.Errorf("unknown fake GPU node %q: valid nodes are %s", name, FakeNodeSpecs())
		}
		f, err := NewFake(name)
		if err != nil {
			return nil, err
		}
		return f.Source(), nil
	}
	return nil, fmt.Errorf("unknown GPU node %q: use auto, nvml or fake:NAME (%s)", spec, FakeNodeSpecs())
}
