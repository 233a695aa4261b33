//go:build cgo

package nvml

import (
	"fmt"

	nv "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/npcorch/npcorch/gpu"
)

// Load initialises the NVIDIA driver's NVML library (libnvidia-ml.so.1,
// opened at run time) and returns this machine's GPUs, named node. On a
// machine without the driver it returns an error matching gpu.ErrNoDriver.
func Load(node string) (gpu.Source, error) {
	lib := nv.New()
	switch ret := lib.Init(); ret {
	case nv.SUCCESS:
	case nv.ERROR_LIBRARY_NOT_FOUND:
		// How to choose a fake node instead is the caller's to say: a
		// command has --node, a campaign file has node:.
		return nil, fmt.Errorf("%w; install the NVIDIA driver", gpu.ErrNoDriver)
	case nv.ERROR_DRIVER_NOT_LOADED:
		return nil, fmt.Errorf("%w: the kernel module is not loaded (NVML: %v); check nvidia-smi", gpu.ErrNoDriver, ret)
	default:
		return nil, fmt.Errorf("starting NVML: %v; check the driver with nvidia-smi", ret)
	}
	src, err := newSource(lib, Options{Node: node})
	if err != nil {
		lib.Shutdown()
		return nil, err
	}
	return src, nil
}
