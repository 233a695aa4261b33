package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/npcorch/npcorch/configs"
)

// Reason names why a placement was rejected, so tools can group rejections.
type Reason string

// Rejection reasons.
const (
	// ReasonNode: the node itself is unusable (no GPUs, bad inventory).
	ReasonNode Reason = "node"
	// ReasonNoSize: the model has neither weight_bytes nor params_b.
	ReasonNoSize Reason = "no-size"
	// ReasonTPShape: the TP size does not divide the model's heads or vocabulary.
	ReasonTPShape Reason = "tp-shape"
	// ReasonPinnedTP: the campaign pins a TP size that cannot be used.
	ReasonPinnedTP Reason = "pinned-tp"
	// ReasonPinnedReplicas: the pinned replica count does not fit.
	ReasonPinnedReplicas Reason = "pinned-replicas"
	// ReasonMemory: the footprint per GPU exceeds every GPU's budget at this TP.
	ReasonMemory Reason = "memory"
	// ReasonFreeMemory: too few GPUs have utilization × total free.
	ReasonFreeMemory Reason = "free-memory"
	// ReasonLargerThanNode: even every GPU of the node together cannot
	// hold the model; it needs several nodes.
	ReasonLargerThanNode Reason = "larger-than-node"
	// ReasonFailedStart: every usable GPU set already failed to start.
	ReasonFailedStart Reason = "failed-start"
)

// Rejection explains one choice placement did not make.
type Rejection struct {
	Model  string `json:"model"`
	Reason Reason `json:"reason"`
	// TP is the tensor-parallel size concerned, 0 when none.
	TP int `json:"tp,omitempty"`
	// GPUs are the devices concerned, if any.
	GPUs []int `json:"gpus,omitempty"`
	// Message is a sentence naming the model, the GPUs and the numbers.
	Message string `json:"message"`
}

// String returns the message.
func (r Rejection) String() string { return r.Message }

// Placement is one feasible way to run a model: Replicas TP groups of TP
// GPUs each.
type Placement struct {
	Model    string  `json:"model"`
	TP       int     `json:"tp"`
	Replicas int     `json:"replicas"`
	Groups   []Group `json:"groups"`
	// Utilization is the engine's gpu_memory_utilization.
	Utilization float64 `json:"utilization"`
	// Footprint is the model's memory per GPU, in bytes.
	Footprint uint64 `json:"footprint_bytes"`
	// Throughput is the sum of the groups' throughputs, in A800-equivalents.
	Throughput float64 `json:"throughput"`
	// APIServers is each replica's API server processes (vLLM's
	// --api-server-count; pass the flag only when above 1).
	APIServers int `json:"api_servers"`
	// ImagesPerS is each replica's image-preprocessing ceiling: 512×1644
	// images per second, APIServers × PreprocessRate. Throughput ignores it;
	// the work a replica is given decides which of the two binds.
	ImagesPerS float64 `json:"images_per_s"`
}

// GPUCount returns how many GPUs the placement occupies.
func (p Placement) GPUCount() int { return p.TP * p.Replicas }

// GPUs returns every GPU of the placement, in group order.
func (p Placement) GPUs() []int {
	var out []int
	for _, g := range p.Groups {
		out = append(out, g.GPUs...)
	}
	return out
}

// Efficiency returns the throughput per GPU.
func (p Placement) Efficiency() float64 {
	if p.GPUCount() == 0 {
		return 0
	}
	return p.Throughput / float64(p.GPUCount())
}

// String writes the placement as "TP2×4 on [0 1] [2 3] [4 5] [6 7]".
func (p Placement) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "TP%d×%d on", p.TP, p.Replicas)
	for _, g := range p.Groups {
		fmt.Fprintf(&b, " %v", g.GPUs)
	}
	return b.String()
}

// Constraints narrow an evaluation to what is available now.
type Constraints struct {
	// MaxGPUs caps the GPUs one placement may take (0 = no cap).
	MaxGPUs int
	// Exclude lists GPUs not to use at all (another engine is starting
	// there, or the scheduler keeps them for someone else).
	Exclude []int
	// Avoid lists TP groups (GPU sets) that failed to start for this model.
	Avoid [][]int
	// MaxAPIServers caps each engine's API server processes
	// (0 = DefaultMaxAPIServers; 1 = vLLM's default of one).
	MaxAPIServers int
}

