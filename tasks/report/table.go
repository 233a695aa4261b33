package report

import (
	"fmt"
	"math"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/score"
)

// Table is the cross-model table in the layout of the paper's Table 1: one
// row per model and run (the base run first within each model), one cell
// per column of the registry's score table.
type Table struct {
	Columns []TableColumn `json:"columns"`
	// Runs names the runs; Runs[0] is the base the others are compared to.
	Runs []string   `json:"runs"`
	Rows []TableRow `json:"rows"`
	// Baselines are the majority-class baselines of the base run's cohort,
	// one per column (nil where a column has none).
	Baselines []*score.Baseline `json:"baselines"`
}

// TableColumn is one column: the paper's name and level (L3 or L6).
type TableColumn struct {
	Name  string `json:"name"`
	Level string `json:"level"`
}

// TableRow is one model in one run.
type TableRow struct {
	Model string `json:"model"`
	Run   string `json:"run"`
	// Base is true for the base run's row.
	Base bool `json:"base"`
	// Answered, NotRun and Missing count (item, repeat) pairs as in
	// score.ModelResults.
	Answered int         `json:"answered"`
	NotRun   int         `json:"not_run"`
	Missing  int         `json:"missing"`
	Cells    []TableCell `json:"cells"`
}

// TableCell is one score. A column the model did not run has a nil Score.
type TableCell struct {
	Column string       `json:"column"`
	Score  *score.Score `json:"score,omitempty"`
	// Interval is the one the table prints: exact Clopper–Pearson where
	// the score counts patients, else the patient-cluster bootstrap.
	Interval *score.Interval `json:"interval,omitempty"`
	// Provisional is true when some of the column's items were not run.
	Provisional bool `json:"provisional"`
	// DeltaPP is Percent minus the base run's Percent for the same model
	// and column, in percentage points; nil in the base row or when either
	// score is missing.
	DeltaPP *float64 `json:"delta_pp,omitempty"`
	// Differs marks a compared cell whose printed value (one decimal)
	// differs from the base run's; Disjoint marks one whose interval does
	// not overlap the base run's.
	Differs  bool `json:"differs,omitempty"`
	Disjoint bool `json:"disjoint,omitempty"`
}

// buildTable lays the runs side by side: models in the base run's order,
// then models only later runs have, each followed by its rows in run order.
func buildTable(reg *tasks.Registry, runs []*Run) Table {
	t := Table{}
	var all []score.ModelResults
	for _, r := range runs {
		all = append(all, r.Results.Models...)
	}
	cols := score.RunColumns(score.CardOf(reg).Table, all)
	for _, c := range cols {
		t.Columns = append(t.Columns, TableColumn{Name: c.Name, Level: c.Level})
	}
	for _, r := range runs {
		t.Runs = append(t.Runs, r.Name)
	}
	var models []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, m := range r.Results.Models {
			if !seen[m.Model] {
				seen[m.Model] = true
				models = append(models, m.Model)
			}
		}
	}
	for _, model := range models {
		base := runs[0].result(model)
		for i, r := range runs {
			m := r.result(model)
			if m == nil {
				continue
			}
			row := TableRow{Model: model, Run: r.Name, Base: i == 0, Answered: m.Answered, NotRun: m.NotRun, Missing: m.Missing}
			for _, c := range cols {
				cell := newCell(c, *m)
				if i > 0 && base != nil {
					compareCell(&cell, newCell(c, *base))
				}
				row.Cells = append(row.Cells, cell)
			}
			t.Rows = append(t.Rows, row)
		}
	}
	for _, c := range cols {
		t.Baselines = append(t.Baselines, runs[0].Results.Majority(c))
	}
	return t
}

func newCell(c score.Column, m score.ModelResults) TableCell {
	s, complete := c.Pick(m)
	cell := TableCell{Column: c.Name, Score: s}
	if s != nil {
		cell.Interval = score.ShownInterval(s)
		cell.Provisional = !complete
	}
	return cell
}

// compareCell marks how a compared cell differs from the base run's.
func compareCell(cell *TableCell, base TableCell) {
	if cell.Score == nil || base.Score == nil {
		return
	}
	d := cell.Score.Percent - base.Score.Percent
	cell.DeltaPP = &d
	cell.Differs = fmt.Sprintf("%.1f", cell.Score.Percent) != fmt.Sprintf("%.1f", base.Score.Percent)
	if a, b := cell.Interval, base.Interval; a != nil && b != nil {
		cell.Disjoint = a.Lower > b.Upper || b.Lower > a.Upper
	}
}

// scoreCell prints a score as the tables do: "62.5 [51.2–71.8]", with "*"
// when provisional; "–" when absent. The interval is the cell's Sub, which
// HTML puts on a line of its own.
func scoreCell(s *score.Score, iv *score.Interval, provisional bool) gridCell {
	if s == nil {
		return gridCell{Text: "–", Class: "na"}
	}
	c := num(pct(s.Percent))
	if iv != nil {
		c.Sub = fmt.Sprintf("[%s–%s]", pct(iv.Lower), pct(iv.Upper))
	}
	if provisional {
		c.Tail = "*"
		c.Class = "num prov"
	}
	return c
}

// cell prints a Table 1 cell; a compared cell adds its difference from
// the base run and † when the intervals are disjoint.
func (c TableCell) cell() gridCell {
	g := scoreCell(c.Score, c.Interval, c.Provisional)
	if c.Score == nil {
		return g
	}
	if c.DeltaPP != nil && c.Differs {
		g.Tail += fmt.Sprintf(" (%s)", signedPP(*c.DeltaPP))
		if *c.DeltaPP > 0 {
			g.Class = "num up"
		} else {
			g.Class = "num down"
		}
	}
	if c.Disjoint {
		g.Tail += " †"
	}
	return g
}

func pct(v float64) string { return fmt.Sprintf("%.1f", v) }

// signedPP prints a difference in percentage points with its sign.
func signedPP(d float64) string {
	if math.Abs(d) < 0.05 {
		return "±0.0"
	}
	if d > 0 {
		return fmt.Sprintf("+%.1f", d)
	}
	return fmt.Sprintf("−%.1f", -d)
}

func baselineText(b *score.Baseline) string {
	if b == nil {
		return "–"
	}
	return fmt.Sprintf("%s (%s, %d/%d)", pct(b.Percent), b.Class, b.Count, b.Total)
}
