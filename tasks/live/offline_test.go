package live_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// running is the snapshot of a running campaign with one serving model.
func running(t *testing.T) *live.Snapshot {
	t.Helper()
	h, _ := hub(t, "")
	h.Post(begin())
	h.Post(live.Assigned{Model: modelA, Replica: 0, TP: 1, GPUs: []int{0}, At: t0})
	h.Post(live.EngineEvent{ReplicaEvent: launcher.ReplicaEvent{Time: t0, Kind: launcher.ReplicaReady, Model: modelA}})
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 1000, 100, time.Second, 0)})
	return await(t, h, "a serving model", func(s *live.Snapshot) bool {
		return s.State == live.RunRunning && s.Totals.Answered == 1 && model(t, s, modelA).State == live.ModelServing
	})
}

func TestCheckAliveCallsARunWhoseProcessIsGoneGone(t *testing.T) {
	host, _ := os.Hostname()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Minute)
	for _, c := range []struct {
		name      string
		host      string
		pid       int
		updated   time.Time
		gone      bool
		errorWant string
	}{
		{"its process exited", host, dead.Process.Pid, now, true, "is gone: it crashed or was killed"},
		{"this process runs it", host, os.Getpid(), now.Add(-5 * time.Second), false, ""},
		{"another host, fresh", "node-b", 4242, now.Add(-5 * time.Second), false, ""},
		{"another host, silent", "node-b", 4242, now.Add(-live.Stale - time.Second), true, "has not moved for 31s"},
	} {
		s := running(t)
		s.Host, s.PID, s.Updated = c.host, c.pid, c.updated
		live.CheckAlive(s, now, "npcorch run -c c.yaml --out run --repeat 2 --resume")
		if got := s.State == live.RunGone; got != c.gone {
			t.Errorf("%s: state %s", c.name, s.State)
			continue
		}
		if !c.gone {
			continue
		}
		if !strings.Contains(s.Error, c.errorWant) || !strings.Contains(s.Error, "`npcorch run -c c.yaml --out run --repeat 2 --resume`") {
			t.Errorf("%s: error %q; want %q and how to continue", c.name, s.Error, c.errorWant)
		}
		if st := model(t, s, modelA).State; st != live.ModelStopped || s.ETA.RemainingS != nil {
			t.Errorf("%s: the serving model is %s, the ETA %v", c.name, st, s.ETA.RemainingS)
		}
	}
	s := running(t)
	s.State, s.PID = live.RunFinished, dead.Process.Pid
	live.CheckAlive(s, now, "npcorch run -c c.yaml --resume")
	if s.State != live.RunFinished {
		t.Errorf("a finished run became %s", s.State)
	}
}

func TestRecountTakesTheJournalsCounts(t *testing.T) {
	s := running(t) // its status file saw one answer
	records := map[string]journal.Record{}
	for _, rec := range []journal.Record{
		answered(modelA, "pathology", "right", 1, 1, 0, 0),
		answered(modelA, "pathology", "wrong", 1, 1, 0, 0),
		answered(modelA, "pathology", "???", 1, 1, 0, 0),
		notRun(modelA, "sequence"),
		answered(modelB, "sequence", "right", 1, 1, 0, 0),
	} {
		records[rec.Key] = rec
	}
	got := live.Recount(s, records, grade)
	if tot := got.Totals; tot.Answered != 4 || tot.NotRun != 1 || tot.Remaining != 15 || tot.Correct != 2 || tot.Invalid != 1 || *tot.Accuracy != 0.5 {
		t.Errorf("recounted totals = %+v", tot)
	}
	if s.Totals.Answered != 1 {
		t.Error("Recount changed the snapshot it was given")
	}
	// Without the dataset the grading stays the status file's: the
	// answers it had not seen are ungraded, not guessed.
	got = live.Recount(s, records, nil)
	if a := task(t, model(t, got, modelA), "pathology"); a.Answered != 3 || a.Correct != 1 || a.Ungraded != 2 {
		t.Errorf("recount without grading: %+v", a.Counts)
	}
}

func TestWriteTextSummarisesTheRun(t *testing.T) {
	h, _ := hub(t, "")
	h.Post(begin())
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 1000, 100, time.Second, 0)})
	h.Post(live.Journaled{Record: notRun(modelA, "sequence")})
	h.Post(live.Assigned{Model: modelB, Replica: 1, TP: 2, GPUs: []int{0, 1}, At: t0})
	crash := &launcher.EngineError{Model: modelB, Replica: 1, Kind: launcher.FailureOOM, Tail: []string{"torch.OutOfMemoryError: CUDA out of memory"}}
	h.Post(live.EngineEvent{ReplicaEvent: launcher.ReplicaEvent{Time: t0, Kind: launcher.ReplicaFailed, Model: modelB, Replica: 1, Err: crash}})
	h.Post(live.ModelEnded{Model: modelB, Abandoned: "its engine ran out of memory"})
	h.Close(live.Ended{State: live.RunIncomplete, Err: errors.New("1 request not run")})
	var b bytes.Buffer
	if err := live.WriteText(&b, h.Latest().Snap); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"campaign test — incomplete: 1 request not run",
		"answered 1 of 20, 1 not run, 18 remaining; accuracy so far 100.0 %",
		modelB + "/r1 on GPUs 0,1: failed",
		"| torch.OutOfMemoryError: CUDA out of memory",
		modelB + ": its engine ran out of memory",
		// The column counts items; scores.md gives L4 per patient.
		"(ACCURACY: answered items right so far; the score files give each task the paper's measure: L4 per patient",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`(?m)^\s*` + modelA + `\s+stopped\s+1/10\s+1\s+0\s+8\s+100\.0 %`).MatchString(out) {
		t.Errorf("%s's row is not as expected:\n%s", modelA, out)
	}
}
