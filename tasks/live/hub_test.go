package live_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

func TestHubCountsWhatTheCampaignJournaled(t *testing.T) {
	dir := t.TempDir()
	h, _ := hub(t, dir)
	// A resumed run: one answer and one request not run before it; the
	// latter is sent again, so only the answer counts.
	prior := []journal.Record{answered(modelA, "pathology", "right", 100, 10, time.Second, 0), notRun(modelA, "pathology")}
	h.Post(begin(prior...))
	for _, rec := range []journal.Record{
		answered(modelA, "pathology", "right", 1000, 100, 300*time.Millisecond, 40*time.Millisecond),
		answered(modelA, "pathology", "wrong", 1000, 100, 2*time.Second, 400*time.Millisecond),
		answered(modelA, "pathology", "???", 1000, 100, 30*time.Second, 3*time.Second),
		answered(modelA, "sequence", "right", 500, 50, time.Second, 0),
		notRun(modelA, "sequence"),
		answered(modelB, "sequence", "-", 200, 20, time.Second, 0),
	} {
		h.Post(live.Journaled{Record: rec})
	}
	h.Post(live.ModelEnded{Model: modelA})
	s := await(t, h, "every journaled request", func(s *live.Snapshot) bool { return s.Totals.Answered+s.Totals.NotRun == 7 })

	tot := s.Totals
	if tot.Requests != 20 || tot.Answered != 6 || tot.NotRun != 1 || tot.Remaining != 13 || tot.Correct != 3 || tot.Wrong != 1 || tot.Invalid != 1 || tot.Ungraded != 1 {
		t.Errorf("totals = %+v", tot)
	}
	// "an unreadable answer counts wrong": accuracy is correct over graded.
	if tot.Accuracy == nil || *tot.Accuracy != 0.6 {
		t.Errorf("accuracy = %v, want 3/5", tot.Accuracy)
	}
	a := model(t, s, modelA)
	if a.State != live.ModelPartial {
		t.Errorf("%s ended with a request not run: state %s, want partial", modelA, a.State)
	}
	path := task(t, a, "pathology")
	if path.Answered != 4 || path.Remaining != 0 || *path.Accuracy != 0.5 {
		t.Errorf("pathology = %+v", path.Counts)
	}
	// /metrics counts this run only: the earlier answer is not in it.
	if r := path.ThisRun; r.Correct != 1 || r.Wrong != 1 || r.Invalid != 1 || r.PromptTokens != 3000 || r.CompletionTokens != 300 {
		t.Errorf("pathology this run = %+v", r)
	}
	d := path.Duration
	if d.Count != 3 || d.Sum != 32.3 {
		t.Errorf("duration histogram: %d observations summing to %g, want 3 and 32.3", d.Count, d.Sum)
	}
	for i, b := range d.Bounds {
		want := uint64(0)
		for _, v := range []float64{0.3, 2, 30} {
			if v <= b {
				want++
			}
		}
		if d.Counts[i] != want {
			t.Errorf("duration bucket le=%g holds %d, want %d", b, d.Counts[i], want)
		}
	}
	if task(t, a, "sequence").TTFT.Count != 0 {
		t.Error("an answer without a first-token time was counted in the TTFT histogram")
	}
	b := model(t, s, modelB)
	if b.State != live.ModelWaiting || b.Accuracy != nil || b.Ungraded != 1 {
		t.Errorf("%s: state %s, accuracy %v, %d ungraded; want waiting, none, 1", modelB, b.State, b.Accuracy, b.Ungraded)
	}

	// The end is written to RUN/status.json, the run's last word.
	if err := h.Close(live.Ended{State: live.RunIncomplete, Err: errors.New("1 request not run\nmore")}); err != nil {
		t.Fatal(err)
	}
	got, err := live.ReadStatusFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(h.Latest().Snap)
	if data, _ := json.Marshal(got); string(data) != string(want) {
		t.Errorf("status.json is not the last view:\n%s\n%s", data, want)
	}
	if got.State != live.RunIncomplete || got.Error != "1 request not run" || model(t, got, modelB).State != live.ModelStopped {
		t.Errorf("the end: state %s, error %q, %s %s", got.State, got.Error, modelB, model(t, got, modelB).State)
	}
}

