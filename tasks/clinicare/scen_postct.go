package clinicare

import (
	"time"
)

// postCT writes the post-CT AKI scenario (Appendix B): an ICU admission with a CT, creatinine before and after it.
var postCT = scenarioGen{
	id: "post-ct-aki",
	plans: []planCount{
		{Plan{Yes, "qualifying_rise", "first_value_not_peak"}, 3},
		{Plan{Yes, "qualifying_rise", ""}, 1},
		{Plan{Yes, "qualifying_rise", "unit_variant"}, 1},
		{Plan{Yes, "qualifying_rise", "baseline_from_admission"}, 1},
		{Plan{Yes, "qualifying_rise", "baseline_mdrd"}, 1},
		{Plan{Yes, "qualifying_rise", "older_lower_value"}, 1},
		{Plan{No, "no_qualifying_rise", ""}, 3},
		{Plan{No, "no_qualifying_rise", "value_at_49h"}, 2},
		{Plan{No, "no_qualifying_rise", "code_without_lab_change"}, 2},
		{Plan{No, "no_qualifying_rise", "urine_creatinine"}, 1},
		{Plan{Lack, "no_baseline", ""}, 1},
		{Plan{Lack, "no_value_in_window", ""}, 1},
		{Plan{Lack, "insufficient_post_ct_sampling", ""}, 2},
		{Plan{Lack, "ct_time_unresolved", "order_without_scan"}, 2},
		{Plan{Lack, "no_ct", ""}, 1},
		{Plan{Ambiguous, "esrd_or_dialysis", ""}, 2},
		{Plan{Ambiguous, "esrd_or_dialysis", "dialysis_order_only"}, 2},
		{Plan{Ambiguous, "labile_baseline", ""}, 2},
		{Plan{Ambiguous, "advanced_ckd", ""}, 1},
	},
	write: writePostCT,
}

func writePostCT(p *patient, plan Plan) scope {
	admit := p.indexDay()
	disch := admit.Add(time.Duration(120+p.rng.IntN(96)) * time.Hour)
	p.oldAdmission(admit, 3+p.rng.IntN(3))
	hadm := p.admission(admit, disch, "EW EMER.", "HOME")
	icuIn := admit.Add(time.Duration(2+p.rng.IntN(4)) * time.Hour)
	stay := p.icu(hadm, icuIn, icuIn.Add(time.Duration(60+p.rng.IntN(30))*time.Hour))
	orderAt := icuIn.Add(time.Duration(4+p.rng.IntN(8)) * time.Hour)
	scan := orderAt.Add(time.Duration(60+p.rng.IntN(120)) * time.Minute)
	p.diagnosis(hadm, "I10")
	p.noisePanels(hadm, admit, disch, 3)
	base := 0.8 + float64(p.rng.IntN(5))/10
	p.postCTBaseline(hadm, admit, plan, base)
	p.postCTImaging(hadm, orderAt, scan, plan)
	p.postCTValues(hadm, scan, plan, base)
	p.postCTExtras(hadm, admit, plan)
	return scope{hadm: hadm, stay: stay}
}

// postCTBaseline writes the prior (3–12 month) creatinines, or an admission value, per the plan's baseline tier.
func (p *patient) postCTBaseline(hadm string, admit time.Time, plan Plan, base float64) {
	prior := func(days int, v float64) { p.lab("", admit.AddDate(0, 0, -days).Add(-3*time.Hour), creatinine, v, "") }
	switch {
	case plan.Reason == "no_baseline" || plan.Trap == "baseline_mdrd":
		// no prior value, no admission value; MDRD needs documented CKD (written in postCTExtras)
	case plan.Trap == "baseline_from_admission":
		p.lab(hadm, admit.Add(90*time.Minute), creatinine, base, "")
	case plan.Reason == "labile_baseline":
		prior(100+p.rng.IntN(40), base)
		prior(200+p.rng.IntN(40), base+0.7+float64(p.rng.IntN(4))/10)
		p.lab(hadm, admit.Add(90*time.Minute), creatinine, base+0.2, "")
	default:
		prior(120+p.rng.IntN(150), base)
		prior(60, base+0.4) // within 3 months: not a baseline candidate
		if plan.Trap == "older_lower_value" {
			prior(400+p.rng.IntN(100), base-0.3) // older than 12 months: not a candidate
		}
		p.lab(hadm, admit.Add(90*time.Minute), creatinine, base+0.1, "")
	}
}

