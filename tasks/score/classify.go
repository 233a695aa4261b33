package score

import (
	"fmt"
	"sort"
)

// Majority-class baselines the paper states, in percent, to print beside
// the tables (npcbench.md). Baselines computed from a cohort's own gold
// labels come from Majority.
const (
	// PaperL3PathologyMajority: 39 NPC-positive of 69 overview cases.
	PaperL3PathologyMajority = 56.5
	// PaperTMajority: T3 or T4, 150 of the 400-patient T cohort.
	PaperTMajority = 37.5
	// PaperNMajority: N1, 160 of the 400-patient N cohort.
	PaperNMajority = 40.0
	// PaperCarePathPathologyMajority: CarePath pathology, 99 of 100 positive.
	PaperCarePathPathologyMajority = 99.0
	// PaperCarePathT3Constant: answering T3 for every CarePath patient.
	PaperCarePathT3Constant = 58.0
)

// Baseline is what a constant answer scores on a cohort.
type Baseline struct {
	// Class is the majority gold class (the first in class order on a tie).
	Class string `json:"class"`
	// Count of Total cohort units (not excluded) have that gold class.
	Count int `json:"count"`
	Total int `json:"total"`
	// Percent is the accuracy of always answering Class.
	Percent float64 `json:"percent"`
	// Balanced is the balanced accuracy of any constant answer: 100/K for
	// K classes with support.
	Balanced float64 `json:"balanced"`
}

// Majority computes the majority-class baseline from the gold labels of the
// cohort: every unit not excluded, answered or not. A constant answer needs
// no model, so the baseline is the cohort's, the same for every model of a
// run, however many of its items each left not run. Classes gives the
// tie-break order; gold labels outside it follow in sorted order.
func Majority(units []Unit, classes []string) *Baseline {
	counts := map[string]int{}
	total := 0
	for _, u := range units {
		if !u.Excluded {
			counts[u.Gold]++
			total++
		}
	}
	if total == 0 {
		return nil
	}
	order := append([]string(nil), classes...)
	var extra []string
	for c := range counts {
		if !containsString(order, c) {
			extra = append(extra, c)
		}
	}
	sort.Strings(extra)
	order = append(order, extra...)
	b := &Baseline{Total: total}
	k := 0
	for _, c := range order {
		if counts[c] > 0 {
			k++
		}
		if counts[c] > b.Count {
			b.Class, b.Count = c, counts[c]
		}
	}
	b.Percent = 100 * float64(b.Count) / float64(total)
	b.Balanced = 100 / float64(k)
	return b
}

// ClassStats are the diagnostics of one class (Eq. A4). A ratio whose
// denominator is zero is absent.
type ClassStats struct {
	Class string `json:"class"`
	// Support counts units whose gold label is the class.
	Support int `json:"support"`
	// Predicted counts units answered with the class.
	Predicted int `json:"predicted"`
	// TP, FP and FN as in Eq. A4; a failed extraction is a false negative
	// of its gold class and a false positive of none.
	TP        int      `json:"tp"`
	FP        int      `json:"fp"`
	FN        int      `json:"fn"`
	Recall    *float64 `json:"recall,omitempty"`
	Precision *float64 `json:"precision,omitempty"`
	F1        *float64 `json:"f1,omitempty"`
}

// InvalidColumn labels the confusion column of failed extractions and of
// answers outside the class list.
const InvalidColumn = "invalid"

// Confusion is a confusion matrix: Counts[i][j] counts units of gold class
// Classes[i] answered with Columns[j]; Columns is Classes then
// InvalidColumn.
type Confusion struct {
	Classes []string `json:"classes"`
	Columns []string `json:"columns"`
	Counts  [][]int  `json:"counts"`
}

