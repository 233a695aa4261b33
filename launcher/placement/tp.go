package placement

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// ValidTP returns the tensor-parallel sizes the model's shape allows on a
// node of maxGPUs GPUs, ascending: powers of two that divide the attention
// heads, the vision heads and the vocabulary, and that divide or are
// divided by the KV heads (vLLM replicates KV heads when TP exceeds them).
// Counts the registry leaves at zero are not checked. Every other power of
// two up to maxGPUs comes back as a ReasonTPShape rejection.
func ValidTP(m configs.Model, maxGPUs int) ([]int, []Rejection) {
	var valid []int
	var rej []Rejection
	for t := 1; t <= maxGPUs; t *= 2 {
		if why := tpProblem(m, t); why != "" {
			rej = append(rej, Rejection{
				Model:   m.Name,
				Reason:  ReasonTPShape,
				TP:      t,
				Message: fmt.Sprintf("%s cannot use TP %d: %s", m.Name, t, why),
			})
			continue
		}
		valid = append(valid, t)
	}
	return valid, rej
}

// tpProblem says why TP t does not fit the model's shape, or "" if it does.
func tpProblem(m configs.Model, t int) string {
	switch {
	case m.AttentionHeads > 0 && m.AttentionHeads%t != 0:
		return fmt.Sprintf("its %d attention heads are not divisible by %d", m.AttentionHeads, t)
	case m.KVHeads > 0 && m.KVHeads%t != 0 && t%m.KVHeads != 0:
		return fmt.Sprintf("its %d KV heads neither divide nor are divisible by %d", m.KVHeads, t)
	case m.VisionHeads > 0 && m.VisionHeads%t != 0:
		return fmt.Sprintf("its vision tower's %d heads are not divisible by %d", m.VisionHeads, t)
	case m.VocabSize > 0 && m.VocabSize%t != 0:
		return fmt.Sprintf("its vocabulary of %d tokens is not divisible by %d", m.VocabSize, t)
	}
	return ""
}

// sizesList writes TP sizes as "1, 2, 4".
func sizesList(tps []int) string {
	if len(tps) == 0 {
		return "none"
	}
	s := make([]string, len(tps))
	for i, t := range tps {
		s[i] = strconv.Itoa(t)
	}
	return strings.Join(s, ", ")
}
