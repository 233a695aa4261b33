package schedule

import (
	"math"
	"slices"
)

// SpeedSample is one measurement of a replica's speed: over Seconds of
// serving it did Work token equivalents (prompt + DecodeCost × output, as
// counted from usage or the engine's /metrics) and preprocessed Images
// 512×1644 images. TTFT is the mean time to first token over the same
// requests, in seconds (0: not measured).
type SpeedSample struct {
	Seconds float64 `json:"seconds"`
	Work    float64 `json:"work"`
	Images  float64 `json:"images,omitempty"`
	TTFT    float64 `json:"ttft_s,omitempty"`
}

// valid reports whether the sample's numbers can be used.
func (s SpeedSample) valid() bool {
	ok := func(f float64) bool { return f >= 0 && !math.IsInf(f, 0) && !math.IsNaN(f) }
	return s.Seconds > 0 && ok(s.Seconds) && ok(s.Work) && ok(s.Images) && ok(s.TTFT)
}

// SpeedPrior tunes the speed estimator; its zero value uses the defaults
// the package comment gives and justifies.
type SpeedPrior struct {
	// NodeSD is the prior standard deviation of ln(true / registry speed)
	// shared by every model on this node (0 = 0.3).
	NodeSD float64
	// ModelSD is the prior standard deviation of each model's own
	// ln(true / registry speed) around the node's (0 = 0.4).
	ModelSD float64
	// NoiseSD is the standard deviation of ln(measured / true rate) of a
	// sample over one minute of serving; a sample over t minutes has
	// NoiseSD / √t (0 = 0.2).
	NoiseSD float64
}

func (p SpeedPrior) nodeSD() float64  { return orDefault(p.NodeSD, 0.3) }
func (p SpeedPrior) modelSD() float64 { return orDefault(p.ModelSD, 0.4) }
func (p SpeedPrior) noiseSD() float64 { return orDefault(p.NoiseSD, 0.2) }

// speedObs is one sample as the estimator sees it: ln(measured GPU speed /
// registry speed) and its precision (1 / variance), with the raw numbers.
type speedObs struct {
	model     string
	replica   ReplicaID
	index     int // the replica's number within its model (r0, r1, ...)
	tp        int
	gpus      []int
	logFactor float64
	precision float64
	sample    SpeedSample
}

// speedSums accumulates samples: precision-weighted log factors and the
// raw totals.
type speedSums struct {
	n                  int
	prec, sum          float64
	seconds, work      float64
	images, ttftSum    float64
	ttftN, informative int
}

func (s *speedSums) add(o speedObs) {
	s.n++
	s.seconds += o.sample.Seconds
	s.work += o.sample.Work
	s.images += o.sample.Images
	if o.sample.TTFT > 0 {
		s.ttftSum += o.sample.TTFT
		s.ttftN++
	}
	if o.precision > 0 {
		s.prec += o.precision
		s.sum += o.precision * o.logFactor
		s.informative++
	}
}

// mean is the data-only log factor (0 without informative samples).
func (s *speedSums) mean() float64 {
	if s.prec <= 0 {
		return 0
	}
	return s.sum / s.prec
}

type replicaSums struct {
	id    ReplicaID
	index int
	tp    int
	gpus  []int
	speedSums
}

type modelSums struct {
	guess float64 // registry speed, token equivalents per second per A800-equivalent
	speedSums
	replicas []*replicaSums // by ID
}

// speedBook is the speed estimator: a two-level empirical-Bayes model of
// ln(true / registry speed). Each model's log factor is the node's plus
// its own; the node's is estimated from every measured model, each
// model's from its samples shrunk towards the node's. It is pure: it
// learns only through observe.
type speedBook struct {
	prior  SpeedPrior
	models map[string]*modelSums
}

func newSpeedBook(p SpeedPrior) *speedBook {
	return &speedBook{prior: p, models: map[string]*modelSums{}}
}

// addModel registers a model and its registry speed.
func (b *speedBook) addModel(name string, guess float64) {
	b.models[name] = &modelSums{guess: guess}
}

// observe adds one sample of a registered model.
func (b *speedBook) observe(o speedObs) {
	ms := b.models[o.model]
	ms.add(o)
	i, found := slices.BinarySearchFunc(ms.replicas, o.replica, func(r *replicaSums, id ReplicaID) int { return int(r.id - id) })
	if !found {
		ms.replicas = slices.Insert(ms.replicas, i, &replicaSums{id: o.replica, index: o.index, tp: o.tp, gpus: slices.Clone(o.gpus)})
	}
	ms.replicas[i].add(o)
}

