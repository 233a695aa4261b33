package nvml

import (
	"errors"
	"os"

	"github.com/npcorch/npcorch/gpu"
)

// Open returns the GPUs the spec names:
//
//   - auto: this machine's GPUs through NVML; without a driver, or in a
//     CGO_ENABLED=0 build, a [gpu.Absent] source whose inventory is empty
//     and says why, so callers never need a special case;
//   - nvml: this machine's GPUs through NVML, or an error matching
//     [gpu.ErrNoDriver] or [gpu.ErrNVMLNotCompiled];
//   - fake:NAME: a fake node, one of [gpu.FakeNodeNames], with its default
//     timeline (a gentle load that changes every sample).
//
// The caller must Close the source.
func Open(spec gpu.NodeSpec) (gpu.Source, error) {
	host, _ := os.Hostname()
	switch spec.Kind {
	case gpu.NodeNVML:
		return Load(host)
	case gpu.NodeFake:
		f, err := NewFake(spec.Fake)
		if err != nil {
			return nil, err
		}
		return f.Source(), nil
	}
	src, err := Load(host)
	if errors.Is(err, gpu.ErrNoDriver) || errors.Is(err, gpu.ErrNVMLNotCompiled) {
		return gpu.Absent{Node: host, Reason: err.Error()}, nil
	}
	return src, err
}
