package toolenv

import (
	"strings"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// EncountersArgs are the arguments of list_encounters.
type EncountersArgs struct {
	SubjectID ID `json:"subject_id" jsonschema:"the patient's subject_id"`
}

// RecordArgs are the arguments shared by the record tools.
type RecordArgs struct {
	SubjectID ID     `json:"subject_id" jsonschema:"the patient's subject_id"`
	HadmID    ID     `json:"hadm_id,omitempty" jsonschema:"only rows of this admission"`
	StayID    ID     `json:"stay_id,omitempty" jsonschema:"only rows of this ICU or ED stay"`
	Since     string `json:"since,omitempty" jsonschema:"only rows at or after this time (YYYY-MM-DD[ HH:MM:SS])"`
	Until     string `json:"until,omitempty" jsonschema:"only rows at or before this time"`
	Limit     int    `json:"limit,omitempty" jsonschema:"rows per page, 1..500 (default 100)"`
	Offset    int    `json:"offset,omitempty" jsonschema:"rows to skip (next_offset of the previous page)"`
}

// LabArgs are the arguments of get_labs.
type LabArgs struct {
	RecordArgs
	ItemID ID     `json:"itemid,omitempty" jsonschema:"only this lab item (d_labitems itemid)"`
	Label  string `json:"label,omitempty" jsonschema:"only items whose label contains this text (case-insensitive)"`
}

// VitalArgs are the arguments of get_vitals.
type VitalArgs struct {
	RecordArgs
	Source string `json:"source,omitempty" jsonschema:"ed (vitalsign), icu (chartevents) or omr; all when empty"`
}

// MedArgs are the arguments of get_medications.
type MedArgs struct {
	RecordArgs
	Source string `json:"source" jsonschema:"home (ED medication reconciliation), prescriptions, pharmacy or emar"`
}

// OrderArgs are the arguments of get_orders.
type OrderArgs struct {
	RecordArgs
	OrderType string `json:"order_type,omitempty" jsonschema:"only orders of this order_type (e.g. Radiology)"`
}

// IOArgs are the arguments of get_inputs_outputs.
type IOArgs struct {
	RecordArgs
	Kind string `json:"kind,omitempty" jsonschema:"input or output; both when empty"`
}

func clinicalTools() []tool {
	return []tool{
		define("list_encounters", ChannelClinical, "The patient's demographics and every encounter: admissions, transfers, ICU stays and ED stays.", listEncounters),
		define("get_labs", ChannelClinical, "Laboratory results (labevents) with item labels; filter by admission, time, itemid or label.", getLabs),
		define("get_vitals", ChannelClinical, "Vital signs: ED vitalsign, ICU chartevents and outpatient OMR measurements.", getVitals),
		define("get_medications", ChannelClinical, "Medications by source: home (ED reconciliation), prescriptions, pharmacy or emar administrations.", getMedications),
		define("get_microbiology", ChannelClinical, "Microbiology specimens, tests, organisms and susceptibilities.", recordTool("microbiologyevents")),
		define("get_procedures", ChannelClinical, "Coded procedures (ICD) with titles.", recordTool("procedures_icd")),
		define("get_diagnoses", ChannelClinical, "Coded diagnoses (ICD) with titles.", recordTool("diagnoses_icd")),
		define("get_orders", ChannelClinical, "Provider orders (POE): type, subtype, time, status, discontinuations.", getOrders),
		define("get_imaging", ChannelClinical, "Radiology studies: report metadata (note_id, time) and exam names and CPT codes; read a report with read_note.", getImaging),
		define("get_inputs_outputs", ChannelClinical, "ICU fluid and drug inputs (inputevents) and outputs (outputevents).", getIO),
	}
}

func (a RecordArgs) filter(keep func(string, ehr.Row) bool) (filter, error) {
	s, u, err := window(a.Since, a.Until)
	return filter{hadm: string(a.HadmID), stay: string(a.StayID), since: s, until: u, keep: keep}, err
}

// records runs a record query after the scope check.
func (e *Env) records(subject string, a RecordArgs, rec *CallRecord, tables []string, keep func(string, ehr.Row) bool) (output, error) {
	if err := e.checkScope(subject, string(a.SubjectID), string(a.HadmID), string(a.StayID), rec); err != nil {
		return output{}, err
	}
	f, err := a.filter(keep)
	if err != nil {
		return output{}, err
	}
	return e.page(subject, tables, f, a.Limit, a.Offset)
}

func recordTool(table string) func(*Env, string, RecordArgs, *CallRecord) (output, error) {
	return func(e *Env, subject string, a RecordArgs, rec *CallRecord) (output, error) {
		return e.records(subject, a, rec, []string{table}, nil)
	}
}

func listEncounters(e *Env, subject string, a EncountersArgs, rec *CallRecord) (output, error) {
	return e.records(subject, RecordArgs{SubjectID: a.SubjectID, Limit: MaxLimit}, rec,
		[]string{"patients", "admissions", "transfers", "icustays", "edstays"}, nil)
}

func getLabs(e *Env, subject string, a LabArgs, rec *CallRecord) (output, error) {
	label := strings.ToLower(a.Label)
	return e.records(subject, a.RecordArgs, rec, []string{"labevents"}, func(_ string, r ehr.Row) bool {
		return (string(a.ItemID) == "" || r.Get("itemid") == string(a.ItemID)) &&
			(label == "" || strings.Contains(strings.ToLower(e.labels.lab[r.Get("itemid")]), label))
	})
}

func getVitals(e *Env, subject string, a VitalArgs, rec *CallRecord) (output, error) {
	tables := map[string][]string{"": {"vitalsign", "chartevents", "omr"}, "ed": {"vitalsign"}, "icu": {"chartevents"}, "omr": {"omr"}}[a.Source]
	if tables == nil {
		return output{}, invalidError{"source must be ed, icu, omr or empty"}
	}
	return e.records(subject, a.RecordArgs, rec, tables, nil)
}

func getMedications(e *Env, subject string, a MedArgs, rec *CallRecord) (output, error) {
	table := map[string]string{"home": "medrecon", "prescriptions": "prescriptions", "pharmacy": "pharmacy", "emar": "emar"}[a.Source]
	if table == "" {
		return output{}, invalidError{"source must be home, prescriptions, pharmacy or emar"}
	}
	return e.records(subject, a.RecordArgs, rec, []string{table}, nil)
}

func getOrders(e *Env, subject string, a OrderArgs, rec *CallRecord) (output, error) {
	return e.records(subject, a.RecordArgs, rec, []string{"poe"}, func(_ string, r ehr.Row) bool {
		return a.OrderType == "" || r.Get("order_type") == a.OrderType
	})
}

func getImaging(e *Env, subject string, a RecordArgs, rec *CallRecord) (output, error) {
	notes := map[string]bool{}
	for _, r := range e.db.BySubject("radiology", subject) {
		notes[r.Get("note_id")] = r.Get("hadm_id") == string(a.HadmID) || string(a.HadmID) == ""
	}
	out, err := e.records(subject, RecordArgs{SubjectID: a.SubjectID, Since: a.Since, Until: a.Until, Limit: a.Limit, Offset: a.Offset}, rec,
		[]string{"radiology", "radiology_detail"}, func(t string, r ehr.Row) bool {
			return t == "radiology_detail" && notes[r.Get("note_id")] || t == "radiology" && (string(a.HadmID) == "" || r.Get("hadm_id") == string(a.HadmID))
		})
	if p, ok := out.value.(Page); ok {
		for i := range p.Rows {
			delete(p.Rows[i].Values, "text")
		}
	}
	return out, err
}

func getIO(e *Env, subject string, a IOArgs, rec *CallRecord) (output, error) {
	tables := map[string][]string{"": {"inputevents", "outputevents"}, "input": {"inputevents"}, "output": {"outputevents"}}[a.Kind]
	if tables == nil {
		return output{}, invalidError{"kind must be input, output or empty"}
	}
	return e.records(subject, a.RecordArgs, rec, tables, nil)
}
