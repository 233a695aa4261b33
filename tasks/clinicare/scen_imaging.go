package clinicare

import "time"

// imaging writes the advanced cross-sectional imaging receipt scenario (Appendix B) for one ICU stay.
var imaging = scenarioGen{
	id: "ct-mri-receipt",
	plans: []planCount{
		{Plan{Yes, "confirmed_ct_mri", ""}, 3},
		{Plan{Yes, "confirmed_ct_mri", "mri"}, 2},
		{Plan{Yes, "confirmed_ct_mri", "second_icu_stay"}, 2},
		{Plan{Yes, "confirmed_ct_mri", "cross_sectional_ir"}, 1},
		{Plan{No, "no_cross_sectional", ""}, 3},
		{Plan{No, "no_cross_sectional", "second_icu_stay"}, 2},
		{Plan{No, "no_cross_sectional", "no_radiology_orders"}, 2},
		{Plan{No, "no_cross_sectional", "ct_before_icu"}, 1},
		{Plan{Lack, "order_cancelled", ""}, 2},
		{Plan{Lack, "unconfirmed_order", "order_without_scan"}, 2},
		{Plan{Lack, "unattributable_order", ""}, 2},
		{Plan{Lack, "no_stay_window", ""}, 1},
		{Plan{Lack, "order_stream_missing", ""}, 1},
		{Plan{Ambiguous, "ambiguous_subtype", ""}, 6},
	},
	write: writeImaging,
}

func writeImaging(p *patient, plan Plan) scope {
	admit := p.indexDay()
	disch := admit.Add(time.Duration(150+p.rng.IntN(100)) * time.Hour)
	p.oldAdmission(admit, 2+p.rng.IntN(4))
	hadm := p.admission(admit, disch, "EW EMER.", "HOME")
	in := admit.Add(time.Duration(3+p.rng.IntN(5)) * time.Hour)
	out := in.Add(time.Duration(40+p.rng.IntN(30)) * time.Hour)
	var stay string
	if plan.Reason == "no_stay_window" {
		stay = p.icu(hadm, in, time.Time{})
	} else {
		stay = p.icu(hadm, in, out)
	}
	second := plan.Trap == "second_icu_stay" || plan.Reason == "unattributable_order"
	in2, out2 := out.Add(20*time.Hour), out.Add(60*time.Hour)
	if second {
		p.icu(hadm, in2, out2)
	}
	p.diagnosis(hadm, "J18.9")
	p.noisePanels(hadm, admit, disch, 2)
	if plan.Reason != "order_stream_missing" {
		p.routineOrders(hadm, in, out)
	}
	if plan.Trap != "no_radiology_orders" && plan.Reason != "order_stream_missing" {
		at := in.Add(time.Duration(2+p.rng.IntN(6)) * time.Hour)
		p.order(hadm, at, "Radiology", "General Xray", "Inactive")
		p.radiology(hadm, at.Add(40*time.Minute), "CHEST (PORTABLE AP)", "71045", "Low lung volumes. No pneumothorax.")
	}
	p.imagingEvent(hadm, plan, in, out, in2, out2)
	return scope{hadm: hadm, stay: stay}
}

// imagingEvent writes the order and report that decide the plan.
func (p *patient) imagingEvent(hadm string, plan Plan, in, out, in2, out2 time.Time) {
	at := in.Add(time.Duration(8+p.rng.IntN(20)) * time.Hour)
	report := func(t time.Time, exam, cpt string) {
		p.radiology(hadm, t, exam, cpt, "No acute intracranial abnormality.")
	}
	switch {
	case plan.Verdict == Yes && plan.Trap == "mri":
		p.order(hadm, at, "Radiology", "MRI", "Inactive")
		report(at.Add(3*time.Hour), "MR HEAD W/O CONTRAST", "70551")
	case plan.Verdict == Yes && plan.Trap == "cross_sectional_ir":
		p.order(hadm, at, "Radiology", "Cross-Sectional Interventional Radiology", "Inactive")
		report(at.Add(2*time.Hour), "CT GUIDED DRAINAGE", "49406")
	case plan.Verdict == Yes:
		p.order(hadm, at, "Radiology", "CT Scan", "Inactive")
		report(at.Add(90*time.Minute), "CT HEAD W/O CONTRAST", "70450")
	case plan.Trap == "second_icu_stay": // the CT belongs to the other stay of the admission
		t2 := in2.Add(5 * time.Hour)
		p.order(hadm, t2, "Radiology", "CT Scan", "Inactive")
		report(t2.Add(2*time.Hour), "CT CHEST W/ CONTRAST", "71260")
	case plan.Trap == "ct_before_icu":
		t0 := in.Add(-150 * time.Minute)
		p.order(hadm, t0, "Radiology", "CT Scan", "Inactive")
		report(t0.Add(60*time.Minute), "CT HEAD W/O CONTRAST", "70450")
	case plan.Verdict == No:
		p.order(hadm, at, "Radiology", "Ultrasound", "Inactive")
		report(at.Add(2*time.Hour), "RENAL U.S.", "76770")
	case plan.Reason == "order_cancelled":
		id, _ := p.order(hadm, at, "Radiology", "CT Scan", "Inactive")
		p.discontinue(hadm, at.Add(2*time.Hour), id)
	case plan.Reason == "unconfirmed_order" || plan.Reason == "no_stay_window":
		p.order(hadm, at, "Radiology", "CT Scan", "Active")
		if plan.Reason == "no_stay_window" {
			report(at.Add(2*time.Hour), "CT HEAD W/O CONTRAST", "70450")
		}
	case plan.Reason == "unattributable_order": // ordered and performed in the gap between the two stays
		gap := out.Add(4 * time.Hour)
		p.order(hadm, gap, "Radiology", "CT Scan", "Inactive")
		report(gap.Add(time.Hour), "CT ABDOMEN W/ CONTRAST", "74160")
	case plan.Reason == "order_stream_missing":
	case plan.Reason == "ambiguous_subtype":
		p.order(hadm, at, "Radiology", "Interventional Radiology", "Inactive")
		p.radiology(hadm, at.Add(3*time.Hour), "IR GUIDED PROCEDURE", "77012", "Image-guided procedure; modality not stated.")
	}
}
