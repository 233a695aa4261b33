package toolenv

import (
	"fmt"
	"strings"

	"github.com/npcorch/npcorch/tasks/ehr"
)

// MaxNoteLines bounds one read_note call.
const MaxNoteLines = 400

// NotesArgs are the arguments of list_notes and search_notes.
type NotesArgs struct {
	SubjectID ID     `json:"subject_id" jsonschema:"the patient's subject_id"`
	Kind      string `json:"kind,omitempty" jsonschema:"discharge or radiology; both when empty"`
	HadmID    ID     `json:"hadm_id,omitempty" jsonschema:"only notes of this admission"`
	Query     string `json:"query,omitempty" jsonschema:"search_notes: lines containing every word (case-insensitive)"`
	Limit     int    `json:"limit,omitempty" jsonschema:"results per page, 1..500 (default 100)"`
	Offset    int    `json:"offset,omitempty" jsonschema:"results to skip"`
}

// ReadNoteArgs are the arguments of read_note.
type ReadNoteArgs struct {
	SubjectID ID     `json:"subject_id" jsonschema:"the patient's subject_id"`
	NoteID    string `json:"note_id" jsonschema:"the note's note_id (from list_notes or get_imaging)"`
	FromLine  int    `json:"from_line,omitempty" jsonschema:"first line, 1-based (default 1)"`
	ToLine    int    `json:"to_line,omitempty" jsonschema:"last line (default: 400 lines on)"`
}

// NoteLine is one numbered line of a note.
type NoteLine struct {
	NoteID string `json:"note_id,omitempty"`
	Ref    string `json:"ref,omitempty"`
	N      int    `json:"line"`
	Text   string `json:"text"`
}

// NoteText is what read_note returns.
type NoteText struct {
	NoteID     string     `json:"note_id"`
	Ref        string     `json:"ref"`
	HadmID     string     `json:"hadm_id,omitempty"`
	NoteType   string     `json:"note_type"`
	Charttime  string     `json:"charttime"`
	TotalLines int        `json:"total_lines"`
	Lines      []NoteLine `json:"lines"`
	Truncated  bool       `json:"truncated"`
}

// SearchHits is what search_notes returns.
type SearchHits struct {
	Hits       []NoteLine `json:"hits"`
	Total      int        `json:"total"`
	Truncated  bool       `json:"truncated"`
	NextOffset int        `json:"next_offset,omitempty"`
}

func noteTools() []tool {
	return []tool{
		define("list_notes", ChannelClinical, "Discharge summaries and radiology reports: note_id, type, time, admission, line count (no text).", listNotes),
		define("search_notes", ChannelClinical, "Lines of the patient's notes containing every word of the query, with note_id and line number.", searchNotes),
		define("read_note", ChannelClinical, "A note's text with line numbers, 400 lines at most per call.", readNote),
	}
}

func noteTables(kind string) ([]string, error) {
	t := map[string][]string{"": {"discharge", "radiology"}, "discharge": {"discharge"}, "radiology": {"radiology"}}[kind]
	if t == nil {
		return nil, invalidError{"kind must be discharge, radiology or empty"}
	}
	return t, nil
}

func listNotes(e *Env, subject string, a NotesArgs, rec *CallRecord) (output, error) {
	tables, err := noteTables(a.Kind)
	if err != nil {
		return output{}, err
	}
	if err := e.checkScope(subject, string(a.SubjectID), string(a.HadmID), "", rec); err != nil {
		return output{}, err
	}
	out, err := e.page(subject, tables, filter{hadm: string(a.HadmID), omit: map[string]bool{"text": true}}, a.Limit, a.Offset)
	if p, ok := out.value.(Page); ok {
		for i, r := range p.Rows {
			row, _ := e.db.Lookup(mustRef(r.Ref))
			p.Rows[i].Values["lines"] = fmt.Sprint(len(strings.Split(strings.TrimRight(row.Get("text"), "\n"), "\n")))
		}
	}
	return out, err
}

func mustRef(s string) ehr.Ref {
	r, _ := ehr.ParseRef(s)
	return r
}

