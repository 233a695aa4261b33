package schedule

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

// obsAt is a sample of model over minutes of serving whose log factor is
// ln f, weighted as the scheduler weighs a GPU-bound sample.
func obsAt(model string, replica ReplicaID, f, minutes float64, p SpeedPrior) speedObs {
	return speedObs{model: model, replica: replica, tp: 1, gpus: []int{int(replica)}, logFactor: math.Log(f),
		precision: minutes / sq(p.noiseSD()), sample: SpeedSample{Seconds: 60 * minutes, Work: 1000 * f * 60 * minutes}}
}

func TestSpeedEstimateTrustsTheMeasurementMoreAsWorkAccumulates(t *testing.T) {
	var p SpeedPrior
	b := newSpeedBook(p)
	b.addModel("M", 1000)
	prevSD := b.estimate("M", b.node()).sd
	prevGap := math.Inf(1)
	for i := range 12 {
		b.observe(obsAt("M", 1, 0.5, 1, p))
		e := b.estimate("M", b.node())
		f := math.Exp(e.mean)
		// Shrunk towards the registry (1×), never past the measurement.
		if f <= 0.5 || f >= 1 {
			t.Fatalf("after %d samples at 0.5×: estimate %.3f×, want between 0.5 and 1", i+1, f)
		}
		if gap := f - 0.5; gap >= prevGap || e.sd >= prevSD {
			t.Fatalf("after %d samples: estimate %.4f× ± %.4f did not move closer to 0.5× and tighten (was gap %.4f ± %.4f)",
				i+1, f, e.sd, prevGap, prevSD)
		} else {
			prevGap, prevSD = gap, e.sd
		}
	}
	if f := math.Exp(b.estimate("M", b.node()).mean); math.Abs(f-0.5) > 0.03 {
		t.Errorf("after 12 minutes at 0.5×: estimate %.3f×, want within 0.03 of 0.5×", f)
	}
	// One sample over an hour counts as much as sixty over a minute.
	long := newSpeedBook(p)
	long.addModel("M", 1000)
	long.observe(obsAt("M", 1, 0.5, 60, p))
	short := newSpeedBook(p)
	short.addModel("M", 1000)
	for range 60 {
		short.observe(obsAt("M", 1, 0.5, 1, p))
	}
	if a, b := long.estimate("M", long.node()), short.estimate("M", short.node()); math.Abs(a.mean-b.mean) > 1e-9 || math.Abs(a.sd-b.sd) > 1e-9 {
		t.Errorf("an hour in one sample %+v, in sixty %+v: want the same estimate", a, b)
	}
}

func TestSpeedEstimateSharesTheNodeFactorWithUnmeasuredModels(t *testing.T) {
	var p SpeedPrior
	b := newSpeedBook(p)
	for _, m := range []string{"A", "B", "C", "U"} {
		b.addModel(m, 1000)
	}
	if e := b.estimate("U", b.node()); e.mean != 0 || e.measured || math.Abs(e.sd-0.5) > 1e-9 {
		t.Fatalf("before any sample: %+v, want the registry's speed with SD √(0.3² + 0.4²) = 0.5", e)
	}
	for i, m := range []string{"A", "B", "C"} {
		for range 10 {
			b.observe(obsAt(m, ReplicaID(i+1), 2, 5, p))
		}
	}
	node := b.node()
	u := b.estimate("U", node)
	// Three models measured at 2×: the node is faster than the registry
	// thinks, and so, most likely, is the model not measured yet, though
	// less surely than the measured ones.
	if f := math.Exp(u.mean); f < 1.5 || f > 2 || u.measured {
		t.Errorf("unmeasured model: %.3f×, want between 1.5× and 2×", f)
	}
	if a := b.estimate("A", node); math.Abs(math.Exp(a.mean)-2) > 0.02 || a.sd >= u.sd || u.gateSD != node.sd {
		t.Errorf("measured model %+v, unmeasured %+v: want ≈ 2× and tighter; the unmeasured gate on the node's SD %v", a, u, node.sd)
	}
}

