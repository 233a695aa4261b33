package schedule

import (
	"reflect"
	"strings"
	"testing"

	"github.com/npcorch/npcorch/configs"
)

// TestCrashLoopingModelIsAbandonedAcrossReplicas is issue 25's engine
// that crashes after every request: its replica r0 spent its own restarts
// and failed, and the scheduler placed r1 on other GPUs with a fresh
// budget, then r2, for hours. Now the crashes of all the model's replicas
// count against one budget (Policy.MaxModelRestarts): past it the model is
// abandoned with the reason, its live replica stopped and no replica
// started for it again, while the other model goes on.
func TestCrashLoopingModelIsAbandonedAcrossReplicas(t *testing.T) {
	m, n := small("M"), small("N")
	m.Engine.TensorParallel, m.Engine.Replicas = 1, 1
	n.Engine.TensorParallel, n.Engine.Replicas = 1, 1
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(4), Models: []configs.Model{m, n}, Workloads: []Workload{work("M", 4000), work("N", 3000)},
		Estimator: fixed, Policy: Policy{MaxModelRestarts: 3}}, rec)
	s.Begin()
	if got, want := rec.take(), []string{"start M [0]", "start N [1]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first decisions %q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
	for i := range 3 {
		handle(t, s, Event{Kind: EventCrashed, At: at(110 + 10*i), Replica: 1, Err: "engine exited: status 1"})
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("after 3 crashes, within the budget of 3: %q, want nothing (the backend restarts the engine)", got)
	}
	// r0 spent its own restarts: the model is re-planned on another GPU,
	// as before.
	handle(t, s, Event{Kind: EventFailed, At: at(150), Replica: 1, Err: "gave up after 2 restarts; last: engine exited: status 1"})
	if got, want := rec.take(), []string{"start M [2]"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after r0 failed: %q, want %q", got, want)
	}
	handle(t, s, Event{Kind: EventReady, At: at(250), Replica: 3})
	handle(t, s, Event{Kind: EventCrashed, At: at(260), Replica: 3, Err: "engine exited: status 1\nTraceback …"})
	wantNote := "its engines crashed 4 times after they were ready (replicas r0, r1), more than the 3 restarts a model gets (launch.max_model_restarts); last: engine exited: status 1"
	if got, want := rec.take(), []string{"stop M [2]", "abandon M: " + wantNote}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the 4th crash: %q, want %q", got, want)
	}
	// A crash reported while the stop goes on changes nothing.
	handle(t, s, Event{Kind: EventCrashed, At: at(262), Replica: 3, Err: "engine exited"})
	handle(t, s, Event{Kind: EventStopped, At: at(265), Replica: 3})
	for _, c := range rec.take() {
		if strings.HasPrefix(c, "start M") || strings.HasPrefix(c, "abandon") {
			t.Errorf("after the model was abandoned: %q", c)
		}
	}
	handle(t, s, Event{Kind: EventFinished, At: at(3100), Model: "N"})
	handle(t, s, Event{Kind: EventStopped, At: at(3110), Replica: 2})
	if !s.Done() {
		t.Fatal("not Done once N finished and M was abandoned")
	}
	for _, pm := range s.Plan().Models {
		want := map[string]ModelStatus{"M": StatusFailed, "N": StatusDone}[pm.Model]
		if pm.Status != want {
			t.Errorf("%s is %s, want %s", pm.Model, pm.Status, want)
		}
		if pm.Model == "M" && pm.Note != wantNote {
			t.Errorf("M's note %q, want %q", pm.Note, wantNote)
		}
	}
}

// TestModelRestartsDefault: with Policy.MaxModelRestarts 0 a model gets
// DefaultMaxModelRestarts crashes; the next abandons it. Crashes of a
// model that finished, while its replicas stop, do not count.
func TestModelRestartsDefault(t *testing.T) {
	m := small("M")
	m.Engine.TensorParallel, m.Engine.Replicas = 1, 2
	rec := &recorder{}
	s := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{m}, Workloads: []Workload{work("M", 4000)}, Estimator: fixed}, rec)
	s.Begin()
	rec.take()
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s, Event{Kind: EventReady, At: at(100), Replica: 2})
	for i := range DefaultMaxModelRestarts {
		handle(t, s, Event{Kind: EventCrashed, At: at(110 + i), Replica: ReplicaID(1 + i%2), Err: "stalled"})
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("after %d crashes: %q, want nothing", DefaultMaxModelRestarts, got)
	}
	handle(t, s, Event{Kind: EventCrashed, At: at(120), Replica: 2, Err: "stalled"})
	got := rec.take()
	if len(got) != 3 || got[0] != "stop M [0]" || got[1] != "stop M [1]" || !strings.HasPrefix(got[2], "abandon M: its engines crashed 6 times after they were ready (replicas r0, r1), more than the 5 restarts") {
		t.Fatalf("after the 6th crash: %q, want both replicas stopped and M abandoned", got)
	}

	// A model that finished: its replicas stop, and crashes meanwhile
	// are no reason to abandon it.
	rec2 := &recorder{}
	s2 := mustNew(t, Config{Node: testNode(2), Models: []configs.Model{m}, Workloads: []Workload{work("M", 4000)}, Estimator: fixed,
		Policy: Policy{MaxModelRestarts: 1}}, rec2)
	s2.Begin()
	handle(t, s2, Event{Kind: EventReady, At: at(100), Replica: 1})
	handle(t, s2, Event{Kind: EventReady, At: at(100), Replica: 2})
	handle(t, s2, Event{Kind: EventFinished, At: at(2000), Model: "M"})
	handle(t, s2, Event{Kind: EventCrashed, At: at(2001), Replica: 1, Err: "exited"})
	handle(t, s2, Event{Kind: EventCrashed, At: at(2001), Replica: 2, Err: "exited"})
	for _, c := range rec2.take() {
		if strings.HasPrefix(c, "abandon") {
			t.Errorf("a finished model was abandoned: %q", c)
		}
	}
}
