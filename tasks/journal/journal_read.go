package journal

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Journal problem kinds: what reading or checking a journal line found
// wrong. Every problem is reported with its file and line and what was done
// about it; none is worked around in silence.
const (
	// ProblemTorn: the last line has no newline (a write cut off by a
	// crash). Its request counts as not done; a resumed run sends it again
	// and moves the bytes to FILE.torn.
	ProblemTorn = "torn_line"
	// ProblemCorrupt: a line that is not a JSON record. It is skipped.
	ProblemCorrupt = "corrupt_line"
	// ProblemInvalid: a record without key, item, task or model, with an
	// unknown status, or answered without an answer. It is skipped.
	ProblemInvalid = "invalid_record"
	// ProblemMisfiled: a record in the file of another model or task. It
	// is skipped.
	ProblemMisfiled = "misfiled_record"
	// ProblemDuplicate: a request answered again with the same answer. The
	// first is kept; nothing changes.
	ProblemDuplicate = "duplicate_answer"
	// ProblemConflicting: a request answered again with a different answer.
	// The first is kept, the later ignored.
	ProblemConflicting = "conflicting_answer"
	// ProblemUnknownModel, ProblemUnknownTask, ProblemUnknownItem and
	// ProblemUnknownRepeat: a record for a model, task, item or repeat the
	// run does not have. It is ignored.
	ProblemUnknownModel  = "unknown_model"
	ProblemUnknownTask   = "unknown_task"
	ProblemUnknownItem   = "unknown_item"
	ProblemUnknownRepeat = "unknown_repeat"
)

// JournalProblem is one journal line that could not be used as written.
type Problem struct {
	// File is the journal file, relative to the run directory, with
	// forward slashes ("journal/M/pathology.jsonl").
	File string `json:"file"`
	Line int    `json:"line"`
	Kind string `json:"kind"`
	// Detail says what was found and what was done.
	Detail string `json:"detail"`
}

func (p Problem) String() string {
	return fmt.Sprintf("%s line %d: %s: %s", p.File, p.Line, p.Kind, p.Detail)
}

// lineRef is where a record was read.
type lineRef struct {
	file string
	line int
}

// JournalState is what a journal holds, as a resumed run or the scorer
// needs it: the record that counts for each request key, and every line
// that could not be used as written.
type State struct {
	// Records maps a request key to its record: an answered record wins
	// over not-run ones, and among answered ones the first is kept (a key
	// is answered once; a later answer is a reported problem).
	Records map[string]Record
	// Duplicates counts answered records beyond the first for a key.
	Duplicates int
	// Torn counts incomplete last lines skipped while reading.
	Torn int
	// Problems lists every line read that could not be used as written,
	// in file and line order.
	Problems []Problem

	// lines maps a key to the lines its records were read from, and kept
	// to the line of the record Records holds.
	lines map[string][]lineRef
	kept  map[string]lineRef
}

