package clinicare

import (
	"strings"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// labItem is a d_labitems entry with its unit and reference range.
type labItem struct {
	id            int
	label, fluid  string
	category, uom string
	low, high     float64
}

// The lab items the scenarios write; ids are MIMIC-IV's where MIMIC has the item, and our own (from 59000) for
// the ascitic-fluid items.
var (
	creatinine      = labItem{50912, "Creatinine", "Blood", "Chemistry", "mg/dL", 0.5, 1.2}
	creatinineUmol  = labItem{50912, "Creatinine", "Blood", "Chemistry", "umol/L", 44, 106}
	urineCreatinine = labItem{51082, "Creatinine, Urine", "Urine", "Chemistry", "mg/dL", 0, 0}
	bun             = labItem{51006, "Urea Nitrogen", "Blood", "Chemistry", "mg/dL", 6, 20}
	glucose         = labItem{50931, "Glucose", "Blood", "Chemistry", "mg/dL", 70, 100}
	bicarbonate     = labItem{50882, "Bicarbonate", "Blood", "Chemistry", "mEq/L", 22, 32}
	anionGap        = labItem{50868, "Anion Gap", "Blood", "Chemistry", "mEq/L", 8, 20}
	ph              = labItem{50820, "pH", "Blood", "Blood Gas", "units", 7.35, 7.45}
	sodium          = labItem{50983, "Sodium", "Blood", "Chemistry", "mEq/L", 133, 145}
	potassium       = labItem{50971, "Potassium", "Blood", "Chemistry", "mEq/L", 3.3, 5.1}
	potassiumMmol   = labItem{50971, "Potassium", "Blood", "Chemistry", "mmol/L", 3.3, 5.1}
	hemoglobin      = labItem{51222, "Hemoglobin", "Blood", "Hematology", "g/dL", 12, 16}
	wbc             = labItem{51301, "White Blood Cells", "Blood", "Hematology", "K/uL", 4, 11}
	ascitesWBC      = labItem{59001, "WBC, Ascites", "Ascites", "Hematology", "#/uL", 0, 0}
	ascitesPolys    = labItem{59002, "Polys, Ascites", "Ascites", "Hematology", "%", 0, 0}
	ascitesRBC      = labItem{59003, "RBC, Ascites", "Ascites", "Hematology", "#/uL", 0, 0}
	ammonia         = labItem{50866, "Ammonia", "Blood", "Chemistry", "umol/L", 11, 32}
)

func labCatalog() []labItem {
	return []labItem{ph, ammonia, anionGap, bicarbonate, glucose, potassium, creatinine, sodium, bun, urineCreatinine,
		hemoglobin, wbc, ascitesWBC, ascitesPolys, ascitesRBC}
}

// icdTitles is the d_icd_diagnoses dictionary for every code the scenarios write.
var icdTitles = map[string]string{
	"N179": "Acute kidney failure, unspecified", "N186": "End stage renal disease",
	"Z992": "Dependence on renal dialysis", "N183": "Chronic kidney disease, stage 3 (moderate)",
	"N184": "Chronic kidney disease, stage 4 (severe)", "N185": "Chronic kidney disease, stage 5",
	"I10": "Essential (primary) hypertension", "E785": "Hyperlipidemia, unspecified",
	"E1010": "Type 1 diabetes mellitus with ketoacidosis without coma", "E119": "Type 2 diabetes mellitus without complications",
	"J189": "Pneumonia, unspecified organism", "K7290": "Hepatic failure, unspecified without coma",
	"K7682": "Hepatic encephalopathy", "K7031": "Alcoholic cirrhosis of liver with ascites",
	"K652": "Spontaneous bacterial peritonitis", "F0390": "Unspecified dementia without behavioral disturbance",
	"I480": "Paroxysmal atrial fibrillation", "J449": "Chronic obstructive pulmonary disease, unspecified",
	"K219": "Gastro-esophageal reflux disease without esophagitis", "I509": "Heart failure, unspecified",
	"5856": "End stage renal disease", "V4511": "Renal dialysis status",
}

// procTitles is the d_icd_procedures dictionary.
var procTitles = map[string]string{
	"5A1D70Z": "Performance of Urinary Filtration, Intermittent, Less than 6 Hours Per Day",
	"0W9G3ZX": "Drainage of Peritoneal Cavity, Percutaneous Approach, Diagnostic",
	"0BH17EZ": "Insertion of Endotracheal Airway into Trachea, Via Natural or Artificial Opening",
}

// writeDictionaries adds d_labitems, d_icd_diagnoses, d_icd_procedures and d_items.
func writeDictionaries(b *ehr.Builder) {
	for _, it := range labCatalog() {
		b.Add("d_labitems", map[string]string{"itemid": itoa(it.id), "label": it.label, "fluid": it.fluid, "category": it.category})
	}
	for _, code := range ehr.SortedKeys(icdTitles) {
		v := "10"
		if code[0] >= '0' && code[0] <= '9' || strings.HasPrefix(code, "V") {
			v = "9"
		}
		b.Add("d_icd_diagnoses", map[string]string{"icd_code": code, "icd_version": v, "long_title": icdTitles[code]})
	}
	for _, code := range ehr.SortedKeys(procTitles) {
		b.Add("d_icd_procedures", map[string]string{"icd_code": code, "icd_version": "10", "long_title": procTitles[code]})
	}
	for _, it := range [][]string{
		{"220045", "Heart Rate", "HR", "chartevents", "Routine Vital Signs", "bpm", "Numeric"},
		{"220210", "Respiratory Rate", "RR", "chartevents", "Respiratory", "insp/min", "Numeric"},
		{"220179", "Non Invasive Blood Pressure systolic", "NBPs", "chartevents", "Routine Vital Signs", "mmHg", "Numeric"},
		{"220180", "Non Invasive Blood Pressure diastolic", "NBPd", "chartevents", "Routine Vital Signs", "mmHg", "Numeric"},
		{"223258", "Insulin - Regular", "Insulin - Regular", "inputevents", "Medications", "units", "Solution"},
		{"225158", "NaCl 0.9%", "NaCl 0.9%", "inputevents", "Fluids/Intake", "mL", "Solution"},
		{"226559", "Foley", "Foley", "outputevents", "Output", "mL", "Numeric"},
	} {
		b.Add("d_items", map[string]string{"itemid": it[0], "label": it[1], "abbreviation": it[2], "linksto": it[3],
			"category": it[4], "unitname": it[5], "param_type": it[6]})
	}
}
