package score

import (
	"fmt"
	"math"
	"sort"

	"github.com/npcorch/npcorch/tasks/extract"
)

// Attempt is one attempt's answer to a repeated item.
type Attempt struct {
	Pred   extract.Label `json:"pred"`
	NotRun bool          `json:"not_run,omitempty"`
}

// RepeatedItem is one item answered in k attempts (npcorch run --repeat k).
type RepeatedItem struct {
	Patient  string    `json:"patient"`
	Item     string    `json:"item"`
	Gold     string    `json:"gold"`
	Attempts []Attempt `json:"attempts"`
}

// Reliability holds the repeated-run measures of CliniCARE-Bench §5.6 over
// the items gradeable in every attempt (every attempt run; a failed
// extraction is gradeable, and wrong).
type Reliability struct {
	K int `json:"k"`
	// Items counts items gradeable in every attempt; Dropped those with a
	// not-run attempt, left out of every measure. Complete is true when
	// Dropped is 0.
	Items    int  `json:"items"`
	Dropped  int  `json:"dropped"`
	Complete bool `json:"complete"`
	// PerAttempt is the accuracy of each attempt in percent, in attempt
	// order.
	PerAttempt []float64 `json:"per_attempt"`
	// AvgAtK is the mean accuracy over all n·k answers; SD the sample
	// standard deviation (k−1 in the denominator) of PerAttempt, 0 for k=1.
	AvgAtK *Score  `json:"avg_at_k,omitempty"`
	SD     float64 `json:"sd"`
	// PassHatK (pass^k): right in every attempt. PassAtK (pass@k): right
	// in at least one.
	PassHatK *Score `json:"pass_hat_k,omitempty"`
	PassAtK  *Score `json:"pass_at_k,omitempty"`
	// Agreement: the same answer in every attempt, right (pass^k) or the
	// same wrong category. Failed extractions never agree: a failure is not
	// an answer.
	Agreement *Score `json:"agreement,omitempty"`
}

// Repeated computes avg@k ± SD, pass^k, pass@k and agreement. Every item
// must have the same number of attempts k ≥ 1.
func Repeated(items []RepeatedItem, opt Options) (Reliability, error) {
	opt, err := opt.resolved()
	if err != nil {
		return Reliability{}, err
	}
	var r Reliability
	if len(items) == 0 {
		return r, fmt.Errorf("score: repeated runs: no items")
	}
	r.K = len(items[0].Attempts)
	if r.K == 0 {
		return Reliability{}, fmt.Errorf("score: repeated runs: item %s of patient %s has no attempt", items[0].Item, items[0].Patient)
	}
	// Patients in id order; per patient [right answers, answers, all right,
	// any right, agree, items].
	sorted := append([]RepeatedItem(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Patient < sorted[j].Patient })
	var stats [][]float64
	perAttempt := make([]float64, r.K)
	for i, it := range sorted {
		if len(it.Attempts) != r.K {
			return Reliability{}, fmt.Errorf("score: repeated runs: item %s of patient %s has %d attempts, others %d; give every item the same attempts", it.Item, it.Patient, len(it.Attempts), r.K)
		}
		if i == 0 || it.Patient != sorted[i-1].Patient {
			stats = append(stats, make([]float64, 6))
		}
		gradeable := true
		for _, a := range it.Attempts {
			gradeable = gradeable && !a.NotRun
		}
		if !gradeable {
			r.Dropped++
			continue
		}
		r.Items++
		right := 0
		agree := it.Attempts[0].Pred.OK()
		for j, a := range it.Attempts {
			if a.Pred.Is(it.Gold) {
				right++
				perAttempt[j]++
			}
			agree = agree && a.Pred.Is(it.Attempts[0].Pred.Value)
		}
		v := stats[len(stats)-1]
		v[0] += float64(right)
		v[1] += float64(r.K)
		v[2] += b2f(right == r.K)
		v[3] += b2f(right > 0)
		v[4] += b2f(agree)
		v[5]++
	}
	r.Complete = r.Dropped == 0
	if r.Items == 0 {
		return r, nil
	}
	for j := range perAttempt {
		perAttempt[j] = 100 * perAttempt[j] / float64(r.Items)
	}
	r.PerAttempt = perAttempt
	r.SD = sampleSD(perAttempt)
	rs := newResampler(len(stats), opt)
	r.AvgAtK = scoreAt(stats, 0, 1, rs)
	r.PassHatK = scoreAt(stats, 2, 5, rs)
	r.PassAtK = scoreAt(stats, 3, 5, rs)
	r.Agreement = scoreAt(stats, 4, 5, rs)
	return r, nil
}

// sampleSD is the standard deviation with k−1 in the denominator; 0 for
// fewer than two values.
func sampleSD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}
