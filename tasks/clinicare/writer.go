package clinicare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// patient writes one synthetic patient's rows. It owns the patient's id counters for notes, orders and eMAR.
type patient struct {
	b       *ehr.Builder
	rng     *rand.Rand
	subject string
	age     int // anchor_age, the age in anchorYear
	gender  string
	anchor  int // anchor_year
	notes   int
	poes    int
	emars   int
	dx      map[string]int // hadm → last seq_num
}

func newPatient(b *ehr.Builder, rng *rand.Rand, age int, gender string, anchorYear int) *patient {
	p := &patient{b: b, rng: rng, subject: b.NextID("subject_id"), age: age, gender: gender, anchor: anchorYear,
		dx: map[string]int{}}
	group := fmt.Sprintf("%d - %d", 2008+3*rng.IntN(4), 2010+3*rng.IntN(4))
	b.Add("patients", map[string]string{"subject_id": p.subject, "gender": gender, "anchor_age": itoa(age),
		"anchor_year": itoa(anchorYear), "anchor_year_group": group})
	return p
}

func ts(t time.Time) string { return ehr.FormatTime(t) }

// admission writes an admissions row and a transfers row; it returns the hadm_id.
// Extra columns (deathtime, hospital_expire_flag, …) override the defaults.
func (p *patient) admission(admit, disch time.Time, typ, dischLoc string, extra ...map[string]string) string {
	hadm := p.b.NextID("hadm_id")
	row := map[string]string{"subject_id": p.subject, "hadm_id": hadm, "admittime": ts(admit),
		"dischtime": ts(disch), "admission_type": typ, "admission_location": "EMERGENCY ROOM",
		"discharge_location": dischLoc, "insurance": "Medicare", "language": "English", "marital_status": "MARRIED",
		"race": "WHITE", "hospital_expire_flag": "0", "admit_provider_id": "P" + itoa(100+p.rng.IntN(800))}
	for _, e := range extra {
		for k, v := range e {
			row[k] = v
		}
	}
	p.b.Add("admissions", row)
	p.b.Add("transfers", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "transfer_id": p.b.NextID("transfer_id"),
		"eventtype": "admit", "careunit": "Medicine", "intime": ts(admit), "outtime": ts(disch)})
	return hadm
}

// icu writes an icustays row and returns the stay_id. An outtime of zero leaves the window open (unrecorded).
func (p *patient) icu(hadm string, in, out time.Time) string {
	stay := p.b.NextID("stay_id")
	row := map[string]string{"subject_id": p.subject, "hadm_id": hadm, "stay_id": stay,
		"first_careunit": "Medical Intensive Care Unit (MICU)", "last_careunit": "Medical Intensive Care Unit (MICU)",
		"intime": ts(in)}
	if !out.IsZero() {
		row["outtime"] = ts(out)
		row["los"] = strconv.FormatFloat(out.Sub(in).Hours()/24, 'f', 4, 64)
	}
	p.b.Add("icustays", row)
	if !out.IsZero() {
		p.icuCharting(hadm, stay, in, out)
	}
	return stay
}

// icuCharting writes the bedside charting of an ICU stay every four hours: heart rate, respiratory rate, blood
// pressure (chartevents) and urine output (outputevents).
func (p *patient) icuCharting(hadm, stay string, in, out time.Time) {
	chart := func(at time.Time, item string, v int, uom string) {
		p.b.Add("chartevents", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "stay_id": stay,
			"caregiver_id": itoa(1000 + p.rng.IntN(9000)), "charttime": ts(at), "storetime": ts(at.Add(9 * time.Minute)),
			"itemid": item, "value": itoa(v), "valuenum": itoa(v), "valueuom": uom, "warning": "0"})
	}
	for at := in.Add(30 * time.Minute); at.Before(out); at = at.Add(4 * time.Hour) {
		chart(at, "220045", 70+p.rng.IntN(40), "bpm")
		chart(at, "220210", 12+p.rng.IntN(14), "insp/min")
		chart(at, "220179", 95+p.rng.IntN(50), "mmHg")
		chart(at, "220180", 50+p.rng.IntN(30), "mmHg")
		p.b.Add("outputevents", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "stay_id": stay,
			"caregiver_id": itoa(1000 + p.rng.IntN(9000)), "charttime": ts(at), "storetime": ts(at.Add(12 * time.Minute)),
			"itemid": "226559", "value": itoa(60 + 10*p.rng.IntN(20)), "valueuom": "mL"})
	}
}