// TaskScore is the full table of one closed-answer task.
type TaskScore struct {
	// Units counts scored units; Patients the patients they belong to.
	Units    int `json:"units"`
	Patients int `json:"patients"`
	// NotRun and Excluded count the units left out; Complete is true when
	// none is not-run.
	NotRun   int  `json:"not_run"`
	Excluded int  `json:"excluded"`
	Complete bool `json:"complete"`
	// Failures tallies failed extractions (each scored wrong).
	Failures []FailureCount `json:"failures,omitempty"`
	// Accuracy is item-micro accuracy (Eq. A1). Its Exact interval is given
	// when every patient has one unit.
	Accuracy *Score `json:"accuracy,omitempty"`
	// Balanced is the mean recall over classes with gold support.
	Balanced *Score `json:"balanced,omitempty"`
	// GroupMacro is the mean of group accuracies (Eq. A1), when units carry
	// groups; its interval resamples units within their groups.
	GroupMacro *Score `json:"group_macro,omitempty"`
	// PatientMacro (mean of per-patient accuracy) and AllCorrect (every unit
	// of the patient right), Eq. A2; given when some patient has more than
	// one unit. A patient with a not-run unit is left out of both.
	PatientMacro *Score `json:"patient_macro,omitempty"`
	AllCorrect   *Score `json:"all_correct,omitempty"`
	// Classes and Confusion follow the class order given to Classify.
	Classes   []ClassStats `json:"classes,omitempty"`
	Confusion *Confusion   `json:"confusion,omitempty"`
	// Majority is the majority-class baseline of this cohort (every unit
	// not excluded, not run or not).
	Majority *Baseline `json:"majority,omitempty"`
	// Groups and Tags are the item-micro accuracy of each group and of
	// each tag, in name order (the per-group and per-tag tables).
	Groups []Slice `json:"groups,omitempty"`
	Tags   []Slice `json:"tags,omitempty"`
	// Chance holds what answering without reading scores under each
	// endpoint: the most frequent reference answer, and a uniformly random
	// option; given when every scored unit carries its Chance.
	Chance *ChanceBaselines `json:"chance,omitempty"`
}

// Classify scores one closed-answer task. classes lists the categories in
// display order (T1..T4, the sequence classes, "0","1"); it may be nil for
// tasks without class diagnostics (care decisions, whose letters differ per
// item). A gold label outside a non-nil class list is an error: the dataset
// and the task disagree.
func Classify(units []Unit, classes []string, opt Options) (TaskScore, error) {
	opt, err := opt.resolved()
	if err != nil {
		return TaskScore{}, err
	}
	var ts TaskScore
	for _, u := range units {
		switch {
		case u.Excluded:
			ts.Excluded++
		case u.NotRun:
			ts.NotRun++
		default:
			ts.Units++
			if classes != nil && !containsString(classes, u.Gold) {
				return TaskScore{}, fmt.Errorf("score: patient %s item %s: gold label %q is not one of %v; check the dataset's labels for this task", u.Patient, u.Item, u.Gold, classes)
			}
		}
	}
	ts.Complete = ts.NotRun == 0
	ts.Failures = countFailures(units)
	ids, groups := byPatient(units)
	rs := newResampler(len(ids), opt)

	// Item-micro accuracy: per patient (correct, scored).
	micro := make([][]float64, len(ids))
	single := true
	for p, us := range groups {
		var c, n float64
		for _, u := range us {
			if u.scored() {
				n++
				c += b2f(u.Correct())
			}
		}
		micro[p] = []float64{c, n}
		if n > 0 {
			ts.Patients++
		}
		if n > 1 {
			single = false
		}
	}
	ts.Accuracy = scoreFromStats(micro, rs, ratio(0, 1))
	if single {
		opt.exact(ts.Accuracy)
	}
	if !single {
		ts.PatientMacro, ts.AllCorrect = patientLevel(groups, rs, opt)
	}
	ts.GroupMacro = groupMacro(units, opt)
	ts.Groups, ts.Tags = sliceScores(units, func(u Unit) []string { return nonEmpty(u.Group) }, opt),
		sliceScores(units, func(u Unit) []string { return u.Tags }, opt)
	ts.Chance = chanceBaselines(units)
	if classes != nil {
		ts.Classes, ts.Confusion = classStats(units, classes)
		ts.Balanced = balanced(groups, classes, rs)
		ts.Majority = Majority(units, classes)
	}
	return ts, nil
}

