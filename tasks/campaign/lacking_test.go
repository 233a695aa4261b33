package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks/dataset"
)

// TestRunNamesItemsLackingImagesBeforeItStarts (issue 12, item 19): when
// the prepared manifest records an image prep could not make, the run
// says which item lacks it, and why, before any engine starts, and runs
// the other items.
func TestRunNamesItemsLackingImagesBeforeItStarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real engine process")
	}
	data, prepDir := fixture(t)
	man, err := dataset.LoadPrepared(prepDir)
	if err != nil {
		t.Fatal(err)
	}
	// A prepared folder with the overviews only, P01's recorded as failed.
	lacking := t.TempDir()
	for i := range man.Patients {
		p := &man.Patients[i]
		ov := p.Overview
		*p = dataset.PreparedPatient{ID: p.ID}
		if ov == nil {
			continue
		}
		if p.ID == "P01" {
			p.Failed = []dataset.ImageFailure{{Path: ov.Path, Kind: dataset.KindOverview, Reason: "slide P01/pathology/slide.png: decode: unexpected EOF"}}
			continue
		}
		p.Overview = ov
		b, err := os.ReadFile(filepath.Join(prepDir, ov.Path))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(lacking, p.ID), 0o755)
		os.WriteFile(filepath.Join(lacking, ov.Path), b, 0o644)
	}
	b, _ := json.Marshal(man)
	os.WriteFile(filepath.Join(lacking, "manifest.json"), b, 0o644)

	src := fmt.Sprintf(`
name: lacking
node: fake:h100-sxm-4
output: run
dataset: {raw: %q, prepared: %q}
tasks: [pathology]
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
models:
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, oracle]}
`, data, lacking)
	c, err := configs.ParseCampaign("lacking.yaml", t.TempDir(), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var log bytes.Buffer
	o, err := Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Out: io.Discard, Log: &log, Timing: testTiming()})
	// The item left out is no silent drop: the run is incomplete (exit 3),
	// and the score files name the item and why.
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "1 item(s) of the dataset could not be made") {
		t.Fatalf("campaign: %v, want it incomplete for the item left out\n%s", err, log.String())
	}
	lines := strings.Split(log.String(), "\n")
	const reason = "lacks 1 image(s) that `npcorch prep` could not make: P01/overview.png (slide P01/pathology/slide.png: decode: unexpected EOF); fix the inputs and run `npcorch prep` again"
	want := "item problem: pathology/P01: " + reason
	if !strings.HasPrefix(lines[0], want) {
		t.Errorf("the run's first line is %q; want it to start %q\n%s", lines[0], want, log.String())
	}
	if m := o.Results.Models[0]; m.Answered == 0 || m.Missing != 0 {
		t.Errorf("the other patients' items: %d answered, %d missing", m.Answered, m.Missing)
	}
	md, err := os.ReadFile(filepath.Join(o.RunDir, "scores.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "**Left out: 1 item(s) of the dataset could not be made**") || !strings.Contains(string(md), "- pathology/P01: "+reason) {
		t.Errorf("scores.md does not name the item left out:\n%s", md)
	}
	var sj struct {
		LeftOut []struct{ Item, Reason string } `json:"left_out"`
	}
	raw, err := os.ReadFile(filepath.Join(o.RunDir, "scores.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sj); err != nil || len(sj.LeftOut) != 1 || sj.LeftOut[0].Item != "pathology/P01" || sj.LeftOut[0].Reason != reason {
		t.Errorf("scores.json left_out = %+v (%v), want pathology/P01 and why", sj.LeftOut, err)
	}
}
