package clinicare

import (
	"fmt"
	"strings"
	"time"
)

// homeMed is a chronic home medication: its name, dose, frequency and enhanced therapeutic class.
type homeMed struct {
	name, dose, freq, etc string
}

var homeMedCatalog = []homeMed{
	{"Lisinopril", "20 mg", "PO DAILY", "ACE Inhibitors"},
	{"Metoprolol", "25 mg", "PO BID", "Beta Blockers Cardio-Selective"},
	{"Apixaban", "5 mg", "PO BID", "Anticoagulants - Factor Xa Inhibitors"},
	{"Levetiracetam", "500 mg", "PO BID", "Anticonvulsants"},
	{"Atorvastatin", "40 mg", "PO QHS", "Antihyperlipidemic - HMG CoA Reductase Inhibitors"},
	{"Metformin", "1000 mg", "PO BID", "Antidiabetic - Biguanides"},
	{"Furosemide", "40 mg", "PO DAILY", "Loop Diuretics"},
}

var trivialMedCatalog = []homeMed{
	{"Multivitamin", "1 tab", "PO DAILY", "Vitamins - Multiple"},
	{"Docusate", "100 mg", "PO BID", "Laxatives - Stool Softeners"},
	{"Acetaminophen", "650 mg", "PO Q6H PRN", "Analgesic or Antipyretic Non-Opioid"},
}

var medrec = scenarioGen{
	id: "med-reconciliation",
	plans: []planCount{
		{Plan{Yes, "unintended_discrepancy", ""}, 3},
		{Plan{Yes, "unintended_discrepancy", "dose_change"}, 2},
		{Plan{Yes, "unintended_discrepancy", "historical_mention"}, 2},
		{Plan{Yes, "unintended_discrepancy", "given_last_24h"}, 1},
		{Plan{No, "reconciled", ""}, 3},
		{Plan{No, "reconciled", "trivial_omission"}, 2},
		{Plan{No, "reconciled", "documented_stop"}, 2},
		{Plan{No, "reconciled", "documented_dose_change"}, 2},
		{Plan{Lack, "no_home_list", ""}, 3},
		{Plan{Lack, "no_discharge_list", ""}, 3},
		{Plan{Ambiguous, "intent_unclear", ""}, 4},
		{Plan{Ambiguous, "intent_unclear", "negated_mention"}, 3},
	},
	write: writeMedrec,
}

func writeMedrec(p *patient, plan Plan) scope {
	admit := p.indexDay()
	disch := admit.Add(time.Duration(72+p.rng.IntN(120)) * time.Hour)
	p.oldAdmission(admit, 2+p.rng.IntN(5))
	hadm := p.admission(admit, disch, "EW EMER.", "HOME")
	p.diagnosis(hadm, "I50.9")
	p.noisePanels(hadm, admit, disch, 2)
	meds := p.pickMeds()
	var stay string
	if plan.Reason != "no_home_list" {
		stay = p.ed(hadm, admit.Add(-4*time.Hour), admit)
		for _, m := range meds {
			p.b.Add("medrecon", map[string]string{"subject_id": p.subject, "stay_id": stay, "charttime": ts(admit.Add(-3 * time.Hour)),
				"name": strings.ToLower(m.name), "gsn": itoa(10000 + p.rng.IntN(80000)), "etc_rn": "1", "etcdescription": m.etc})
		}
	}
	p.inpatientMeds(hadm, meds, admit, disch)
	s := medrecNote(meds, plan)
	p.note("DS", hadm, disch.Add(2*time.Hour), p.dischargeText(s))
	return scope{hadm: hadm, stay: stay}
}

// pickMeds draws four chronic medications and one trivial one; the first is the one the plan acts on.
func (p *patient) pickMeds() []homeMed {
	idx := p.rng.Perm(len(homeMedCatalog))[:4]
	var out []homeMed
	for _, i := range idx {
		out = append(out, homeMedCatalog[i])
	}
	return append(out, trivialMedCatalog[p.rng.IntN(len(trivialMedCatalog))])
}