// ReadJournal reads every journal file under runDir. A line that cannot be
// used (torn, corrupt, invalid, misfiled, a second answer) is skipped and
// listed in Problems; only an unreadable file is an error.
func Read(runDir string) (*State, error) {
	st := &State{Records: map[string]Record{}}
	root := filepath.Join(runDir, "journal")
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	sort.Strings(files)
	for _, p := range files {
		rel, err := filepath.Rel(runDir, p)
		if err != nil {
			rel = p
		}
		if err := st.readFile(p, filepath.ToSlash(rel)); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (st *State) readFile(path, rel string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadBytes('\n')
		at := lineRef{rel, lineNo}
		if errors.Is(err, io.EOF) {
			if len(bytes.TrimSpace(line)) > 0 {
				st.Torn++
				st.problem(at, ProblemTorn, "the last line is incomplete (a write cut off by a crash): skipped, so its request counts as not done; `run --resume` sends it again and keeps the bytes in %s.torn", filepath.Base(rel))
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("journal: read %s: %w", path, err)
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			st.problem(at, ProblemCorrupt, "not a journal record (%v): skipped, so its request counts as not done; remove the line, or move the file aside to re-run its requests", err)
			continue
		}
		if why := invalid(rec); why != "" {
			st.problem(at, ProblemInvalid, "%s: skipped", why)
			continue
		}
		if want := recordFile(rec.Model, rec.Task); want != rel {
			st.problem(at, ProblemMisfiled, "a record of model %q, task %q belongs in %s: skipped", rec.Model, rec.Task, want)
			continue
		}
		st.add(rec, at)
	}
}

// invalid says why a decoded record cannot be used, "" when it can.
func invalid(rec Record) string {
	switch {
	case rec.Key == "" || rec.Item == "" || rec.Task == "" || rec.Model == "":
		return "the record lacks its key, item, task or model"
	case rec.Status != StatusAnswered && rec.Status != StatusNotRun:
		return fmt.Sprintf("status %q is neither %q nor %q", rec.Status, StatusAnswered, StatusNotRun)
	case rec.Status == StatusAnswered && rec.Answer == nil:
		return "an answered record without its answer"
	}
	return ""
}

// recordFile is the run-relative file a record of model and task is
// written to (Journal.path).
func recordFile(model, task string) string {
	return "journal/" + SafeName(model) + "/" + task + ".jsonl"
}

func (st *State) problem(at lineRef, kind, format string, args ...any) {
	st.Problems = append(st.Problems, Problem{File: at.file, Line: at.line, Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

func (st *State) add(rec Record, at lineRef) {
	if st.lines == nil {
		st.lines, st.kept = map[string][]lineRef{}, map[string]lineRef{}
	}
	old, ok := st.Records[rec.Key]
	switch {
	case !ok:
	case old.Status == StatusAnswered && rec.Status == StatusAnswered:
		st.Duplicates++
		first := st.kept[rec.Key].line
		if old.Answer.Content == rec.Answer.Content {
			st.problem(at, ProblemDuplicate, "%s answered again with the same answer as line %d: kept line %d", describe(rec), first, first)
		} else {
			st.problem(at, ProblemConflicting, "%s answered again with a different answer than line %d: kept line %d, ignored this one", describe(rec), first, first)
		}
		return
	case old.Status == StatusAnswered:
		// A not-run record after an answer changes nothing.
		st.lines[rec.Key] = append(st.lines[rec.Key], at)
		return
	case rec.Status == StatusNotRun:
		// Keep the latest not-run record, with its attempt count summed.
		rec.Attempts += old.Attempts
	}
	st.Records[rec.Key] = rec
	st.kept[rec.Key] = at
	st.lines[rec.Key] = append(st.lines[rec.Key], at)
}

// describe names a record's request for a problem detail.
func describe(rec Record) string {
	return fmt.Sprintf("%s of %s (repeat %d, key %.12s…)", rec.Item, rec.Model, rec.Repeat, rec.Key)
}

// Answered returns the answered record of a key.
func (st *State) Answered(key string) (Record, bool) {
	r, ok := st.Records[key]
	return r, ok && r.Status == StatusAnswered
}

// Sorted returns the records ordered by model, task, item and repeat.
func (st *State) Sorted() []Record {
	out := make([]Record, 0, len(st.Records))
	for _, r := range st.Records {
		out = append(out, r)
	}
	sort.Slice(out, func(i, k int) bool {
		a, b := out[i], out[k]
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		if a.Item != b.Item {
			return a.Item < b.Item
		}
		return a.Repeat < b.Repeat
	})
	return out
}

// Check returns every problem of the journal against a run's items (the
// task of each item id), models and repeats: those found while reading, and each line of a record for a
// model, task, item or repeat the run does not have — records that scoring
// ignores. Problems are sorted by file and line.
func (st *State) Check(taskOf map[string]string, models []string, repeats int) []Problem {
	out := slices.Clone(st.Problems)
	known := map[string]bool{}
	for _, m := range models {
		known[m] = true
	}
	runTasks := map[string]bool{}
	for _, task := range taskOf {
		runTasks[task] = true
	}
	for key, rec := range st.Records {
		var kind, why string
		switch {
		case !known[rec.Model]:
			kind, why = ProblemUnknownModel, fmt.Sprintf("model %q is not one of the run's %d models", rec.Model, len(models))
		case !runTasks[rec.Task]:
			kind, why = ProblemUnknownTask, fmt.Sprintf("task %q has no items in this run", rec.Task)
		case taskOf[rec.Item] != rec.Task:
			kind, why = ProblemUnknownItem, fmt.Sprintf("item %q is not one of the run's %s items", rec.Item, rec.Task)
		case rec.Repeat < 0 || rec.Repeat >= max(repeats, 1):
			kind, why = ProblemUnknownRepeat, fmt.Sprintf("repeat %d of %s is outside the run's %d repeat(s)", rec.Repeat, rec.Item, max(repeats, 1))
		default:
			continue
		}
		refs := st.lines[key]
		if len(refs) == 0 {
			refs = []lineRef{{}} // a state built in memory, not read
		}
		for _, at := range refs {
			out = append(out, Problem{File: at.file, Line: at.line, Kind: kind, Detail: why + ": the record is ignored"})
		}
	}
	slices.SortFunc(out, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line),
			strings.Compare(a.Kind, b.Kind), strings.Compare(a.Detail, b.Detail))
	})
	return out
}
