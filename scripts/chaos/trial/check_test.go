package trial

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
)

// fakeRun writes a run directory holding score files and one journal file
// with the given records, and returns the trial folder.
func fakeRun(t *testing.T, scores string, recs []journal.Record, extra string) string {
	t.Helper()
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if err := os.MkdirAll(filepath.Join(run, "journal", "M"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range ScoreFiles {
		if err := os.WriteFile(filepath.Join(run, f), []byte(scores+f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	for _, r := range recs {
		line, _ := json.Marshal(r)
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString(extra)
	if err := os.WriteFile(filepath.Join(run, "journal", "M", "pathology.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func answered(key string) journal.Record {
	return journal.Record{Key: key, Item: "pathology/" + key, Task: "pathology", Model: "M", Status: journal.StatusAnswered,
		Answer: &inference.Answer{Content: "A"}}
}

func benchFor(scores string, keys ...string) *Bench {
	b := &Bench{scores: map[string][]byte{}, keys: map[string]bool{}, settle: 200 * time.Millisecond}
	for _, f := range ScoreFiles {
		b.scores[f] = []byte(scores + f)
	}
	for _, k := range keys {
		b.keys[k] = true
	}
	return b
}

// The checks must catch every broken promise, or a passing chaos trial
// proves nothing.
func TestCheckCatchesEveryBrokenPromise(t *testing.T) {
	notRun := journal.Record{Key: "k2", Item: "pathology/k2", Task: "pathology", Model: "M", Status: journal.StatusNotRun,
		Failures: []string{"server_error (HTTP 503): x"}, Attempts: 1}
	cases := []struct {
		name   string
		scores string
		recs   []journal.Record
		extra  string
		want   []string // substrings of the mismatches, in any order; none: clean
	}{
		{"clean, a not-run line before the answer", "S", []journal.Record{answered("k1"), notRun, answered("k2")}, "", nil},
		{"answered twice", "S", []journal.Record{answered("k1"), answered("k2"), answered("k2")}, "", []string{"request k2 answered 2 times"}},
		{"never answered", "S", []journal.Record{answered("k1"), notRun}, "", []string{"request k2 never answered"}},
		{"answered but unknown", "S", []journal.Record{answered("k1"), answered("k2"), answered("k3")}, "", []string{"request k3 answered but not part"}},
		{"scores differ", "T", []journal.Record{answered("k1"), answered("k2")}, "", []string{"scores.json differs", "scores.csv differs", "scores.md differs"}},
		{"a line that is no record", "S", []journal.Record{answered("k1"), answered("k2")}, "{\"oops\":\n", []string{"line 3 is not a record"}},
		{"a torn last line", "S", []journal.Record{answered("k1"), answered("k2")}, `{"key":"k9"`, []string{"the last line is incomplete"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := fakeRun(t, c.scores, c.recs, c.extra)
			res := Result{}
			benchFor("S", "k1", "k2").check(&res, dir, filepath.Join(dir, "run"), map[int]bool{})
			if len(c.want) == 0 && len(res.Mismatches) > 0 {
				t.Fatalf("clean run reported %q", res.Mismatches)
			}
			all := strings.Join(res.Mismatches, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("mismatches lack %q:\n%s", w, all)
				}
			}
			if c.name == "clean, a not-run line before the answer" && (res.Items != 2 || res.NotRun != 1 || res.FailedAttempts != 1) {
				t.Errorf("counts: %+v", res)
			}
		})
	}
}

func TestCheckFindsAndEndsALeftoverProcess(t *testing.T) {
	if _, err := exec.LookPath("tail"); err != nil {
		t.Skip("no tail")
	}
	dir := fakeRun(t, "S", []journal.Record{answered("k1")}, "")
	// A process that carries the trial folder on its command line, as an
	// orphaned engine would.
	cmd := exec.Command("tail", "-f", filepath.Join(dir, "run", "scores.md"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	res := Result{}
	benchFor("S", "k1").check(&res, dir, filepath.Join(dir, "run"), map[int]bool{})
	if !strings.Contains(strings.Join(res.Mismatches, "\n"), "process left after the run") {
		t.Errorf("leftover process not reported: %q", res.Mismatches)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("the leftover process exited by itself instead of being ended")
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Error("the leftover process was not ended")
	}
}

func TestPlansDealEveryFaultAndRepeat(t *testing.T) {
	a, b := Plans(3, 20, 100), Plans(3, 20, 100)
	seen := map[Fault]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("plan %d differs between two draws of the same seed: %+v %+v", i, a[i], b[i])
		}
		if a[i].After < 10 || a[i].After >= 80 {
			t.Errorf("plan %d fires after %d of 100 lines, outside 10..79", i, a[i].After)
		}
		seen[a[i].Fault]++
	}
	for _, f := range Faults {
		if seen[f] != 5 {
			t.Errorf("%s planned %d times in 20, want 5", f, seen[f])
		}
	}
	if c := Plans(4, 20, 100); c[0] == a[0] && c[1] == a[1] && c[2] == a[2] {
		t.Error("another seed drew the same moments")
	}
}
