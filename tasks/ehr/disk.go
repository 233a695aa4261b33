package ehr

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// FormatName is the manifest's format string; a reader refuses any other.
const FormatName = "npcorch-ehr/1"

// Manifest describes a dataset folder: every table's file, row count and SHA-256, and the records digest.
type Manifest struct {
	Format string          `json:"format"`
	Digest string          `json:"records_digest"`
	Tables []ManifestTable `json:"tables"`
}

// ManifestTable is one table's entry in the manifest.
type ManifestTable struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Rows   int    `json:"rows"`
	SHA256 string `json:"sha256"`
}

// Manifest describes the DB as Write lays it out.
func (db *DB) Manifest() Manifest {
	m := Manifest{Format: FormatName, Digest: db.digest}
	for _, name := range db.order {
		t := db.tables[name]
		m.Tables = append(m.Tables, ManifestTable{Name: name, Path: t.Path(), Rows: t.Len(), SHA256: db.digests[name]})
	}
	return m
}

// Write lays the DB out under dir: one CSV per table in hosp/, icu/, ed/ and note/, and manifest.json.
func (db *DB) Write(dir string) error {
	for _, name := range db.order {
		t := db.tables[name]
		data, err := EncodeCSV(t)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.FromSlash(t.Path()))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return fmt.Errorf("write table %s: %w", p, err)
		}
	}
	data, err := json.MarshalIndent(db.Manifest(), "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), append(data, '\n'), 0o644)
}

// Load reads a dataset folder written by Write, checking every table's digest against the manifest.
func Load(dir string) (*DB, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("read the EHR manifest: %w (is %s a folder written by `npcorch synth --clinicare`?)", err, dir)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	if m.Format != FormatName {
		return nil, fmt.Errorf("%s: format %q, want %q", filepath.Join(dir, "manifest.json"), m.Format, FormatName)
	}
	tables := map[string]*Table{}
	for _, mt := range m.Tables {
		t, err := loadTable(dir, mt)
		if err != nil {
			return nil, err
		}
		tables[mt.Name] = t
	}
	db, err := newDB(tables)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if db.digest != m.Digest {
		return nil, fmt.Errorf("%s: records digest %s does not match the manifest's %s", dir, db.digest, m.Digest)
	}
	return db, nil
}

func loadTable(dir string, mt ManifestTable) (*Table, error) {
	s, ok := SchemaOf(mt.Name)
	if !ok || s.Path() != mt.Path {
		return nil, fmt.Errorf("manifest names table %q at %q, which this version does not know", mt.Name, mt.Path)
	}
	p := filepath.Join(dir, filepath.FromSlash(mt.Path))
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("read table: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != mt.SHA256 {
		return nil, fmt.Errorf("%s: SHA-256 does not match manifest.json; the file was changed after it was written", p)
	}
	return DecodeCSV(s, data, p)
}

// DecodeCSV reads a table's CSV, checking the header against the schema.
func DecodeCSV(s Schema, data []byte, name string) (*Table, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = len(s.Columns)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: no header line", name)
	}
	for i, c := range s.Columns {
		if recs[0][i] != c {
			return nil, fmt.Errorf("%s: column %d is %q, want %q", name, i+1, recs[0][i], c)
		}
	}
	t := newTable(s)
	t.Rows = recs[1:]
	return t, nil
}
