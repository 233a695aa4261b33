package importer

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/xuri/excelize/v2"
)

// CellError is a bad cell of a sheet: the file, the row (1 is the header
// row, as a spreadsheet numbers them), the column's name and what is
// wrong.
type CellError struct {
	File   string
	Row    int
	Column string
	Reason string
}

func (e CellError) Error() string {
	return fmt.Sprintf("%s: row %d, column %s: %s", e.File, e.Row, e.Column, e.Reason)
}

// CellErrors is every bad cell of a sheet; it is an error when not empty.
type CellErrors []CellError

func (es CellErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// sheet is a table read from a CSV or XLSX file: a header and rows.
type sheet struct {
	file   string
	header []string // normalised column names
	rows   []row
}

// row is one data row and its row number in the file.
type row struct {
	n     int
	cells []string
}

// maxSheetBytes bounds a labels or review file.
const maxSheetBytes = 64 << 20

// readSheet reads a CSV (comma or semicolon separated, with or without a
// UTF-8 byte order mark) or, by its extension, an XLSX file (its first
// sheet). Empty rows are left out.
func readSheet(file string) (*sheet, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxSheetBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the limit of %d", file, st.Size(), maxSheetBytes)
	}
	var records [][]string
	switch strings.ToLower(filepath.Ext(file)) {
	case ".xlsx", ".xlsm":
		records, err = readXLSX(file)
	case ".xls":
		return nil, fmt.Errorf("%s: the old binary Excel format is not read; save it as .xlsx or .csv", file)
	default:
		records, err = readCSV(file)
	}
	if err != nil {
		return nil, err
	}
	s := &sheet{file: file}
	for i, rec := range records {
		if blank(rec) {
			continue
		}
		if s.header == nil {
			for _, h := range rec {
				s.header = append(s.header, normalise(h))
			}
			continue
		}
		s.rows = append(s.rows, row{n: i + 1, cells: rec})
	}
	if s.header == nil {
		return nil, fmt.Errorf("%s: empty: the first row must name the columns", file)
	}
	return s, nil
}

func readCSV(file string) ([][]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	r := csv.NewReader(bytes.NewReader(data))
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if !bytes.ContainsRune(first, ',') && bytes.ContainsRune(first, ';') {
		r.Comma = ';' // as spreadsheets save CSV where the comma is the decimal sign
	}
	r.FieldsPerRecord = -1
	records, err := r.ReadAll()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: line %d: %v", file, pe.Line, pe.Err)
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return records, nil
}

func readXLSX(file string) ([][]string, error) {
	f, err := excelize.OpenFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable XLSX workbook: %w", file, err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, fmt.Errorf("%s: the workbook has no sheet", file)
	}
	rows, err := f.GetRows(sheets[0])
	if err != nil {
		return nil, fmt.Errorf("%s: sheet %q: %w", file, sheets[0], err)
	}
	return rows, nil
}

func blank(rec []string) bool {
	for _, c := range rec {
		if strings.TrimSpace(c) != "" {
			return false
		}
	}
	return true
}

// normalise writes a column name in lower case with underscores for
// spaces and hyphens.
func normalise(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(h)
}

// column returns the index of the first column named one of names, or -1.
func (s *sheet) column(names ...string) int {
	for i, h := range s.header {
		for _, n := range names {
			if h == n {
				return i
			}
		}
	}
	return -1
}

// cell returns the trimmed cell of row r in column i ("" when i < 0 or
// the row is short).
func (r row) cell(i int) string {
	if i < 0 || i >= len(r.cells) {
		return ""
	}
	return strings.TrimSpace(r.cells[i])
}
