package clinicare

import (
	"math"
	"time"
)

// renal writes the longitudinal renal-function trajectory scenario (Appendix B) for one patient.
var renal = scenarioGen{
	id: "renal-trajectory",
	plans: []planCount{
		{Plan{Yes, "sustained_egfr_decline", ""}, 3},
		{Plan{Yes, "sustained_egfr_decline", "unit_variant"}, 1},
		{Plan{Yes, "sustained_egfr_decline", "first_value_not_peak"}, 1},
		{Plan{Yes, "krt_onset", ""}, 3},
		{Plan{No, "stable_or_improving", ""}, 2},
		{Plan{No, "stable_or_improving", "improving"}, 2},
		{Plan{No, "stable_or_improving", "reversible_aki"}, 2},
		{Plan{No, "stable_or_improving", "old_frail_flat"}, 2},
		{Plan{Lack, "too_few_admissions", ""}, 3},
		{Plan{Lack, "sparse_sampling", ""}, 3},
		{Plan{Ambiguous, "code_lab_discordance", "code_without_lab_change"}, 4},
		{Plan{Ambiguous, "frail_muscle_loss", ""}, 4},
	},
	write: writeRenal,
}

// renalTargets returns the per-admission baseline eGFRs the plan calls for.
func renalTargets(plan Plan, e0 float64) []float64 {
	switch {
	case plan.Reason == "sustained_egfr_decline":
		return []float64{e0, e0 - 8, e0 - 19}
	case plan.Reason == "krt_onset":
		return []float64{22, 19, 12}
	case plan.Trap == "improving":
		return []float64{e0, e0 + 7}
	case plan.Reason == "frail_muscle_loss":
		return []float64{e0, e0 - 3, e0 - 6.5}
	case plan.Reason == "too_few_admissions":
		return []float64{e0}
	}
	return []float64{e0, e0 + 0.5, e0 + 1}
}

func writeRenal(p *patient, plan Plan) scope {
	if plan.Reason == "frail_muscle_loss" || plan.Trap == "old_frail_flat" {
		p = p.reAged(78 + p.rng.IntN(8))
	}
	first := p.indexDay().AddDate(-4, 0, 0)
	p.oldAdmission(first, 3)
	e0 := 45 + float64(p.rng.IntN(25))
	at := first
	for i, e := range renalTargets(plan, e0) {
		admit := at
		disch := admit.Add(time.Duration(72+p.rng.IntN(96)) * time.Hour)
		hadm := p.admission(admit, disch, "EW EMER.", "HOME")
		p.noisePanels(hadm, admit, disch, 2)
		p.renalCodes(hadm, plan, i)
		p.renalLabs(hadm, plan, i, admit, e)
		if plan.Reason == "krt_onset" && i == 2 {
			p.procedure(hadm, admit.Add(30*time.Hour), "5A1D70Z")
		}
		at = disch.AddDate(0, 0, 300+p.rng.IntN(200))
	}
	return scope{subject: p.subject}
}

// reAged replaces a drawn patient's age before any of its rows but the patients row exist; it writes a fresh
// patient with the new age (the drawn one stays as an unrelated background patient with no admissions).
func (p *patient) reAged(age int) *patient {
	return newPatient(p.b, p.rng, age, p.gender, p.anchor)
}

func (p *patient) renalCodes(hadm string, plan Plan, i int) {
	switch {
	case plan.Reason == "code_lab_discordance" && i == 0:
		p.diagnosis(hadm, "N18.3")
	case plan.Reason == "code_lab_discordance":
		p.diagnosis(hadm, "N18.4")
	case plan.Reason == "frail_muscle_loss" || plan.Trap == "old_frail_flat":
		p.diagnosis(hadm, "N18.3")
	}
	p.diagnosis(hadm, "I10")
}

// renalLabs writes an admission's creatinines: the baseline (lowest) value for eGFR e and higher values around it.
func (p *patient) renalLabs(hadm string, plan Plan, i int, admit time.Time, e float64) {
	scr := ckdEPICreatinine(e, p.ageAt(admit), p.gender == "F")
	n := 3
	if plan.Reason == "sparse_sampling" && i > 0 {
		n = 1
	}
	item := creatinine
	for k := 0; k < n; k++ {
		v := scr + 0.1*float64(k)
		if plan.Trap == "first_value_not_peak" && k == 0 {
			v = scr + 0.3
		}
		if plan.Trap == "reversible_aki" && i == 1 && k == 1 {
			v = scr * 2.5
		}
		if plan.Trap == "unit_variant" && i == 2 && k == 0 {
			item, v = creatinineUmol, v*88.4
		}
		p.lab(hadm, admit.Add(time.Duration(2+20*k)*time.Hour), item, math.Round(v*100)/100, "")
		item = creatinine
	}
}

// ckdEPICreatinine inverts the 2021 CKD-EPI creatinine equation for the creatinine that gives eGFR e.
func ckdEPICreatinine(e float64, age int, female bool) float64 {
	kappa, alpha, sex := 0.9, -0.302, 1.0
	if female {
		kappa, alpha, sex = 0.7, -0.241, 1.012
	}
	r := e / (142 * math.Pow(0.9938, float64(age)) * sex)
	if s := kappa * math.Pow(r, -1/1.2); s >= kappa {
		return s
	}
	return kappa * math.Pow(r, 1/alpha)
}
