package schedule

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/npcorch/npcorch/configs"
)

// SpeedTruth is what simulated engines really do, unknown to the
// scheduler: each model's true GPU speed, and how its engines report it.
type SpeedTruth struct {
	// Factors multiply each model's registry speed (Estimator.Speed) to
	// give its engines' true speed; a model not listed runs at the
	// registry's speed.
	Factors map[string]float64
	// SampleEvery is how often each ready engine reports a speed sample
	// (EventSpeed) over the serving time since its last one; 0 = never.
	SampleEvery time.Duration
	// Noise is the standard deviation of ln(reported / true work) of a
	// sample over one minute; one over t minutes has Noise / √t.
	Noise float64
	// Seed seeds the noise.
	Seed uint64
}

// RandomSpeedFactors draws a speed factor for each model, log-uniform in
// [1/spread, spread] (a model is as likely to be twice as slow as the
// registry says as twice as fast), from seed, in the order given.
func RandomSpeedFactors(models []configs.Model, spread float64, seed uint64) map[string]float64 {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make(map[string]float64, len(models))
	for _, m := range models {
		out[m.Name] = math.Pow(spread, 2*rng.Float64()-1)
	}
	return out
}

// WithSpeedFactors returns models with SpeedTokensPerS set to factors ×
// the estimator's speed: the registry a planner that knew the true speeds
// would have.
func WithSpeedFactors(models []configs.Model, factors map[string]float64, est Estimator) []configs.Model {
	out := make([]configs.Model, len(models))
	for i, m := range models {
		if f, ok := factors[m.Name]; ok && f > 0 {
			m.SpeedTokensPerS = est.Speed(m) * f
		}
		out[i] = m
	}
	return out
}

// truthState is what the simulator needs to compute true rates and
// samples: each model's mix, registry speed, total work and images per
// token equivalent.
type truthState struct {
	est           Estimator
	mixes         map[string]mix
	speed         map[string]float64
	total         map[string]float64
	imagesPerWork map[string]float64
	rng           *rand.Rand
}

func newTruthState(cfg Config) *truthState {
	t := &truthState{est: cfg.Estimator, mixes: map[string]mix{}, speed: map[string]float64{}, total: map[string]float64{},
		imagesPerWork: map[string]float64{}}
	parts := map[string][]Workload{}
	images := map[string]float64{}
	for _, w := range cfg.Workloads {
		parts[w.Model] = append(parts[w.Model], w)
		t.total[w.Model] += cfg.Estimator.Work(w)
		images[w.Model] += w.PlaneGroups()
	}
	for _, m := range cfg.Models {
		t.mixes[m.Name] = newMix(cfg.Estimator, parts[m.Name])
		t.speed[m.Name] = cfg.Estimator.Speed(m)
		if t.total[m.Name] > 0 {
			t.imagesPerWork[m.Name] = images[m.Name] / t.total[m.Name]
		}
	}
	return t
}

// trueReplica returns r with its true rate: the model's mix drained at its
// true GPU speed on r's throughput, capped by r's preprocessing, as the
// scheduler estimates it but with the true speed.
func (sim *Simulator) trueReplica(r Assignment) Assignment {
	f, ok := sim.Truth.Factors[r.Model]
	if !ok || f <= 0 {
		f = 1
	}
	images := r.ImagesPerS
	if sim.truth.est.NoPreprocessCeiling {
		images = 0
	}
	r.Rate = sim.truth.mixes[r.Model].rate(r.Throughput*(f*sim.truth.speed[r.Model]), images)
	return r
}

// nextSample schedules sr's next speed sample, if samples are on.
func (sim *Simulator) nextSample(sr *simReplica) {
	if sim.Truth.SampleEvery <= 0 {
		return
	}
	sr.sampledAt, sr.servedAt = sim.f.now, sim.f.served[sr.r.ID]
	sr.sampleAt = sim.push(sim.f.now+sim.Truth.SampleEvery, Event{Kind: EventSpeed, Replica: sr.r.ID, Model: sr.r.Model})
}

// sample fills in a due speed sample: the work the replica truly did
// since its last one, with log-normal noise, its images in proportion,
// and its model's true progress; then schedules the next.
func (sim *Simulator) sample(ev Event) Event {
	sr := sim.live[ev.Replica]
	secs := (sim.f.now - sr.sampledAt).Seconds()
	work := sim.trueReplica(sr.r).Rate * (sim.f.served[sr.r.ID] - sr.servedAt)
	if sim.Truth.Noise > 0 {
		if sim.truth.rng == nil {
			sim.truth.rng = rand.New(rand.NewPCG(sim.Truth.Seed, 0x7e1e))
		}
		work *= math.Exp(sim.Truth.Noise * math.Sqrt(60/secs) * sim.truth.rng.NormFloat64())
	}
	ev.Speed = SpeedSample{Seconds: secs, Work: work, Images: work * sim.truth.imagesPerWork[ev.Model]}
	if total := sim.truth.total[ev.Model]; total > 0 {
		ev.Done = 1 - sim.f.remaining[ev.Model]/total
	}
	sim.nextSample(sr)
	return ev
}
