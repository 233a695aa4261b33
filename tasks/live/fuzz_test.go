package live_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// FuzzStatusFile: whatever a run folder's status.json holds, `npcorch
// status` reads it or says what is wrong, and never panics.
func FuzzStatusFile(f *testing.F) {
	h := live.NewHub(live.HubOptions{Campaign: "fuzz", Now: func() time.Time { return t0 }})
	h.Post(begin())
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 10, 1, time.Second, 0)})
	h.Close(live.Ended{State: live.RunFinished})
	seed, _ := json.Marshal(h.Latest().Snap)
	f.Add(seed)
	f.Add([]byte(`{"format":"npcorch-status/1","state":"running","pid":-1,"models":[{"model":"m","tasks":[{"task":"t","requests":-5}]}]}`))
	f.Add([]byte(`{"format":"npcorch-status/1","totals":{"accuracy":1e309}}`))
	records := map[string]journal.Record{"k": answered(modelA, "pathology", "wrong", 1, 1, 0, 0), "n": notRun("m", "t")}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, live.StatusFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := live.ReadStatusFile(dir)
		if err != nil {
			return
		}
		s = live.Recount(s, records, nil)
		live.CheckAlive(s, t0, "npcorch run -c c.yaml --resume")
		if err := live.WriteText(io.Discard, s); err != nil {
			t.Fatal(err)
		}
	})
}
