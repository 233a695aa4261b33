package clinicare

import (
	"time"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// hepatic writes the hepatic-encephalopathy precipitant scenario: was SBP present at admission?
var hepatic = scenarioGen{
	id: "he-precipitant",
	plans: []planCount{
		{Plan{Yes, "sbp_confirmed", ""}, 5},
		{Plan{Yes, "sbp_confirmed", "first_value_not_peak"}, 3},
		{Plan{No, "no_sbp", ""}, 5},
		{Plan{No, "no_sbp", "code_without_lab_change"}, 3},
		{Plan{Lack, "no_paracentesis", ""}, 4},
		{Plan{Lack, "paracentesis_outside_window", "value_at_49h"}, 3},
		{Plan{Ambiguous, "traumatic_tap", ""}, 4},
		{Plan{Ambiguous, "bacterascites", ""}, 3},
	},
	write: writeHE,
}

// tap is one diagnostic paracentesis: hours after admission, ascitic WBC, % polys, RBC, and culture organism.
type tap struct {
	hours           float64
	wbc, polys, rbc float64
	organism        string
}

func hepaticTaps(plan Plan) []tap {
	switch {
	case plan.Trap == "first_value_not_peak":
		return []tap{{6, 300, 40, 500, ""}, {30, 1200, 70, 800, "ESCHERICHIA COLI"}}
	case plan.Reason == "sbp_confirmed":
		return []tap{{8, 900, 65, 1000, "KLEBSIELLA PNEUMONIAE"}}
	case plan.Reason == "no_sbp":
		return []tap{{8, 220, 30, 600, ""}}
	case plan.Reason == "paracentesis_outside_window":
		return []tap{{49, 800, 60, 400, ""}}
	case plan.Reason == "traumatic_tap":
		return []tap{{10, 2000, 20, 80000, ""}}
	case plan.Reason == "bacterascites":
		return []tap{{10, 180, 40, 300, "STREPTOCOCCUS PNEUMONIAE"}}
	}
	return nil
}

func writeHE(p *patient, plan Plan) scope {
	admit := p.indexDay()
	disch := admit.Add(time.Duration(120+p.rng.IntN(96)) * time.Hour)
	p.oldAdmission(admit, 2+p.rng.IntN(3))
	hadm := p.admission(admit, disch, "EW EMER.", "HOME")
	p.diagnosis(hadm, "K76.82")
	p.diagnosis(hadm, "K70.31")
	if plan.Trap == "code_without_lab_change" {
		p.diagnosis(hadm, "K65.2")
	}
	p.lab(hadm, admit.Add(2*time.Hour), ammonia, 95+float64(p.rng.IntN(60)), "")
	p.noisePanels(hadm, admit, disch, 3)
	for _, t := range hepaticTaps(plan) {
		p.paracentesis(hadm, admit.Add(time.Duration(t.hours*float64(time.Hour))), t)
	}
	p.note("DS", hadm, disch, p.dischargeText(dischargeSections{complaint: "Confusion",
		history:   "Alcohol-related cirrhosis with ascites, brought in for confusion and asterixis. No history of SBP.",
		pmh:       "Cirrhosis (alcohol). Prior variceal banding.",
		course:    "Treated with lactulose and rifaximin with improvement in mental status.",
		dischMeds: []string{"Lactulose 30 mL PO TID", "Rifaximin 550 mg PO BID"}, diagnosis: "Hepatic encephalopathy"}))
	return scope{hadm: hadm}
}

// paracentesis writes an ascitic-fluid cell count (one specimen), its culture and the procedure code.
func (p *patient) paracentesis(hadm string, at time.Time, t tap) {
	spec := p.b.NextID("specimen_id")
	p.lab(hadm, at, ascitesWBC, t.wbc, spec)
	p.lab(hadm, at, ascitesPolys, t.polys, spec)
	p.lab(hadm, at, ascitesRBC, t.rbc, spec)
	p.procedure(hadm, at, "0W9G3ZX")
	row := map[string]string{"microevent_id": p.b.NextID("microevent_id"), "subject_id": p.subject, "hadm_id": hadm,
		"micro_specimen_id": p.b.NextID("micro_specimen_id"), "chartdate": at.Format(ehr.DateLayout), "charttime": ts(at),
		"spec_itemid": "70070", "spec_type_desc": "PERITONEAL FLUID", "test_seq": "1", "test_itemid": "90039",
		"test_name": "FLUID CULTURE", "comments": "NO GROWTH."}
	if t.organism != "" {
		row["org_itemid"], row["org_name"], row["comments"] = "80002", t.organism, ""
	}
	p.b.Add("microbiologyevents", row)
}
