package ehr

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// DB is the in-memory record store: every table, indexed by subject_id and hadm_id. It is read-only once built, so
// any number of goroutines may read it at once.
type DB struct {
	tables    map[string]*Table
	order     []string
	bySubject map[string]map[string][]int
	byHadm    map[string]map[string][]int
	digests   map[string]string
	digest    string
}

// Table returns the named table, or nil.
func (db *DB) Table(name string) *Table { return db.tables[name] }

// TableNames lists the tables in schema order.
func (db *DB) TableNames() []string { return append([]string(nil), db.order...) }

// Digest is the records digest: SHA-256 over each table's path and file digest, in schema order.
func (db *DB) Digest() string { return db.digest }

// TableDigest is the SHA-256 of one table's CSV file.
func (db *DB) TableDigest(name string) string { return db.digests[name] }

// BySubject returns the rows of a table that belong to a patient, in file order.
func (db *DB) BySubject(table, subjectID string) []Row {
	return db.rows(table, db.bySubject[table][subjectID])
}

// ByHadm returns the rows of a table that belong to an admission, in file order.
func (db *DB) ByHadm(table, hadmID string) []Row {
	return db.rows(table, db.byHadm[table][hadmID])
}

// Lookup returns the row a reference names.
func (db *DB) Lookup(ref Ref) (Row, bool) {
	t := db.tables[ref.Table]
	if t == nil || ref.N < 1 || ref.N > len(t.Rows) {
		return Row{}, false
	}
	return t.Row(ref.N - 1), true
}

// Where returns the rows of a (dictionary) table whose column equals value, in file order.
func (db *DB) Where(table, column, value string) []Row {
	t := db.tables[table]
	if t == nil || !t.Has(column) {
		return nil
	}
	var out []Row
	for i := range t.Rows {
		if t.Row(i).Get(column) == value {
			out = append(out, t.Row(i))
		}
	}
	return out
}

// Subjects lists every subject_id in the patients table, in file order.
func (db *DB) Subjects() []string {
	t := db.tables["patients"]
	out := make([]string, 0, t.Len())
	for i := range t.Rows {
		out = append(out, t.Row(i).Get("subject_id"))
	}
	return out
}

func (db *DB) rows(table string, idx []int) []Row {
	t := db.tables[table]
	out := make([]Row, len(idx))
	for k, i := range idx {
		out[k] = t.Row(i)
	}
	return out
}

// newDB indexes the tables and computes their digests.
func newDB(tables map[string]*Table) (*DB, error) {
	db := &DB{tables: tables, bySubject: map[string]map[string][]int{}, byHadm: map[string]map[string][]int{},
		digests: map[string]string{}}
	h := sha256.New()
	for _, s := range Schemas() {
		t := tables[s.Name]
		if t == nil {
			return nil, fmt.Errorf("table %s is missing", s.Path())
		}
		db.order = append(db.order, s.Name)
		db.index(t)
		data, err := EncodeCSV(t)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		db.digests[s.Name] = hex.EncodeToString(sum[:])
		fmt.Fprintf(h, "%s %s\n", s.Path(), db.digests[s.Name])
	}
	db.digest = hex.EncodeToString(h.Sum(nil))
	return db, nil
}

func (db *DB) index(t *Table) {
	subj, hadm := map[string][]int{}, map[string][]int{}
	for i := range t.Rows {
		r := t.Row(i)
		if s := r.Get("subject_id"); s != "" {
			subj[s] = append(subj[s], i)
		}
		if h := r.Get("hadm_id"); h != "" {
			hadm[h] = append(hadm[h], i)
		}
	}
	db.bySubject[t.Name], db.byHadm[t.Name] = subj, hadm
}

// EncodeCSV writes a table as RFC 4180 CSV with a header line, "\n" line ends.
func EncodeCSV(t *Table) ([]byte, error) {
	var b strings.Builder
	w := csv.NewWriter(&b)
	if err := w.Write(t.Columns); err != nil {
		return nil, err
	}
	if err := w.WriteAll(t.Rows); err != nil {
		return nil, fmt.Errorf("encode %s: %w", t.Path(), err)
	}
	return []byte(b.String()), nil
}

// Builder collects rows for a new DB and hands out MIMIC-style ids. It is used by one goroutine.
type Builder struct {
	tables map[string]*Table
	next   map[string]int64
	err    error
}

// NewBuilder returns an empty builder with every table of Schemas.
func NewBuilder() *Builder {
	b := &Builder{tables: map[string]*Table{}, next: map[string]int64{
		"subject_id": 10000000, "hadm_id": 20000000, "stay_id": 30000000, "transfer_id": 30000000,
		"labevent_id": 1, "specimen_id": 1, "microevent_id": 1, "micro_specimen_id": 1, "pharmacy_id": 1,
		"orderid": 1, "itemid_lab": 50800,
	}}
	for _, s := range Schemas() {
		b.tables[s.Name] = newTable(s)
	}
	return b
}

// NextID returns the next id of a kind ("subject_id", "hadm_id", "stay_id", "labevent_id", …) as text.
func (b *Builder) NextID(kind string) string {
	v, ok := b.next[kind]
	if !ok {
		v = 1
	}
	b.next[kind] = v + 1
	return strconv.FormatInt(v, 10)
}

// Add appends a row given as column → value and returns its reference. An unknown table or column is remembered
// and returned by Build.
func (b *Builder) Add(table string, values map[string]string) Ref {
	t := b.tables[table]
	if t == nil {
		b.fail(fmt.Errorf("add to unknown table %q", table))
		return Ref{}
	}
	row := make([]string, len(t.Columns))
	for c, v := range values {
		i, ok := t.col[c]
		if !ok {
			b.fail(fmt.Errorf("table %s has no column %q", table, c))
			continue
		}
		row[i] = v
	}
	t.Rows = append(t.Rows, row)
	return Ref{Table: table, N: len(t.Rows)}
}

// Count returns how many rows a table holds so far.
func (b *Builder) Count(table string) int { return len(b.tables[table].Rows) }

func (b *Builder) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Build indexes the rows into a DB. The builder must not be used afterwards.
func (b *Builder) Build() (*DB, error) {
	if b.err != nil {
		return nil, b.err
	}
	return newDB(b.tables)
}

// SortedKeys returns a map's keys in order; a helper for writers that must not leak map order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
