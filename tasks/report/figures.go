package report

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/tasks/score"
)

// Plot sizes in points (96 dpi PNGs: a 520-point plot is 693 pixels wide).
const (
	plotWidth  = 520
	plotHeight = 320
)

// plots draws every figure of the report, in page order: one score chart
// per Table 1 column, each composite's chart (Care/All-care/Strict per
// model, Fig. 6a), the registry's per-class recall figures (T stage, N
// stage and sequence), and the GPU timeline.
func (r *Report) plots() ([]figure, error) {
	var figs []figure
	for i, col := range r.Table.Columns {
		f, ok, err := r.columnPlot(i, col)
		if err != nil {
			return nil, err
		}
		if ok {
			figs = append(figs, f)
		}
	}
	for _, c := range score.CardOf(r.reg).Composites {
		if c.Figure == nil {
			continue
		}
		if f, ok, err := r.compositePlot(c.Figure); err != nil {
			return nil, err
		} else if ok {
			figs = append(figs, f)
		}
	}
	for _, rc := range score.CardOf(r.reg).Recall {
		f, ok, err := r.recallPlot(rc.File, rc.Title, rc.Table)
		if err != nil {
			return nil, err
		}
		if ok {
			figs = append(figs, f)
		}
	}
	if base := r.Runs[0]; len(base.Samples) > 0 {
		var b bytes.Buffer
		if err := gpu.WriteTimelinePNG(&b, base.Samples, base.Spans); err != nil {
			return nil, fmt.Errorf("report: run %s: %w", base.Name, err)
		}
		figs = append(figs, figure{File: PlotsDir + "/" + gpu.ReportTimelineFile, PNG: b.Bytes(), Wide: true,
			Caption: "GPU utilization timeline of run " + base.Name + " (shaded: model spans)."})
	}
	return figs, nil
}

// columnPlot draws one Table 1 column: a bar per model and run with its
// interval, and the cohort's majority baseline.
func (r *Report) columnPlot(i int, col TableColumn) (figure, bool, error) {
	var models []string
	for _, row := range r.Table.Rows {
		if len(models) == 0 || models[len(models)-1] != row.Model {
			models = append(models, row.Model)
		}
	}
	any := false
	var series []barSeries
	for _, run := range r.Table.Runs {
		s := barSeries{Name: run, Values: make([]*float64, len(models)), Lower: make([]*float64, len(models)), Upper: make([]*float64, len(models))}
		for _, row := range r.Table.Rows {
			c := row.Cells[i]
			if row.Run != run || c.Score == nil {
				continue
			}
			g := indexOf(models, row.Model)
			s.Values[g] = &c.Score.Percent
			if c.Interval != nil {
				s.Lower[g], s.Upper[g] = &c.Interval.Lower, &c.Interval.Upper
			}
			any = true
		}
		series = append(series, s)
	}
	if !any {
		return figure{}, false, nil
	}
	ch := barChart{Title: fmt.Sprintf("%s %s", col.Level, col.Name), YLabel: "percent", Groups: models, Series: series,
		Width: plotWidth, Height: plotHeight}
	caption := fmt.Sprintf("%s %s per model with its interval", col.Level, col.Name)
	if bl := r.Table.Baselines[i]; bl != nil {
		ch.Reference = &bl.Percent
		ch.ReferenceName = fmt.Sprintf("majority baseline %.1f (class %s)", bl.Percent, bl.Class)
		caption += "; dashed: majority-class baseline"
	}
	png, err := ch.png()
	if err != nil {
		return figure{}, false, fmt.Errorf("report: %w", err)
	}
	return figure{File: fmt.Sprintf("%s/scores_%s.png", PlotsDir, slug(col.Name)), PNG: png, Caption: caption + "."}, true, nil
}

