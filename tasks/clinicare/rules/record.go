package rules

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// The four verdicts as the paper spells them.
const (
	Yes       = "Yes"
	No        = "No"
	Lack      = "Indeterminate: Lack of Data"
	Ambiguous = "Indeterminate: Medically Ambiguous"
)

// Record is one row of one table: its reference and its values by column.
type Record struct {
	Ref    ehr.Ref
	Fields map[string]string
}

// Get returns a column's value ("" when absent).
func (r Record) Get(c string) string { return r.Fields[c] }

// Float reads a numeric column.
func (r Record) Float(c string) (float64, bool) {
	v, err := strconv.ParseFloat(r.Fields[c], 64)
	return v, err == nil
}

// Time reads a datetime or date column.
func (r Record) Time(c string) (time.Time, bool) { return ehr.ParseTime(r.Fields[c]) }

// Source gives one patient's rows of a table, in file order.
type Source interface {
	Rows(table string) []Record
}

// FromDB reads one patient's rows from a record store.
func FromDB(db *ehr.DB, subjectID string) Source { return dbSource{db, subjectID} }

type dbSource struct {
	db      *ehr.DB
	subject string
}

func (s dbSource) Rows(table string) []Record {
	rows := s.db.BySubject(table, s.subject)
	out := make([]Record, len(rows))
	for i, r := range rows {
		out[i] = Record{Ref: r.Ref(), Fields: r.Values()}
	}
	return out
}

// Case is the scope the engine judges: a scenario and a patient's encounter.
type Case struct {
	Scenario  string
	SubjectID string
	HadmID    string
	StayID    string
}

// Outcome is the engine's reading of a case.
type Outcome struct {
	Verdict     string
	Reason      string
	Decisive    []ehr.Ref
	Explanation string
}

func outcome(verdict, reason, why string, decisive ...Record) Outcome {
	o := Outcome{Verdict: verdict, Reason: reason, Explanation: why}
	seen := map[ehr.Ref]bool{}
	for _, r := range decisive {
		if r.Ref.N > 0 && !seen[r.Ref] {
			seen[r.Ref] = true
			o.Decisive = append(o.Decisive, r.Ref)
		}
	}
	sort.Slice(o.Decisive, func(i, j int) bool {
		a, b := o.Decisive[i], o.Decisive[j]
		return a.Table < b.Table || a.Table == b.Table && a.N < b.N
	})
	return o
}

// where keeps the records a predicate accepts.
func where(rs []Record, keep func(Record) bool) []Record {
	var out []Record
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// byTime sorts records by a time column, then by reference, so ties read the same every time.
func byTime(rs []Record, col string) []Record {
	out := append([]Record(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, _ := out[i].Time(col)
		b, _ := out[j].Time(col)
		if !a.Equal(b) {
			return a.Before(b)
		}
		return out[i].Ref.N < out[j].Ref.N
	})
	return out
}

// admission returns the case's admissions row.
func admission(src Source, hadm string) (Record, time.Time, time.Time, error) {
	for _, a := range src.Rows("admissions") {
		if a.Get("hadm_id") == hadm {
			in, ok1 := a.Time("admittime")
			out, ok2 := a.Time("dischtime")
			if !ok1 || !ok2 {
				return a, in, out, fmt.Errorf("admission %s has no admit or discharge time", hadm)
			}
			return a, in, out, nil
		}
	}
	return Record{}, time.Time{}, time.Time{}, fmt.Errorf("admission %s is not in the patient's admissions", hadm)
}

// hasCode reports the diagnoses among codes (ICD, dots removed), over every admission of the patient.
func codes(src Source, want ...string) []Record {
	set := map[string]bool{}
	for _, w := range want {
		set[w] = true
	}
	return where(src.Rows("diagnoses_icd"), func(r Record) bool { return set[r.Get("icd_code")] })
}

// in reports whether t lies in (from, to].
func in(t, from, to time.Time) bool { return t.After(from) && !t.After(to) }