func TestHubFollowsEngines(t *testing.T) {
	h, _ := hub(t, "")
	h.Post(begin())
	at := t0.Add(time.Minute)
	ev := func(kind launcher.ReplicaEventKind, attempt int, err error) live.EngineEvent {
		at = at.Add(time.Second)
		return live.EngineEvent{ReplicaEvent: launcher.ReplicaEvent{Time: at, Kind: kind, Model: modelA, Replica: 1, Attempt: attempt, Err: err,
			Endpoint: launcher.Endpoint{BaseURL: "http://127.0.0.1:8001/v1", APIKey: "sk-secret"}, Log: "/run/engines/a-r1.log"}}
	}
	h.Post(live.Assigned{Model: modelA, Replica: 1, TP: 2, GPUs: []int{2, 3}, At: at})
	h.Post(ev(launcher.ReplicaStarting, 0, nil))
	s := await(t, h, "a starting engine", func(s *live.Snapshot) bool { return len(s.Engines) == 1 && s.Engines[0].State == "starting" })
	if st := model(t, s, modelA).State; st != live.ModelStarting {
		t.Errorf("model with a starting engine: %s", st)
	}
	h.Post(ev(launcher.ReplicaReady, 0, nil))
	s = await(t, h, "a ready engine", func(s *live.Snapshot) bool { return s.Engines[0].State == "ready" })
	if st := model(t, s, modelA).State; st != live.ModelServing {
		t.Errorf("model with a ready engine: %s", st)
	}
	crash := &launcher.EngineError{Model: modelA, Replica: 1, Kind: launcher.FailureExited, Detail: "exit status 1",
		Tail: []string{"CUDA error: an illegal memory access", "RuntimeError: engine core died"}}
	h.Post(ev(launcher.ReplicaCrashed, 0, crash))
	h.Post(ev(launcher.ReplicaRestarting, 1, nil))
	s = await(t, h, "a restarting engine", func(s *live.Snapshot) bool { return s.Engines[0].State == "restarting" })
	e := s.Engines[0]
	if e.Restarts != 1 || e.LastCrash == nil || !strings.Contains(e.Error, "exit status 1") || len(e.ErrorLines) != 2 || e.TP != 2 || len(e.GPUs) != 2 {
		t.Errorf("engine after a crash = %+v", e)
	}
	if data, _ := json.Marshal(s); strings.Contains(string(data), "sk-secret") {
		t.Error("the engine's API key is in the snapshot")
	}
	h.Post(live.ModelEnded{Model: modelA, Abandoned: "its engines failed 3 times\ndetails"})
	h.Post(live.ModelEnded{Model: modelA, Err: errors.New("pool closed")}) // its runner ends after
	s = await(t, h, "the model abandoned", func(s *live.Snapshot) bool { return model(t, s, modelA).State == live.ModelFailed })
	if n := model(t, s, modelA).Note; n != "its engines failed 3 times" {
		t.Errorf("note = %q", n)
	}
}

func TestHubEstimatesTheTimeLeftFromMeasuredPace(t *testing.T) {
	h, c := hub(t, "")
	h.Post(begin())
	s := await(t, h, "the campaign begun", func(s *live.Snapshot) bool { return len(s.Models) == 2 })
	if s.ETA.RemainingS != nil || !strings.Contains(s.ETA.Basis, "nothing measured") {
		t.Errorf("ETA before any answer: %+v", s.ETA)
	}
	c.Set(10 * time.Second)
	// Two answers of 1000 prompt + 100 completion tokens: 1500 token
	// equivalents each (prompt + 5 × completion).
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 1000, 100, time.Second, 0)})
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 1000, 100, time.Second, 0)})
	await(t, h, "two answers", func(s *live.Snapshot) bool { return s.Totals.Answered == 2 })
	c.Set(20 * time.Second)
	h.Post(live.Journaled{Record: answered("not-in-the-campaign", "pathology", "right", 1, 1, 0, 0)}) // publishes a view at the new time
	s = await(t, h, "the clock at 20 s", func(s *live.Snapshot) bool { return s.ElapsedS == 20 })
	a := model(t, s, modelA)
	// 3000 token equivalents over the 10 s since the first answer; 8
	// requests left at 1500 each: 12000 at 300/s.
	if a.WorkPerS != 300 || a.TokensPerS != 20 || a.ETA.RemainingS == nil || *a.ETA.RemainingS != 40 {
		t.Errorf("%s: %g work/s, %g tokens/s, ETA %v; want 300, 20, 40 s", modelA, a.WorkPerS, a.TokensPerS, a.ETA.RemainingS)
	}
	if b := model(t, s, modelB); b.ETA.RemainingS != nil {
		t.Errorf("%s answered nothing yet has an ETA of %g s", modelB, *b.ETA.RemainingS)
	}
	// The campaign: A's 12000 and B's planned 15000 at the node's 300/s.
	if s.ETA.RemainingS == nil || *s.ETA.RemainingS != 90 || !s.ETA.At.Equal(t0.Add(110*time.Second)) {
		t.Errorf("campaign ETA = %+v, want 90 s", s.ETA)
	}
}

