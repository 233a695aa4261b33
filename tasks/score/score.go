package score

import (
	"sort"

	"github.com/npcorch/npcorch/tasks/extract"
)

// Unit is one scored question: a gold label and the extracted prediction.
type Unit struct {
	// Patient is the cluster the bootstrap resamples and the key of
	// patient-level metrics.
	Patient string `json:"patient"`
	// Item identifies the question within the task.
	Item string `json:"item"`
	// Group is the unit's group for group-macro accuracy; empty when the
	// task has no groups.
	Group string `json:"group,omitempty"`
	// Gold is the reference category.
	Gold string `json:"gold"`
	// Pred is the extracted answer; a failure is wrong.
	Pred extract.Label `json:"pred"`
	// NotRun marks a request that never got an answer.
	NotRun bool `json:"not_run,omitempty"`
	// Excluded marks a unit carried through the run but never scored.
	Excluded bool `json:"excluded,omitempty"`
	// Tags are free labels: each gets a row of its own in TaskScore.Tags.
	Tags []string `json:"tags,omitempty"`
	// Chance is the probability that a uniformly random answer is right
	// (1/k of k options); 0 when unknown, which leaves the task without a
	// random baseline.
	Chance float64 `json:"chance,omitempty"`
}

// Correct reports whether the unit was answered with its gold category.
func (u Unit) Correct() bool { return !u.NotRun && !u.Excluded && u.Pred.Is(u.Gold) }

func (u Unit) scored() bool { return !u.NotRun && !u.Excluded }

// Score is one percentage endpoint: Percent = 100·Numerator/Denominator.
// For a micro proportion the numerator counts correct units; for a macro
// average it sums per-patient (per-group, per-class) proportions and the
// denominator counts patients (groups, classes).
type Score struct {
	Percent     float64 `json:"percent"`
	Numerator   float64 `json:"numerator"`
	Denominator int     `json:"denominator"`
	// Bootstrap is the patient-cluster bootstrap interval; nil when
	// Options.Draws < 0.
	Bootstrap *Interval `json:"bootstrap,omitempty"`
	// Exact is the Clopper–Pearson interval, given where the numerator
	// counts independent binary outcomes (one per patient).
	Exact *Interval `json:"exact,omitempty"`
}

func newScore(num float64, den int) *Score {
	if den <= 0 {
		return nil
	}
	return &Score{Percent: 100 * num / float64(den), Numerator: num, Denominator: den}
}

// FailureCount counts the failed extractions of one kind.
type FailureCount struct {
	Kind  extract.FailureKind `json:"kind"`
	Count int                 `json:"count"`
}

// countFailures tallies the failures among scored units, sorted by kind.
func countFailures(units []Unit) []FailureCount {
	counts := map[extract.FailureKind]int{}
	for _, u := range units {
		if u.scored() && u.Pred.Failure != nil {
			counts[u.Pred.Failure.Kind]++
		}
	}
	return failureList(counts)
}

func failureList(counts map[extract.FailureKind]int) []FailureCount {
	var out []FailureCount
	for k, n := range counts {
		out = append(out, FailureCount{Kind: k, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// byPatient groups units by patient, patients sorted by id and units kept
// in input order.
func byPatient(units []Unit) (ids []string, groups [][]Unit) {
	index := map[string]int{}
	for _, u := range units {
		i, ok := index[u.Patient]
		if !ok {
			i = len(ids)
			index[u.Patient] = i
			ids = append(ids, u.Patient)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], u)
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ids[order[a]] < ids[order[b]] })
	sortedIDs := make([]string, len(ids))
	sortedGroups := make([][]Unit, len(ids))
	for i, o := range order {
		sortedIDs[i], sortedGroups[i] = ids[o], groups[o]
	}
	return sortedIDs, sortedGroups
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Interval methods.
const (
	MethodBootstrap      = "patient_bootstrap"
	MethodClopperPearson = "clopper_pearson"
)

// Interval is a two-sided confidence interval in percent.
type Interval struct {
	Method string  `json:"method"`
	Level  float64 `json:"level"`
	Lower  float64 `json:"lower"`
	Upper  float64 `json:"upper"`
	// Draws counts the bootstrap draws whose estimate was defined (a draw
	// can leave a conditional metric without denominator); 0 for exact
	// intervals.
	Draws int `json:"draws,omitempty"`
}
