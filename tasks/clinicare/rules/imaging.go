package rules

import (
	"strings"
	"time"
)

// Radiology order subtypes by class (Appendix B, advanced cross-sectional imaging receipt).
var (
	crossSectional = map[string]bool{"CT Scan": true, "MRI": true, "Cross-Sectional Interventional Radiology": true}
	ambiguousClass = map[string]bool{"Interventional Radiology": true}
)

// confirmWindow is how long after an order a CT/MR report still confirms it (benchmark choice).
const confirmWindow = 24 * time.Hour

// attributionMargin: an order outside every ICU stay but this close to this stay's window cannot be attributed to
// one stay of a multi-stay admission (benchmark choice).
const attributionMargin = 12 * time.Hour

type stayWindow struct {
	Record
	in, out time.Time
	ok      bool
}

// judgeImaging applies the imaging-receipt criteria to the case's ICU stay.
func judgeImaging(src Source, c Case) (Outcome, error) {
	var this stayWindow
	var stays []stayWindow
	for _, r := range src.Rows("icustays") {
		if r.Get("hadm_id") != c.HadmID {
			continue
		}
		in, ok1 := r.Time("intime")
		out, ok2 := r.Time("outtime")
		w := stayWindow{r, in, out, ok1 && ok2}
		stays = append(stays, w)
		if r.Get("stay_id") == c.StayID {
			this = w
		}
	}
	if !this.ok {
		return outcome(Lack, "no_stay_window", "the ICU stay has no recorded [intime, outtime] window", this.Record), nil
	}
	orders := where(src.Rows("poe"), func(r Record) bool { return r.Get("hadm_id") == c.HadmID })
	reports := where(src.Rows("radiology"), func(r Record) bool { return r.Get("hadm_id") == c.HadmID })
	return imagingVerdict(this, stays, orders, reports), nil
}

func imagingVerdict(this stayWindow, stays []stayWindow, orders, reports []Record) Outcome {
	inWin := func(r Record) bool {
		t, ok := r.Time("ordertime")
		return ok && !t.Before(this.in) && !t.After(this.out)
	}
	radiology := where(orders, func(r Record) bool { return r.Get("order_type") == "Radiology" && r.Get("transaction_type") != "D/C" })
	var unconfirmed, cancelled []Record
	for _, o := range where(radiology, func(r Record) bool { return crossSectional[r.Get("order_subtype")] && inWin(r) }) {
		rep, ok := confirmingReport(o, reports)
		switch {
		case discontinued(o, orders):
			cancelled = append(cancelled, o)
		case ok:
			return outcome(Yes, "confirmed_ct_mri", "a CT/MRI order in the stay window with a confirming report", o, rep, this.Record)
		default:
			unconfirmed = append(unconfirmed, o)
		}
	}
	if o, rep, ok := unattributable(this, stays, radiology, reports); ok {
		return outcome(Lack, "unattributable_order", "a CT/MRI order between ICU stays cannot be attributed to one stay", o, rep, this.Record)
	}
	if len(cancelled) > 0 {
		return outcome(Lack, "order_cancelled", "the CT/MRI order was discontinued with no report", append(cancelled, this.Record)...)
	}
	if len(unconfirmed) > 0 {
		return outcome(Lack, "unconfirmed_order", "a CT/MRI order with no confirming report", append(unconfirmed, this.Record)...)
	}
	if amb := where(radiology, func(r Record) bool { return ambiguousClass[r.Get("order_subtype")] && inWin(r) }); len(amb) > 0 {
		return outcome(Ambiguous, "ambiguous_subtype", "the order subtype does not say whether the study was cross-sectional", append(amb, this.Record)...)
	}
	stream := where(orders, inWin)
	if len(stream) == 0 {
		return outcome(Lack, "order_stream_missing", "no order of any kind in the stay window: absence cannot be read as a negative", this.Record)
	}
	return outcome(No, "no_cross_sectional", "orders in the window, none a CT or MRI", append(where(radiology, inWin), this.Record)...)
}

// confirmingReport finds a CT or MR report charted within confirmWindow after the order.
func confirmingReport(o Record, reports []Record) (Record, bool) {
	at, _ := o.Time("ordertime")
	for _, r := range byTime(reports, "charttime") {
		t, ok := r.Time("charttime")
		if ok && !t.Before(at) && !t.After(at.Add(confirmWindow)) && examIsCrossSectional(r.Get("text")) {
			return r, true
		}
	}
	return Record{}, false
}

func examIsCrossSectional(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if exam, ok := strings.CutPrefix(strings.TrimSpace(line), "EXAMINATION:"); ok {
			exam = strings.TrimSpace(exam)
			return strings.HasPrefix(exam, "CT ") || strings.HasPrefix(exam, "MR ")
		}
	}
	return false
}

// discontinued reports whether a D/C order names o.
func discontinued(o Record, orders []Record) bool {
	if o.Get("discontinued_by_poe_id") != "" {
		return true
	}
	for _, r := range orders {
		if r.Get("discontinue_of_poe_id") == o.Get("poe_id") {
			return true
		}
	}
	return false
}

// unattributable finds, in a multi-stay admission, a confirmed CT/MRI order outside every stay window but within
// attributionMargin of this stay's window.
func unattributable(this stayWindow, stays []stayWindow, radiology, reports []Record) (Record, Record, bool) {
	if len(stays) < 2 {
		return Record{}, Record{}, false
	}
	for _, o := range where(radiology, func(r Record) bool { return crossSectional[r.Get("order_subtype")] }) {
		t, _ := o.Time("ordertime")
		inside := false
		for _, s := range stays {
			inside = inside || s.ok && !t.Before(s.in) && !t.After(s.out)
		}
		near := !t.Before(this.in.Add(-attributionMargin)) && !t.After(this.out.Add(attributionMargin))
		if rep, ok := confirmingReport(o, reports); !inside && near && ok {
			return o, rep, true
		}
	}
	return Record{}, Record{}, false
}
