package clinicare

import "time"

// curb65 writes the CURB-65 pneumonia-severity scenario: an ED presentation with pneumonia.
var curb65 = scenarioGen{
	id: "pneumonia-curb65",
	plans: []planCount{
		{Plan{Yes, "score_ge_3", ""}, 3},
		{Plan{Yes, "score_ge_3", "first_value_not_peak"}, 2},
		{Plan{Yes, "score_ge_3", "confusion_documented"}, 2},
		{Plan{Yes, "score_ge_3", "missing_irrelevant"}, 1},
		{Plan{No, "score_lt_3", ""}, 3},
		{Plan{No, "score_lt_3", "value_outside_window"}, 2},
		{Plan{No, "score_lt_3", "negated_mention"}, 2},
		{Plan{No, "score_lt_3", "historical_mention"}, 1},
		{Plan{Lack, "bun_missing", ""}, 4},
		{Plan{Lack, "vitals_missing", ""}, 3},
		{Plan{Ambiguous, "baseline_cognitive_impairment", ""}, 7},
	},
	write: writeCURB,
}

// curbDesign is which components a plan makes abnormal, and what the note says of confusion.
type curbDesign struct {
	old, bun, rr, bp, noBUN, noVitals bool
	confusion                         string
}

func curbDesignOf(plan Plan) curbDesign {
	switch {
	case plan.Trap == "confusion_documented":
		return curbDesign{old: true, bun: true, confusion: "Family reports new confusion since this morning; disoriented to place on arrival."}
	case plan.Trap == "missing_irrelevant":
		return curbDesign{old: true, rr: true, bp: true, noBUN: true}
	case plan.Verdict == Yes:
		return curbDesign{old: true, bun: true, rr: true}
	case plan.Trap == "negated_mention":
		return curbDesign{old: true, bun: true, confusion: "Denies confusion or headache."}
	case plan.Trap == "historical_mention":
		return curbDesign{bun: true, bp: true, confusion: "Has a history of delirium during a prior admission; alert and oriented today."}
	case plan.Reason == "bun_missing":
		return curbDesign{old: true, rr: true, noBUN: true}
	case plan.Reason == "vitals_missing":
		return curbDesign{old: true, bun: true, noVitals: true}
	case plan.Reason == "baseline_cognitive_impairment":
		return curbDesign{old: true, bun: true, confusion: "Confused and disoriented, which her family says is her baseline given advanced dementia."}
	}
	return curbDesign{old: true, bun: true}
}

func writeCURB(p *patient, plan Plan) scope {
	d := curbDesignOf(plan)
	age := 40 + p.rng.IntN(20)
	if d.old {
		age = 68 + p.rng.IntN(15)
	}
	p = p.reAged(age)
	admit := p.indexDay()
	disch := admit.Add(time.Duration(72+p.rng.IntN(96)) * time.Hour)
	p.oldAdmission(admit, 2+p.rng.IntN(3))
	edIn := admit.Add(-5 * time.Hour)
	hadm := p.admission(admit, disch, "EW EMER.", "HOME")
	stay := p.ed(hadm, edIn, admit)
	p.diagnosis(hadm, "J18.9")
	if plan.Reason == "baseline_cognitive_impairment" {
		p.diagnosis(hadm, "F03.90")
	}
	p.curbVitals(stay, edIn, d, plan)
	if !d.noBUN {
		v := 12 + float64(p.rng.IntN(6))
		if d.bun {
			v = 28 + float64(p.rng.IntN(15))
		}
		spec := p.b.NextID("specimen_id")
		p.lab(hadm, edIn.Add(50*time.Minute), bun, v, spec)
		p.lab(hadm, edIn.Add(50*time.Minute), creatinine, 1.1, spec)
	}
	p.noisePanels(hadm, admit, disch, 2)
	hpi := "Presents with three days of productive cough and fever. Chest x-ray with right lower lobe consolidation. " + d.confusion
	p.note("DS", hadm, disch, p.dischargeText(dischargeSections{complaint: "Cough, fever", history: hpi,
		pmh: "Hypertension. COPD.", course: "Treated with ceftriaxone and azithromycin for community-acquired pneumonia.",
		dischMeds: []string{"Amoxicillin-clavulanate 875 mg PO BID"}, diagnosis: "Community-acquired pneumonia"}))
	return scope{subject: p.subject, hadm: hadm, stay: stay}
}

// curbVitals writes the ED vital signs: triage, a reading at 2 h, and one at 5 h (outside the window).
func (p *patient) curbVitals(stay string, edIn time.Time, d curbDesign, plan Plan) {
	if d.noVitals {
		return
	}
	rr := func(abn bool) string {
		if abn {
			return itoa(31 + p.rng.IntN(6))
		}
		return itoa(18 + p.rng.IntN(6))
	}
	sbp, dbp := "124", "72"
	if d.bp {
		sbp, dbp = "86", "52"
	}
	first := d.rr && plan.Trap != "first_value_not_peak"
	p.vital(stay, edIn.Add(10*time.Minute), map[string]string{"resprate": rr(first), "sbp": sbp, "dbp": dbp})
	p.vital(stay, edIn.Add(2*time.Hour), map[string]string{"resprate": rr(d.rr), "sbp": sbp, "dbp": dbp})
	p.vital(stay, edIn.Add(5*time.Hour), map[string]string{"resprate": rr(plan.Trap == "value_outside_window"), "sbp": "118", "dbp": "70"})
}
