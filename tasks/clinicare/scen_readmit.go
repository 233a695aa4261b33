package clinicare

import "time"

// readmit writes the 30-day readmission scenario: an index admission and what follows it.
var readmit = scenarioGen{
	id: "readmission-30d",
	plans: []planCount{
		{Plan{Yes, "unplanned_readmission", ""}, 4},
		{Plan{Yes, "unplanned_readmission", "late_in_window"}, 2},
		{Plan{Yes, "unplanned_readmission", "after_elective"}, 2},
		{Plan{No, "no_unplanned_readmission", ""}, 3},
		{Plan{No, "no_unplanned_readmission", "day_31"}, 2},
		{Plan{No, "no_unplanned_readmission", "elective_only"}, 2},
		{Plan{No, "no_unplanned_readmission", "ed_visit_only"}, 2},
		{Plan{Lack, "died_in_index", ""}, 3},
		{Plan{Lack, "transferred_out", ""}, 3},
		{Plan{Ambiguous, "observation_stay", ""}, 7},
	},
	write: writeReadmit,
}

func writeReadmit(p *patient, plan Plan) scope {
	admit := p.indexDay()
	disch := admit.Add(time.Duration(72+p.rng.IntN(120)) * time.Hour)
	p.oldAdmission(admit, 2+p.rng.IntN(3))
	loc, extra := "HOME", map[string]string{}
	switch plan.Reason {
	case "died_in_index":
		loc, extra = "DIED", map[string]string{"deathtime": ts(disch), "hospital_expire_flag": "1"}
	case "transferred_out":
		loc = "ACUTE HOSPITAL"
	}
	hadm := p.admission(admit, disch, "URGENT", loc, extra)
	p.diagnosis(hadm, "I50.9")
	p.noisePanels(hadm, admit, disch, 2)
	p.note("DS", hadm, disch, p.dischargeText(dischargeSections{complaint: "Dyspnea", history: "Heart failure exacerbation.",
		pmh: "Heart failure. Prior admission for heart failure two years ago.", course: "Diuresed.",
		dischMeds: []string{"Furosemide 40 mg PO DAILY"}, diagnosis: "Acute on chronic heart failure"}))
	day := func(d float64) time.Time { return disch.Add(time.Duration(d * 24 * float64(time.Hour))) }
	later := func(at time.Time, typ string) {
		h := p.admission(at, at.Add(time.Duration(30+p.rng.IntN(60))*time.Hour), typ, "HOME")
		p.diagnosis(h, "I50.9")
	}
	switch {
	case plan.Trap == "late_in_window":
		later(day(29.5), "EW EMER.")
	case plan.Trap == "after_elective":
		later(day(6), "ELECTIVE")
		later(day(18), "URGENT")
	case plan.Verdict == Yes:
		later(day(float64(5+p.rng.IntN(15))), "EW EMER.")
	case plan.Trap == "day_31":
		later(day(31), "EW EMER.")
	case plan.Trap == "elective_only":
		later(day(12), "SURGICAL SAME DAY ADMISSION")
	case plan.Trap == "ed_visit_only":
		p.ed("", day(9), day(9.2))
	case plan.Reason == "observation_stay":
		later(day(float64(4+p.rng.IntN(20))), []string{"EU OBSERVATION", "OBSERVATION ADMIT", "DIRECT OBSERVATION"}[p.rng.IntN(3)])
	case plan.Reason == "transferred_out":
		later(day(45), "EW EMER.")
	}
	return scope{hadm: hadm}
}
