package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/tasks"
)

// Write reports the run in runDir, with the runs in compare side by side,
// into outDir (runDir/report when empty), creating it; reg is the
// benchmark the runs ran. The same inputs give the same bytes in every
// file.
func Write(reg *tasks.Registry, runDir string, compare []string, outDir string) error {
	runs := make([]*Run, 0, 1+len(compare))
	for _, dir := range append([]string{runDir}, compare...) {
		r, err := LoadRun(dir)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	rep, err := Build(reg, runs)
	if err != nil {
		return err
	}
	if outDir == "" {
		outDir = filepath.Join(runDir, "report")
	}
	return rep.WriteFiles(outDir)
}

// Build assembles the report of runs (the first is the base) of the
// benchmark reg and draws its plots. Runs sharing a name are told apart by
// a "#2", "#3" suffix.
func Build(reg *tasks.Registry, runs []*Run) (*Report, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: no run to report; give a run directory")
	}
	seen := map[string]int{}
	for _, r := range runs {
		seen[r.Name]++
		if n := seen[r.Name]; n > 1 {
			r.Name = fmt.Sprintf("%s#%d", r.Name, n)
		}
	}
	rep := &Report{Runs: runs, Table: buildTable(reg, runs), Cost: buildCost(reg, runs), Detail: buildDetail(reg, runs[0]), reg: reg}
	figs, err := rep.plots()
	if err != nil {
		return nil, err
	}
	rep.figures = figs
	return rep, nil
}

// WriteFiles writes every report file into dir, creating it.
func (r *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
		return fmt.Errorf("report: create output directory: %w", err)
	}
	files := map[string]func() ([]byte, error){
		Table1Markdown: func() ([]byte, error) { return r.tablePage().markdown(), nil },
		Table1CSV:      r.tableCSV,
		Table1JSON:     r.tableJSON,
		CostMarkdown:   func() ([]byte, error) { return r.costPage().markdown(), nil },
		CostCSV:        r.costCSV,
		CostJSON: func() ([]byte, error) {
			return indentJSON(struct {
				Format string `json:"format"`
				Cost
			}{CostFormat, r.Cost})
		},
		DetailMarkdown: func() ([]byte, error) { return r.detailPage().markdown(), nil },
		DetailJSON: func() ([]byte, error) {
			return indentJSON(struct {
				Format string        `json:"format"`
				Run    string        `json:"run"`
				Models []ModelDetail `json:"models"`
			}{DetailFormat, r.Runs[0].Name, r.Detail})
		},
		HTMLFile: func() ([]byte, error) { return r.fullPage().html() },
	}
	for _, f := range r.figures {
		files[f.File] = func() ([]byte, error) { return f.PNG, nil }
	}
	if err := removeStale(dir, files); err != nil {
		return err
	}
	for name, build := range files {
		data, err := build()
		if err != nil {
			return fmt.Errorf("report: %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
	}
	if base := r.Runs[0]; len(base.Samples) > 0 {
		gdir := filepath.Join(dir, GPUDir)
		if err := os.MkdirAll(gdir, 0o755); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		if _, err := gpu.WriteUtilizationReport(gdir, base.Samples, base.Spans); err != nil {
			return fmt.Errorf("report: run %s: %w", base.Name, err)
		}
	}
	return nil
}

// removeStale deletes the plots and GPU report files an earlier report
// wrote into dir that this one does not write (a timeline from a run that
// had samples), so the directory never mixes two reports. Only files
// this package names are touched.
func removeStale(dir string, files map[string]func() ([]byte, error)) error {
	plots, err := filepath.Glob(filepath.Join(dir, PlotsDir, "*.png"))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var stale []string
	for _, p := range plots {
		name := filepath.Base(p)
		ours := strings.HasPrefix(name, "scores_") || strings.HasPrefix(name, "recall_") ||
			strings.HasPrefix(name, "carepath_") || name == gpu.ReportTimelineFile
		if _, keep := files[PlotsDir+"/"+name]; ours && !keep {
			stale = append(stale, p)
		}
	}
	for _, name := range []string{gpu.ReportJSONFile, gpu.ReportGPUCSVFile, gpu.ReportSpanCSVFile, gpu.ReportTimelineFile} {
		stale = append(stale, filepath.Join(dir, GPUDir, name))
	}
	for _, p := range stale {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("report: remove stale %s: %w", p, err)
		}
	}
	return nil
}

func indentJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (r *Report) tableJSON() ([]byte, error) {
	return indentJSON(struct {
		Format   string `json:"format"`
		Campaign string `json:"campaign"`
		Table
		Paper PaperBaselines `json:"paper_baselines"`
	}{Table1Format, r.Runs[0].Results.Campaign, r.Table, paperBaselines()})
}

// tableCSV writes one row per model, run and column that has a score.
func (r *Report) tableCSV() ([]byte, error) {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write([]string{"model", "run", "level", "column", "percent", "numerator", "denominator", "lower", "upper", "interval",
		"provisional", "delta_pp", "differs", "disjoint", "majority_baseline"})
	for _, row := range r.Table.Rows {
		for i, c := range row.Cells {
			if c.Score == nil {
				continue
			}
			rec := []string{row.Model, row.Run, r.Table.Columns[i].Level, c.Column, f4(c.Score.Percent), f4(c.Score.Numerator),
				strconv.Itoa(c.Score.Denominator), "", "", "", strconv.FormatBool(c.Provisional), "",
				strconv.FormatBool(c.Differs), strconv.FormatBool(c.Disjoint), ""}
			if iv := c.Interval; iv != nil {
				rec[7], rec[8], rec[9] = f4(iv.Lower), f4(iv.Upper), iv.Method
			}
			if c.DeltaPP != nil {
				rec[11] = f4(*c.DeltaPP)
			}
			if bl := r.Table.Baselines[i]; bl != nil {
				rec[14] = f4(bl.Percent)
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}

// costCSV writes one row per run, model and task; a model's "all" row
// carries its GPU-seconds and energy.
func (r *Report) costCSV() ([]byte, error) {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write([]string{"run", "model", "task", "requests", "answered", "not_run", "attempts", "prompt_tokens", "completion_tokens",
		"cached_tokens", "work_tokens", "ttft_p50_ms", "ttft_p90_ms", "ttft_p99_ms", "tpot_p50_ms", "tpot_p90_ms", "tpot_p99_ms",
		"e2e_p50_ms", "e2e_p90_ms", "e2e_p99_ms", "gpu_seconds", "energy_wh"})
	for _, t := range r.Cost.Tasks {
		rec := []string{t.Run, t.Model, t.Task, strconv.Itoa(t.Requests), strconv.Itoa(t.Answered), strconv.Itoa(t.NotRun),
			strconv.Itoa(t.Attempts), strconv.Itoa(t.PromptTokens), strconv.Itoa(t.CompletionTokens), optInt(t.CachedTokens),
			optInt(t.WorkTokens)}
		for _, p := range []Percentiles{t.TTFT, t.TPOT, t.E2E} {
			rec = append(rec, optF4(p.P50), optF4(p.P90), optF4(p.P99))
		}
		gs, wh := "", ""
		if t.Task == AllTasks {
			g := r.gpuCost(t.Run, t.Model)
			gs, wh = measured(g.GPUSeconds), measured(g.EnergyWh)
		}
		cw.Write(append(rec, gs, wh))
	}
	cw.Flush()
	return b.Bytes(), cw.Error()
}

func (r *Report) gpuCost(run, model string) GPUCost {
	for _, g := range r.Cost.GPU {
		if g.Run == run && g.Model == model {
			return g
		}
	}
	return GPUCost{Run: run, Model: model}
}

func measured(v *float64) string {
	if v == nil {
		return notMeasured
	}
	return f4(*v)
}

func f4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

// optInt writes a token figure the engine may not have reported.
func optInt(v *int) string {
	if v == nil {
		return notReported
	}
	return strconv.Itoa(*v)
}

func optF4(v *float64) string {
	if v == nil {
		return ""
	}
	return f4(*v)
}
