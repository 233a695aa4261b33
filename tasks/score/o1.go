package score

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// O1 ConsultRubrics (the paper's C.5.1, Eq. A7 and A8): each free-text
// response is judged criterion by criterion; positive requirements earn
// their weight, triggered major and minor errors deduct two and one point.

// Criterion kinds, as the dataset names them.
const (
	KindPositive = "positive"
	KindMajor    = "major"
	KindMinor    = "minor"
)

// JudgedItem is one model's response to one O1 item with the judge's
// verdict on each of the item's criteria.
type JudgedItem struct {
	// Case is the cluster the bootstrap resamples; Item the item's id.
	Case string `json:"case"`
	Item string `json:"item"`
	// Tags are the item's clinical tags.
	Tags []string `json:"tags,omitempty"`
	// Points is B_i, the sum of the positive requirements' weights.
	Points float64 `json:"points"`
	// Criteria hold every criterion of the item and its verdict.
	Criteria []JudgedCriterion `json:"criteria"`
	// Missing, when set, says why the item has no response to judge (its
	// request was not run, or is not in the journal): it is not in V.
	Missing string `json:"missing,omitempty"`
}

// JudgedCriterion is one criterion and the judge's verdict on it.
type JudgedCriterion struct {
	ID      string  `json:"id"`
	Kind    string  `json:"kind"`
	Section string  `json:"section,omitempty"`
	Weight  float64 `json:"weight,omitempty"`
	// Met is criteria_met: a requirement satisfied, or an error present.
	Met bool `json:"met"`
	// Invalid, when set, says why the criterion has no valid judgment
	// (Met is then meaningless): the item leaves V.
	Invalid string `json:"invalid,omitempty"`
}

// O1Score holds the O1 endpoints of one model under one judge.
type O1Score struct {
	// Items counts the model's O1 items; Valid those with a valid
	// judgment of every criterion, the set V of Eq. A7.
	Items int `json:"items"`
	Valid int `json:"valid"`
	// Cases counts the cases with an item in V.
	Cases int `json:"cases"`
	// Complete is true when every item is in V.
	Complete bool `json:"complete"`
	// FellOut counts the items left out of V by reason.
	FellOut []ReasonCount `json:"fell_out,omitempty"`
	// Score is O1 = (1/|V|) Σ_{i∈V} R_i (Eq. A7), in 0–100, with a
	// case-cluster bootstrap interval.
	Score *Score `json:"score,omitempty"`
	// CaseMean averages R_i within each case, then across cases.
	CaseMean *Score `json:"case_mean,omitempty"`
	// Major and Minor are Eq. A8's error rates: the share of items in V
	// with at least one triggered criterion of that severity.
	Major *Score `json:"major,omitempty"`
	Minor *Score `json:"minor,omitempty"`
	// Tags holds the score over the items of each clinical tag (V
	// restricted to the tag), in the order of the tags given.
	Tags []TagScore `json:"tags,omitempty"`
	// Rates are Fig. 5d's criterion-level rates: for each positive
	// section the percentage of its criteria satisfied, for each error
	// kind the percentage not triggered; every criterion counts once.
	Rates []CriterionRate `json:"rates,omitempty"`
	// PerItem holds each item's raw and normalised score (items in V).
	PerItem []ItemScore `json:"per_item,omitempty"`
}

// ReasonCount counts items or labels left out for one reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// ReasonsText lists reasons with their counts, "2: no verdict; 1: …", or
// "none".
func ReasonsText(rc []ReasonCount) string {
	if len(rc) == 0 {
		return "none"
	}
	parts := make([]string, len(rc))
	for i, c := range rc {
		parts[i] = fmt.Sprintf("%d: %s", c.Count, c.Reason)
	}
	return strings.Join(parts, "; ")
}