func TestHubWaitsAreBounded(t *testing.T) {
	h, _ := hub(t, "")
	v := h.Latest()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := h.Next(ctx, v.Seq); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with nothing new: %v, want the context's deadline", err)
	}
	h.Post(begin())
	h.Close(live.Ended{State: live.RunFinished})
	last, err := h.Next(context.Background(), v.Seq)
	if err != nil || last.Snap.State != live.RunFinished {
		t.Fatalf("Next after Close: %v, %v; want the last view", last, err)
	}
	if _, err := h.Next(context.Background(), last.Seq); !errors.Is(err, live.ErrClosed) {
		t.Fatalf("Next past the last view of a closed hub: %v, want ErrClosed", err)
	}
	h.Post(live.Journaled{Record: answered(modelA, "pathology", "right", 1, 1, 0, 0)}) // dropped, never blocks
	if h.Latest().Seq != last.Seq {
		t.Error("a closed hub published again")
	}
}

func TestReadStatusFileNamesTheFileAndWhatIsWrong(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, live.StatusFile)
	for _, c := range []struct{ data, want string }{
		{`{"format": "npcorch-status/9"}`, `format "npcorch-status/9"`},
		{`{"format": "npcorch-st`, "unexpected end of JSON"},
	} {
		os.WriteFile(path, []byte(c.data), 0o644)
		_, err := live.ReadStatusFile(dir)
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want the file named and %q", c.data, err, c.want)
		}
	}
}

// TestStatusFileIsReadableAsAnyFile: status.json is made 0666 less the
// umask, as the run's other files, so that a group's share can run
// `npcorch status` on it.
func TestStatusFileIsReadableAsAnyFile(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := t.TempDir()
	h, _ := hub(t, dir)
	h.Post(begin())
	if err := h.Close(live.Ended{State: live.RunFinished}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, live.StatusFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("status.json is %v, want -rw-r--r-- under umask 022", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestHubSaysWhenTheWaitingModelsArePlannedToStart(t *testing.T) {
	h, _ := hub(t, "")
	h.Post(begin())
	h.Post(live.Planned{Plan: &schedule.Plan{Makespan: 900, Waves: []schedule.Wave{
		{Model: modelA, GPUs: [][]int{{0}}, Start: 0, Ready: 30, End: 400},
		{Model: modelB, GPUs: [][]int{{0}}, Start: 400, Ready: 430, End: 800},
		{Model: modelB, GPUs: [][]int{{1}}, Start: 410, Ready: 440, End: 900},
	}}})
	h.Post(live.Assigned{Model: modelA, TP: 1, GPUs: []int{0}, At: t0})
	h.Post(live.EngineEvent{ReplicaEvent: launcher.ReplicaEvent{Time: t0, Kind: launcher.ReplicaReady, Model: modelA}})
	s := await(t, h, "the plan", func(s *live.Snapshot) bool { return s.Timeline.PlannedS == 900 && len(s.Engines) == 1 })
	if a := model(t, s, modelA); a.PlannedStartS != nil {
		t.Errorf("%s serves, yet has a planned start", modelA)
	}
	b := model(t, s, modelB)
	if b.State != live.ModelWaiting || b.PlannedStartS == nil || *b.PlannedStartS != 400 {
		t.Errorf("%s: %s, planned start %v; want waiting, 400 s", modelB, b.State, b.PlannedStartS)
	}
	var out strings.Builder
	live.WriteText(&out, s)
	if !strings.Contains(out.String(), modelB+": waiting; the plan starts it at 6m40s") {
		t.Errorf("the summary does not say what %s waits for:\n%s", modelB, out.String())
	}
	planned := 0
	for _, bar := range s.Timeline.Bars {
		if bar.Kind == live.BarPlanned {
			planned++
		}
	}
	if planned != 3 {
		t.Errorf("%d planned bars, want one per replica of each wave: 3", planned)
	}
}
