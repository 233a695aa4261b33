package placement

import (
	"math"

	"github.com/npcorch/npcorch/configs"
)

// Throughput-model constants; doc.go explains them.
const (
	smallModelB       = 12   // dense models below this many billion parameters scale worse with TP
	smallModelPenalty = 0.10 // efficiency lost per TP doubling by small models
	fullBatchKVShare  = 0.25 // share of the per-GPU budget the KV cache needs for full batching
)

// perDoubling returns the efficiency a TP group keeps each time its size
// doubles, by its worst link.
func perDoubling(m configs.Model, link LinkClass) float64 {
	d := [...]float64{
		LinkCrossSocket: 0.55,
		LinkSameNUMA:    0.65,
		LinkHostBridge:  0.70,
		LinkPCIeSwitch:  0.75,
		LinkNVLink:      0.85,
	}[max(LinkCrossSocket, min(link, LinkNVLink))]
	if !m.MoE && m.ParamsB > 0 && m.ParamsB < smallModelB {
		d -= smallModelPenalty
	}
	return d
}

// kvFactor is 1 when the per-GPU budget leaves at least a quarter for the
// KV cache after the model's footprint, and falls linearly to 0 as the room
// vanishes.
func kvFactor(footprint, budget uint64) float64 {
	if budget == 0 || footprint >= budget {
		return 0
	}
	room := float64(budget-footprint) / float64(budget)
	return math.Min(1, room/fullBatchKVShare)
}

// GroupThroughput estimates one replica's throughput in A800-equivalents:
// speed × t × d(link)^log2(t) × kv, where budget is the smallest per-GPU
// budget of the group.
func GroupThroughput(n Node, m configs.Model, t int, link LinkClass, budget uint64) float64 {
	if t < 1 {
		return 0
	}
	d := perDoubling(m, link)
	eff := math.Pow(d, math.Log2(float64(t)))
	return n.speed() * float64(t) * eff * kvFactor(Footprint(m, t), budget)
}
