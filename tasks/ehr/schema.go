package ehr

import "strings"

// Module is one of MIMIC-IV's four modules; a table's file lives in the folder of that name.
type Module string

// The modules, named as MIMIC-IV ships them.
const (
	Hosp Module = "hosp"
	ICU  Module = "icu"
	ED   Module = "ed"
	Note Module = "note"
)

// Schema names a table and its columns, in MIMIC-IV's spelling and order.
type Schema struct {
	Name    string
	Module  Module
	Columns []string
}

// Path is the table's file relative to the dataset root, e.g. "hosp/labevents.csv".
func (s Schema) Path() string { return string(s.Module) + "/" + s.Name + ".csv" }

// Schemas lists every table the synthetic EHR carries, in a fixed order. Column lists follow MIMIC-IV v3.1
// (hosp, icu), MIMIC-IV-ED v2.2 and MIMIC-IV-Note v2.2.
func Schemas() []Schema {
	return []Schema{
		{"patients", Hosp, cols("subject_id gender anchor_age anchor_year anchor_year_group dod")},
		{"admissions", Hosp, cols("subject_id hadm_id admittime dischtime deathtime admission_type admit_provider_id admission_location discharge_location insurance language marital_status race edregtime edouttime hospital_expire_flag")},
		{"transfers", Hosp, cols("subject_id hadm_id transfer_id eventtype careunit intime outtime")},
		{"diagnoses_icd", Hosp, cols("subject_id hadm_id seq_num icd_code icd_version")},
		{"d_icd_diagnoses", Hosp, cols("icd_code icd_version long_title")},
		{"procedures_icd", Hosp, cols("subject_id hadm_id seq_num chartdate icd_code icd_version")},
		{"d_icd_procedures", Hosp, cols("icd_code icd_version long_title")},
		{"labevents", Hosp, cols("labevent_id subject_id hadm_id specimen_id itemid order_provider_id charttime storetime value valuenum valueuom ref_range_lower ref_range_upper flag priority comments")},
		{"d_labitems", Hosp, cols("itemid label fluid category")},
		{"prescriptions", Hosp, cols("subject_id hadm_id pharmacy_id poe_id poe_seq order_provider_id starttime stoptime drug_type drug formulary_drug_cd gsn ndc prod_strength form_rx dose_val_rx dose_unit_rx form_val_disp form_unit_disp doses_per_24_hrs route")},
		{"pharmacy", Hosp, cols("subject_id hadm_id pharmacy_id poe_id starttime stoptime medication proc_type status entertime verifiedtime route frequency disp_sched infusion_type sliding_scale lockout_interval basal_rate one_hr_max doses_per_24_hrs duration duration_interval expiration_value expiration_unit expirationdate dispensation fill_quantity")},
		{"emar", Hosp, cols("subject_id hadm_id emar_id emar_seq poe_id pharmacy_id enter_provider_id charttime medication event_txt scheduletime storetime")},
		{"poe", Hosp, cols("poe_id poe_seq subject_id hadm_id ordertime order_type order_subtype transaction_type discontinue_of_poe_id discontinued_by_poe_id order_provider_id order_status")},
		{"microbiologyevents", Hosp, cols("microevent_id subject_id hadm_id micro_specimen_id order_provider_id chartdate charttime spec_itemid spec_type_desc test_seq storedate storetime test_itemid test_name org_itemid org_name isolate_num quantity ab_itemid ab_name dilution_text dilution_comparison dilution_value interpretation comments")},
		{"omr", Hosp, cols("subject_id chartdate seq_num result_name result_value")},
		{"icustays", ICU, cols("subject_id hadm_id stay_id first_careunit last_careunit intime outtime los")},
		{"chartevents", ICU, cols("subject_id hadm_id stay_id caregiver_id charttime storetime itemid value valuenum valueuom warning")},
		{"d_items", ICU, cols("itemid label abbreviation linksto category unitname param_type lownormalvalue highnormalvalue")},
		{"inputevents", ICU, cols("subject_id hadm_id stay_id caregiver_id starttime endtime storetime itemid amount amountuom rate rateuom orderid linkorderid ordercategoryname secondaryordercategoryname ordercomponenttypedescription ordercategorydescription patientweight totalamount totalamountuom isopenbag continueinnextdept statusdescription originalamount originalrate")},
		{"outputevents", ICU, cols("subject_id hadm_id stay_id caregiver_id charttime storetime itemid value valueuom")},
		{"edstays", ED, cols("subject_id hadm_id stay_id intime outtime gender race arrival_transport disposition")},
		{"medrecon", ED, cols("subject_id stay_id charttime name gsn ndc etc_rn etccode etcdescription")},
		{"vitalsign", ED, cols("subject_id stay_id charttime temperature heartrate resprate o2sat sbp dbp rhythm pain")},
		{"discharge", Note, cols("note_id subject_id hadm_id note_type note_seq charttime storetime text")},
		{"radiology", Note, cols("note_id subject_id hadm_id note_type note_seq charttime storetime text")},
		{"radiology_detail", Note, cols("note_id subject_id field_name field_value field_ordinal")},
	}
}

// SchemaOf returns the schema of the named table.
func SchemaOf(name string) (Schema, bool) {
	for _, s := range Schemas() {
		if s.Name == name {
			return s, true
		}
	}
	return Schema{}, false
}

func cols(s string) []string { return strings.Fields(s) }
