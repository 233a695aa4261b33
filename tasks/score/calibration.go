package score

import (
	"fmt"
	"slices"
	"strings"
)

// Judge calibration against physicians (the paper's Appendix D.3, Eq. A9):
// within a calibration set, h and ĥ are the physician's and the judge's
// binary labels of each criterion; TP, FP, TN and FN count (h, ĥ) = (1,1),
// (0,1), (0,0), (1,0).

// LabelPair is one physician label and the judge's verdict on the same
// (response, criterion).
type LabelPair struct {
	// Response is the cluster the bootstrap resamples ("the figure's
	// intervals resample 54 complete response clusters").
	Response  string `json:"response"`
	Criterion string `json:"criterion"`
	Kind      string `json:"kind"`
	Physician bool   `json:"physician"`
	Judge     bool   `json:"judge"`
	// Invalid, when set, says why the judge has no valid verdict: the
	// pair is left out of n and counted.
	Invalid string `json:"invalid,omitempty"`
}

// Agreement is a judge's agreement with physicians over a set of labels.
// Rates are proportions in 0–1 (nil when their denominator is 0); the
// percentage agreement is 100·Po.
type Agreement struct {
	// N counts the valid pairs; TP+FP+TN+FN = N.
	N  int `json:"n"`
	TP int `json:"tp"`
	FP int `json:"fp"`
	TN int `json:"tn"`
	FN int `json:"fn"`
	// Po is observed agreement (TP+TN)/n; Kappa is Cohen's κ =
	// (Po − Pe)/(1 − Pe) with Pe = qH·qJ + (1−qH)(1−qJ).
	Po    *float64 `json:"po,omitempty"`
	Kappa *float64 `json:"kappa,omitempty"`
	// QH and QJ are the physician- and judge-positive rates ("True rate"
	// is QJ).
	QH *float64 `json:"q_h,omitempty"`
	QJ *float64 `json:"q_j,omitempty"`
	// Sensitivity TP/(TP+FN), Specificity TN/(TN+FP), Balanced their mean.
	Sensitivity *float64 `json:"sensitivity,omitempty"`
	Specificity *float64 `json:"specificity,omitempty"`
	Balanced    *float64 `json:"balanced,omitempty"`
	// Percent is 100·Po with a response-cluster bootstrap interval.
	Percent *Score `json:"percent,omitempty"`
}

// KindAgreement is the agreement over the labels of one criterion kind.
type KindAgreement struct {
	Kind      string    `json:"kind"`
	Agreement Agreement `json:"agreement"`
}

// Calibration is one judge against the physicians' labels.
type Calibration struct {
	// Labels counts the physician labels; Missing the ones without a
	// valid verdict of the judge, by reason (left out of every n).
	Labels  int           `json:"labels"`
	Missing []ReasonCount `json:"missing,omitempty"`
	// All is the agreement over every valid pair; ByKind per criterion
	// kind (positive, major, minor), for the kinds labelled.
	All    Agreement       `json:"all"`
	ByKind []KindAgreement `json:"by_kind,omitempty"`
}

// Calibrate measures a judge against physician labels (Eq. A9). A pair
// listed twice (same response and criterion) is an error.
func Calibrate(pairs []LabelPair, opt Options) (Calibration, error) {
	opt, err := opt.resolved()
	if err != nil {
		return Calibration{}, err
	}
	c := Calibration{Labels: len(pairs)}
	seen := map[[2]string]bool{}
	missing := map[string]int{}
	var valid []LabelPair
	for _, p := range pairs {
		k := [2]string{p.Response, p.Criterion}
		if seen[k] {
			return Calibration{}, fmt.Errorf("score: physician label of response %s, criterion %s is given twice", p.Response, p.Criterion)
		}
		seen[k] = true
		if p.Invalid != "" {
			missing[p.Invalid]++
			continue
		}
		valid = append(valid, p)
	}
	for r, n := range missing {
		c.Missing = append(c.Missing, ReasonCount{Reason: r, Count: n})
	}
	slices.SortFunc(c.Missing, func(a, b ReasonCount) int { return strings.Compare(a.Reason, b.Reason) })
	c.All = agreement(valid, opt)
	for _, kind := range []string{KindPositive, KindMajor, KindMinor} {
		var sub []LabelPair
		for _, p := range valid {
			if p.Kind == kind {
				sub = append(sub, p)
			}
		}
		if len(sub) > 0 {
			c.ByKind = append(c.ByKind, KindAgreement{Kind: kind, Agreement: agreement(sub, opt)})
		}
	}
	return c, nil
}

// agreement counts the confusion table of pairs and derives Eq. A9's
// measures, with the percentage agreement's response-cluster interval.
func agreement(pairs []LabelPair, opt Options) Agreement {
	var a Agreement
	for _, p := range pairs {
		switch {
		case p.Physician && p.Judge:
			a.TP++
		case !p.Physician && p.Judge:
			a.FP++
		case !p.Physician && !p.Judge:
			a.TN++
		default:
			a.FN++
		}
	}
	a.N = a.TP + a.FP + a.TN + a.FN
	if a.N == 0 {
		return a
	}
	n := float64(a.N)
	po := float64(a.TP+a.TN) / n
	qh := float64(a.TP+a.FN) / n
	qj := float64(a.TP+a.FP) / n
	a.Po, a.QH, a.QJ = &po, &qh, &qj
	if pe := qh*qj + (1-qh)*(1-qj); pe < 1 {
		k := (po - pe) / (1 - pe)
		a.Kappa = &k
	}
	a.Sensitivity = fraction(a.TP, a.TP+a.FN)
	a.Specificity = fraction(a.TN, a.TN+a.FP)
	if a.Sensitivity != nil && a.Specificity != nil {
		b := (*a.Sensitivity + *a.Specificity) / 2
		a.Balanced = &b
	}
	// Response clusters, sorted by id, each [agreeing pairs, pairs].
	index := map[string]int{}
	var ids []string
	var stats [][]float64
	for _, p := range pairs {
		i, ok := index[p.Response]
		if !ok {
			i = len(ids)
			index[p.Response] = i
			ids = append(ids, p.Response)
			stats = append(stats, []float64{0, 0})
		}
		stats[i][0] += b2f(p.Physician == p.Judge)
		stats[i][1]++
	}
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return strings.Compare(ids[x], ids[y]) })
	sorted := make([][]float64, len(order))
	for i, o := range order {
		sorted[i] = stats[o]
	}
	a.Percent = clusterScore(sorted, newResampler(len(sorted), opt), MethodResponseBootstrap)
	return a
}

func fraction(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	f := float64(num) / float64(den)
	return &f
}
