package rules

import (
	"fmt"
	"math"
	"time"
)

// perAdmission is one admission's creatinine sampling and its baseline eGFR.
type perAdmission struct {
	adm    Record
	admit  time.Time
	values []lab
	low    lab
	egfr   float64
}

// judgeRenal applies the longitudinal renal-trajectory criteria (Appendix B) to a patient.
func judgeRenal(src Source, c Case) (Outcome, error) {
	pts := src.Rows("patients")
	if len(pts) == 0 {
		return Outcome{}, fmt.Errorf("patient %s has no patients row", c.SubjectID)
	}
	all := perAdmissionBaselines(src, pts[0])
	var sampled []perAdmission
	for _, a := range all {
		if len(a.values) >= 2 {
			sampled = append(sampled, a)
		}
	}
	switch {
	case len(all) < 2:
		return outcome(Lack, "too_few_admissions", "fewer than two admissions with a creatinine", admRecords(all)...), nil
	case len(sampled) < 2:
		return outcome(Lack, "sparse_sampling", "fewer than two admissions with two or more creatinines", admRecords(all)...), nil
	}
	if krt := krtOnset(src, sampled[0]); len(krt) > 0 {
		return outcome(Yes, "krt_onset", "kidney replacement therapy began after the first admission", krt...), nil
	}
	return trajectoryVerdict(src, pts[0], sampled), nil
}

func trajectoryVerdict(src Source, pt Record, sampled []perAdmission) Outcome {
	first, last := sampled[0], sampled[len(sampled)-1]
	decline := first.egfr - last.egfr
	sustained := true
	for i := 1; i < len(sampled); i++ {
		sustained = sustained && sampled[i].egfr-sampled[i-1].egfr <= 3
	}
	rows := lowRecords(sampled)
	why := fmt.Sprintf("baseline eGFR %.1f → %.1f over %d admissions", first.egfr, last.egfr, len(sampled))
	if decline >= 10 && sustained {
		return outcome(Yes, "sustained_egfr_decline", why, rows...)
	}
	if firstStage, lastStage := ckdStage(src, first.adm), ckdStage(src, last.adm); lastStage > firstStage && firstStage > 0 {
		return outcome(Ambiguous, "code_lab_discordance", why+"; coded CKD stage rises without the labs", append(rows, codesOf(src, last.adm)...)...)
	}
	age, _ := pt.Float("anchor_age")
	year, _ := pt.Float("anchor_year")
	ageLast := age + float64(last.admit.Year()) - year
	if ageLast >= 75 && decline >= 3 && ckdStage(src, last.adm) > 0 {
		return outcome(Ambiguous, "frail_muscle_loss", why+"; older patient with coded CKD and a mild decline", append(rows, codesOf(src, last.adm)...)...)
	}
	return outcome(No, "stable_or_improving", why, rows...)
}

// perAdmissionBaselines lists admissions with at least one blood creatinine, oldest first, each with its lowest
// value and that value's 2021 CKD-EPI eGFR.
func perAdmissionBaselines(src Source, pt Record) []perAdmission {
	creat := labs(src, itemCreatinine)
	var out []perAdmission
	for _, a := range byTime(src.Rows("admissions"), "admittime") {
		vals := labsIn(creat, func(l lab) bool { return l.Get("hadm_id") == a.Get("hadm_id") })
		if len(vals) == 0 {
			continue
		}
		low := vals[0]
		for _, v := range vals {
			if v.value < low.value {
				low = v
			}
		}
		admit, _ := a.Time("admittime")
		out = append(out, perAdmission{adm: a, admit: admit, values: vals, low: low, egfr: ckdEPI(low.value, pt, admit)})
	}
	return out
}

// ckdEPI is the 2021 race-free CKD-EPI creatinine equation.
func ckdEPI(scr float64, pt Record, at time.Time) float64 {
	age, _ := pt.Float("anchor_age")
	year, _ := pt.Float("anchor_year")
	age += float64(at.Year()) - year
	kappa, alpha, sex := 0.9, -0.302, 1.0
	if pt.Get("gender") == "F" {
		kappa, alpha, sex = 0.7, -0.241, 1.012
	}
	return 142 * math.Pow(math.Min(scr/kappa, 1), alpha) * math.Pow(math.Max(scr/kappa, 1), -1.2) * math.Pow(0.9938, age) * sex
}

// krtOnset finds dialysis procedures in admissions after the first sampled one, when the first had none.
func krtOnset(src Source, first perAdmission) []Record {
	krt := map[string]bool{"5A1D70Z": true, "5A1D80Z": true, "5A1D90Z": true, "3995": true, "5498": true}
	var onset []Record
	for _, p := range src.Rows("procedures_icd") {
		if !krt[p.Get("icd_code")] {
			continue
		}
		if p.Get("hadm_id") == first.adm.Get("hadm_id") {
			return nil
		}
		onset = append(onset, p)
	}
	return onset
}

// ckdStage is the highest CKD stage coded in an admission (N18.1–N18.6, 585.1–585.6), 0 for none.
func ckdStage(src Source, adm Record) int {
	stage := 0
	for _, d := range codesOf(src, adm) {
		code := d.Get("icd_code")
		if len(code) == 4 && (code[:3] == "N18" || code[:3] == "585") && code[3] >= '1' && code[3] <= '6' {
			stage = max(stage, int(code[3]-'0'))
		}
	}
	return stage
}

func codesOf(src Source, adm Record) []Record {
	return where(src.Rows("diagnoses_icd"), func(r Record) bool {
		code := r.Get("icd_code")
		return r.Get("hadm_id") == adm.Get("hadm_id") && len(code) >= 3 && (code[:3] == "N18" || code[:3] == "585")
	})
}

func admRecords(as []perAdmission) []Record {
	var out []Record
	for _, a := range as {
		out = append(out, a.adm)
	}
	return out
}

func lowRecords(as []perAdmission) []Record {
	var out []Record
	for _, a := range as {
		out = append(out, a.adm, a.low.Record)
	}
	return out
}
