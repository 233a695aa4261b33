package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/npcorch/npcorch/gpu"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/score"
)

// Files of a run directory the report reads.
const (
	ScoresFile  = "scores.json"
	SamplesFile = "gpu/samples.jsonl"
	SpansFile   = "gpu/spans.json"
)

// Run is one run directory as the report sees it.
type Run struct {
	// Name labels the run in tables: the directory's base name, made
	// unique by Build when two runs share it.
	Name string
	// Results are the scores of scores.json.
	Results *score.Results
	// Records are the journal's records in journal.State.Sorted order.
	Records []journal.Record
	// Samples are the GPU sampler's ticks in time order; nil when the
	// sampler did not run.
	Samples []gpu.Sample
	// Spans are the model spans the launcher recorded; nil when unknown.
	Spans []gpu.Span
	// Speeds are what the run's engines were measured to do
	// (schedule.SpeedsFile); nil when the run measured none.
	Speeds *schedule.Speeds
	// Notes tell the reader what was missing or damaged in the run
	// directory (a truncated sample log, no journal).
	Notes []string
}

// LoadRun reads a run directory: scores.json is required, the journal and
// the GPU files are optional. A sample log whose tail is damaged (a crash
// mid-write) keeps the samples before the damage and says so in Notes.
func LoadRun(dir string) (*Run, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("report: run directory %s: %w", dir, err)
	}
	run := &Run{Name: filepath.Base(abs)}
	res, err := readScores(filepath.Join(dir, ScoresFile))
	if err != nil {
		return nil, err
	}
	run.Results = res
	if _, err := os.Stat(filepath.Join(dir, "journal")); errors.Is(err, fs.ErrNotExist) {
		run.Notes = append(run.Notes, "The run has no journal/ directory: cost, slowest and not-run items are unknown.")
	}
	j, err := journal.Read(dir)
	if err != nil {
		return nil, fmt.Errorf("report: run %s: %w", dir, err)
	}
	run.Records = j.Sorted()
	if j.Torn > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("The journal has %d incomplete last line(s) from an interrupted write; those requests count as not done.", j.Torn))
	}
	if err := run.readGPU(dir); err != nil {
		return nil, err
	}
	if err := run.readSpeeds(dir); err != nil {
		return nil, err
	}
	return run, nil
}

func readScores(path string) (*score.Results, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("report: %s does not exist; run `npcorch score --run %s` first", path, filepath.Dir(path))
	}
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var res score.Results
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("report: %s is not a scores file (%v); rewrite it with `npcorch score --run %s`", path, err, filepath.Dir(path))
	}
	if res.Format != score.ResultsFormat {
		return nil, fmt.Errorf("report: %s has format %q, this npcorch reads %q; rewrite it with `npcorch score --run %s`", path, res.Format, score.ResultsFormat, filepath.Dir(path))
	}
	return &res, nil
}

// readSpeeds reads the measured speeds when the run has them; a damaged
// file is a note, not a failed report.
func (r *Run) readSpeeds(dir string) error {
	path := filepath.Join(dir, schedule.SpeedsFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	s, err := schedule.ReadSpeeds(path)
	if err != nil {
		r.Notes = append(r.Notes, fmt.Sprintf("%v; the report shows no measured speeds.", err))
		return nil
	}
	r.Speeds = s
	return nil
}

// readGPU reads the sample log and the spans when they exist.
func (r *Run) readGPU(dir string) error {
	f, err := os.Open(filepath.Join(dir, SamplesFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("report: %w", err)
	default:
		samples, rerr := gpu.ReadSamples(f)
		f.Close()
		if rerr != nil {
			if len(samples) == 0 {
				return fmt.Errorf("report: %s: %w; move the file aside to report without GPU figures", filepath.Join(dir, SamplesFile), rerr)
			}
			r.Notes = append(r.Notes, fmt.Sprintf("%s is damaged after %d samples (%v); the GPU figures use those samples.", SamplesFile, len(samples), rerr))
		}
		sort.SliceStable(samples, func(i, j int) bool { return samples[i].Time.Before(samples[j].Time) })
		if len(samples) > 0 {
			r.Samples = samples
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, SpansFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("report: %w", err)
	}
	var spans []gpu.Span
	if err := json.Unmarshal(data, &spans); err != nil {
		return fmt.Errorf("report: %s is not a JSON array of model spans (%v); move it aside to report without GPU-seconds", filepath.Join(dir, SpansFile), err)
	}
	sort.SliceStable(spans, func(i, j int) bool {
		if !spans[i].Start.Equal(spans[j].Start) {
			return spans[i].Start.Before(spans[j].Start)
		}
		if spans[i].Model != spans[j].Model {
			return spans[i].Model < spans[j].Model
		}
		return spans[i].Replica < spans[j].Replica
	})
	r.Spans = spans
	return nil
}

// models lists the run's models: scores.json order, then models only the
// journal knows, sorted.
func (r *Run) models() []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range r.Results.Models {
		if !seen[m.Model] {
			seen[m.Model] = true
			out = append(out, m.Model)
		}
	}
	var extra []string
	for _, rec := range r.Records {
		if !seen[rec.Model] {
			seen[rec.Model] = true
			extra = append(extra, rec.Model)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

// result returns the scores of a model, nil when the run did not score it.
func (r *Run) result(model string) *score.ModelResults {
	for i := range r.Results.Models {
		if r.Results.Models[i].Model == model {
			return &r.Results.Models[i]
		}
	}
	return nil
}
