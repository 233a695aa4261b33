package tasks

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/score"
)

// Column is one column of the paper's Table 1 layout.
type Column struct {
	Name  string
	Level string
	// Pick returns the column's score of a model (nil when not run).
	Pick func(m ModelResults) (s *score.Score, complete bool)
}

// Table1 lists the columns of the paper's Table 1: L3 Path., T-Stg.,
// N-Stg., Seq., Struct.; L6 Care, Strict.
var Table1 = []Column{
	{"Path.", "L3", func(m ModelResults) (*score.Score, bool) { return taskAccuracy(m, configs.TaskPathology) }},
	{"T-Stg.", "L3", func(m ModelResults) (*score.Score, bool) {
		if m.TStage == nil {
			return nil, true
		}
		return m.TStage.Accuracy, m.TStage.Complete
	}},
	{"N-Stg.", "L3", func(m ModelResults) (*score.Score, bool) { return taskAccuracy(m, configs.TaskNGroups) }},
	{"Seq.", "L3", func(m ModelResults) (*score.Score, bool) { return taskAccuracy(m, configs.TaskSequence) }},
	{"Struct.", "L3", func(m ModelResults) (*score.Score, bool) {
		if m.Evidence == nil {
			return nil, true
		}
		return m.Evidence.Structure, m.Evidence.Complete
	}},
	{"Care", "L6", func(m ModelResults) (*score.Score, bool) {
		if m.CarePath == nil {
			return nil, true
		}
		return m.CarePath.Care, m.CarePath.Complete
	}},
	{"Strict", "L6", func(m ModelResults) (*score.Score, bool) {
		if m.CarePath == nil {
			return nil, true
		}
		return m.CarePath.Strict, m.CarePath.Complete
	}},
}

func taskAccuracy(m ModelResults, task string) (*score.Score, bool) {
	if ts := m.Task(task); ts != nil {
		return ts.Accuracy, ts.Complete
	}
	return nil, true
}

// Task returns the model's score of a closed-answer L3 task, nil when the
// task did not run.
func (m ModelResults) Task(task string) *score.TaskScore {
	for i := range m.Tasks {
		if m.Tasks[i].Task == task {
			return &m.Tasks[i].Score
		}
	}
	return nil
}

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

// WriteMarkdown writes the Table 1 layout with intervals, the cohort's
// majority baselines and the paper's, and per-model counts.
func (r *Results) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Scores: %s\n\n", r.Campaign)
	b.WriteString("| Model |")
	for _, c := range Table1 {
		fmt.Fprintf(&b, " %s %s |", c.Level, c.Name)
	}
	b.WriteString(" answered | not run | missing |\n|---|")
	for range Table1 {
		b.WriteString("---|")
	}
	b.WriteString("---|---|---|\n")
	for _, m := range r.Models {
		fmt.Fprintf(&b, "| %s |", m.Model)
		for _, c := range Table1 {
			s, complete := c.Pick(m)
			fmt.Fprintf(&b, " %s |", cell(s, complete))
		}
		fmt.Fprintf(&b, " %d | %d | %d |\n", m.Answered, m.NotRun, m.Missing)
	}
	b.WriteString("| majority baseline (this cohort) |")
	for _, c := range Table1 {
		fmt.Fprintf(&b, " %s |", r.majority(c.Name))
	}
	b.WriteString(" | | |\n\n")
	fmt.Fprintf(&b, "Percent accuracy with %.0f %% intervals: exact Clopper–Pearson for patient-level counts, otherwise a patient-cluster bootstrap (%d draws, seed %d). ",
		100*level(r.Options), draws(r.Options), r.Options.Seed)
	b.WriteString("`*` marks a provisional score: some of its items are not run (infrastructure failures), so the run is incomplete.\n")
	fmt.Fprintf(&b, "Paper baselines: L3 pathology majority %.1f %%, T majority %.1f %%, N majority %.1f %%, CarePath pathology %.0f %%, CarePath constant T3 %.0f %%.\n",
		score.PaperL3PathologyMajority, score.PaperTMajority, score.PaperNMajority, score.PaperCarePathPathologyMajority, score.PaperCarePathT3Constant)
	if jr := r.JournalProblems; jr != nil {
		fmt.Fprintf(&b, "\n**Journal problems: %s.** The scores above leave those lines out as described; each is listed in scores.json and by `npcorch score`.\n", jr.Summary())
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (r *Results) majority(column string) string {
	if b := r.Baseline(column); b != nil {
		return fmt.Sprintf("%.1f (%s)", b.Percent, b.Class)
	}
	return ""
}

// Baseline is the cohort's majority-class baseline beside a Table 1 column
// (nil for columns without one). Every model of a run shares the cohort, so
// the first model that ran the column's task carries it.
func (r *Results) Baseline(column string) *score.Baseline {
	for _, m := range r.Models {
		var ts *score.TaskScore
		switch column {
		case "Path.":
			ts = m.Task(configs.TaskPathology)
		case "T-Stg.":
			ts = m.TStage
		case "N-Stg.":
			ts = m.Task(configs.TaskNGroups)
		case "Seq.":
			ts = m.Task(configs.TaskSequence)
		}
		if ts != nil && ts.Majority != nil {
			return ts.Majority
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
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "level", "column", "percent", "numerator", "denominator", "lower", "upper", "interval", "complete"})
	for _, m := range r.Models {
		for _, c := range Table1 {
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

// writeFileAtomic writes through a temporary file and a rename, so a crash
// never leaves half a score file.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