// compositePlot draws a composite's scores per model and run (Care,
// All-care and Strict, as in the paper's Fig. 6a).
func (r *Report) compositePlot(fig *score.Figure) (figure, bool, error) {
	var groups []string
	var scores [][]*score.Score
	for _, row := range r.Table.Rows {
		m := r.run(row.Run).result(row.Model)
		if m == nil {
			continue
		}
		sc := fig.Scores(m)
		if sc == nil {
			continue
		}
		label := row.Model
		if len(r.Runs) > 1 {
			label += " · " + row.Run
		}
		groups = append(groups, label)
		scores = append(scores, sc)
	}
	if len(groups) == 0 {
		return figure{}, false, nil
	}
	var series []barSeries
	for k, name := range fig.Series {
		s := barSeries{Name: name, Values: make([]*float64, len(groups)), Lower: make([]*float64, len(groups)), Upper: make([]*float64, len(groups))}
		for g, sc := range scores {
			if v := sc[k]; v != nil {
				s.Values[g] = &v.Percent
				if iv := score.ShownInterval(v); iv != nil {
					s.Lower[g], s.Upper[g] = &iv.Lower, &iv.Upper
				}
			}
		}
		series = append(series, s)
	}
	ch := barChart{Title: fig.Title, YLabel: "percent", Groups: groups, Series: series,
		Width: plotWidth, Height: plotHeight}
	wide := len(groups) > 8
	if wide {
		ch.Width = 2 * plotWidth
	}
	png, err := ch.png()
	if err != nil {
		return figure{}, false, fmt.Errorf("report: %w", err)
	}
	return figure{File: PlotsDir + "/" + fig.File, PNG: png, Wide: wide, Caption: fig.Caption}, true, nil
}

// recallPlot draws the per-class recall of one task for every model of
// the base run.
func (r *Report) recallPlot(file, title, task string) (figure, bool, error) {
	var classes, models []string
	var recalls [][]*float64 // per model, per class
	for _, d := range r.Detail {
		var ts *score.TaskScore
		for _, t := range taskScores(r.reg, d.Scores) {
			if t.Key == task {
				ts = t.Score
			}
		}
		if ts == nil || len(ts.Classes) == 0 {
			continue
		}
		if classes == nil {
			for _, c := range ts.Classes {
				classes = append(classes, c.Class)
			}
		}
		rec := make([]*float64, len(classes))
		for _, c := range ts.Classes {
			if k := indexOf(classes, c.Class); k >= 0 {
				rec[k] = c.Recall
			}
		}
		models = append(models, d.Model)
		recalls = append(recalls, rec)
	}
	if len(models) == 0 {
		return figure{}, false, nil
	}
	// One group per model, one bar per class: the classes keep the same
	// colour across models, so a model that never answers a class shows
	// a gap where that colour should be.
	series := make([]barSeries, len(classes))
	for k, c := range classes {
		series[k] = barSeries{Name: c, Values: make([]*float64, len(models))}
		for m := range models {
			series[k].Values[m] = recalls[m][k]
		}
	}
	ch := barChart{Title: "Per-class recall: " + title, YLabel: "recall (%)", Groups: models, Series: series,
		Width: plotWidth, Height: plotHeight}
	wide := len(models)*len(classes) > 48
	if wide {
		ch.Width = 2 * plotWidth
	}
	png, err := ch.png()
	if err != nil {
		return figure{}, false, fmt.Errorf("report: %w", err)
	}
	return figure{File: PlotsDir + "/" + file, PNG: png, Wide: wide,
		Caption: fmt.Sprintf("Per-class recall (%s) of each model of run %s; n/a: no gold case of the class. Balanced accuracy is the mean over classes; a constant answer gets 100/K.", title, r.Runs[0].Name)}, true, nil
}

func (r *Report) run(name string) *Run {
	for _, run := range r.Runs {
		if run.Name == name {
			return run
		}
	}
	return nil
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// slug turns a column name into a file name part: "T-Stg." → "t_stg".
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	return strings.TrimSuffix(b.String(), "_")
}
