package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// presentationWindow is how long after ED arrival a value still counts as "at presentation" (benchmark choice).
const presentationWindow = 4 * time.Hour

// curb is the CURB-65 tally: points known, components unknown, and the rows behind them.
type curb struct {
	score, unknown int
	confusion      string // "", "present", "baseline"
	rows           []Record
}

// judgeCURB scores CURB-65 at presentation and asks whether it is ≥ 3.
func judgeCURB(src Source, c Case) (Outcome, error) {
	adm, admit, _, err := admission(src, c.HadmID)
	if err != nil {
		return Outcome{}, err
	}
	var ed Record
	for _, e := range src.Rows("edstays") {
		if e.Get("hadm_id") == c.HadmID {
			ed = e
		}
	}
	arrival, ok := ed.Time("intime")
	if !ok {
		arrival = admit
	}
	t := tallyCURB(src, c.HadmID, ed, arrival, admit)
	t.rows = append(t.rows, adm)
	return curbVerdict(t), nil
}

func curbVerdict(t curb) Outcome {
	why := fmt.Sprintf("CURB-65 %d known points, %d components unknown, confusion %q", t.score, t.unknown, t.confusion)
	switch {
	case t.score >= 3:
		return outcome(Yes, "score_ge_3", why, t.rows...)
	case t.score+t.unknown >= 3 && t.unknown > 0:
		reason := "bun_missing"
		if t.unknown > 1 {
			reason = "vitals_missing"
		}
		return outcome(Lack, reason, why, t.rows...)
	case t.confusion == "baseline" && t.score == 2:
		return outcome(Ambiguous, "baseline_cognitive_impairment", why+": the score turns on confusion that may be chronic", t.rows...)
	}
	return outcome(No, "score_lt_3", why, t.rows...)
}

func tallyCURB(src Source, hadm string, ed Record, arrival, admit time.Time) curb {
	var t curb
	end := arrival.Add(presentationWindow)
	inWin := func(at time.Time) bool { return !at.Before(arrival) && !at.After(end) }
	t.confusion, t.rows = confusionInNote(src, hadm)
	if t.confusion == "present" {
		t.score++
	}
	buns := labsIn(labs(src, itemBUN), func(l lab) bool { return inWin(l.at) })
	switch {
	case len(buns) == 0:
		t.unknown++
	case maxLab(buns).value > 19:
		t.score++
		t.rows = append(t.rows, maxLab(buns).Record)
	default:
		t.rows = append(t.rows, records(buns)...)
	}
	vitals := where(src.Rows("vitalsign"), func(r Record) bool {
		at, ok := r.Time("charttime")
		return r.Get("stay_id") == ed.Get("stay_id") && ok && inWin(at)
	})
	if len(vitals) == 0 {
		t.unknown += 2
	} else {
		t.score += vitalPoints(vitals)
		t.rows = append(t.rows, vitals...)
	}
	if pts := src.Rows("patients"); len(pts) > 0 && ageAt(pts[0], admit) >= 65 {
		t.score++
		t.rows = append(t.rows, pts[0])
	}
	return t
}

// vitalPoints: one point for any respiratory rate ≥ 30, one for any SBP < 90 or DBP ≤ 60.
func vitalPoints(vs []Record) int {
	rr, bp := 0, 0
	for _, v := range vs {
		if n, err := strconv.Atoi(v.Get("resprate")); err == nil && n >= 30 {
			rr = 1
		}
		s, err1 := strconv.Atoi(v.Get("sbp"))
		d, err2 := strconv.Atoi(v.Get("dbp"))
		if err1 == nil && s < 90 || err2 == nil && d <= 60 {
			bp = 1
		}
	}
	return rr + bp
}

// confusionInNote reads the History of Present Illness for new confusion, skipping negated and historical
// mentions; "baseline" when the confusion is described as the patient's baseline.
func confusionInNote(src Source, hadm string) (string, []Record) {
	note, ok := lastDischargeNote(src, hadm)
	if !ok {
		return "", nil
	}
	hpi, _ := section(note.Get("text"), "History of Present Illness:")
	for _, sentence := range strings.Split(strings.Join(hpi, " "), ".") {
		s := strings.ToLower(sentence)
		if !strings.Contains(s, "confus") && !strings.Contains(s, "disorient") && !strings.Contains(s, "delirium") {
			continue
		}
		switch {
		case hasWord(s, "denies", "no", "not", "without") || strings.Contains(s, "history of"):
			continue
		case strings.Contains(s, "baseline") || strings.Contains(s, "dementia"):
			return "baseline", []Record{note}
		default:
			return "present", []Record{note}
		}
	}
	return "", []Record{note}
}

func hasWord(s string, words ...string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
		for _, w := range words {
			if f == w {
				return true
			}
		}
	}
	return false
}

func maxLab(ls []lab) lab {
	m := ls[0]
	for _, l := range ls {
		if l.value > m.value {
			m = l
		}
	}
	return m
}

func ageAt(pt Record, at time.Time) float64 {
	age, _ := pt.Float("anchor_age")
	year, _ := pt.Float("anchor_year")
	return age + float64(at.Year()) - year
}