// Result is the outcome of Evaluate for one model.
type Result struct {
	Model string `json:"model"`
	// Options are the feasible placements, highest throughput first (then
	// fewer GPUs, smaller TP, lower GPU indices).
	Options []Placement `json:"options"`
	// Rejections explain the TP sizes and GPU sets that were not feasible.
	Rejections []Rejection `json:"rejections,omitempty"`
}

// Best returns the highest-throughput placement.
func (r Result) Best() (Placement, bool) {
	if len(r.Options) == 0 {
		return Placement{}, false
	}
	return r.Options[0], true
}

// BestWithin returns the highest-throughput placement of at most n GPUs.
func (r Result) BestWithin(n int) (Placement, bool) {
	return r.first(func(p Placement) bool { return p.GPUCount() <= n })
}

// BestSingle returns the highest-throughput placement with one replica:
// what a single engine per model achieves.
func (r Result) BestSingle() (Placement, bool) {
	return r.first(func(p Placement) bool { return p.Replicas == 1 })
}

// MostEfficient returns the placement with the highest throughput per GPU
// (the smallest one on ties).
func (r Result) MostEfficient() (Placement, bool) {
	var best Placement
	found := false
	for _, p := range r.Options {
		if !found || p.Efficiency() > best.Efficiency()*(1+1e-9) ||
			(p.Efficiency() >= best.Efficiency()*(1-1e-9) && p.GPUCount() < best.GPUCount()) {
			best, found = p, true
		}
	}
	return best, found
}

func (r Result) first(ok func(Placement) bool) (Placement, bool) {
	for _, p := range r.Options {
		if ok(p) {
			return p, true
		}
	}
	return Placement{}, false
}

// Evaluate returns every feasible placement of model m on node n under c,
// best first, and a Rejection for every TP size or GPU set it ruled out.
// Pinned sizes in m.Engine (TensorParallel, Replicas) are honoured or
// rejected with the reason. Node.MemFree is taken as the memory free now.
//
// It is a chain of feasibility filters, each a function that returns why
// it rules something out: the node and the model's size, then the TP
// sizes (shape, pin), then for each TP size the GPUs' memory, the GPU
// sets not yet failed and the pinned replica count.
func Evaluate(m configs.Model, n Node, c Constraints) Result {
	res := Result{Model: m.Name}
	if rej := nodeUsable(m, n); rej != nil {
		res.Rejections = append(res.Rejections, *rej)
		return res
	}
	if rej := sized(m); rej != nil {
		res.Rejections = append(res.Rejections, *rej)
		return res
	}
	if rej := largerThanNode(m, n); rej != nil {
		res.Rejections = append(res.Rejections, *rej)
		return res
	}
	tps, shapeRej := ValidTP(m, len(n.GPUs))
	res.Rejections = append(res.Rejections, shapeRej...)
	tps, rej := pinnedTP(m, n, tps)
	if rej != nil {
		res.Rejections = append(res.Rejections, *rej)
		return res
	}
	avail := available(n, c.Exclude)
	limit := len(avail)
	if c.MaxGPUs > 0 {
		limit = min(limit, c.MaxGPUs)
	}
	avoid := avoidSet(c.Avoid)
	for _, t := range tps {
		if t > limit {
			continue
		}
		opts, rej := placeTP(m, n, c, t, avail, avoid, limit)
		if rej != nil {
			res.Rejections = append(res.Rejections, *rej)
			continue
		}
		res.Options = append(res.Options, opts...)
	}
	slices.SortStableFunc(res.Options, func(a, b Placement) int {
		if c := cmp.Compare(b.Throughput, a.Throughput); c != 0 {
			return c
		}
		if c := cmp.Compare(a.GPUCount(), b.GPUCount()); c != 0 {
			return c
		}
		if c := cmp.Compare(a.TP, b.TP); c != 0 {
			return c
		}
		return slices.Compare(a.GPUs(), b.GPUs())
	})
	return res
}

