package rules

import (
	"fmt"
	"time"
)

// Admission types by class (benchmark choice): planned ones never count, observation ones are not inpatient.
var (
	plannedTypes     = map[string]bool{"ELECTIVE": true, "SURGICAL SAME DAY ADMISSION": true}
	observationTypes = map[string]bool{"EU OBSERVATION": true, "OBSERVATION ADMIT": true, "DIRECT OBSERVATION": true, "AMBULATORY OBSERVATION": true}
)

// judgeReadmit decides whether an unplanned inpatient readmission followed the index discharge within 30 days.
func judgeReadmit(src Source, c Case) (Outcome, error) {
	idx, _, disch, err := admission(src, c.HadmID)
	if err != nil {
		return Outcome{}, err
	}
	if idx.Get("hospital_expire_flag") == "1" || idx.Get("deathtime") != "" {
		return outcome(Lack, "died_in_index", "the patient died in the index admission: no discharge to follow", idx), nil
	}
	if idx.Get("discharge_location") == "ACUTE HOSPITAL" {
		return outcome(Lack, "transferred_out", "discharged to another acute hospital: a readmission there is not in this record", idx), nil
	}
	var observation, planned []Record
	for _, a := range byTime(src.Rows("admissions"), "admittime") {
		at, ok := a.Time("admittime")
		if !ok || !in(at, disch, disch.Add(30*24*time.Hour)) {
			continue
		}
		switch typ := a.Get("admission_type"); {
		case plannedTypes[typ]:
			planned = append(planned, a)
		case observationTypes[typ]:
			observation = append(observation, a)
		default:
			return outcome(Yes, "unplanned_readmission", fmt.Sprintf("%s admission %s on %s", typ, a.Get("hadm_id"), a.Get("admittime")), idx, a), nil
		}
	}
	if len(observation) > 0 {
		return outcome(Ambiguous, "observation_stay", "only an observation stay within 30 days: not clearly an inpatient readmission", append(observation, idx)...), nil
	}
	return outcome(No, "no_unplanned_readmission", fmt.Sprintf("%d planned and no unplanned admissions within 30 days", len(planned)), append(planned, idx)...), nil
}
