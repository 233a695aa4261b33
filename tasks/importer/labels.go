package importer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/tasks/dataset"
)

// Label is one patient's row of the labels sheet.
type Label struct {
	// Row is the row number in the sheet (1 is the header).
	Row     int
	Patient string
	// TStage is T1..T4 and NStage N0..N3, or "".
	TStage, NStage string
	// Cohorts are the cohorts the sheet names, nil when it names none
	// (the import then chooses them: see Import).
	Cohorts []string
	// T and N are the plane groups' axial ranges, nil when not given.
	T, N *dataset.Range
}

// labelColumns name the columns a labels sheet may have, each with the
// names it is known by.
var labelColumns = []struct {
	key   string
	names []string
}{
	{"patient_id", []string{"patient_id", "patientid", "patient", "id"}},
	{"t_stage", []string{"t_stage", "tstage", "t"}},
	{"n_stage", []string{"n_stage", "nstage", "n"}},
	{"cohorts", []string{"cohorts", "cohort"}},
	{"t_from", []string{"t_from"}},
	{"t_to", []string{"t_to"}},
	{"n_from", []string{"n_from"}},
	{"n_to", []string{"n_to"}},
}

// importable are the cohorts an import can fill: the others need what a
// DICOM tree and a labels sheet do not hold (slides, structure boxes,
// CarePath episodes).
var importable = []string{dataset.CohortSequence, dataset.CohortTGroups, dataset.CohortNGroups}

// ReadLabels reads a labels sheet (CSV or XLSX; see docs/dataset.md).
// It returns the labels in sheet order and the names of the columns it
// does not use; every bad cell is in the CellErrors it returns.
func ReadLabels(file string) ([]Label, []string, error) {
	s, err := readSheet(file)
	if err != nil {
		return nil, nil, fmt.Errorf("labels: %w", err)
	}
	col := map[string]int{}
	used := map[int]bool{}
	for _, c := range labelColumns {
		col[c.key] = s.column(c.names...)
		used[col[c.key]] = true
	}
	var unused []string
	for i, h := range s.header {
		if !used[i] && h != "" {
			unused = append(unused, h)
		}
	}
	if col["patient_id"] < 0 {
		return nil, nil, CellErrors{{File: file, Row: 1, Column: "patient_id", Reason: "no patient ID column: name one patient_id (the DICOM PatientID of each row)"}}
	}
	var labels []Label
	var errs CellErrors
	seen := map[string]int{}
	for _, r := range s.rows {
		l, rowErrs := readLabel(file, r, col)
		errs = append(errs, rowErrs...)
		if l.Patient == "" {
			continue
		}
		if first, dup := seen[l.Patient]; dup {
			errs = append(errs, CellError{file, r.n, "patient_id", fmt.Sprintf("patient %s again (first in row %d): give each patient one row", l.Patient, first)})
			continue
		}
		seen[l.Patient] = r.n
		labels = append(labels, l)
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return labels, unused, nil
}

// readLabel reads one row.
func readLabel(file string, r row, col map[string]int) (Label, CellErrors) {
	var errs CellErrors
	bad := func(column, format string, args ...any) {
		errs = append(errs, CellError{file, r.n, column, fmt.Sprintf(format, args...)})
	}
	l := Label{Row: r.n, Patient: r.cell(col["patient_id"])}
	if l.Patient == "" {
		bad("patient_id", "empty: every row needs the patient's DICOM PatientID")
	}
	l.TStage = strings.ToUpper(r.cell(col["t_stage"]))
	if l.TStage != "" && !slices.Contains([]string{"T1", "T2", "T3", "T4"}, l.TStage) {
		bad("t_stage", "%q is not T1, T2, T3 or T4 (leave it empty when unknown)", r.cell(col["t_stage"]))
	}
	l.NStage = strings.ToUpper(r.cell(col["n_stage"]))
	if l.NStage != "" && !slices.Contains([]string{"N0", "N1", "N2", "N3"}, l.NStage) {
		bad("n_stage", "%q is not N0, N1, N2 or N3 (leave it empty when unknown)", r.cell(col["n_stage"]))
	}
	if c := r.cell(col["cohorts"]); c != "" {
		l.Cohorts = []string{}
		for _, name := range strings.FieldsFunc(c, func(r rune) bool { return r == ' ' || r == ',' || r == ';' || r == '|' }) {
			name = strings.ToLower(name)
			if !slices.Contains(importable, name) {
				bad("cohorts", "%q is not a cohort an import fills: use %s (pathology, cards and carepath need slides, boxes and episodes: add them to dataset.json by hand)", name, strings.Join(importable, ", "))
				continue
			}
			if !slices.Contains(l.Cohorts, name) {
				l.Cohorts = append(l.Cohorts, name)
			}
		}
	}
	for _, rg := range []struct {
		from, to string
		dst      **dataset.Range
	}{{"t_from", "t_to", &l.T}, {"n_from", "n_to", &l.N}} {
		from, okFrom := number(r.cell(col[rg.from]))
		to, okTo := number(r.cell(col[rg.to]))
		for _, c := range []struct {
			name string
			ok   bool
		}{{rg.from, okFrom}, {rg.to, okTo}} {
			if !c.ok {
				bad(c.name, "%q is not a number of mm", r.cell(col[c.name]))
			}
		}
		fromSet, toSet := r.cell(col[rg.from]) != "", r.cell(col[rg.to]) != ""
		switch {
		case !okFrom || !okTo:
		case fromSet && toSet:
			*rg.dst = &dataset.Range{From: from, To: to}
		case fromSet:
			bad(rg.to, "empty, and %s is given: a range needs both ends", rg.from)
		case toSet:
			bad(rg.from, "empty, and %s is given: a range needs both ends", rg.to)
		}
	}
	return l, errs
}

// number parses a cell as a finite number; "" is 0 and fine.
func number(s string) (float64, bool) {
	if s == "" {
		return 0, true
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", "."), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e6 {
		return 0, false
	}
	return v, true
}