// placeTP returns m's placements at TP size t on the available GPUs, or
// the filter that ruled the size out and why.
func placeTP(m configs.Model, n Node, c Constraints, t int, avail []GPU, avoid map[string]bool, limit int) ([]Placement, *Rejection) {
	u := Utilization(m)
	eligible, rej := memoryFits(m, n, t, avail, u)
	if rej != nil {
		return nil, rej
	}
	groups, rej := untriedGroups(m, n, t, eligible, avoid)
	if rej != nil {
		return nil, rej
	}
	for i := range groups {
		groups[i].Throughput = GroupThroughput(n, m, t, groups[i].Link, minBudget(n, groups[i].GPUs, u))
	}
	maxR := min(len(groups), limit/t)
	if rej := pinnedReplicas(m, t, maxR, eligible); rej != nil {
		return nil, rej
	}
	api, need := APIServers(m, n, t, c.MaxAPIServers), Footprint(m, t)
	if r := m.Engine.Replicas; r > 0 {
		return []Placement{option(m, t, u, need, api, groups[:r])}, nil
	}
	var out []Placement
	for r := 1; r <= maxR; r++ {
		out = append(out, option(m, t, u, need, api, groups[:r]))
	}
	return out, nil
}

// rejection builds a Rejection of m with its message.
func rejection(m configs.Model, reason Reason, tp int, gpus []int, format string, args ...any) *Rejection {
	return &Rejection{Model: m.Name, Reason: reason, TP: tp, GPUs: gpus, Message: fmt.Sprintf(format, args...)}
}

// nodeUsable rules out a node whose inventory cannot be planned on.
func nodeUsable(m configs.Model, n Node) *Rejection {
	if err := n.Validate(); err != nil {
		return rejection(m, ReasonNode, 0, nil, "%s cannot be placed: %v", m.Name, err)
	}
	return nil
}

// sized rules out a model whose memory cannot be checked.
func sized(m configs.Model) *Rejection {
	if WeightBytes(m) == 0 {
		return rejection(m, ReasonNoSize, 0, nil, "%s has neither weight_bytes nor params_b; add one to its registry or campaign entry so its memory can be checked", m.Name)
	}
	return nil
}

// largerThanNode rules out a model that no TP size on this node can hold:
// its footprint spread over every GPU of the node still exceeds the
// largest GPU's budget. It says, in words, how many GPUs of the node's
// biggest kind the model needs; npcorch places a model on one node only.
func largerThanNode(m configs.Model, n Node) *Rejection {
	u := Utilization(m)
	var big GPU
	for _, g := range n.GPUs {
		if g.MemTotal > big.MemTotal {
			big = g
		}
	}
	budget := Budget(big, u)
	if budget == 0 || Footprint(m, len(n.GPUs)) <= budget {
		return nil
	}
	total := Footprint(m, 1)
	need := (total + budget - 1) / budget
	kind := cmp.Or(big.Name, GiB(big.MemTotal)+" GPUs")
	return rejection(m, ReasonLargerThanNode, 0, nil,
		"%s needs at least %d GPUs of this kind (%s; %s of weights × 1.2 + 2 GiB = %s, at most %s per GPU at utilization %s); it is larger than one node: node %s has %s, and npcorch does not yet place one engine across several nodes",
		m.Name, need, kind, GiB(WeightBytes(m)), GiB(total), GiB(budget), fmtFloat(u), n.Name, gpuCount(len(n.GPUs)))
}

// pinnedTP narrows the valid TP sizes to the one the campaign pins, or
// rules the model out when that size cannot be used.
func pinnedTP(m configs.Model, n Node, tps []int) ([]int, *Rejection) {
	p := m.Engine.TensorParallel
	switch {
	case p <= 0:
		return tps, nil
	case p > len(n.GPUs):
		return nil, rejection(m, ReasonPinnedTP, p, nil, "%s pins tensor_parallel %d but node %s has %d GPUs; valid sizes here: %s",
			m.Name, p, n.Name, len(n.GPUs), sizesList(tps))
	case !slices.Contains(tps, p):
		return nil, rejection(m, ReasonPinnedTP, p, nil, "%s pins tensor_parallel %d, which its shape does not allow (%s); valid sizes: %s",
			m.Name, p, tpProblemOrPower(m, p), sizesList(tps))
	}
	return []int{p}, nil
}

