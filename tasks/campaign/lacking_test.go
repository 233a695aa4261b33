package campaign

import (
	"bytes"
	"context"
	"encoding/json"
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
	if err != nil {
		t.Fatalf("campaign: %v\n%s", err, log.String())
	}
	lines := strings.Split(log.String(), "\n")
	want := "item problem: pathology/P01: lacks 1 image(s) that `npcorch prep` could not make: P01/overview.png (slide P01/pathology/slide.png: decode: unexpected EOF)"
	if !strings.HasPrefix(lines[0], want) {
		t.Errorf("the run's first line is %q; want it to start %q\n%s", lines[0], want, log.String())
	}
	if m := o.Results.Models[0]; m.Answered == 0 || m.Missing != 0 {
		t.Errorf("the other patients' items: %d answered, %d missing", m.Answered, m.Missing)
	}
}