func TestSpeedsSnapshot(t *testing.T) {
	var p SpeedPrior
	b := newSpeedBook(p)
	b.addModel("Zeta", 1000)
	b.addModel("Alpha", 500)
	b.addModel("Idle", 700)
	if b.snapshot() != nil {
		t.Fatal("a snapshot before any sample; want nil")
	}
	b.observe(obsAt("Zeta", 4, 0.8, 5, p))
	b.observe(obsAt("Zeta", 2, 0.8, 5, p))
	o := obsAt("Alpha", 1, 1.5, 10, p)
	o.sample.TTFT, o.sample.Images = 0.8, 1200
	b.observe(o)
	b.observe(speedObs{model: "Alpha", replica: 1, sample: SpeedSample{Seconds: 600, Work: 9e5, TTFT: 1.2}}) // image-bound: no precision
	snap := b.snapshot()
	var names []string
	for _, m := range snap.Models {
		names = append(names, m.Model)
	}
	if !reflect.DeepEqual(names, []string{"Alpha", "Zeta"}) {
		t.Fatalf("models %v, want the measured ones in name order", names)
	}
	a, z := snap.Models[0], snap.Models[1]
	if a.Samples != 2 || a.Informative != 1 || a.TTFT != 1 || a.Images != 1200 || a.RegistryTokensPerS != 500 {
		t.Errorf("Alpha %+v: want 2 samples, 1 informative, TTFT 1 s, 1,200 images, registry 500", a)
	}
	if !(a.Low < a.Factor && a.Factor < a.High) || math.Abs(a.TokensPerS-500*a.Factor) > 1 {
		t.Errorf("Alpha %+v: want Low < Factor < High and TokensPerS = 500 × Factor", a)
	}
	if len(z.Replicas) != 2 || z.Replicas[0].Replica != 2 || z.Replicas[1].Replica != 4 || z.Replicas[0].TokensPerS != 800 || z.Replicas[0].Factor != 0.8 {
		t.Errorf("Zeta's replicas %+v: want 2 then 4, each 800 tok/s, factor 0.8", z.Replicas)
	}
	j1, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	var back Speeds
	if err := json.Unmarshal(j1, &back); err != nil {
		t.Fatal(err)
	}
	if j2, _ := json.Marshal(b.snapshot()); string(j1) != string(j2) || !reflect.DeepEqual(&back, snap) {
		t.Errorf("snapshot is not stable through JSON:\n%s\n%s", j1, j2)
	}
}

func TestGPUFactorInvertsTheMix(t *testing.T) {
	// Task a: 500 s of GPU at 1,000 tok/s, 1,000 s of preprocessing at
	// 1 image/s; task b: 500 s of GPU only.
	x := mix{{task: "a", work: 500_000, images: 1000}, {task: "b", work: 500_000}}
	for _, f := range []float64{0.25, 0.5, 1, 1.5} {
		achieved := x.rate(f*1000, 1)
		y, e, ok := x.gpuFactor(1000, 1, 1, achieved)
		if !ok || math.Abs(math.Exp(y)-f) > 1e-9 {
			t.Errorf("factor %v: got e^%v = %v, ok %v", f, y, math.Exp(y), ok)
		}
		// At 0.25× task a's GPU time (2,000 s) exceeds its preprocessing:
		// all of the time is the GPUs'. At 1× only task b's 500 s of 1,500.
		want := map[float64]float64{0.25: 1, 0.5: 1, 1: 500.0 / 1500, 1.5: (500 / 1.5) / (1000 + 500/1.5)}[f]
		if math.Abs(e-want) > 1e-9 {
			t.Errorf("factor %v: elasticity %v, want %v", f, e, want)
		}
	}
	// Faster than preprocessing allows at any GPU speed: nothing learnt.
	if _, _, ok := x.gpuFactor(1000, 1, 1, 1e6/1000); ok {
		t.Error("a rate only infinitely fast GPUs give was taken as a measurement")
	}
	if _, _, ok := x.gpuFactor(1000, 1, 1, 0); ok {
		t.Error("no work taken as a measurement")
	}
	// No ceiling: the factor is the rate ratio and every second counts.
	if y, e, ok := x.gpuFactor(1000, 2, 0, 3000); !ok || math.Abs(math.Exp(y)-1.5) > 1e-9 || e != 1 {
		t.Errorf("no ceiling: e^%v, elasticity %v, ok %v; want 1.5, 1, true", y, e, ok)
	}
}

func TestSpeedSampleValid(t *testing.T) {
	for _, x := range []SpeedSample{
		{Seconds: 0, Work: 1}, {Seconds: -1, Work: 1}, {Seconds: math.NaN(), Work: 1}, {Seconds: math.Inf(1), Work: 1},
		{Seconds: 1, Work: -1}, {Seconds: 1, Work: math.NaN()}, {Seconds: 1, Images: math.Inf(1)}, {Seconds: 1, TTFT: -0.5},
	} {
		if x.valid() {
			t.Errorf("%+v accepted", x)
		}
	}
	if !(SpeedSample{Seconds: 1}).valid() || !(SpeedSample{Seconds: 60, Work: 1e6, Images: 10, TTFT: 0.3}).valid() {
		t.Error("a good sample was refused")
	}
}
