package toolenv

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // pure-Go SQLite: the SQL fallback's in-memory database

	"github.com/npcorch/npcorch/tasks/ehr"
)

// SQL fallback bounds (benchmark choices): a query returning more rows than SQLRowCap is refused, and one running
// longer than SQLTimeout is interrupted.
const (
	SQLRowCap  = 200
	SQLTimeout = 2 * time.Second
)

// SQLArgs are the arguments of sql_query.
type SQLArgs struct {
	Query string `json:"query" jsonschema:"one read-only SELECT (or WITH … SELECT) over the patient's MIMIC-IV tables; every table has a _ref column (TABLE/N)"`
}

// SQLResult is what sql_query returns.
type SQLResult struct {
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

var sqlDBSeq atomic.Int64

// patientDB loads one patient's rows of every table, and every dictionary, into a fresh in-memory SQLite
// database, so the fallback cannot reach another patient whatever the query says. The connection is read-only
// (PRAGMA query_only) once loaded.
func (e *Env) patientDB(subject string) (*sql.DB, error) {
	name := fmt.Sprintf("file:npcorch-sql-%d?mode=memory&cache=shared", sqlDBSeq.Add(1))
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	for _, t := range e.db.TableNames() {
		if err := e.loadTable(db, t, subject); err != nil {
			db.Close()
			return nil, fmt.Errorf("SQL fallback: load %s: %w", t, err)
		}
	}
	if _, err := db.Exec("PRAGMA query_only = ON"); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

func (e *Env) loadTable(db *sql.DB, table, subject string) error {
	tb := e.db.Table(table)
	cols := append([]string{"_ref"}, tb.Columns...)
	if _, err := db.Exec(fmt.Sprintf("CREATE TABLE %s (%s TEXT)", table, strings.Join(cols, " TEXT, "))); err != nil {
		return err
	}
	var rows []ehr.Row
	if tb.Has("subject_id") {
		rows = e.db.BySubject(table, subject)
	} else {
		for i := 0; i < tb.Len(); i++ {
			rows = append(rows, tb.Row(i))
		}
	}
	if len(rows) == 0 {
		return nil
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	stmt, err := tx.Prepare(fmt.Sprintf("INSERT INTO %s VALUES (%s)", table, strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",")))
	if err != nil {
		tx.Rollback()
		return err
	}
	for _, r := range rows {
		vals := []any{r.Ref().String()}
		for _, c := range r.Cells() {
			vals = append(vals, c)
		}
		if _, err := stmt.Exec(vals...); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

var (
	sqlSelect  = regexp.MustCompile(`(?is)^\s*(select|with)\b`)
	sqlComment = regexp.MustCompile(`(?s)--[^\n]*|/\*.*?\*/`)
)

// checkSQL refuses anything but one read-only SELECT.
func checkSQL(q string) error {
	stripped := strings.TrimSpace(sqlComment.ReplaceAllString(q, " "))
	stripped = strings.TrimSpace(strings.TrimSuffix(stripped, ";"))
	switch {
	case stripped == "":
		return invalidError{"query is empty"}
	case !sqlSelect.MatchString(stripped):
		return invalidError{"only a read-only SELECT (or WITH … SELECT) is allowed"}
	case strings.Contains(stripped, ";"):
		return invalidError{"one statement only"}
	}
	return nil
}

func sqlTool() tool {
	return define("sql_query", ChannelSQL, fmt.Sprintf("Fallback: one read-only SELECT over this patient's MIMIC-IV tables (and the dictionaries). At most %d rows, %s; logged separately from the clinical tools.", SQLRowCap, SQLTimeout), runSQL)
}

// runSQL is the SQL fallback: the query runs on a database holding only the session patient's rows.
func runSQL(e *Env, subject string, a SQLArgs, rec *CallRecord) (output, error) {
	if err := checkSQL(a.Query); err != nil {
		return output{}, err
	}
	rec.Scope, rec.Subject = ScopeOK, subject
	db, err := e.patientDB(subject)
	if err != nil {
		return output{}, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), SQLTimeout)
	defer cancel()
	rows, err := db.QueryContext(ctx, a.Query)
	if err != nil {
		return output{}, fmt.Errorf("SQL refused or failed: %w", err)
	}
	defer rows.Close()
	res, refs, err := collectSQL(rows)
	if err != nil {
		return output{}, err
	}
	return output{value: res, tables: mentionedTables(e, a.Query), rows: refs, empty: len(res.Rows) == 0}, nil
}

func collectSQL(rows *sql.Rows) (SQLResult, []string, error) {
	cols, err := rows.Columns()
	if err != nil {
		return SQLResult{}, nil, err
	}
	res := SQLResult{Columns: cols, Rows: [][]string{}}
	var refs []string
	for rows.Next() {
		if len(res.Rows) == SQLRowCap {
			return SQLResult{}, nil, invalidError{"the query returns more than " + strconv.Itoa(SQLRowCap) + " rows; narrow it (WHERE, LIMIT)"}
		}
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return SQLResult{}, nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
			if cols[i] == "_ref" {
				refs = append(refs, v.String)
			}
		}
		res.Rows = append(res.Rows, row)
	}
	if err := rows.Err(); err != nil {
		return SQLResult{}, nil, fmt.Errorf("SQL refused or failed: %w", err)
	}
	return res, refs, nil
}

// mentionedTables names the record tables a query's text mentions, for the log.
func mentionedTables(e *Env, q string) []string {
	low := strings.ToLower(q)
	var out []string
	for _, t := range e.db.TableNames() {
		if regexp.MustCompile(`\b` + t + `\b`).MatchString(low) {
			out = append(out, t)
		}
	}
	return out
}
