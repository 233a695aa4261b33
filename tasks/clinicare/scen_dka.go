package clinicare

import (
	"fmt"
	"time"
)

// dka writes the DKA-resolution scenario: an ICU admission for DKA with an insulin infusion and serial panels.
var dka = scenarioGen{
	id: "dka-resolution",
	plans: []planCount{
		{Plan{Yes, "resolved_within_24h", ""}, 4},
		{Plan{Yes, "resolved_within_24h", "first_value_not_peak"}, 2},
		{Plan{Yes, "resolved_within_24h", "duplicate_panel"}, 2},
		{Plan{No, "not_resolved", ""}, 5},
		{Plan{No, "not_resolved", "value_at_25h"}, 3},
		{Plan{Lack, "no_insulin_infusion", "subcutaneous_only"}, 4},
		{Plan{Lack, "insufficient_labs", ""}, 3},
		{Plan{Ambiguous, "euglycemic_sglt2", ""}, 4},
		{Plan{Ambiguous, "hyperchloremic_acidosis", ""}, 3},
	},
	write: writeDKA,
}

// dkaPanel is one chemistry panel with its blood gas pH.
type dkaPanel struct {
	hours                    float64
	glucose, bicarb, gap, ph float64
}

// dkaPanels returns the panels that realise the plan, hours after the infusion starts.
func dkaPanels(plan Plan) []dkaPanel {
	open := []dkaPanel{{0, 480, 8, 26, 7.12}, {6, 310, 10, 21, 7.21}, {12, 250, 12, 17, 7.26}}
	switch {
	case plan.Reason == "resolved_within_24h" && plan.Trap == "first_value_not_peak":
		return []dkaPanel{{0, 390, 9, 24, 7.15}, {5, 520, 7, 27, 7.10}, {12, 240, 13, 16, 7.27}, {20, 170, 17, 11, 7.34}}
	case plan.Reason == "resolved_within_24h":
		return append(open, dkaPanel{18, 180, 18, 11, 7.35})
	case plan.Trap == "value_at_25h":
		return append(open, dkaPanel{20, 215, 14, 14, 7.28}, dkaPanel{25, 160, 19, 10, 7.36})
	case plan.Reason == "not_resolved" || plan.Reason == "no_insulin_infusion":
		return append(open, dkaPanel{20, 230, 13, 15, 7.28})
	case plan.Reason == "insufficient_labs":
		return []dkaPanel{{0, 450, 8, 25, 7.13}, {30, 170, 19, 10, 7.36}}
	case plan.Reason == "euglycemic_sglt2":
		return []dkaPanel{{0, 190, 9, 24, 7.16}, {8, 160, 12, 18, 7.24}, {20, 150, 16, 12, 7.31}}
	default: // hyperchloremic: the gap closes, bicarbonate and pH lag
		return append(open, dkaPanel{20, 170, 13, 10, 7.27})
	}
}

func writeDKA(p *patient, plan Plan) scope {
	admit := p.indexDay()
	disch := admit.Add(time.Duration(96+p.rng.IntN(72)) * time.Hour)
	p.oldAdmission(admit, 2+p.rng.IntN(3))
	hadm := p.admission(admit, disch, "EW EMER.", "HOME")
	in := admit.Add(time.Duration(1+p.rng.IntN(3)) * time.Hour)
	stay := p.icu(hadm, in, in.Add(time.Duration(36+p.rng.IntN(20))*time.Hour))
	p.diagnosis(hadm, "E10.10")
	start := in.Add(time.Duration(30+p.rng.IntN(60)) * time.Minute)
	p.dkaInsulin(hadm, stay, start, plan)
	for _, pn := range dkaPanels(plan) {
		at := start.Add(time.Duration(pn.hours*60) * time.Minute)
		copies := 1
		if plan.Trap == "duplicate_panel" && pn.hours == 6 {
			copies = 2
		}
		for c := 0; c < copies; c++ {
			spec := p.b.NextID("specimen_id")
			p.lab(hadm, at, glucose, pn.glucose, spec)
			p.lab(hadm, at, bicarbonate, pn.bicarb, spec)
			p.lab(hadm, at, anionGap, pn.gap, spec)
			p.lab(hadm, at.Add(-10*time.Minute), ph, pn.ph, "")
		}
	}
	p.noisePanels(hadm, admit, disch, 2)
	if plan.Reason == "euglycemic_sglt2" {
		ed := p.ed(hadm, admit.Add(-3*time.Hour), admit)
		p.b.Add("medrecon", map[string]string{"subject_id": p.subject, "stay_id": ed, "charttime": ts(admit.Add(-2 * time.Hour)),
			"name": "empagliflozin", "etcdescription": "Antidiabetic - Sodium-Glucose Co-Transporter 2 (SGLT2) Inhibitors"})
	}
	return scope{hadm: hadm, stay: stay}
}

// dkaInsulin writes the insulin infusion, or for the subcutaneous-only trap eMAR doses of basal insulin instead.
func (p *patient) dkaInsulin(hadm, stay string, start time.Time, plan Plan) {
	if plan.Reason == "no_insulin_infusion" {
		for i := 0; i < 3; i++ {
			p.emars++
			at := start.Add(time.Duration(8*i) * time.Hour)
			p.b.Add("emar", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "emar_id": fmt.Sprintf("%s-%d", p.subject, p.emars),
				"emar_seq": itoa(p.emars), "charttime": ts(at), "medication": "Insulin Glargine", "event_txt": "Administered", "scheduletime": ts(at)})
		}
		return
	}
	p.b.Add("inputevents", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "stay_id": stay, "starttime": ts(start),
		"endtime": ts(start.Add(26 * time.Hour)), "storetime": ts(start.Add(5 * time.Minute)), "itemid": "223258", "amount": "182",
		"amountuom": "units", "rate": "7", "rateuom": "units/hour", "orderid": p.b.NextID("orderid"), "ordercategoryname": "01-Drips",
		"ordercategorydescription": "Continuous Med", "patientweight": "70", "statusdescription": "FinishedRunning"})
	p.b.Add("inputevents", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "stay_id": stay, "starttime": ts(start.Add(-30 * time.Minute)),
		"endtime": ts(start.Add(90 * time.Minute)), "itemid": "225158", "amount": "2000", "amountuom": "mL", "orderid": p.b.NextID("orderid"),
		"ordercategoryname": "02-Fluids (Crystalloids)", "statusdescription": "FinishedRunning"})
}