// patientLevel computes patient-macro accuracy and AllCorrect over patients
// with at least one scored unit and no not-run unit.
func patientLevel(groups [][]Unit, rs *resampler, opt Options) (macro, all *Score) {
	macroStats := make([][]float64, len(groups))
	allStats := make([][]float64, len(groups))
	for p, us := range groups {
		var c, n float64
		notRun := false
		for _, u := range us {
			if u.Excluded {
				continue
			}
			if u.NotRun {
				notRun = true
			}
			n++
			c += b2f(u.Correct())
		}
		if notRun || n == 0 {
			macroStats[p] = []float64{0, 0}
			allStats[p] = []float64{0, 0}
			continue
		}
		macroStats[p] = []float64{c / n, 1}
		allStats[p] = []float64{b2f(c == n), 1}
	}
	macro = scoreFromStats(macroStats, rs, ratio(0, 1))
	all = scoreFromStats(allStats, rs, ratio(0, 1))
	opt.exact(all)
	return macro, all
}

// balanced is the mean recall over classes with support.
func balanced(groups [][]Unit, classes []string, rs *resampler) *Score {
	return meanSlotAccuracy(groups, classes, func(u Unit) string { return u.Gold }, rs)
}

// meanSlotAccuracy is the mean over slots (groups, classes) of the accuracy
// of the scored units in each slot, with a patient-cluster bootstrap. A
// unit whose slot is not among slots counts in none.
func meanSlotAccuracy(groups [][]Unit, slots []string, slot func(Unit) string, rs *resampler) *Score {
	stats := make([][]float64, len(groups))
	total := make([]float64, 2*len(slots))
	for p, us := range groups {
		v := make([]float64, 2*len(slots))
		for _, u := range us {
			if !u.scored() {
				continue
			}
			k := indexOf(slots, slot(u))
			if k < 0 {
				continue
			}
			v[2*k] += b2f(u.Correct())
			v[2*k+1]++
		}
		stats[p] = v
		for j := range v {
			total[j] += v[j]
		}
	}
	sc := newScore(sumOfRatios(total))
	if sc != nil {
		sc.Bootstrap = rs.interval(stats, meanOfRatios)
	}
	return sc
}

// classStats computes per-class diagnostics and the confusion matrix over
// scored units.
func classStats(units []Unit, classes []string) ([]ClassStats, *Confusion) {
	cm := &Confusion{
		Classes: append([]string(nil), classes...),
		Columns: append(append([]string(nil), classes...), InvalidColumn),
		Counts:  make([][]int, len(classes)),
	}
	for i := range cm.Counts {
		cm.Counts[i] = make([]int, len(classes)+1)
	}
	stats := make([]ClassStats, len(classes))
	for i, c := range classes {
		stats[i].Class = c
	}
	for _, u := range units {
		if !u.scored() {
			continue
		}
		g := indexOf(classes, u.Gold)
		p := -1
		if u.Pred.OK() {
			p = indexOf(classes, u.Pred.Value)
		}
		stats[g].Support++
		if p < 0 {
			cm.Counts[g][len(classes)]++
			stats[g].FN++
			continue
		}
		cm.Counts[g][p]++
		stats[p].Predicted++
		if p == g {
			stats[g].TP++
		} else {
			stats[g].FN++
			stats[p].FP++
		}
	}
	for i := range stats {
		s := &stats[i]
		s.Recall = percentOrNil(s.TP, s.TP+s.FN)
		s.Precision = percentOrNil(s.TP, s.TP+s.FP)
		s.F1 = percentOrNil(2*s.TP, 2*s.TP+s.FP+s.FN)
	}
	return stats, cm
}

func percentOrNil(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	v := 100 * float64(num) / float64(den)
	return &v
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func containsString(list []string, s string) bool { return indexOf(list, s) >= 0 }
