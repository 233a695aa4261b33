package live

import (
	"slices"
	"time"
)

// The histograms' upper bounds, in seconds: a request takes from a
// fraction of a second (a short answer on a small model) to minutes (a
// long reasoning chain over many images); the first token comes sooner.
var (
	durationBounds = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500}
	ttftBounds     = []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100}
)

// hist counts observations by bucket (not cumulative).
type hist struct {
	bounds []float64
	counts []uint64 // len(bounds)+1: the last is above every bound
	sum    float64
}

func newHist(bounds []float64) hist {
	return hist{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *hist) observe(v float64) {
	i, _ := slices.BinarySearch(h.bounds, v) // first bound >= v
	h.counts[i]++
	h.sum += v
}

// view is the histogram as Prometheus counts it: cumulative by bound.
func (h *hist) view() Histogram {
	out := Histogram{Bounds: slices.Clone(h.bounds), Counts: make([]uint64, len(h.bounds)), Sum: h.sum}
	var c uint64
	for i := range h.bounds {
		c += h.counts[i]
		out.Counts[i] = c
	}
	out.Count = c + h.counts[len(h.bounds)]
	return out
}

// rateWindow is a model's work and completion tokens per second over the
// last minute, in one-second buckets.
type rateWindow struct {
	first   time.Time // the first answer this run: a younger window is shorter
	buckets [window]rateBucket
}

const window = 60

type rateBucket struct {
	sec              int64
	work, completion float64
}

func (r *rateWindow) add(now time.Time, work, completion float64) {
	if r.first.IsZero() {
		r.first = now
	}
	sec := now.Unix()
	b := &r.buckets[sec%window]
	if b.sec != sec {
		*b = rateBucket{sec: sec}
	}
	b.work += work
	b.completion += completion
}

// rates are work and completion tokens per second over the last minute,
// or since the first answer when that is sooner (at least one second).
func (r *rateWindow) rates(now time.Time) (work, completion float64) {
	if r.first.IsZero() {
		return 0, 0
	}
	sec := now.Unix()
	for _, b := range r.buckets {
		if b.sec > sec-window && b.sec <= sec {
			work += b.work
			completion += b.completion
		}
	}
	span := min(now.Sub(r.first), now.Sub(time.Unix(sec-window+1, 0))).Seconds()
	span = max(span, 1)
	return work / span, completion / span
}