// postCTImaging writes the CT order and, unless the plan withholds it, the CT report; and a chest X-ray.
func (p *patient) postCTImaging(hadm string, orderAt, scan time.Time, plan Plan) {
	p.order(hadm, orderAt.Add(-3*time.Hour), "Radiology", "General Xray", "Inactive")
	p.radiology(hadm, orderAt.Add(-2*time.Hour), "CHEST (PORTABLE AP)", "71045", "No acute cardiopulmonary process.")
	if plan.Reason == "no_ct" {
		return
	}
	p.order(hadm, orderAt, "Radiology", "CT Scan", "Inactive")
	if plan.Reason == "ct_time_unresolved" {
		return
	}
	p.radiology(hadm, scan, "CT ABD & PELVIS WITH CONTRAST", "74177", "No acute intra-abdominal process.")
}

// postCTValues writes the post-CT creatinines that realise the plan.
func (p *patient) postCTValues(hadm string, scan time.Time, plan Plan, base float64) {
	at := func(h float64) time.Time { return scan.Add(time.Duration(h * float64(time.Hour))) }
	switch plan.Reason {
	case "qualifying_rise":
		if plan.Trap == "unit_variant" {
			p.lab(hadm, at(10), creatinineUmol, (base*1.6)*88.4, "")
			p.lab(hadm, at(30), creatinine, base+0.1, "")
			return
		}
		if plan.Trap == "first_value_not_peak" {
			p.lab(hadm, at(8), creatinine, base+0.1, "")
			p.lab(hadm, at(30), creatinine, base+0.5, "")
			p.lab(hadm, at(44), creatinine, base+0.2, "")
			return
		}
		if plan.Trap == "baseline_mdrd" {
			p.lab(hadm, at(10), creatinine, 2.6, "") // MDRD baseline for eGFR 75 is ~0.8–1.0 mg/dL
			p.lab(hadm, at(34), creatinine, 2.9, "")
			return
		}
		p.lab(hadm, at(12), creatinine, base+0.4, "")
		p.lab(hadm, at(36), creatinine, base+0.3, "")
	case "no_qualifying_rise", "advanced_ckd", "esrd_or_dialysis", "labile_baseline", "no_baseline", "ct_time_unresolved", "no_ct":
		p.lab(hadm, at(10), creatinine, base+0.1, "")
		p.lab(hadm, at(33), creatinine, base, "")
		switch plan.Trap {
		case "value_at_49h":
			p.lab(hadm, at(49), creatinine, base+0.6, "")
		case "urine_creatinine":
			p.lab(hadm, at(20), urineCreatinine, 95, "")
		}
		if plan.Reason == "esrd_or_dialysis" {
			p.lab(hadm, at(40), creatinine, base+2.5, "")
		}
	case "no_value_in_window":
		p.lab(hadm, at(52), creatinine, base+0.1, "")
	case "insufficient_post_ct_sampling":
		p.lab(hadm, at(20), creatinine, base+0.1, "")
		p.lab(hadm, at(60), creatinine, base, "")
	}
}

// postCTExtras writes diagnoses and orders the plan needs: ESRD codes, a dialysis order, CKD, an AKI code.
func (p *patient) postCTExtras(hadm string, admit time.Time, plan Plan) {
	switch {
	case plan.Trap == "dialysis_order_only":
		p.order(hadm, admit.Add(20*time.Hour), "Dialysis", "Hemodialysis", "Inactive")
	case plan.Reason == "esrd_or_dialysis":
		p.diagnosis(hadm, "N18.6")
		p.diagnosis(hadm, "Z99.2")
	case plan.Reason == "advanced_ckd":
		p.diagnosis(hadm, "N18.4")
	case plan.Trap == "baseline_mdrd":
		p.diagnosis(hadm, "N18.3")
	case plan.Trap == "code_without_lab_change":
		p.diagnosis(hadm, "N17.9")
	}
}