// speedEstimate is the posterior of one log factor.
type speedEstimate struct {
	mean, sd float64
	// gateSD is how far the mean may move by chance: the posterior SD of a
	// measured model, the node estimate's SD for an unmeasured one (whose
	// own deviation is unknown, not noisy).
	gateSD   float64
	measured bool
}

// node returns the node's log factor: a precision-weighted mean of the
// measured models' data means, each weighted 1 / (ModelSD² + its data
// variance), shrunk towards 0 by the NodeSD prior.
func (b *speedBook) node() speedEstimate {
	t2 := sq(b.prior.modelSD())
	prec, sum := 1/sq(b.prior.nodeSD()), 0.0
	for _, ms := range b.models {
		if ms.prec <= 0 {
			continue
		}
		w := 1 / (t2 + 1/ms.prec)
		prec += w
		sum += w * ms.mean()
	}
	sd := math.Sqrt(1 / prec)
	return speedEstimate{mean: sum / prec, sd: sd, gateSD: sd}
}

// estimate returns model name's log factor given the node's: its data
// combined with the prior N(node, ModelSD²); the node's own uncertainty
// adds in proportion to the weight the prior keeps.
func (b *speedBook) estimate(name string, node speedEstimate) speedEstimate {
	t2 := sq(b.prior.modelSD())
	ms, ok := b.models[name]
	if !ok || ms.prec <= 0 {
		return speedEstimate{mean: node.mean, sd: math.Sqrt(t2 + sq(node.sd)), gateSD: node.sd}
	}
	post := 1/t2 + ms.prec
	keep := (1 / t2) / post
	mean := (node.mean/t2 + ms.sum) / post
	sd := math.Sqrt(1/post + sq(keep*node.sd))
	return speedEstimate{mean: mean, sd: sd, gateSD: sd, measured: true}
}

func sq(x float64) float64 { return x * x }

// Speeds is the speed estimator's state: what every model's engines were
// measured to do on this node, against the registry's guesses. Models are
// in name order, replicas in ID order, so the same samples give the same
// bytes.
type Speeds struct {
	// Node is the log factor every model shares: unmeasured models are
	// taken at Node.Factor × their registry speed.
	Node   NodeSpeed    `json:"node"`
	Models []ModelSpeed `json:"models"`
}

// NodeSpeed is the node-wide speed factor and its uncertainty.
type NodeSpeed struct {
	Factor float64 `json:"factor"`
	// LogSD is the standard deviation of ln Factor.
	LogSD float64 `json:"log_sd"`
}

// ModelSpeed is one model's speed estimate.
type ModelSpeed struct {
	Model string `json:"model"`
	// RegistryTokensPerS is the registry's guess (token equivalents per
	// second per A800-equivalent); TokensPerS the estimate, Factor their
	// ratio, Low and High its 95 % interval, LogSD the standard deviation
	// of ln Factor.
	RegistryTokensPerS float64 `json:"registry_tokens_per_s"`
	TokensPerS         float64 `json:"tokens_per_s"`
	Factor             float64 `json:"factor"`
	Low                float64 `json:"factor_low"`
	High               float64 `json:"factor_high"`
	LogSD              float64 `json:"log_sd"`
	// Samples counts the measurements, Informative those that said
	// something about the GPUs (a replica held back by its image
	// preprocessing does not); Seconds, Work and Images are their totals.
	Samples     int     `json:"samples"`
	Informative int     `json:"informative"`
	Seconds     float64 `json:"seconds"`
	Work        float64 `json:"work"`
	Images      float64 `json:"images,omitempty"`
	// TTFT is the mean time to first token over the samples that had one.
	TTFT     float64        `json:"ttft_s,omitempty"`
	Replicas []ReplicaSpeed `json:"replicas,omitempty"`
}

// ReplicaSpeed is what one replica was measured to do.
type ReplicaSpeed struct {
	Replica ReplicaID `json:"replica"`
	// Index is the replica's number within its model, as engines, logs
	// and `npcorch status` name it (MODEL/r0); Replica is the campaign's.
	Index   int     `json:"index"`
	TP      int     `json:"tp"`
	GPUs    []int   `json:"gpus"`
	Samples int     `json:"samples"`
	Seconds float64 `json:"seconds"`
	// TokensPerS and ImagesPerS are what the replica did per second of
	// serving, sharing its GPUs or not; Factor is its own data's estimate
	// of the model's factor (0 without an informative sample).
	TokensPerS float64 `json:"tokens_per_s"`
	ImagesPerS float64 `json:"images_per_s,omitempty"`
	Factor     float64 `json:"factor,omitempty"`
	TTFT       float64 `json:"ttft_s,omitempty"`
}

