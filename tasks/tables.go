package tasks

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/google/renameio/v2"

	"github.com/npcorch/npcorch/tasks/score"
)

// ShownInterval returns the interval reports show: exact when the score has
// one (patient counts), else the patient-cluster bootstrap.
func ShownInterval(s *score.Score) *score.Interval {
	if s.Exact != nil {
		return s.Exact
	}
	return s.Bootstrap
}

func cell(s *score.Score, complete bool) string {
	if s == nil {
		return "–"
	}
	out := strconv.FormatFloat(s.Percent, 'f', 1, 64)
	if iv := ShownInterval(s); iv != nil {
		out += fmt.Sprintf(" [%.1f–%.1f]", iv.Lower, iv.Upper)
	}
	if !complete {
		out += "*"
	}
	return out
}

// table is the score table's columns; an error for results that ScoreRun
// did not make (read back from scores.json, say).
func (r *Results) table() ([]Column, error) {
	if r.reg == nil {
		return nil, fmt.Errorf("scores of %s have no table layout; score them with ScoreRun", r.Campaign)
	}
	return r.reg.Table(), nil
}

// WriteMarkdown writes the Table 1 layout with intervals, the cohort's
// majority baselines and the benchmark's notes (the paper's baselines),
// and per-model counts.
func (r *Results) WriteMarkdown(w io.Writer) error {
	table, err := r.table()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Scores: %s\n\n", r.Campaign)
	b.WriteString("| Model |")
	for _, c := range table {
		fmt.Fprintf(&b, " %s %s |", c.Level, c.Name)
	}
	b.WriteString(" answered | not run | missing |\n|---|")
	for range table {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|\n")
	for _, m := range r.Models {
		fmt.Fprintf(&b, "| %s |", m.Model)
		for _, c := range table {
			s, complete := c.Pick(m)
			fmt.Fprintf(&b, " %s |", cell(s, complete))
		}
		fmt.Fprintf(&b, " %d | %d | %d |\n", m.Answered, m.NotRun, m.Missing)
	}
	b.WriteString("| majority baseline (this cohort) |")
	for _, c := range table {
		fmt.Fprintf(&b, " %s |", majority(r, c))
	}
	b.WriteString(" | | |\n\n")
	fmt.Fprintf(&b, "Percent accuracy with %.0f %% intervals: exact Clopper–Pearson for patient-level counts, otherwise a patient-cluster bootstrap (%d draws, seed %d). ",
		100*level(r.Options), draws(r.Options), r.Options.Seed)
	b.WriteString("`*` marks a provisional score: some of its items are not run (infrastructure failures), so the run is incomplete.\n")
	for _, note := range r.reg.Notes() {
		b.WriteString(note + "\n")
	}
	r.writeRubric(&b)
	if jr := r.JournalProblems; jr != nil {
		fmt.Fprintf(&b, "\n**Journal problems: %s.** The scores above leave those lines out as described; each is listed in scores.json and by `npcorch score`.\n", jr.Summary())
	}
	_, err = w.Write(b.Bytes())
	return err
}

func majority(r *Results, c Column) string {
	if b := Majority(r, c); b != nil {
		return fmt.Sprintf("%.1f (%s)", b.Percent, b.Class)
	}
	return ""
}

// Majority is the cohort's majority-class baseline beside a score table
// column (nil for columns without one). Every model of a run shares the
// cohort, so the first model that ran the column's task carries it.
func Majority(r *Results, c Column) *score.Baseline {
	if c.Majority == nil {
		return nil
	}
	for _, m := range r.Models {
		if b := c.Majority(m); b != nil {
			return b
		}
	}
	return nil
}

func level(o score.Options) float64 {
	if o.Level == 0 {
		return score.DefaultLevel
	}
	return o.Level
}

func draws(o score.Options) int {
	if o.Draws == 0 {
		return score.DefaultDraws
	}
	return o.Draws
}

// WriteCSV writes one row per model and Table 1 column, then, for a
// journal with problems, one row per kind of problem (level "journal", the
// count as numerator).
func (r *Results) WriteCSV(w io.Writer) error {
	table, err := r.table()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "level", "column", "percent", "numerator", "denominator", "lower", "upper", "interval", "complete"})
	for _, m := range r.Models {
		for _, c := range table {
			s, complete := c.Pick(m)
			if s == nil {
				continue
			}
			row := []string{m.Model, c.Level, c.Name, f(s.Percent), f(s.Numerator), strconv.Itoa(s.Denominator), "", "", "", strconv.FormatBool(complete)}
			if iv := ShownInterval(s); iv != nil {
				row[6], row[7], row[8] = f(iv.Lower), f(iv.Upper), iv.Method
			}
			cw.Write(row)
		}
	}
	if jr := r.JournalProblems; jr != nil {
		for _, c := range jr.Counts {
			cw.Write([]string{"", "journal", c.Kind, "", strconv.Itoa(c.Count), "", "", "", "", ""})
		}
	}
	cw.Flush()
	return cw.Error()
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// WriteJSON writes the full results, indented.
func (r *Results) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteScoreFiles writes scores.json, scores.csv and scores.md into dir.
func WriteScoreFiles(dir string, r *Results) error {
	for name, write := range map[string]func(io.Writer) error{
		"scores.json": r.WriteJSON, "scores.csv": r.WriteCSV, "scores.md": r.WriteMarkdown,
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := writeFileAtomic(filepath.Join(dir, name), b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// writeFileAtomic writes through a synced temporary file and a rename, so
// a crash never leaves half a score file; the file is made 0666 less the
// umask, as any file is, so other users (a group's share) can read it.
func writeFileAtomic(path string, data []byte) error {
	return renameio.WriteFile(path, data, 0o666)
}
