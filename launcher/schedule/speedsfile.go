package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"text/tabwriter"

	"github.com/npcorch/npcorch/launcher/placement"
)

// SpeedsFile is the name of the file a campaign keeps its engines'
// measured speeds in, in its run folder (Speeds as JSON): rewritten at
// each measurement while the run goes, and last when it ends.
const SpeedsFile = "speeds.json"

// ReadSpeeds reads a speeds file a campaign wrote (SpeedsFile): what a
// status reader, the report and `npcorch calibrate` show.
func ReadSpeeds(path string) (*Speeds, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("measured speeds: %w", err)
	}
	return DecodeSpeeds(path, data)
}

// DecodeSpeeds parses a speeds file's bytes; name says where they come
// from in errors. Every number must be finite and not negative, and every
// model named once.
func DecodeSpeeds(name string, data []byte) (*Speeds, error) {
	var s Speeds
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("measured speeds %s: %w (it is written by `npcorch run`; rerun, or remove it)", name, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("measured speeds %s: %w", name, err)
	}
	return &s, nil
}

// check refuses what no estimator writes.
func (s *Speeds) check() error {
	bad := func(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }
	if bad(s.Node.Factor) || bad(s.Node.LogSD) {
		return fmt.Errorf("node factor %v (log sd %v) is not a speed factor", s.Node.Factor, s.Node.LogSD)
	}
	seen := map[string]bool{}
	for _, m := range s.Models {
		if m.Model == "" {
			return fmt.Errorf("a model without a name")
		}
		if seen[m.Model] {
			return fmt.Errorf("model %s appears twice", m.Model)
		}
		seen[m.Model] = true
		for _, f := range []float64{m.RegistryTokensPerS, m.TokensPerS, m.Factor, m.Low, m.High, m.LogSD, m.Seconds, m.Work, m.Images, m.TTFT} {
			if bad(f) {
				return fmt.Errorf("model %s: %v is not a measured amount", m.Model, f)
			}
		}
		for _, r := range m.Replicas {
			for _, f := range []float64{r.Seconds, r.TokensPerS, r.ImagesPerS, r.Factor, r.TTFT} {
				if bad(f) {
					return fmt.Errorf("model %s replica %d: %v is not a measured amount", m.Model, r.Replica, f)
				}
			}
		}
	}
	return nil
}

// WriteText writes the speeds as a table: per model, its samples, the
// serving time they cover, the registry's speed and the estimate (token
// equivalents per second per A800-equivalent), their ratio with its 95 %
// interval and the mean time to first token; under each model, what each
// replica did per second of serving.
func (s *Speeds) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "measured speeds (the node's factor, taken for a model with no measurement of its own: %.2f× the registry's):\n", s.Node.Factor)
	tw := tabwriter.NewWriter(ew, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tSAMPLES\tSERVED\tREGISTRY TOK/S\tESTIMATE TOK/S\tFACTOR\t95 %\tTTFT")
	for _, m := range s.Models {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.0f\t%.0f\t%.2f×\t%.2f–%.2f\t%s\n", m.Model, m.Samples,
			Seconds(m.Seconds), m.RegistryTokensPerS, m.TokensPerS, m.Factor, m.Low, m.High, ttftText(m.TTFT))
		for _, r := range m.Replicas {
			img := "-"
			if r.ImagesPerS > 0 {
				img = fmt.Sprintf("%.1f img/s", r.ImagesPerS)
			}
			fmt.Fprintf(tw, "  r%d, TP%d on %s\t%d\t%s\t\t%.0f served\t\t%s\t%s\n", r.Index, r.TP, placement.GPUList(r.GPUs),
				r.Samples, Seconds(r.Seconds), r.TokensPerS, img, ttftText(r.TTFT))
		}
	}
	tw.Flush()
	return ew.err
}

func ttftText(s float64) string {
	if s <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fs", s)
}

// Calibrated returns the speed the registry should give each model whose
// GPUs were measured (an informative sample): its estimate in token
// equivalents per second per A800-equivalent, the registry field
// speed_tokens_per_s. Models held back only by their image preprocessing
// say nothing of their GPUs and are left out.
func (s *Speeds) Calibrated() map[string]float64 {
	out := map[string]float64{}
	for _, m := range s.Models {
		if m.Informative > 0 && m.TokensPerS > 0 {
			out[m.Model] = m.TokensPerS
		}
	}
	return out
}