func searchNotes(e *Env, subject string, a NotesArgs, rec *CallRecord) (output, error) {
	tables, err := noteTables(a.Kind)
	if err != nil {
		return output{}, err
	}
	words := strings.Fields(strings.ToLower(a.Query))
	if len(words) == 0 {
		return output{}, invalidError{"query must have at least one word"}
	}
	if err := e.checkScope(subject, string(a.SubjectID), string(a.HadmID), "", rec); err != nil {
		return output{}, err
	}
	limit := a.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 0 || limit > MaxLimit || a.Offset < 0 {
		return output{}, invalidError{fmt.Sprintf("limit must be 1..%d and offset ≥ 0", MaxLimit)}
	}
	var all []NoteLine
	for _, t := range tables {
		for _, r := range e.db.BySubject(t, subject) {
			if string(a.HadmID) == "" || r.Get("hadm_id") == string(a.HadmID) {
				all = append(all, matchingLines(r, words)...)
			}
		}
	}
	return searchPage(all, tables, limit, a.Offset), nil
}

func matchingLines(r ehr.Row, words []string) []NoteLine {
	var out []NoteLine
	for i, l := range strings.Split(r.Get("text"), "\n") {
		low := strings.ToLower(l)
		all := true
		for _, w := range words {
			all = all && strings.Contains(low, w)
		}
		if all {
			out = append(out, NoteLine{NoteID: r.Get("note_id"), Ref: r.Ref().String(), N: i + 1, Text: l})
		}
	}
	return out
}

func searchPage(all []NoteLine, tables []string, limit, offset int) output {
	h := SearchHits{Total: len(all), Hits: []NoteLine{}}
	out := output{tables: tables, empty: len(all) == 0}
	end := min(offset+limit, len(all))
	seen := map[string]bool{}
	for i := offset; i < end; i++ {
		h.Hits = append(h.Hits, all[i])
		if !seen[all[i].Ref] {
			seen[all[i].Ref] = true
			out.rows = append(out.rows, all[i].Ref)
		}
	}
	if end < len(all) {
		h.Truncated, h.NextOffset, out.truncated = true, end, true
	}
	out.value = h
	return out
}

func readNote(e *Env, subject string, a ReadNoteArgs, rec *CallRecord) (output, error) {
	if err := e.checkScope(subject, string(a.SubjectID), "", "", rec); err != nil {
		return output{}, err
	}
	row, table, err := e.findNote(subject, a.NoteID, rec)
	if err != nil {
		return output{}, err
	}
	lines := strings.Split(strings.TrimRight(row.Get("text"), "\n"), "\n")
	from, to := max(a.FromLine, 1), a.ToLine
	if to == 0 || to > len(lines) {
		to = len(lines)
	}
	if from > len(lines) || to < from {
		return output{}, invalidError{fmt.Sprintf("note %s has lines 1..%d", a.NoteID, len(lines))}
	}
	nt := NoteText{NoteID: a.NoteID, Ref: row.Ref().String(), HadmID: row.Get("hadm_id"), NoteType: row.Get("note_type"),
		Charttime: row.Get("charttime"), TotalLines: len(lines)}
	if to-from+1 > MaxNoteLines {
		to, nt.Truncated = from+MaxNoteLines-1, true
	}
	for n := from; n <= to; n++ {
		nt.Lines = append(nt.Lines, NoteLine{N: n, Text: lines[n-1]})
	}
	return output{value: nt, tables: []string{table}, rows: []string{nt.Ref}, truncated: nt.Truncated}, nil
}

// findNote finds a note of the patient; a note of another patient is a scope violation.
func (e *Env) findNote(subject, noteID string, rec *CallRecord) (ehr.Row, string, error) {
	for _, t := range []string{"discharge", "radiology"} {
		for _, r := range e.db.BySubject(t, subject) {
			if r.Get("note_id") == noteID {
				return r, t, nil
			}
		}
	}
	for _, t := range []string{"discharge", "radiology"} {
		if rows := e.db.Where(t, "note_id", noteID); len(rows) > 0 {
			rec.Scope = ScopeViolation
			return ehr.Row{}, "", scopeError{"note_id " + noteID}
		}
	}
	return ehr.Row{}, "", invalidError{fmt.Sprintf("no note %q for subject %s", noteID, subject)}
}
