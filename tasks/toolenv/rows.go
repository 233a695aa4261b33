package toolenv

import (
	"fmt"
	"time"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// Page bounds: every row tool returns at most MaxLimit rows per call.
const (
	DefaultLimit = 100
	MaxLimit     = 500
)

// RowOut is one record row as tools return it: its reference, table, dictionary label and non-empty values.
type RowOut struct {
	Ref    string            `json:"ref"`
	Table  string            `json:"table"`
	Label  string            `json:"label,omitempty"`
	Values map[string]string `json:"values"`
}

// Page is a bounded slice of rows.
type Page struct {
	Rows       []RowOut `json:"rows"`
	Total      int      `json:"total"`
	Offset     int      `json:"offset"`
	Truncated  bool     `json:"truncated"`
	NextOffset int      `json:"next_offset,omitempty"`
}

// filter narrows a patient's rows: encounter, time window, and a tool-specific predicate.
type filter struct {
	hadm, stay   string
	since, until time.Time
	keep         func(table string, r ehr.Row) bool
	omit         map[string]bool // columns left out of the values (note text in listings)
}

// timeColumn is the column a table's time window applies to.
var timeColumn = map[string]string{
	"admissions": "admittime", "transfers": "intime", "icustays": "intime", "edstays": "intime",
	"labevents": "charttime", "chartevents": "charttime", "vitalsign": "charttime", "omr": "chartdate",
	"prescriptions": "starttime", "pharmacy": "starttime", "emar": "charttime", "medrecon": "charttime",
	"microbiologyevents": "chartdate", "procedures_icd": "chartdate", "poe": "ordertime",
	"inputevents": "starttime", "outputevents": "charttime", "discharge": "charttime", "radiology": "charttime",
}

// page collects the patient's rows of the tables that pass the filter, in table then file order, and cuts one page.
func (e *Env) page(subject string, tables []string, f filter, limit, offset int) (output, error) {
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 0 || limit > MaxLimit || offset < 0 {
		return output{}, invalidError{fmt.Sprintf("limit must be 1..%d and offset ≥ 0", MaxLimit)}
	}
	var all []ehr.Row
	var touched []string
	for _, t := range tables {
		touched = append(touched, t)
		if d := dictionaryOf(t); d != "" {
			touched = append(touched, d)
		}
		for _, r := range e.db.BySubject(t, subject) {
			if f.pass(t, r) {
				all = append(all, r)
			}
		}
	}
	p := Page{Total: len(all), Offset: offset, Rows: []RowOut{}}
	end := min(offset+limit, len(all))
	out := output{tables: touched, empty: len(all) == 0}
	for i := offset; i < end; i++ {
		p.Rows = append(p.Rows, e.rowOut(all[i], f.omit))
		out.rows = append(out.rows, all[i].Ref().String())
	}
	if end < len(all) {
		p.Truncated, p.NextOffset, out.truncated = true, end, true
	}
	out.value = p
	return out, nil
}

func (f filter) pass(table string, r ehr.Row) bool {
	if f.hadm != "" && r.Get("hadm_id") != f.hadm && hasColumn(r, "hadm_id") {
		return false
	}
	if f.stay != "" && r.Get("stay_id") != f.stay && hasColumn(r, "stay_id") {
		return false
	}
	if col, timed := timeColumn[table]; timed && (!f.since.IsZero() || !f.until.IsZero()) {
		at, ok := r.Time(col)
		if !ok || !f.since.IsZero() && at.Before(f.since) || !f.until.IsZero() && at.After(f.until) {
			return false
		}
	}
	return f.keep == nil || f.keep(table, r)
}

func hasColumn(r ehr.Row, c string) bool {
	for _, x := range r.Columns() {
		if x == c {
			return true
		}
	}
	return false
}

func (e *Env) rowOut(r ehr.Row, omit map[string]bool) RowOut {
	ref := r.Ref()
	vals := map[string]string{}
	for i, c := range r.Columns() {
		if v := r.Cells()[i]; v != "" && !omit[c] {
			vals[c] = v
		}
	}
	return RowOut{Ref: ref.String(), Table: ref.Table, Label: e.labels.of(ref.Table, r), Values: vals}
}

// window parses the since/until arguments.
func window(since, until string) (time.Time, time.Time, error) {
	var s, u time.Time
	var ok bool
	if since != "" {
		if s, ok = ehr.ParseTime(since); !ok {
			return s, u, invalidError{fmt.Sprintf("since %q: want YYYY-MM-DD or YYYY-MM-DD HH:MM:SS", since)}
		}
	}
	if until != "" {
		if u, ok = ehr.ParseTime(until); !ok {
			return s, u, invalidError{fmt.Sprintf("until %q: want YYYY-MM-DD or YYYY-MM-DD HH:MM:SS", until)}
		}
	}
	return s, u, nil
}

// checkScope refuses a subject other than the session's, and an encounter that belongs to another patient.
func (e *Env) checkScope(subject, asked, hadm, stay string, rec *CallRecord) error {
	rec.Subject = asked
	if asked == "" {
		return invalidError{"subject_id is required"}
	}
	if asked != subject {
		return scopeError{"subject_id " + asked}
	}
	if rows := e.db.ByHadm("admissions", hadm); hadm != "" && len(rows) > 0 && rows[0].Get("subject_id") != subject {
		return scopeError{"hadm_id " + hadm}
	}
	if stay != "" && !e.stayOf(subject, stay) && e.stayExists(stay) {
		return scopeError{"stay_id " + stay}
	}
	rec.Scope = ScopeOK
	return nil
}

func (e *Env) stayOf(subject, stay string) bool {
	for _, t := range []string{"icustays", "edstays"} {
		for _, r := range e.db.BySubject(t, subject) {
			if r.Get("stay_id") == stay {
				return true
			}
		}
	}
	return false
}

func (e *Env) stayExists(stay string) bool {
	for _, t := range []string{"icustays", "edstays"} {
		tb := e.db.Table(t)
		for i := 0; i < tb.Len(); i++ {
			if tb.Row(i).Get("stay_id") == stay {
				return true
			}
		}
	}
	return false
}
