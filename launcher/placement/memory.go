package placement

import (
	"math"

	"github.com/npcorch/npcorch/configs"
)

// Memory model constants (GPUStack's estimate): weights × 1.2 + 2 GiB.
const (
	weightFactor   = 1.2
	engineOverhead = 2 * gib
	// DefaultUtilization is vLLM's --gpu-memory-utilization default.
	DefaultUtilization = 0.9
	// bytesPerParam is bf16.
	bytesPerParam = 2
)

// WeightBytes returns the model's weight size: WeightBytes, or 2 bytes per
// parameter when only ParamsB is set, or 0 when neither is.
func WeightBytes(m configs.Model) uint64 {
	switch {
	case m.WeightBytes > 0:
		return uint64(m.WeightBytes)
	case m.ParamsB > 0:
		return uint64(m.ParamsB * 1e9 * bytesPerParam)
	}
	return 0
}

// Utilization returns the model's gpu_memory_utilization, 0.9 when unset.
func Utilization(m configs.Model) float64 {
	if u := m.Engine.GPUMemoryUtilization; u > 0 && u <= 1 {
		return u
	}
	return DefaultUtilization
}

// Footprint returns the memory one GPU of a TP-t group holds for the model:
// (weights × 1.2 + 2 GiB) / t. It is 0 when the model's size is unknown.
func Footprint(m configs.Model, t int) uint64 {
	w := WeightBytes(m)
	if w == 0 || t < 1 {
		return 0
	}
	return uint64(math.Ceil((float64(w)*weightFactor + float64(engineOverhead)) / float64(t)))
}

// Budget returns the memory an engine at utilization u may claim on g.
func Budget(g GPU, u float64) uint64 { return uint64(u * float64(g.MemTotal)) }
