package placement

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// GiB formats a byte count in GiB as people write it: "72 GiB", "40.5 GiB".
func GiB(b uint64) string {
	v := float64(b) / float64(gib)
	if r := math.Round(v); math.Abs(v-r) < 0.05 {
		return strconv.FormatFloat(r, 'f', 0, 64) + " GiB"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " GiB"
}

// fmtFloat writes a ratio such as a utilization briefly: 0.9, 0.45.
func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }

// GPUList names GPUs in prose: "GPU 3", "GPUs 3 and 5", "GPUs 1, 3 and 5".
func GPUList(idx []int) string {
	switch len(idx) {
	case 0:
		return "no GPU"
	case 1:
		return fmt.Sprintf("GPU %d", idx[0])
	}
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = strconv.Itoa(x)
	}
	return "GPUs " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// freeSummary says how much free memory the given GPUs have, grouping GPUs
// with the same amount: "GPUs 3 and 5 have 40 GiB free; GPU 6 has 12 GiB free".
func freeSummary(gpus []GPU) string {
	var order []string
	byAmount := map[string][]int{}
	for _, g := range gpus {
		a := GiB(g.MemFree)
		if _, ok := byAmount[a]; !ok {
			order = append(order, a)
		}
		byAmount[a] = append(byAmount[a], g.Index)
	}
	parts := make([]string, len(order))
	for i, a := range order {
		verb := "have"
		if len(byAmount[a]) == 1 {
			verb = "has"
		}
		parts[i] = fmt.Sprintf("%s %s %s free", GPUList(byAmount[a]), verb, a)
	}
	return strings.Join(parts, "; ")
}
