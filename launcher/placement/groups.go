package placement

import (
	"slices"
	"strconv"
	"strings"
)

// maxSubsets bounds exhaustive search over GPU subsets; beyond it groups are
// grown greedily from each GPU.
const maxSubsets = 50000

// Group is one TP group: the GPUs of one replica.
type Group struct {
	// GPUs are device indices, ascending.
	GPUs []int `json:"gpus"`
	// Link is the worst link class between two GPUs of the group.
	Link LinkClass `json:"link"`
	// SameNUMA says every GPU of the group sits on one NUMA node.
	SameNUMA bool `json:"same_numa"`
	// Throughput is the group's estimated throughput in A800-equivalents.
	Throughput float64 `json:"throughput"`
}

// Key identifies a group by its GPUs, e.g. "0,1".
func (g Group) Key() string { return groupKey(g.GPUs) }

func groupKey(gpus []int) string {
	s := make([]string, len(gpus))
	for i, x := range gpus {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// candidate is a GPU set being ranked.
type candidate struct {
	gpus     []int
	worst    LinkClass
	sameNUMA bool
	linkSum  int
	leftover int
}

// better ranks candidates: best worst-link first, then one NUMA node, then
// the sum of its pair links, then what it leaves for later groups (so a lone
// TP-1 engine does not break up an NVLink pair), then lowest indices.
func (c candidate) better(d candidate) bool {
	switch {
	case c.worst != d.worst:
		return c.worst > d.worst
	case c.sameNUMA != d.sameNUMA:
		return c.sameNUMA
	case c.linkSum != d.linkSum:
		return c.linkSum > d.linkSum
	case c.leftover != d.leftover:
		return c.leftover > d.leftover
	}
	return slices.Compare(c.gpus, d.gpus) < 0
}

// pairSum adds the link classes of every pair in gpus.
func pairSum(n Node, gpus []int) int {
	s := 0
	for i, a := range gpus {
		for _, b := range gpus[i+1:] {
			s += int(n.link(a, b))
		}
	}
	return s
}

// rank scores one GPU set drawn from pool.
func rank(n Node, numa map[int]int, gpus, pool []int) candidate {
	c := candidate{gpus: gpus, worst: LinkNVLink, sameNUMA: true}
	for i, a := range gpus {
		if numa[a] != numa[gpus[0]] || numa[a] < 0 {
			c.sameNUMA = false
		}
		for _, b := range gpus[i+1:] {
			l := n.link(a, b)
			c.linkSum += int(l)
			c.worst = min(c.worst, l)
		}
	}
	rest := make([]int, 0, len(pool))
	for _, x := range pool {
		if !slices.Contains(gpus, x) {
			rest = append(rest, x)
		}
	}
	c.leftover = pairSum(n, rest)
	return c
}

// pickGroups chooses disjoint TP-t groups from pool (ascending indices),
// best first, skipping GPU sets listed in avoid. The greedy choice takes
// the best-ranked set, removes its GPUs and repeats.
func pickGroups(n Node, pool []int, t int, avoid map[string]bool) []Group {
	numa := make(map[int]int, len(n.GPUs))
	for _, g := range n.GPUs {
		numa[g.Index] = g.NUMA
	}
	var out []Group
	pool = slices.Clone(pool)
	for len(pool) >= t {
		best, ok := bestSubset(n, numa, pool, t, avoid)
		if !ok {
			break
		}
		out = append(out, Group{GPUs: best.gpus, Link: best.worst, SameNUMA: best.sameNUMA})
		pool = slices.DeleteFunc(pool, func(x int) bool { return slices.Contains(best.gpus, x) })
	}
	return out
}

// bestSubset returns the best-ranked t-subset of pool not in avoid.
func bestSubset(n Node, numa map[int]int, pool []int, t int, avoid map[string]bool) (candidate, bool) {
	var best candidate
	found := false
	consider := func(gpus []int) {
		if len(gpus) != t || avoid[groupKey(gpus)] {
			return
		}
		c := rank(n, numa, gpus, pool)
		if c.worst < LinkCrossSocket {
			return // GPUs on separate machines never form one TP group
		}
		if !found || c.better(best) {
			best, found = c, true
		}
	}
	if binomial(len(pool), t) <= maxSubsets {
		forEachSubset(pool, t, func(s []int) { consider(slices.Clone(s)) })
	} else {
		for _, seed := range pool {
			consider(grow(n, pool, seed, t))
		}
	}
	return best, found
}

// forEachSubset calls f with every t-subset of pool in lexicographic order.
// f must not keep its argument.
func forEachSubset(pool []int, t int, f func([]int)) {
	cur := make([]int, 0, t)
	var rec func(start int)
	rec = func(start int) {
		if len(cur) == t {
			f(cur)
			return
		}
		for i := start; i <= len(pool)-(t-len(cur)); i++ {
			cur = append(cur, pool[i])
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
}

// grow builds a t-group from seed by adding, each time, the GPU of pool whose
// worst link to the group is best (lowest index on ties).
func grow(n Node, pool []int, seed, t int) []int {
	g := []int{seed}
	for len(g) < t {
		pick, pickLink := -1, LinkClass(-1)
		for _, x := range pool {
			if slices.Contains(g, x) {
				continue
			}
			w := LinkNVLink
			for _, y := range g {
				w = min(w, n.link(x, y))
			}
			if w > pickLink {
				pick, pickLink = x, w
			}
		}
		if pick < 0 {
			break
		}
		g = append(g, pick)
	}
	slices.Sort(g)
	return g
}

// binomial returns C(n, k), saturating at maxSubsets+1.
func binomial(n, k int) int {
	if k < 0 || k > n {
		return 0
	}
	r := 1
	for i := 1; i <= k; i++ {
		r = r * (n - k + i) / i
		if r > maxSubsets {
			return maxSubsets + 1
		}
	}
	return r
}
