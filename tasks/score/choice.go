package score

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// MethodGroupBootstrap names the interval of a group-macro accuracy: each
// draw resamples every group's units within the group, so each group
// keeps its size.
const MethodGroupBootstrap = "group_bootstrap"

// Slice is the item-micro accuracy of the units of one group or one tag,
// with a patient-cluster bootstrap over the patients they belong to.
type Slice struct {
	Name     string `json:"name"`
	Units    int    `json:"units"`
	Accuracy *Score `json:"accuracy,omitempty"`
}

// ChanceBaselines are what answering without reading the question scores
// on a closed-choice task, under each of its endpoints, over the task's
// cohort: every item not excluded, whether or not the model's answer came
// (the same for every model of a run).
type ChanceBaselines struct {
	// Majority answers every item with the task's most frequent reference
	// answer (Class; on a tie the first in sorted order).
	Majority Endpoints `json:"majority"`
	// Random answers each item with a uniformly random option (a uniform
	// non-empty subset of a multiple-select item's options): expected
	// scores.
	Random Endpoints `json:"random"`
}

// Endpoints are one baseline's scores in percent under the task's
// endpoints; those the task does not have are absent.
type Endpoints struct {
	Class        string   `json:"class,omitempty"`
	Accuracy     float64  `json:"accuracy"`
	GroupMacro   *float64 `json:"group_macro,omitempty"`
	PatientMacro *float64 `json:"patient_macro,omitempty"`
	AllCorrect   *float64 `json:"all_correct,omitempty"`
}

// groupNames lists the units' groups in sorted order.
func groupNames(units []Unit) []string {
	var names []string
	for _, u := range units {
		if u.Group != "" && !slices.Contains(names, u.Group) {
			names = append(names, u.Group)
		}
	}
	sort.Strings(names)
	return names
}

// groupMacro is the mean of group accuracies over groups with scored units
// (Eq. A1), nil when no unit has a group. Its interval resamples, draw by
// draw, each group's scored units with replacement within the group.
func groupMacro(units []Unit, opt Options) *Score {
	names := groupNames(units)
	var byGroup [][]float64
	for _, g := range names {
		var xs []float64
		for _, u := range units {
			if u.Group == g && u.scored() {
				xs = append(xs, b2f(u.Correct()))
			}
		}
		if len(xs) > 0 {
			byGroup = append(byGroup, xs)
		}
	}
	if len(byGroup) == 0 {
		return nil
	}
	sum := 0.0
	for _, xs := range byGroup {
		sum += mean(xs)
	}
	sc := newScore(sum, len(byGroup))
	sc.Bootstrap = stratifiedInterval(byGroup, opt)
	return sc
}

// stratifiedInterval is the bootstrap interval of the mean of group means,
// resampling within each group.
func stratifiedInterval(byGroup [][]float64, opt Options) *Interval {
	if opt.Draws < 0 {
		return nil
	}
	src := rand.NewPCG(opt.Seed, 0x6e7063626e636822) // another stream than the patient resampler's
	values := make([]float64, opt.Draws)
	for b := range values {
		total := 0.0
		for _, xs := range byGroup {
			c := 0.0
			for range xs {
				c += xs[below(src, uint64(len(xs)))]
			}
			total += c / float64(len(xs))
		}
		values[b] = 100 * total / float64(len(byGroup))
	}
	sort.Float64s(values)
	a := (1 - opt.Level) / 2
	return &Interval{Method: MethodGroupBootstrap, Level: opt.Level, Lower: percentile(values, a), Upper: percentile(values, 1-a), Draws: len(values)}
}

// sliceScores is the item-micro accuracy of each name keys gives units (a
// group, each of its tags), in name order.
func sliceScores(units []Unit, keys func(Unit) []string, opt Options) []Slice {
	byName := map[string][]Unit{}
	for _, u := range units {
		for _, k := range keys(u) {
			byName[k] = append(byName[k], u)
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Slice
	for _, n := range names {
		_, groups := byPatient(byName[n])
		stats := make([][]float64, len(groups))
		units := 0
		for p, us := range groups {
			var c, k float64
			for _, u := range us {
				if u.scored() {
					k++
					c += b2f(u.Correct())
				}
			}
			stats[p] = []float64{c, k}
			units += int(k)
		}
		out = append(out, Slice{Name: n, Units: units, Accuracy: scoreFromStats(stats, newResampler(len(groups), opt), ratio(0, 1))})
	}
	return out
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// chanceBaselines scores the majority-answer and random baselines over the
// cohort: every unit not excluded, answered or not. A baseline answers
// without the model, so it is a property of the cohort, the same for every
// model of a run whatever each left not run. nil unless every one carries
// its Chance. Patient-macro and all-correct are given when some patient of
// the cohort has several units.
func chanceBaselines(units []Unit) *ChanceBaselines {
	counts, perPatient := map[string]int{}, map[string]int{}
	var cohort []Unit
	patientLevel := false
	for _, u := range units {
		if u.Excluded {
			continue
		}
		if u.Chance <= 0 {
			return nil
		}
		cohort = append(cohort, u)
		counts[u.Gold]++
		perPatient[u.Patient]++
		patientLevel = patientLevel || perPatient[u.Patient] > 1
	}
	if len(cohort) == 0 {
		return nil
	}
	class := ""
	for g, n := range counts {
		if n > counts[class] || n == counts[class] && g < class {
			class = g
		}
	}
	maj := endpoints(cohort, func(u Unit) float64 { return b2f(u.Gold == class) }, patientLevel)
	maj.Class = class
	return &ChanceBaselines{Majority: maj, Random: endpoints(cohort, func(u Unit) float64 { return u.Chance }, patientLevel)}
}

// endpoints aggregates a per-unit expected correctness under each
// endpoint: micro, group macro, and (patientLevel) patient macro and
// all-correct, the probability that every unit of a patient is right.
func endpoints(units []Unit, value func(Unit) float64, patientLevel bool) Endpoints {
	var all []float64
	for _, u := range units {
		all = append(all, value(u))
	}
	e := Endpoints{Accuracy: 100 * mean(all)}
	if names := groupNames(units); len(names) > 0 {
		sum := 0.0
		for _, g := range names {
			var xs []float64
			for _, u := range units {
				if u.Group == g {
					xs = append(xs, value(u))
				}
			}
			sum += mean(xs)
		}
		e.GroupMacro = ptr(100 * sum / float64(len(names)))
	}
	if patientLevel {
		_, groups := byPatient(units)
		var macro, allRight float64
		for _, us := range groups {
			var xs []float64
			prod := 1.0
			for _, u := range us {
				xs = append(xs, value(u))
				prod *= value(u)
			}
			macro += mean(xs)
			allRight += prod
		}
		e.PatientMacro = ptr(100 * macro / float64(len(groups)))
		e.AllCorrect = ptr(100 * allRight / float64(len(groups)))
	}
	return e
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func ptr(v float64) *float64 { return &v }