// snapshot returns the estimator's state, nil when nothing was measured.
func (b *speedBook) snapshot() *Speeds {
	node := b.node()
	out := &Speeds{Node: NodeSpeed{Factor: round4(math.Exp(node.mean)), LogSD: round4(node.sd)}}
	names := make([]string, 0, len(b.models))
	for name, ms := range b.models {
		if ms.n > 0 {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	for _, name := range names {
		ms := b.models[name]
		e := b.estimate(name, node)
		mp := ModelSpeed{
			Model: name, RegistryTokensPerS: round4(ms.guess), TokensPerS: round4(ms.guess * math.Exp(e.mean)),
			Factor: round4(math.Exp(e.mean)), Low: round4(math.Exp(e.mean - 1.96*e.sd)), High: round4(math.Exp(e.mean + 1.96*e.sd)),
			LogSD: round4(e.sd), Samples: ms.n, Informative: ms.informative,
			Seconds: round4(ms.seconds), Work: math.Round(ms.work), Images: math.Round(ms.images), TTFT: ttft(ms.speedSums),
		}
		for _, r := range ms.replicas {
			rs := ReplicaSpeed{Replica: r.id, Index: r.index, TP: r.tp, GPUs: slices.Clone(r.gpus), Samples: r.n, Seconds: round4(r.seconds),
				TokensPerS: round4(r.work / r.seconds), ImagesPerS: round4(r.images / r.seconds), TTFT: ttft(r.speedSums)}
			if r.prec > 0 {
				rs.Factor = round4(math.Exp(r.mean()))
			}
			mp.Replicas = append(mp.Replicas, rs)
		}
		out.Models = append(out.Models, mp)
	}
	return out
}

func ttft(s speedSums) float64 {
	if s.ttftN == 0 {
		return 0
	}
	return round4(s.ttftSum / float64(s.ttftN))
}

// round4 rounds to four significant digits, so snapshots stay readable.
func round4(f float64) float64 {
	if f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	scale := math.Pow(10, 3-math.Floor(math.Log10(math.Abs(f))))
	return math.Round(f*scale) / scale
}

// gpuFactor inverts the mix: it returns ln(g / base), where g is the GPU
// speed (per A800-equivalent) at which a replica of the given throughput
// and preprocessing ceiling would drain the mix at achieved token
// equivalents per second, and the elasticity d ln rate / d ln g there: the
// share of the mix's time its GPUs set the pace. A replica held back by
// its images (elasticity 0, or an achieved rate at or above what
// preprocessing alone allows) says nothing about its GPUs: ok is false.
func (x mix) gpuFactor(base, throughput, images, achieved float64) (logFactor, elasticity float64, ok bool) {
	if base <= 0 || throughput <= 0 || achieved <= 0 {
		return 0, 0, false
	}
	rate := func(y float64) float64 { return x.rate(math.Exp(y)*base*throughput, images) }
	const span = 7 // e^7 ≈ 1,100× either way
	lo, hi := -span, span
	if achieved >= rate(float64(hi))*(1-1e-9) {
		return 0, 0, false
	}
	if achieved <= rate(float64(lo)) {
		return float64(lo), x.elasticity(math.Exp(float64(lo))*base*throughput, images), true
	}
	a, b := float64(lo), float64(hi)
	for range 64 {
		m := (a + b) / 2
		if rate(m) < achieved {
			a = m
		} else {
			b = m
		}
	}
	y := (a + b) / 2
	e := x.elasticity(math.Exp(y)*base*throughput, images)
	return y, e, e > 0
}

// elasticity is d ln rate / d ln gpu: the share of the mix's time in tasks
// its GPUs bind.
func (x mix) elasticity(gpu, images float64) float64 {
	if images <= 0 || len(x) == 0 {
		return 1
	}
	var bound, total float64
	for _, t := range x {
		g, i := t.work/gpu, t.images/images
		total += max(g, i)
		if g >= i {
			bound += g
		}
	}
	if total <= 0 {
		return 1
	}
	return bound / total
}
