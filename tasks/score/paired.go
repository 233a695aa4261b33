package score

import "fmt"

// Comparison is a matched control: the same units scored under a baseline
// and a treatment condition (the paper's C.2.3, C.4), and the change.
type Comparison struct {
	// Name says what is compared; Baseline and Treatment name the two
	// conditions (task keys).
	Name      string `json:"name"`
	Baseline  string `json:"baseline"`
	Treatment string `json:"treatment"`
	// Units counts the matched units scored under both conditions (the M
	// of Eq. A6), Patients the patients they belong to. Unmatched counts
	// units scored under one condition only, left out; Complete is false
	// when a unit of either condition was not run.
	Units     int  `json:"units"`
	Patients  int  `json:"patients"`
	Unmatched int  `json:"unmatched,omitempty"`
	Complete  bool `json:"complete"`
	// Micro is item-micro (turn) accuracy; PatientMacro the mean of
	// per-patient accuracy (Eq. A5's endpoint); AllCorrect the share of
	// patients with every unit right (all-turn, all-care). The patient
	// endpoints leave out a patient with a not-run unit.
	Micro        Paired `json:"micro"`
	PatientMacro Paired `json:"patient_macro"`
	AllCorrect   Paired `json:"all_correct"`
	// Corrected and Harmed count units wrong under the baseline and right
	// under the treatment, and the reverse (u and v of Eq. A6); Flip is Φ =
	// 100(u+v)/M, the percentage of units whose correctness changed.
	Corrected int     `json:"corrected"`
	Harmed    int     `json:"harmed"`
	Flip      float64 `json:"flip"`
	// Better, Worse and Same count patients whose accuracy rose, fell or
	// stayed under the treatment (Table A23's B/W/S).
	Better int `json:"better"`
	Worse  int `json:"worse"`
	Same   int `json:"same"`
}

// Paired is one endpoint under both conditions and its change, treatment
// minus baseline in percentage points, with a paired patient-cluster
// bootstrap interval: each draw resamples patients with both conditions of
// every unit.
type Paired struct {
	Baseline   *Score    `json:"baseline,omitempty"`
	Treatment  *Score    `json:"treatment,omitempty"`
	Difference float64   `json:"difference"`
	Interval   *Interval `json:"interval,omitempty"`
}

// The statistics of one patient in a comparison, by index.
const (
	pcB, pcT, pn               = 0, 1, 2 // micro: right under each condition, units
	paccB, paccT, pallB, pallT = 3, 4, 5, 6
	pk                         = 7 // 1 when the patient counts in the patient endpoints
	pstats                     = 8
)

// Compare pairs each baseline unit with the treatment unit of the same key
// (key(u) names a unit across conditions: its item id without the task)
// and scores the change. Excluded units leave the comparison; a key given
// twice in one condition is an error naming it.
func Compare(name, baseline, treatment string, base, treat []Unit, key func(Unit) string, opt Options) (Comparison, error) {
	opt, err := opt.resolved()
	if err != nil {
		return Comparison{}, err
	}
	c := Comparison{Name: name, Baseline: baseline, Treatment: treatment, Complete: true}
	byKey := map[string]Unit{}
	for _, u := range treat {
		k := key(u)
		if _, dup := byKey[k]; dup {
			return Comparison{}, fmt.Errorf("score: %s: unit %s appears twice under %s", name, k, treatment)
		}
		byKey[k] = u
	}
	var pairs [][2]Unit
	seen := map[string]bool{}
	for _, b := range base {
		k := key(b)
		if seen[k] {
			return Comparison{}, fmt.Errorf("score: %s: unit %s appears twice under %s", name, k, baseline)
		}
		seen[k] = true
		if t, ok := byKey[k]; ok {
			pairs = append(pairs, [2]Unit{b, t})
		}
	}
	c.Unmatched = len(base) + len(treat) - 2*len(pairs)
	c.score(pairs, opt)
	return c, nil
}

// score fills the endpoints from the matched pairs.
func (c *Comparison) score(pairs [][2]Unit, opt Options) {
	index := map[string]int{}
	var stats [][]float64
	incomplete := map[int]bool{}
	for _, p := range pairs {
		b, t := p[0], p[1]
		if b.Excluded || t.Excluded {
			continue
		}
		i, ok := index[b.Patient]
		if !ok {
			i = len(stats)
			index[b.Patient] = i
			stats = append(stats, make([]float64, pstats))
		}
		if b.NotRun || t.NotRun {
			c.Complete = false
			incomplete[i] = true
			continue
		}
		cb, ct := b2f(b.Correct()), b2f(t.Correct())
		stats[i][pcB] += cb
		stats[i][pcT] += ct
		stats[i][pn]++
		switch {
		case cb == 0 && ct == 1:
			c.Corrected++
		case cb == 1 && ct == 0:
			c.Harmed++
		}
	}
	for i, s := range stats {
		c.Units += int(s[pn])
		if s[pn] == 0 {
			continue
		}
		c.Patients++
		if incomplete[i] {
			continue
		}
		s[paccB], s[paccT] = s[pcB]/s[pn], s[pcT]/s[pn]
		s[pallB], s[pallT] = b2f(s[pcB] == s[pn]), b2f(s[pcT] == s[pn])
		s[pk] = 1
		switch d := s[paccT] - s[paccB]; {
		case d > 1e-12:
			c.Better++
		case d < -1e-12:
			c.Worse++
		default:
			c.Same++
		}
	}
	if c.Units > 0 {
		c.Flip = 100 * float64(c.Corrected+c.Harmed) / float64(c.Units)
	}
	rs := newResampler(len(stats), opt)
	c.Micro = pairedEndpoint(stats, rs, pcB, pcT, pn)
	c.PatientMacro = pairedEndpoint(stats, rs, paccB, paccT, pk)
	c.AllCorrect = pairedEndpoint(stats, rs, pallB, pallT, pk)
	opt.exact(c.AllCorrect.Baseline)
	opt.exact(c.AllCorrect.Treatment)
}

// pairedEndpoint is the ratio Σb/Σden and Σt/Σden under the two
// conditions and their difference, all from the same bootstrap draws.
func pairedEndpoint(stats [][]float64, rs *resampler, b, t, den int) Paired {
	sum := make([]float64, pstats)
	for _, s := range stats {
		for j, v := range s {
			sum[j] += v
		}
	}
	var p Paired
	p.Baseline, p.Treatment = newScore(sum[b], int(sum[den])), newScore(sum[t], int(sum[den]))
	if p.Baseline == nil {
		return Paired{}
	}
	p.Baseline.Bootstrap = rs.interval(stats, ratio(b, den))
	p.Treatment.Bootstrap = rs.interval(stats, ratio(t, den))
	p.Difference = p.Treatment.Percent - p.Baseline.Percent
	p.Interval = rs.interval(stats, func(sum []float64) (float64, bool) {
		if sum[den] <= 0 {
			return 0, false
		}
		return 100 * (sum[t] - sum[b]) / sum[den], true
	})
	return p
}
