package gpu

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// UtilizationReport is what a campaign's GPUs did: one summary per GPU over
// the whole run and one per model span.
type UtilizationReport struct {
	Start time.Time     `json:"start"`
	End   time.Time     `json:"end"`
	GPUs  []GPUWindow   `json:"gpus"`
	Spans []SpanSummary `json:"spans"`
	// Note reminds readers what "GPU utilization" means.
	Note string `json:"note"`
}

// utilizationNote warns against reading NVML's GPU utilization as SM load.
const utilizationNote = "gpu_util_pct is NVML's share of time some kernel ran, not SM load: it reads near 100 while SMs idle. " +
	"Use sm_active_pct (GPM, Hopper and newer), power and energy to judge how busy the GPUs were."

// NewUtilizationReport summarises samples (in time order) and spans.
func NewUtilizationReport(samples []Sample, spans []Span) UtilizationReport {
	r := UtilizationReport{GPUs: Windows(samples, 0), Spans: SummarizeSpans(samples, spans), Note: utilizationNote}
	if len(samples) > 0 {
		r.Start, r.End = samples[0].Time, samples[len(samples)-1].Time
	}
	if r.GPUs == nil {
		r.GPUs = []GPUWindow{}
	}
	return r
}

// WriteJSON writes the report as indented JSON; unknown values are null.
func (r UtilizationReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// cell formats an optional number for CSV: empty when unknown.
func cell[T int | uint64 | float64](v *T) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(float64(*v), 'f', -1, 64)
}

func statCells(s *Stat) []string {
	if s == nil {
		return []string{"", "", ""}
	}
	return []string{cell(&s.Mean), cell(&s.Min), cell(&s.Max)}
}

// WriteGPUCSV writes one row per GPU: mean/min/max of every quantity and
// the energy; unknown cells are empty.
func (r UtilizationReport) WriteGPUCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	header := []string{"gpu", "start", "end", "samples"}
	for _, q := range []string{"gpu_util_pct", "mem_util_pct", "sm_active_pct", "mem_used_bytes", "power_w", "temp_c", "sm_clock_mhz"} {
		header = append(header, q+"_mean", q+"_min", q+"_max")
	}
	cw.Write(append(header, "energy_j"))
	for _, g := range r.GPUs {
		row := []string{strconv.Itoa(g.GPU), g.Start.UTC().Format(time.RFC3339Nano), g.End.UTC().Format(time.RFC3339Nano), strconv.Itoa(g.Samples)}
		for _, s := range []*Stat{g.GPUUtilPercent, g.MemUtilPercent, g.SMActivityPercent, g.MemUsedBytes, g.PowerWatts, g.TemperatureC, g.SMClockMHz} {
			row = append(row, statCells(s)...)
		}
		cw.Write(append(row, cell(g.EnergyJoules)))
	}
	cw.Flush()
	return cw.Error()
}

// WriteSpanCSV writes one row per model span.
func (r UtilizationReport) WriteSpanCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"model", "replica", "gpus", "start", "end", "gpu_seconds", "samples", "energy_wh",
		"mean_gpu_util_pct", "mean_sm_active_pct", "mean_power_w", "peak_mem_used_bytes"})
	for _, s := range r.Spans {
		gpus := make([]string, len(s.GPUs))
		for i, g := range s.GPUs {
			gpus[i] = strconv.Itoa(g)
		}
		cw.Write([]string{s.Model, s.Replica, strings.Join(gpus, " "), s.Start.UTC().Format(time.RFC3339Nano),
			s.End.UTC().Format(time.RFC3339Nano), cell(&s.GPUSeconds), strconv.Itoa(s.Samples), cell(s.EnergyWh),
			cell(s.MeanGPUUtilPercent), cell(s.MeanSMActivityPercent), cell(s.MeanPowerWatts), cell(s.PeakMemUsedBytes)})
	}
	cw.Flush()
	return cw.Error()
}

// Report file names written by [WriteUtilizationReport].
const (
	ReportJSONFile     = "gpu_utilization.json"
	ReportGPUCSVFile   = "gpu_utilization_gpus.csv"
	ReportSpanCSVFile  = "gpu_utilization_spans.csv"
	ReportTimelineFile = "gpu_timeline.png"
)

// WriteUtilizationReport writes the JSON, both CSVs and the PNG timeline
// into dir (which must exist) and returns the report.
func WriteUtilizationReport(dir string, samples []Sample, spans []Span) (UtilizationReport, error) {
	r := NewUtilizationReport(samples, spans)
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{ReportJSONFile, r.WriteJSON},
		{ReportGPUCSVFile, r.WriteGPUCSV},
		{ReportSpanCSVFile, r.WriteSpanCSV},
		{ReportTimelineFile, func(w io.Writer) error { return WriteTimelinePNG(w, samples, spans) }},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.name), f.write); err != nil {
			return r, err
		}
	}
	return r, nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("GPU utilization report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("GPU utilization report: writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("GPU utilization report: writing %s: %w", path, err)
	}
	return nil
}