// outpatientVisit writes an OMR visit: weight, BMI and blood pressure on a date.
func (p *patient) outpatientVisit(day time.Time) {
	kg := 55 + p.rng.IntN(50)
	for i, kv := range [][2]string{{"Weight (Lbs)", ftoa(math.Round(float64(kg)*2.2046*10) / 10)},
		{"BMI (kg/m2)", ftoa(math.Round(float64(kg)/(1.7*1.7)*10) / 10)},
		{"Blood Pressure", fmt.Sprintf("%d/%d", 110+p.rng.IntN(40), 60+p.rng.IntN(30))}} {
		p.b.Add("omr", map[string]string{"subject_id": p.subject, "chartdate": day.Format(ehr.DateLayout),
			"seq_num": itoa(i + 1), "result_name": kv[0], "result_value": kv[1]})
	}
}

// lab writes one labevents row; an empty hadm is an outpatient draw. It returns the row's reference.
func (p *patient) lab(hadm string, at time.Time, item labItem, value float64, specimen string) ehr.Ref {
	if specimen == "" {
		specimen = p.b.NextID("specimen_id")
	}
	row := map[string]string{"labevent_id": p.b.NextID("labevent_id"), "subject_id": p.subject, "hadm_id": hadm,
		"specimen_id": specimen, "itemid": itoa(item.id), "charttime": ts(at), "storetime": ts(at.Add(47 * time.Minute)),
		"value": ftoa(value), "valuenum": ftoa(value), "valueuom": item.uom, "priority": "ROUTINE"}
	if item.high > 0 {
		row["ref_range_lower"], row["ref_range_upper"] = ftoa(item.low), ftoa(item.high)
		if value > item.high || value < item.low {
			row["flag"] = "abnormal"
		}
	}
	return p.b.Add("labevents", row)
}

// diagnosis writes a diagnoses_icd row with the next seq_num of the admission.
func (p *patient) diagnosis(hadm, code string) ehr.Ref {
	p.dx[hadm]++
	version := "10"
	if code[0] >= '0' && code[0] <= '9' || code[0] == 'V' {
		version = "9"
	}
	return p.b.Add("diagnoses_icd", map[string]string{"subject_id": p.subject, "hadm_id": hadm,
		"seq_num": itoa(p.dx[hadm]), "icd_code": strings.ReplaceAll(code, ".", ""), "icd_version": version})
}

// procedure writes a procedures_icd row (ICD-10-PCS).
func (p *patient) procedure(hadm string, day time.Time, code string) ehr.Ref {
	return p.b.Add("procedures_icd", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "seq_num": "1",
		"chartdate": day.Format(ehr.DateLayout), "icd_code": code, "icd_version": "10"})
}

// order writes a POE order and returns its poe_id.
func (p *patient) order(hadm string, at time.Time, typ, subtype, status string) (string, ehr.Ref) {
	p.poes++
	id := p.subject + "-" + itoa(p.poes)
	ref := p.b.Add("poe", map[string]string{"poe_id": id, "poe_seq": itoa(p.poes), "subject_id": p.subject,
		"hadm_id": hadm, "ordertime": ts(at), "order_type": typ, "order_subtype": subtype, "transaction_type": "New",
		"order_provider_id": "P" + itoa(100+p.rng.IntN(800)), "order_status": status})
	return id, ref
}