// inpatientMeds writes prescriptions for the stay and eMAR administrations in the last 24 h.
func (p *patient) inpatientMeds(hadm string, meds []homeMed, admit, disch time.Time) {
	for i, m := range meds {
		pharm := p.b.NextID("pharmacy_id")
		poe, _ := p.order(hadm, admit.Add(2*time.Hour), "Medications", "", "Inactive")
		dose, unit, _ := strings.Cut(m.dose, " ")
		p.b.Add("prescriptions", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "pharmacy_id": pharm, "poe_id": poe,
			"starttime": ts(admit.Add(3 * time.Hour)), "stoptime": ts(disch), "drug_type": "MAIN", "drug": m.name,
			"dose_val_rx": dose, "dose_unit_rx": unit, "route": "PO"})
		p.b.Add("pharmacy", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "pharmacy_id": pharm, "poe_id": poe,
			"starttime": ts(admit.Add(3 * time.Hour)), "stoptime": ts(disch), "medication": m.name, "proc_type": "Unit Dose",
			"status": "Discontinued", "route": "PO", "frequency": strings.TrimPrefix(m.freq, "PO ")})
		if i < 2 {
			p.emars++
			p.b.Add("emar", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "emar_id": fmt.Sprintf("%s-%d", p.subject, p.emars),
				"emar_seq": itoa(p.emars), "poe_id": poe, "pharmacy_id": pharm, "charttime": ts(disch.Add(-10 * time.Hour)),
				"medication": m.name, "event_txt": "Administered", "scheduletime": ts(disch.Add(-10 * time.Hour))})
		}
	}
}

// medrecNote fills the discharge summary's medication sections to realise the plan; meds[0] is the one acted on.
func medrecNote(meds []homeMed, plan Plan) dischargeSections {
	line := func(m homeMed) string { return m.name + " " + m.dose + " " + m.freq }
	s := dischargeSections{complaint: "Dyspnea", diagnosis: "Acute on chronic heart failure",
		history: "Presented with worsening dyspnea and leg swelling. Not on warfarin. Diuresed with IV furosemide.",
		pmh:     "Heart failure with reduced ejection fraction. Hypertension. Previously on digoxin, stopped years ago.",
		course:  "Diuresed to euvolemia. Renal function stable. Ambulating at discharge."}
	target := meds[0]
	if plan.Trap == "trivial_omission" {
		target = meds[len(meds)-1]
	}
	for _, m := range meds {
		s.admitMeds = append(s.admitMeds, line(m))
		if m != target || plan.Reason == "no_discharge_list" || plan.Reason == "no_home_list" || plan.Trap == "" && plan.Reason == "reconciled" {
			s.dischMeds = append(s.dischMeds, line(m))
		}
	}
	changed := target
	changed.dose = doubleDose(target.dose)
	switch plan.Trap {
	case "dose_change":
		s.dischMeds = append(s.dischMeds, line(changed))
	case "documented_dose_change":
		s.dischMeds = append(s.dischMeds, line(changed))
		s.changes = []string{fmt.Sprintf("CHANGED %s %s to %s: titrated for blood pressure control", target.name, target.dose, changed.dose)}
	case "documented_stop":
		s.changes = []string{fmt.Sprintf("STOPPED %s: acute kidney injury this admission; do not restart", target.name)}
	case "historical_mention":
		s.pmh += fmt.Sprintf(" Has taken %s for years without side effects.", strings.ToLower(target.name))
	case "negated_mention":
		s.history += fmt.Sprintf(" Denies missing doses of %s.", strings.ToLower(target.name))
	}
	if plan.Reason == "intent_unclear" {
		s.changes = []string{fmt.Sprintf("HELD %s", target.name)}
	}
	s.omitDischMeds = plan.Reason == "no_discharge_list"
	return s
}

func doubleDose(d string) string {
	n, unit, _ := strings.Cut(d, " ")
	var v int
	fmt.Sscanf(n, "%d", &v)
	return fmt.Sprintf("%d %s", 2*v, unit)
}
