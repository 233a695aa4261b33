package score

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/google/renameio/v2"
)

// ShownInterval returns the interval reports show: exact when the score has
// one (patient counts), else the patient-cluster bootstrap.
func ShownInterval(s *Score) *Interval {
	if s.Exact != nil {
		return s.Exact
	}
	return s.Bootstrap
}

func cell(s *Score, complete bool) string {
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

// table is the score table's columns that some model has a score in; an
// error for results that ScoreRun did not make (read back from
// scores.json, say).
func (r *Results) table() ([]Column, error) {
	if r.reg == nil {
		return nil, fmt.Errorf("scores of %s have no table layout; score them with ScoreRun", r.Campaign)
	}
	return RunColumns(CardOf(r.reg).Table, r.Models), nil
}

// RunColumns keeps the columns in which some model has a score: a
// campaign of some tasks shows their columns, not a row of dashes for
// every task it did not run.
func RunColumns(cols []Column, models []ModelResults) []Column {
	var out []Column
	for _, c := range cols {
		for _, m := range models {
			if s, _ := c.Pick(m); s != nil {
				out = append(out, c)
				break
			}
		}
	}
	return out
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
	b.WriteString(" | | |\n")
	if row, ok := randomRow(r, table); ok {
		b.WriteString(row)
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "Percent accuracy with %.0f %% intervals: exact Clopper–Pearson for patient-level counts, otherwise a patient-cluster bootstrap (%d draws, seed %d). ",
		100*level(r.Options), draws(r.Options), r.Options.Seed)
	b.WriteString("`*` marks a provisional score: some of its items are not run (infrastructure failures), so the run is incomplete.\n")
	for _, note := range CardOf(r.reg).Notes {
		b.WriteString(note + "\n")
	}
	r.writeRepeats(&b)
	writeControls(&b, r.Models)
	r.writeRubric(&b)
	r.writeUnjudged(&b)
	if jr := r.JournalProblems; jr != nil {
		fmt.Fprintf(&b, "\n**Journal problems: %s.** The scores above leave those lines out as described; each is listed in scores.json and by `npcorch score`.\n", jr.Summary())
	}
	writeNotRun(&b, r.Models)
	writeLeftOut(&b, r.LeftOut)
	_, err = w.Write(b.Bytes())
	return err
}

// writeNotRun says, per model, why its not-run requests were not run
// (a model abandoned, an engine that kept failing them); nothing when
// every request was answered.
func writeNotRun(b *bytes.Buffer, models []ModelResults) {
	n := 0
	for _, m := range models {
		n += m.NotRun
	}
	if n == 0 {
		return
	}
	fmt.Fprintf(b, "\n**Not run: %d request(s) have no answer** (infrastructure failures, never a prediction; their scores above are provisional); continue the run with `--resume` once the cause is fixed:\n", n)
	for _, m := range models {
		for i, r := range m.NotRunReasons {
			if i == maxLeftOutLines {
				fmt.Fprintf(b, "- %s: … and %d more reasons (all in scores.json, `not_run_reasons`)\n", m.Model, len(m.NotRunReasons)-i)
				break
			}
			fmt.Fprintf(b, "- %s, %d × %s\n", m.Model, r.Count, r.Reason)
		}
	}
}

// maxLeftOutLines bounds the left-out items scores.md names; scores.json
// names them all.
const maxLeftOutLines = 20

// writeLeftOut names the items that were never asked, and why: the
// dataset's that could not be made (no model was asked them), then those
// whose request for a model could not be built; nothing when every item
// was asked.
func writeLeftOut(b *bytes.Buffer, items []LeftOutItem) {
	var dataset, sent []LeftOutItem
	for _, it := range items {
		if it.Model == "" {
			dataset = append(dataset, it)
		} else {
			sent = append(sent, it)
		}
	}
	if len(dataset) > 0 {
		fmt.Fprintf(b, "\n**Left out: %d item(s) of the dataset could not be made**, so no model was asked them and the scores above do not count them; fix the dataset (or `npcorch prep` again) and run again:\n", len(dataset))
		writeLeftOutLines(b, dataset)
	}
	if len(sent) > 0 {
		fmt.Fprintf(b, "\n**Not sent: %d request(s) could not be built**, so their models were never asked them (counted as missing above); fix the cause and continue the run with `--resume`:\n", len(sent))
		writeLeftOutLines(b, sent)
	}
}

func writeLeftOutLines(b *bytes.Buffer, items []LeftOutItem) {
	for i, it := range items {
		if i == maxLeftOutLines {
			fmt.Fprintf(b, "- … and %d more (all in scores.json, `left_out`)\n", len(items)-i)
			return
		}
		if it.Model != "" {
			fmt.Fprintf(b, "- %s, %s: %s\n", it.Model, it.Item, it.Reason)
		} else {
			fmt.Fprintf(b, "- %s: %s\n", it.Item, it.Reason)
		}
	}
}

// writeUnjudged says which judged tasks' answers no judge judged, so that
// a campaign without judges does not answer O1 and say nothing about it.
func (r *Results) writeUnjudged(b *bytes.Buffer) {
	for _, u := range r.Unjudged {
		title := u.Task
		if t := r.reg.Lookup(u.Task); t != nil {
			title = t.Title
		}
		counts := make([]string, len(u.Answered))
		for i, c := range u.Answered {
			counts[i] = fmt.Sprintf("%s %d", c.Model, c.Count)
		}
		fmt.Fprintf(b, "\n**%s: answered but not judged, so not scored** (answers: %s). The journal holds no verdict of its judge task %s: the campaign has no `judges:`. "+
			"Add one to the campaign file (`judges:`, docs/campaign.md; the paper's is GPT-OSS-120B) and continue the run with `--resume`: only the judging is sent.\n",
			title, strings.Join(counts, ", "), u.JudgeTask)
	}
}

// writeRepeats says, for a run of several repeats, that the table above
// scores the first and gives each task's reliability over all of them.
func (r *Results) writeRepeats(b *bytes.Buffer) {
	if r.Repeats < 2 {
		return
	}
	fmt.Fprintf(b, "\n## Repeats (k = %d)\n\nThe table above scores repeat 0 only. Over the k = %d repeats of each item answered in every repeat: avg@k ± SD (mean accuracy of all n·k answers, SD of the k per-repeat accuracies), pass^k (right in every repeat), pass@k (right in at least one), agreement (the same answer every time). A task whose answer is several labels has a row per graded field: a structure card is right on its structure (left and right collapsed, as Struct. above), and on its structure and invasion together; a failed field is wrong and agrees with nothing. Per-repeat accuracies are in scores.json (`reliability`) and report/detail.md.\n\n", r.Repeats, r.Repeats)
	b.WriteString("| Model | Task | items | avg@k ± SD | pass^k | pass@k | agreement |\n|---|---|---|---|---|---|---|\n")
	for _, m := range r.Models {
		for _, tr := range m.Reliability {
			rel := tr.Reliability
			items := strconv.Itoa(rel.Items)
			if rel.Dropped > 0 {
				items += fmt.Sprintf(" (%d dropped: a repeat not run)", rel.Dropped)
			}
			avg := cell(rel.AvgAtK, rel.Complete)
			if rel.AvgAtK != nil {
				avg += fmt.Sprintf(" ± %.1f", rel.SD)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", m.Model, tr.Name(), items, avg,
				cell(rel.PassHatK, rel.Complete), cell(rel.PassAtK, rel.Complete), cell(rel.Agreement, rel.Complete))
		}
	}
}

// writeControls writes the matched controls side by side, one row per
// model and comparison; nothing when no control ran.
func writeControls(b *bytes.Buffer, models []ModelResults) {
	rows := 0
	for _, m := range models {
		rows += len(m.Controls)
	}
	if rows == 0 {
		return
	}
	b.WriteString("\n## Matched controls\n\n")
	b.WriteString("| Model | Control | units / patients | item accuracy: baseline → treatment, Δ pp [95 %] | +/− (Φ) | patient-macro Δ pp [95 %] | all-correct: baseline → treatment, Δ pp [95 %] | B/W/S |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, m := range models {
		for _, c := range m.Controls {
			mark := ""
			if !c.Complete {
				mark = "*"
			}
			fmt.Fprintf(b, "| %s | %s%s | %d / %d | %s | %d/%d (%.1f) | %s | %s | %d/%d/%d |\n", m.Model, c.Name, mark, c.Units, c.Patients,
				pairedCell(c.Micro, true), c.Corrected, c.Harmed, c.Flip, pairedCell(c.PatientMacro, false), pairedCell(c.AllCorrect, true),
				c.Better, c.Worse, c.Same)
		}
	}
	b.WriteString("\nΔ is the treatment minus the baseline, with a paired patient-cluster bootstrap interval (each draw keeps both conditions of a patient's units); " +
		"+/− count units corrected and harmed by the treatment, Φ the percentage whose correctness changed (Eq. A6); B/W/S count patients whose accuracy rose, fell or stayed. `*`: some units were not run.\n")
}

// pairedCell prints a paired endpoint: "62.5 → 70.0, +7.5 [1.2–13.8]",
// or only the difference.
func pairedCell(p Paired, levels bool) string {
	if p.Baseline == nil {
		return "–"
	}
	out := fmt.Sprintf("%+.1f", p.Difference)
	if p.Interval != nil {
		out += fmt.Sprintf(" [%.1f, %.1f]", p.Interval.Lower, p.Interval.Upper)
	}
	if levels {
		out = fmt.Sprintf("%.1f → %.1f, ", p.Baseline.Percent, p.Treatment.Percent) + out
	}
	return out
}

func majority(r *Results, c Column) string {
	if b := r.Majority(c); b != nil {
		return fmt.Sprintf("%.1f (%s)", b.Percent, b.Class)
	}
	return ""
}

// Majority is the cohort's majority-class baseline beside a score table
// column (nil for columns without one). The scores compute it over the
// cohort's items, answered or not, so every model asked the column's task
// carries the same one; the first model's is shown.
func (r *Results) Majority(c Column) *Baseline { return firstBaseline(r, c.Majority) }

// Random is what a uniformly random answer scores on a score table
// column's endpoint (nil for columns without one).
func (r *Results) Random(c Column) *Baseline { return firstBaseline(r, c.Random) }

func firstBaseline(r *Results, pick func(ModelResults) *Baseline) *Baseline {
	if pick == nil {
		return nil
	}
	for _, m := range r.Models {
		if b := pick(m); b != nil {
			return b
		}
	}
	return nil
}

// randomRow is the table's random-baseline row; none when no column has
// one (an L3 and L6 run's table stays as it was).
func randomRow(r *Results, table []Column) (string, bool) {
	var b strings.Builder
	b.WriteString("| random baseline (this cohort) |")
	any := false
	for _, c := range table {
		cell := ""
		if bl := r.Random(c); bl != nil {
			cell, any = fmt.Sprintf("%.1f", bl.Percent), true
		}
		fmt.Fprintf(&b, " %s |", cell)
	}
	b.WriteString(" | | |\n")
	return b.String(), any
}

func level(o Options) float64 {
	if o.Level == 0 {
		return DefaultLevel
	}
	return o.Level
}

func draws(o Options) int {
	if o.Draws == 0 {
		return DefaultDraws
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

// writeRubric writes the judged free-text scores (O1) under each judge
// and the judges' calibration against physicians, when the run has them.
func (r *Results) writeRubric(b *bytes.Buffer) {
	var rows int
	for _, m := range r.Models {
		rows += len(m.Rubric)
	}
	if rows > 0 {
		b.WriteString("\n## O1 ConsultRubrics\n\n")
		b.WriteString("| Model | Judge | Score | Case mean | Major error | Minor error | in V | fell out |\n|---|---|---|---|---|---|---|---|\n")
		for _, m := range r.Models {
			for _, jr := range m.Rubric {
				s := jr.Score
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d of %d | %s |\n", m.Model, jr.Judge, cell(s.Score, s.Complete),
					cell(s.CaseMean, s.Complete), cell(s.Major, s.Complete), cell(s.Minor, s.Complete), s.Valid, s.Items, ReasonsText(s.FellOut))
			}
		}
		b.WriteString("\nScore: Eq. A7, 100 · max(0, Σ weights of requirements met − 2 · majors − minors) / points, averaged over the items with a valid verdict on every criterion (V); case mean: within each case, then across cases; error rates: share of items with at least one error of that kind. Intervals: case-cluster bootstrap.\n")
		r.writeTags(b)
	}
	if len(r.Judges) == 0 {
		return
	}
	b.WriteString("\n## Judge calibration\n\n")
	b.WriteString("| Judge | Kind | Labels | Agreement | κ | Sensitivity | Specificity | TP | FP | TN | FN |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, j := range r.Judges {
		c := j.Calibration
		writeAgreement(b, j.Judge, "all", c.All)
		for _, k := range c.ByKind {
			writeAgreement(b, j.Judge, k.Kind, k.Agreement)
		}
		if len(c.Missing) > 0 {
			fmt.Fprintf(b, "| %s | without a valid verdict | %s | | | | | | | | |\n", j.Judge, ReasonsText(c.Missing))
		}
	}
	b.WriteString("\nAgainst the physicians' labels of the audit responses (Eq. A9): agreement with a response-cluster bootstrap interval, Cohen's κ, and the judge's sensitivity and specificity with the physicians as reference.\n")
}

// writeTags writes O1's score per clinical tag, a column per tag.
func (r *Results) writeTags(b *bytes.Buffer) {
	var tags []string
	for _, m := range r.Models {
		for _, jr := range m.Rubric {
			for _, t := range jr.Score.Tags {
				if t.Items > 0 && !slices.Contains(tags, t.Tag) {
					tags = append(tags, t.Tag)
				}
			}
		}
	}
	if len(tags) == 0 {
		return
	}
	fmt.Fprintf(b, "\n| Model | Judge | %s |\n|---|---|%s\n", strings.Join(tags, " | "), strings.Repeat("---|", len(tags)))
	for _, m := range r.Models {
		for _, jr := range m.Rubric {
			fmt.Fprintf(b, "| %s | %s |", m.Model, jr.Judge)
			for _, tag := range tags {
				var s *Score
				for _, t := range jr.Score.Tags {
					if t.Tag == tag {
						s = t.Score
					}
				}
				fmt.Fprintf(b, " %s |", cell(s, true))
			}
			b.WriteString("\n")
		}
	}
}

func writeAgreement(b *bytes.Buffer, judge, kind string, a Agreement) {
	fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %s | %d | %d | %d | %d |\n", judge, kind, a.N, cell(a.Percent, true),
		RatioText(a.Kappa), RatioText(a.Sensitivity), RatioText(a.Specificity), a.TP, a.FP, a.TN, a.FN)
}
