package toolenv

import "github.com/npcorch/npcorch/tasks/ehr"

// labels are the dictionary lookups tools attach to rows (an item's label is not a pre-join of clinical data).
type labels struct {
	lab, item, dx, proc map[string]string
}

func newLabels(db *ehr.DB) labels {
	l := labels{lab: map[string]string{}, item: map[string]string{}, dx: map[string]string{}, proc: map[string]string{}}
	fill := func(table string, m map[string]string, key func(ehr.Row) string, val func(ehr.Row) string) {
		t := db.Table(table)
		for i := 0; i < t.Len(); i++ {
			m[key(t.Row(i))] = val(t.Row(i))
		}
	}
	get := func(c string) func(ehr.Row) string { return func(r ehr.Row) string { return r.Get(c) } }
	fill("d_labitems", l.lab, get("itemid"), func(r ehr.Row) string { return r.Get("label") + " (" + r.Get("fluid") + ")" })
	fill("d_items", l.item, get("itemid"), get("label"))
	icdKey := func(r ehr.Row) string { return r.Get("icd_version") + "/" + r.Get("icd_code") }
	fill("d_icd_diagnoses", l.dx, icdKey, get("long_title"))
	fill("d_icd_procedures", l.proc, icdKey, get("long_title"))
	return l
}

// of returns the label a row of a table carries, "" for none.
func (l labels) of(table string, r ehr.Row) string {
	switch table {
	case "labevents":
		return l.lab[r.Get("itemid")]
	case "chartevents", "inputevents", "outputevents":
		return l.item[r.Get("itemid")]
	case "diagnoses_icd":
		return l.dx[r.Get("icd_version")+"/"+r.Get("icd_code")]
	case "procedures_icd":
		return l.proc[r.Get("icd_version")+"/"+r.Get("icd_code")]
	}
	return ""
}

// dictionaryOf names the dictionary table a table's labels come from.
func dictionaryOf(table string) string {
	switch table {
	case "labevents":
		return "d_labitems"
	case "chartevents", "inputevents", "outputevents":
		return "d_items"
	case "diagnoses_icd":
		return "d_icd_diagnoses"
	case "procedures_icd":
		return "d_icd_procedures"
	}
	return ""
}