// RatioText is a ratio (κ, sensitivity, specificity) to three decimals,
// "–" when it is undefined.
func RatioText(v *float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

// TagScore is the O1 score over the items of one clinical tag.
type TagScore struct {
	Tag   string `json:"tag"`
	Items int    `json:"items"`
	Score *Score `json:"score,omitempty"`
}

// CriterionRate is one bar of Fig. 5d.
type CriterionRate struct {
	// Name is a positive section ("core", "evidence", "conditional",
	// "positive" for requirements without one) or an error kind ("major",
	// "minor").
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Rate is the percentage of the criteria satisfied (positive) or not
	// triggered (error avoidance).
	Rate *Score `json:"rate,omitempty"`
}

// ItemScore is one item's Eq. A7 score.
type ItemScore struct {
	Item string `json:"item"`
	Case string `json:"case"`
	// Raw is r_i in points, Normalised R_i = 100 r_i / B_i.
	Raw        float64 `json:"raw"`
	Normalised float64 `json:"normalised"`
	// Majors and Minors count the triggered error criteria (H_i^maj,
	// H_i^min).
	Majors int `json:"majors"`
	Minors int `json:"minors"`
}

// RawScore is Eq. A7's r_i: max(0, Σ_{A_i} w·z − 2 Σ_{E^maj} z − Σ_{E^min} z),
// with the triggered majors and minors. Deductions accumulate across
// criteria before the floor.
func RawScore(cs []JudgedCriterion) (r float64, majors, minors int) {
	for _, c := range cs {
		if !c.Met {
			continue
		}
		switch c.Kind {
		case KindPositive:
			r += c.Weight
		case KindMajor:
			majors++
		case KindMinor:
			minors++
		}
	}
	return max(0, r-2*float64(majors)-float64(minors)), majors, minors
}

// O1 scores one model's judged items (Eq. A7, A8). tags gives the clinical
// tags to report, in order. An item is in V only when every criterion has
// a valid judgment and it has a response; the others are counted by
// reason in FellOut. An item listed twice, or one whose B_i is not
// positive, is an error.
func O1(items []JudgedItem, tags []string, opt Options) (O1Score, error) {
	opt, err := opt.resolved()
	if err != nil {
		return O1Score{}, err
	}
	var s O1Score
	s.Items = len(items)
	valid, fell, err := splitValid(items)
	if err != nil {
		return O1Score{}, err
	}
	s.FellOut = fell
	s.Valid = len(valid)
	s.Complete = s.Valid == s.Items
	cases := byCase(valid)
	s.Cases = len(cases)
	rs := newResampler(len(cases), opt)
	stats := func(f func(it JudgedItem, sc ItemScore) (num, den float64)) [][]float64 {
		out := make([][]float64, len(cases))
		for c, its := range cases {
			var num, den float64
			for _, it := range its {
				n, d := f(it.item, it.score)
				num, den = num+n, den+d
			}
			out[c] = []float64{num, den}
		}
		return out
	}
	s.Score = percentScore(stats(func(_ JudgedItem, sc ItemScore) (float64, float64) { return sc.Normalised / 100, 1 }), rs)
	s.CaseMean = percentScore(caseMeans(cases), rs)
	s.Major = percentScore(stats(func(_ JudgedItem, sc ItemScore) (float64, float64) { return b2f(sc.Majors > 0), 1 }), rs)
	s.Minor = percentScore(stats(func(_ JudgedItem, sc ItemScore) (float64, float64) { return b2f(sc.Minors > 0), 1 }), rs)
	for _, tag := range tags {
		st := stats(func(it JudgedItem, sc ItemScore) (float64, float64) {
			if !slices.Contains(it.Tags, tag) {
				return 0, 0
			}
			return sc.Normalised / 100, 1
		})
		ts := TagScore{Tag: tag, Score: percentScore(st, rs)}
		for _, x := range st {
			ts.Items += int(x[1])
		}
		s.Tags = append(s.Tags, ts)
	}
	s.Rates = criterionRates(cases, rs)
	for _, its := range cases {
		for _, it := range its {
			s.PerItem = append(s.PerItem, it.score)
		}
	}
	return s, nil
}

// scoredItem is an item of V with its Eq. A7 score.
type scoredItem struct {
	item  JudgedItem
	score ItemScore
}

// splitValid returns the items of V, scored, and counts the others by
// the reason they fell out.
func splitValid(items []JudgedItem) ([]scoredItem, []ReasonCount, error) {
	seen := map[string]bool{}
	var valid []scoredItem
	counts := map[string]int{}
	for _, it := range items {
		if seen[it.Item] {
			return nil, nil, fmt.Errorf("score: O1 item %s is listed twice; give each item once", it.Item)
		}
		seen[it.Item] = true
		if !(it.Points > 0) || math.IsInf(it.Points, 0) {
			return nil, nil, fmt.Errorf("score: O1 item %s has B_i = %g points; the positive weights must add up to a positive number (Eq. A7 divides by it)", it.Item, it.Points)
		}
		if why := outOfV(it); why != "" {
			counts[why]++
			continue
		}
		r, maj, mnr := RawScore(it.Criteria)
		valid = append(valid, scoredItem{it, ItemScore{Item: it.Item, Case: it.Case, Raw: r, Normalised: 100 * r / it.Points, Majors: maj, Minors: mnr}})
	}
	var fell []ReasonCount
	for r, n := range counts {
		fell = append(fell, ReasonCount{Reason: r, Count: n})
	}
	slices.SortFunc(fell, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), strings.Compare(a.Reason, b.Reason))
	})
	return valid, fell, nil
}

