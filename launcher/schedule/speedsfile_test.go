package schedule

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sampleSpeeds() *Speeds {
	return &Speeds{Node: NodeSpeed{Factor: 0.8, LogSD: 0.2}, Models: []ModelSpeed{
		{Model: "A", RegistryTokensPerS: 1000, TokensPerS: 511, Factor: 0.511, Low: 0.43, High: 0.61, LogSD: 0.09,
			Samples: 2, Informative: 2, Seconds: 600, Work: 300000, Images: 1200, TTFT: 0.4,
			Replicas: []ReplicaSpeed{{Replica: 7, Index: 1, TP: 2, GPUs: []int{0, 1}, Samples: 2, Seconds: 600, TokensPerS: 500, ImagesPerS: 2, Factor: 0.5, TTFT: 0.4}}},
		{Model: "B", RegistryTokensPerS: 2000, TokensPerS: 1600, Factor: 0.8, Low: 0.5, High: 1.3, LogSD: 0.25,
			Samples: 1, Informative: 0, Seconds: 60, Work: 1000},
	}}
}

// TestReadSpeedsReadsWhatACampaignWrites: a speeds file round-trips; a
// damaged or foreign one is refused with its path and what is wrong.
func TestReadSpeedsReadsWhatACampaignWrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SpeedsFile)
	data, err := json.MarshalIndent(sampleSpeeds(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSpeeds(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, sampleSpeeds()) {
		t.Errorf("read %+v, want what was written", got)
	}
	for name, body := range map[string]string{
		"truncated":        string(data[:len(data)/2]),
		"negative factor":  `{"node":{"factor":-1,"log_sd":0},"models":[]}`,
		"model twice":      `{"node":{"factor":1,"log_sd":0},"models":[{"model":"A"},{"model":"A"}]}`,
		"unnamed model":    `{"node":{"factor":1,"log_sd":0},"models":[{"tokens_per_s":5}]}`,
		"negative replica": `{"node":{"factor":1,"log_sd":0},"models":[{"model":"A","replicas":[{"replica":0,"tokens_per_s":-3}]}]}`,
		"unknown field":    `{"node":{"factor":1},"models":[],"speed":3}`,
	} {
		if _, err := DecodeSpeeds("RUN/speeds.json", []byte(body)); err == nil || !strings.Contains(err.Error(), "RUN/speeds.json") {
			t.Errorf("%s: error %v; want a refusal naming the file", name, err)
		}
	}
	if _, err := ReadSpeeds(filepath.Join(dir, "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("missing file: %v", err)
	}
}

// TestCalibratedKeepsOnlyMeasuredGPUs: a model none of whose samples said
// anything about its GPUs (held back by preprocessing) gets no override.
func TestCalibratedKeepsOnlyMeasuredGPUs(t *testing.T) {
	got := sampleSpeeds().Calibrated()
	if want := map[string]float64{"A": 511}; !reflect.DeepEqual(got, want) {
		t.Errorf("calibrated %v, want %v", got, want)
	}
	var text strings.Builder
	if err := sampleSpeeds().WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"A 2 10m00s 1000 511 0.51× 0.43–0.61 0.40s", "r1, TP2 on GPUs 0 and 1 2 10m00s 500 served 2.0 img/s 0.40s"} {
		found := false
		for _, line := range strings.Split(text.String(), "\n") {
			found = found || strings.Join(strings.Fields(line), " ") == want
		}
		if !found {
			t.Errorf("table lacks %q:\n%s", want, text.String())
		}
	}
}

func FuzzDecodeSpeeds(f *testing.F) {
	data, _ := json.Marshal(sampleSpeeds())
	f.Add(data)
	f.Add([]byte(`{"node":{"factor":1e308},"models":[{"model":"x","factor":1e400}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := DecodeSpeeds("fuzz", b)
		if err != nil {
			return
		}
		var text strings.Builder
		if err := s.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		_ = s.Calibrated()
	})
}
