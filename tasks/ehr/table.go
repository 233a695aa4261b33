package ehr

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeLayout is how every datetime column is written, as in MIMIC-IV ("2153-04-12 08:30:00").
const TimeLayout = "2006-01-02 15:04:05"

// DateLayout is how date-only columns (chartdate, storedate) are written.
const DateLayout = "2006-01-02"

// FormatTime writes t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a datetime or date column; ok is false for an empty or malformed value.
func ParseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	layout := TimeLayout
	if len(s) == len(DateLayout) {
		layout = DateLayout
	}
	t, err := time.Parse(layout, s)
	return t, err == nil
}

// Table is one table's rows, every value kept as the text written in its CSV file.
type Table struct {
	Schema
	Rows [][]string
	col  map[string]int
}

func newTable(s Schema) *Table {
	t := &Table{Schema: s, col: make(map[string]int, len(s.Columns))}
	for i, c := range s.Columns {
		t.col[c] = i
	}
	return t
}

// Has reports whether the table has the column.
func (t *Table) Has(column string) bool { _, ok := t.col[column]; return ok }

// Row returns the row at 0-based index i.
func (t *Table) Row(i int) Row { return Row{t: t, i: i} }

// Len is the number of rows.
func (t *Table) Len() int { return len(t.Rows) }

// Ref names a row: its table and its 1-based position in the table's file.
type Ref struct {
	Table string
	N     int
}

// String writes the reference as "table/N".
func (r Ref) String() string { return r.Table + "/" + strconv.Itoa(r.N) }

// ParseRef reads "table/N".
func ParseRef(s string) (Ref, error) {
	name, n, ok := strings.Cut(s, "/")
	num, err := strconv.Atoi(n)
	if !ok || err != nil || num < 1 || name == "" {
		return Ref{}, fmt.Errorf("row reference %q: want TABLE/N with N ≥ 1, e.g. labevents/17", s)
	}
	return Ref{Table: name, N: num}, nil
}

// Row is a view of one row of a table.
type Row struct {
	t *Table
	i int
}

// Ref names the row.
func (r Row) Ref() Ref { return Ref{Table: r.t.Name, N: r.i + 1} }

// Get returns the value of a column ("" for an unknown column or an empty value).
func (r Row) Get(column string) string {
	c, ok := r.t.col[column]
	if !ok {
		return ""
	}
	return r.t.Rows[r.i][c]
}

// Float reads a numeric column; ok is false when it is empty or not a number.
func (r Row) Float(column string) (float64, bool) {
	v, err := strconv.ParseFloat(r.Get(column), 64)
	return v, err == nil
}

// Int reads an integer column.
func (r Row) Int(column string) (int64, bool) {
	v, err := strconv.ParseInt(r.Get(column), 10, 64)
	return v, err == nil
}

// Time reads a datetime or date column.
func (r Row) Time(column string) (time.Time, bool) { return ParseTime(r.Get(column)) }

// Values returns the row as column → value, empty values included.
func (r Row) Values() map[string]string {
	m := make(map[string]string, len(r.t.Columns))
	for c, i := range r.t.col {
		m[c] = r.t.Rows[r.i][i]
	}
	return m
}

// Columns lists the row's columns in schema order.
func (r Row) Columns() []string { return r.t.Columns }

// Cells returns the row's values in schema order (shared; do not modify).
func (r Row) Cells() []string { return r.t.Rows[r.i] }