// memoryFits returns the available GPUs with room for m at TP t: its
// footprint per GPU under the utilization's budget, with that budget free
// now. It rules the size out when no GPU is big enough (memory) or too few
// have the memory free (free-memory).
func memoryFits(m configs.Model, n Node, t int, avail []GPU, u float64) ([]int, *Rejection) {
	need := Footprint(m, t)
	var eligible []int
	var lacking []GPU
	fits := false
	for _, g := range avail {
		budget := Budget(g, u)
		if need >= budget { // no room left for the KV cache
			continue
		}
		fits = true
		if g.MemFree < budget {
			lacking = append(lacking, g)
			continue
		}
		eligible = append(eligible, g.Index)
	}
	if !fits {
		g := avail[0]
		return nil, rejection(m, ReasonMemory, t, nil, "%s at TP %d needs %s per GPU (%s of weights × 1.2 + 2 GiB%s), more than the %s that utilization %s of %s allows",
			m.Name, t, GiB(need), GiB(WeightBytes(m)), splitNote(t), GiB(Budget(g, u)), fmtFloat(u), GiB(g.MemTotal))
	}
	if len(eligible) < t {
		msg := fmt.Sprintf("%s needs %d GPU%s with %s free at utilization %s", m.Name, t, plural(t), GiB(Budget(avail[0], u)), fmtFloat(u))
		if len(lacking) > 0 {
			msg += "; " + freeSummary(lacking)
		}
		return nil, &Rejection{Model: m.Name, Reason: ReasonFreeMemory, TP: t, GPUs: indices(lacking), Message: msg}
	}
	return eligible, nil
}

// untriedGroups returns the TP groups of t GPUs among eligible, best
// first, leaving out those that already failed to start for m.
func untriedGroups(m configs.Model, n Node, t int, eligible []int, avoid map[string]bool) ([]Group, *Rejection) {
	groups := pickGroups(n, eligible, t, avoid)
	if len(groups) == 0 {
		return nil, rejection(m, ReasonFailedStart, t, eligible, "%s at TP %d already failed to start on every usable set of %d among %s",
			m.Name, t, t, GPUList(eligible))
	}
	return groups, nil
}

// pinnedReplicas rules out TP size t when the campaign pins more replicas
// than the maxR groups that fit.
func pinnedReplicas(m configs.Model, t, maxR int, eligible []int) *Rejection {
	if r := m.Engine.Replicas; r > maxR {
		return rejection(m, ReasonPinnedReplicas, t, eligible, "%s pins %d replicas of TP %d (%d GPUs); only %d such group%s fit%s on %s",
			m.Name, r, t, r*t, maxR, plural(maxR), verbS(maxR), GPUList(eligible))
	}
	return nil
}

// avoidSet keys the GPU sets that failed to start.
func avoidSet(sets [][]int) map[string]bool {
	avoid := make(map[string]bool, len(sets))
	for _, g := range sets {
		s := slices.Clone(g)
		slices.Sort(s)
		avoid[groupKey(s)] = true
	}
	return avoid
}

func option(m configs.Model, t int, u float64, need uint64, api int, groups []Group) Placement {
	p := Placement{
		Model: m.Name, TP: t, Replicas: len(groups), Groups: slices.Clone(groups), Utilization: u, Footprint: need,
		APIServers: api, ImagesPerS: float64(api) * PreprocessRate(m),
	}
	for _, g := range groups {
		p.Throughput += g.Throughput
	}
	return p
}

// available returns n's GPUs minus exclude, in index order.
func available(n Node, exclude []int) []GPU {
	out := make([]GPU, 0, len(n.GPUs))
	for _, g := range n.GPUs {
		if !slices.Contains(exclude, g.Index) {
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b GPU) int { return cmp.Compare(a.Index, b.Index) })
	return out
}

func minBudget(n Node, gpus []int, u float64) uint64 {
	var b uint64
	for i, x := range gpus {
		g, _ := n.gpu(x)
		if v := Budget(g, u); i == 0 || v < b {
			b = v
		}
	}
	return b
}

func indices(gpus []GPU) []int {
	out := make([]int, len(gpus))
	for i, g := range gpus {
		out[i] = g.Index
	}
	return out
}

func tpProblemOrPower(m configs.Model, t int) string {
	if t&(t-1) != 0 {
		return fmt.Sprintf("%d is not a power of two", t)
	}
	return tpProblem(m, t)
}

func splitNote(t int) string {
	if t == 1 {
		return ""
	}
	return fmt.Sprintf(", split over %d", t)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func verbS(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// gpuCount says how many GPUs, in words: "1 GPU", "8 GPUs".
func gpuCount(n int) string {
	if n == 1 {
		return "1 GPU"
	}
	return fmt.Sprintf("%d GPUs", n)
}