// outOfV says why an item is not in V, "" when it is: no response, no
// criterion, or a criterion without a valid judgment (the first one's
// reason).
func outOfV(it JudgedItem) string {
	switch {
	case it.Missing != "":
		return it.Missing
	case len(it.Criteria) == 0:
		return "the item has no criterion"
	}
	for _, c := range it.Criteria {
		if c.Invalid != "" {
			return c.Invalid
		}
	}
	return ""
}

// byCase groups the items of V by case, cases sorted by id and items in
// input order.
func byCase(items []scoredItem) [][]scoredItem {
	index := map[string]int{}
	var ids []string
	var groups [][]scoredItem
	for _, it := range items {
		i, ok := index[it.item.Case]
		if !ok {
			i = len(ids)
			index[it.item.Case] = i
			ids = append(ids, it.item.Case)
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], it)
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ids[a], ids[b]) })
	out := make([][]scoredItem, len(order))
	for i, o := range order {
		out[i] = groups[o]
	}
	return out
}

// caseMeans are the per-case statistics of the case-averaged score: the
// mean R_i of the case (as a fraction), and 1.
func caseMeans(cases [][]scoredItem) [][]float64 {
	out := make([][]float64, len(cases))
	for c, its := range cases {
		sum := 0.0
		for _, it := range its {
			sum += it.score.Normalised / 100
		}
		out[c] = []float64{sum / float64(len(its)), 1}
	}
	return out
}

// criterionRates counts, per positive section and error kind, the
// criteria satisfied (positive) or not triggered (errors), over V.
func criterionRates(cases [][]scoredItem, rs *resampler) []CriterionRate {
	type key struct{ name, kind string }
	var order []key
	for _, sec := range []string{"core", "evidence", "conditional", KindPositive} {
		order = append(order, key{sec, KindPositive})
	}
	order = append(order, key{KindMajor, KindMajor}, key{KindMinor, KindMinor})
	var out []CriterionRate
	for _, k := range order {
		st := make([][]float64, len(cases))
		any := false
		for c, its := range cases {
			var good, n float64
			for _, it := range its {
				for _, cr := range it.item.Criteria {
					if cr.Kind != k.kind || k.kind == KindPositive && sectionOf(cr) != k.name {
						continue
					}
					n++
					any = true
					if cr.Met == (k.kind == KindPositive) {
						good++
					}
				}
			}
			st[c] = []float64{good, n}
		}
		if any {
			out = append(out, CriterionRate{Name: k.name, Kind: k.kind, Rate: percentScore(st, rs)})
		}
	}
	return out
}

// sectionOf is a positive requirement's section, "positive" when it has
// none.
func sectionOf(c JudgedCriterion) string {
	if c.Section == "" {
		return KindPositive
	}
	return c.Section
}

// Interval methods of the O1 and calibration endpoints: the clusters
// resampled are cases, or audited responses.
const (
	MethodCaseBootstrap     = "case_bootstrap"
	MethodResponseBootstrap = "response_bootstrap"
)

// percentScore is Σnum/Σden as a Score whose denominator counts the
// units (den is a count), with its case-cluster bootstrap interval.
func percentScore(stats [][]float64, rs *resampler) *Score {
	return clusterScore(stats, rs, MethodCaseBootstrap)
}

// clusterScore is Σnum/Σden with the bootstrap interval of the clusters
// stats are given for, its method named.
func clusterScore(stats [][]float64, rs *resampler, method string) *Score {
	s := scoreFromStats(stats, rs, ratio(0, 1))
	if s != nil && s.Bootstrap != nil {
		s.Bootstrap.Method = method
	}
	return s
}
