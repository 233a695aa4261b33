package campaign

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// TestFreshRunLeavesABusyFolderAlone: a fresh start (the demo's) empties
// the run folder only once it holds the folder's lock; a folder another
// run holds is refused untouched. Before, the demo removed its run folder
// first, under a demo still running there.
func TestFreshRunLeavesABusyFolderAlone(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "run")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockRunDir(runDir, "npcorch run") // the other run
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(runDir, "left-by-an-earlier-run.txt")
	if err := os.WriteFile(marker, []byte("answers"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, prepDir := fixture(t)
	src := fmt.Sprintf("output: run\nnode: fake:h100-sxm-4\ndataset: {raw: %q, prepared: %q}\ntasks: [pathology]\nmodels:\n  - {name: Lingshu-7B, engine: {kind: sim}}\n", data, prepDir)
	c, err := configs.ParseCampaign("fresh.yaml", dir, []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), Options{Campaign: c, Fresh: true, Out: io.Discard, Log: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "is in use by npcorch run (pid") {
		t.Fatalf("fresh run on a busy folder: %v, want it refused", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the busy folder lost what it held: %v", err)
	}
	// Once free, a fresh run empties it (cut short at once: the rest
	// does not matter here).
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = Run(ctx, Options{Campaign: c, Fresh: true, Out: io.Discard, Log: io.Discard, Timing: testTiming()})
	if _, err := os.Stat(marker); err == nil {
		t.Error("a fresh run kept what an earlier run left")
	}
}
