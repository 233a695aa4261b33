package rules

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// judgePostCT applies the post-CT AKI criteria (Appendix B, policy aki-kdigo): ESRD or dialysis first (ambiguous),
// then the CT scan time, the baseline hierarchy, and the 48 h window.
func judgePostCT(src Source, c Case) (Outcome, error) {
	adm, admit, disch, err := admission(src, c.HadmID)
	if err != nil {
		return Outcome{}, err
	}
	if esrd := esrdEvidence(src); len(esrd) > 0 {
		return outcome(Ambiguous, "esrd_or_dialysis", "chronic dialysis or ESRD: KDIGO's acute thresholds do not apply", esrd...), nil
	}
	scan, ctOrders := firstCT(src, c.HadmID, admit, disch)
	if scan.Ref.N == 0 {
		if len(ctOrders) > 0 {
			return outcome(Lack, "ct_time_unresolved", "a CT was ordered but no CT report gives the scan time", append(ctOrders, adm)...), nil
		}
		return outcome(Lack, "no_ct", "no CT order or report in the admission", adm), nil
	}
	scanAt, _ := scan.Time("charttime")
	creat := labs(src, itemCreatinine)
	base, baseRows, verdict := postCTBaseline(src, creat, admit, scanAt)
	if verdict != nil {
		verdict.Decisive = append(verdict.Decisive, scan.Ref)
		return *verdict, nil
	}
	window := labsIn(creat, func(l lab) bool { return in(l.at, scanAt, scanAt.Add(48*time.Hour)) })
	for _, l := range window {
		if l.value-base >= 0.3-1e-9 || l.value >= 1.5*base-1e-9 {
			why := fmt.Sprintf("creatinine %.2f mg/dL at %s against baseline %.2f", l.value, l.Get("charttime"), base)
			return outcome(Yes, "qualifying_rise", why, append(append(baseRows, scan, adm), records(window)...)...), nil
		}
	}
	switch {
	case len(window) == 0:
		return outcome(Lack, "no_value_in_window", "no creatinine within 48 h after the scan", scan, adm), nil
	case len(window) < 2:
		return outcome(Lack, "insufficient_post_ct_sampling", "one creatinine within 48 h: the peak is unconfirmed", append(records(window), scan)...), nil
	}
	if ckd := codes(src, "N184", "N185", "5854", "5855"); len(ckd) > 0 {
		return outcome(Ambiguous, "advanced_ckd", "CKD stage 4 or 5 excludes a No under the criteria", ckd...), nil
	}
	return outcome(No, "no_qualifying_rise", fmt.Sprintf("%d values within 48 h, none ≥ baseline %.2f + 0.3 or × 1.5", len(window), base),
		append(append(baseRows, scan), records(window)...)...), nil
}

// esrdEvidence returns ESRD or dialysis-dependence codes (N18.6, Z99.2, 585.6, V45.11) and dialysis orders.
func esrdEvidence(src Source) []Record {
	ev := codes(src, "N186", "Z992", "5856", "V4511")
	ev = append(ev, where(src.Rows("poe"), func(r Record) bool {
		return r.Get("order_type") == "Dialysis" || strings.Contains(strings.ToLower(r.Get("order_subtype")), "dialysis")
	})...)
	return ev
}

// firstCT returns the earliest CT report of the admission (its charttime is the scan time) and the CT orders.
func firstCT(src Source, hadm string, admit, disch time.Time) (Record, []Record) {
	orders := where(src.Rows("poe"), func(r Record) bool {
		return r.Get("hadm_id") == hadm && r.Get("order_type") == "Radiology" && r.Get("order_subtype") == "CT Scan"
	})
	for _, r := range byTime(src.Rows("radiology"), "charttime") {
		at, ok := r.Time("charttime")
		if r.Get("hadm_id") == hadm && ok && !at.Before(admit) && !at.After(disch) && examIsCT(r.Get("text")) {
			return r, orders
		}
	}
	return Record{}, orders
}

// examIsCT reads the report's EXAMINATION line.
func examIsCT(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if exam, ok := strings.CutPrefix(strings.TrimSpace(line), "EXAMINATION:"); ok {
			return strings.HasPrefix(strings.TrimSpace(exam), "CT ")
		}
	}
	return false
}

// postCTBaseline sets the baseline by the hierarchy: the lowest creatinine 90–365 days before admission (labile
// when those span ≥ 0.5 mg/dL: benchmark choice); else the first creatinine within 24 h of admission and before the
// scan; else, with CKD documented, the MDRD creatinine for eGFR 75. A non-nil outcome ends the case.
func postCTBaseline(src Source, creat []lab, admit, scan time.Time) (float64, []Record, *Outcome) {
	prior := labsIn(creat, func(l lab) bool {
		return !l.at.After(admit.AddDate(0, 0, -90)) && !l.at.Before(admit.AddDate(0, 0, -365))
	})
	if len(prior) > 0 {
		lo, hi := prior[0], prior[0]
		for _, l := range prior {
			if l.value < lo.value {
				lo = l
			}
			if l.value > hi.value {
				hi = l
			}
		}
		if hi.value-lo.value >= 0.5-1e-9 {
			o := outcome(Ambiguous, "labile_baseline", fmt.Sprintf("prior creatinines span %.2f–%.2f mg/dL", lo.value, hi.value), records(prior)...)
			return 0, nil, &o
		}
		return lo.value, []Record{lo.Record}, nil
	}
	for _, l := range creat {
		if !l.at.Before(admit) && l.at.Before(admit.Add(24*time.Hour)) && l.at.Before(scan) {
			return l.value, []Record{l.Record}, nil
		}
	}
	ckd := codes(src, "N181", "N182", "N183", "N184", "N185", "N189", "5853", "5854", "5855", "5859")
	if len(ckd) == 0 {
		o := outcome(Lack, "no_baseline", "no prior or admission creatinine and no CKD documented")
		return 0, nil, &o
	}
	pt := src.Rows("patients")
	if len(pt) == 0 {
		o := outcome(Lack, "no_baseline", "CKD documented but no age or sex for an MDRD estimate", ckd...)
		return 0, nil, &o
	}
	return mdrdCreatinine(pt[0], admit), append(ckd, pt[0]), nil
}

// mdrdCreatinine solves the 4-variable MDRD equation, eGFR = 175 × Scr^-1.154 × age^-0.203 × 0.742 (female), for
// the creatinine that gives eGFR 75 mL/min/1.73 m².
func mdrdCreatinine(pt Record, at time.Time) float64 {
	age, _ := pt.Float("anchor_age")
	year, _ := pt.Float("anchor_year")
	age += float64(at.Year()) - year
	k := 175 * math.Pow(age, -0.203)
	if pt.Get("gender") == "F" {
		k *= 0.742
	}
	return math.Pow(75/k, -1/1.154)
}
