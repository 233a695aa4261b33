package schedule

import (
	"slices"
	"time"
)

// fluid tracks work as a fluid drained by ready replicas. The Scheduler
// keeps one as its estimate and the Simulator one as the truth; both use
// the same arithmetic, so a simulation replays the estimate exactly.
type fluid struct {
	now       time.Duration
	remaining map[string]float64
	ready     []Assignment // ready replicas, by ID
	tenants   map[int]int
	// served is each replica's seconds of serving weighted by its share
	// of its GPUs, since it was first ready.
	served map[ReplicaID]float64
	// after, total, floor and ended hold the work that depends on other
	// models' answers (after.go): a dependent model drains no lower than
	// its floor, and cannot finish while the floor is above 0.
	after        map[string][]string
	total, floor map[string]float64
	ended        map[string]bool
}

func newFluid() *fluid {
	return &fluid{remaining: map[string]float64{}, tenants: map[int]int{}, served: map[ReplicaID]float64{}}
}

// share is the part of its GPUs replica r gets: 1/k where k is the most
// ready engines on one of its GPUs.
func (f *fluid) share(r Assignment) float64 {
	k := 1
	for _, g := range r.GPUs {
		k = max(k, f.tenants[g])
	}
	return 1 / float64(k)
}

// rate returns the model's current drain rate.
func (f *fluid) rate(model string) float64 {
	sum := 0.0
	for _, r := range f.ready {
		if r.Model == model {
			sum += r.Rate * f.share(r)
		}
	}
	return sum
}

// advance drains every model up to time to.
func (f *fluid) advance(to time.Duration) {
	if to <= f.now {
		return
	}
	dt := (to - f.now).Seconds()
	f.now = to
	for _, r := range f.ready {
		sh := f.share(r)
		f.remaining[r.Model] = max(f.floor[r.Model], f.remaining[r.Model]-r.Rate*sh*dt)
		f.served[r.ID] += sh * dt
	}
}

// setRate changes a ready replica's rate (call advance first).
func (f *fluid) setRate(id ReplicaID, rate float64) {
	if i := slices.IndexFunc(f.ready, func(r Assignment) bool { return r.ID == id }); i >= 0 {
		f.ready[i].Rate = rate
	}
}

// addReady adds r to the ready set (call advance first).
func (f *fluid) addReady(r Assignment) {
	i, _ := slices.BinarySearchFunc(f.ready, r.ID, func(a Assignment, id ReplicaID) int { return int(a.ID - id) })
	f.ready = slices.Insert(f.ready, i, r)
	for _, g := range r.GPUs {
		f.tenants[g]++
	}
}

// remove takes replica id out of the ready set, if it is there.
func (f *fluid) remove(id ReplicaID) bool {
	i := slices.IndexFunc(f.ready, func(r Assignment) bool { return r.ID == id })
	if i < 0 {
		return false
	}
	for _, g := range f.ready[i].GPUs {
		f.tenants[g]--
	}
	f.ready = slices.Delete(f.ready, i, i+1)
	return true
}

// eta returns when the model would finish at its current rate.
func (f *fluid) eta(model string) (time.Duration, bool) {
	r := f.rate(model)
	if r <= 0 || f.floor[model] > 0 {
		return 0, false
	}
	return f.now + seconds(f.remaining[model], r), true
}