// note writes a discharge ("DS") or radiology ("RR") note and returns its note_id and row.
func (p *patient) note(kind, hadm string, at time.Time, text string) (string, ehr.Ref) {
	p.notes++
	id := fmt.Sprintf("%s-%s-%d", p.subject, kind, p.notes)
	table := map[string]string{"DS": "discharge", "RR": "radiology"}[kind]
	ref := p.b.Add(table, map[string]string{"note_id": id, "subject_id": p.subject, "hadm_id": hadm,
		"note_type": kind, "note_seq": itoa(p.notes), "charttime": ts(at), "storetime": ts(at.Add(3 * time.Hour)),
		"text": text})
	return id, ref
}

// radiology writes a radiology report for an exam with its radiology_detail rows.
func (p *patient) radiology(hadm string, at time.Time, exam, cpt, impression string) ehr.Ref {
	text := fmt.Sprintf("EXAMINATION:  %s\n\nINDICATION:  ___ with concern for acute process.\n\nTECHNIQUE:  %s performed per protocol.\n\nFINDINGS:\n%s\n\nIMPRESSION:\n%s\n",
		exam, exam, impression, impression)
	id, ref := p.note("RR", hadm, at, text)
	p.b.Add("radiology_detail", map[string]string{"note_id": id, "subject_id": p.subject, "field_name": "exam_name",
		"field_value": exam, "field_ordinal": "1"})
	p.b.Add("radiology_detail", map[string]string{"note_id": id, "subject_id": p.subject, "field_name": "cpt_code",
		"field_value": cpt, "field_ordinal": "1"})
	return ref
}

// ed writes an ED stay linked to an admission and returns its stay_id.
func (p *patient) ed(hadm string, in, out time.Time) string {
	stay := p.b.NextID("stay_id")
	p.b.Add("edstays", map[string]string{"subject_id": p.subject, "hadm_id": hadm, "stay_id": stay, "intime": ts(in),
		"outtime": ts(out), "gender": p.gender, "race": "WHITE", "arrival_transport": "AMBULANCE", "disposition": "ADMITTED"})
	return stay
}

// vital writes an ED vitalsign row.
func (p *patient) vital(stay string, at time.Time, v map[string]string) ehr.Ref {
	row := map[string]string{"subject_id": p.subject, "stay_id": stay, "charttime": ts(at), "temperature": "98.6",
		"heartrate": "92", "resprate": "18", "o2sat": "96", "sbp": "128", "dbp": "74", "pain": "2"}
	for k, val := range v {
		row[k] = val
	}
	return p.b.Add("vitalsign", row)
}

// ageAt is the patient's age at time t (anchor_age shifted by the years since anchor_year).
func (p *patient) ageAt(t time.Time) int { return p.age + t.Year() - p.anchor }

// between draws a time uniformly in [from, from+span).
func between(rng *rand.Rand, from time.Time, span time.Duration) time.Time {
	return from.Add(time.Duration(rng.Int64N(int64(span)/int64(time.Minute))) * time.Minute)
}

// indexDay returns a random instant in the patient's anchor year or the two after it (MIMIC's shifted years).
func (p *patient) indexDay() time.Time {
	return time.Date(p.anchor+p.rng.IntN(3), time.Month(1+p.rng.IntN(12)), 1+p.rng.IntN(28), 6+p.rng.IntN(14), p.rng.IntN(60), 0, 0, time.UTC)
}

// discontinue writes a D/C order that discontinues poeID.
func (p *patient) discontinue(hadm string, at time.Time, poeID string) ehr.Ref {
	p.poes++
	return p.b.Add("poe", map[string]string{"poe_id": p.subject + "-" + itoa(p.poes), "poe_seq": itoa(p.poes),
		"subject_id": p.subject, "hadm_id": hadm, "ordertime": ts(at), "order_type": "Radiology",
		"transaction_type": "D/C", "discontinue_of_poe_id": poeID, "order_status": "Inactive"})
}

// routineOrders writes the background order stream of a window: medication and lab orders.
func (p *patient) routineOrders(hadm string, from, to time.Time) {
	span := to.Sub(from)
	for i, typ := range []string{"Medications", "Lab", "Nutrition", "Medications"} {
		p.order(hadm, from.Add(span*time.Duration(i+1)/5).Truncate(time.Minute), typ, "", "Inactive")
	}
}
