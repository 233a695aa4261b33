package live_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/live"
)

// The test campaign: two models, two tasks each.
const (
	modelA = "Lingshu-7B"
	modelB = "Qwen3-VL-8B-Instruct"
)

var t0 = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

// grade grades by the answer's text, as a task's extractor and gold label
// would: "right" is correct, "wrong" wrong, "???" unreadable, "-" has no
// gold label.
func grade(rec journal.Record) live.Verdict {
	switch rec.Answer.Content {
	case "right":
		return live.Correct
	case "wrong":
		return live.Wrong
	case "???":
		return live.Invalid
	}
	return live.Ungraded
}

func begin(prior ...journal.Record) live.Begin {
	work := func(model string) []schedule.Workload {
		return []schedule.Workload{
			{Model: model, Task: "pathology", Requests: 4, PromptTokens: 4000, OutputTokens: 400},
			{Model: model, Task: "sequence", Requests: 6, PromptTokens: 6000, OutputTokens: 600},
		}
	}
	return live.Begin{Started: t0,
		Tasks:  []live.TaskInfo{{Key: "pathology", Title: "Pathology", Level: "L1"}, {Key: "sequence", Title: "Sequence", Level: "L1"}},
		Models: []live.ModelInfo{{Name: modelA, Work: work(modelA)}, {Name: modelB, Work: work(modelB)}},
		Prior:  prior, GPUs: []int{0, 1}, Grade: grade}
}

var itemSeq int

// answered is an answered record of model and task with this content,
// prompt and completion tokens, and end-to-end time and TTFT.
func answered(model, task, content string, prompt, completion int, e2e, ttft time.Duration) journal.Record {
	itemSeq++
	item := fmt.Sprintf("%s/p%d", task, itemSeq)
	return journal.Record{Key: item + "#0", Item: item, Task: task, Model: model, Status: journal.StatusAnswered, Attempts: 1,
		Answer: &inference.Answer{Content: content, Usage: inference.Usage{PromptTokens: prompt, CompletionTokens: completion},
			Timing: inference.Timing{E2Ems: float64(e2e.Milliseconds()), TTFTms: float64(ttft.Milliseconds())}}}
}

func notRun(model, task string) journal.Record {
	itemSeq++
	item := fmt.Sprintf("%s/p%d", task, itemSeq)
	return journal.Record{Key: item + "#0", Item: item, Task: task, Model: model, Status: journal.StatusNotRun, Attempts: 3,
		Failures: []string{"connect: refused", "connect: refused", "connect: refused"}}
}

// clock is a test's clock: it moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t0 + d.
func (c *clock) Set(d time.Duration) {
	c.mu.Lock()
	c.now = t0.Add(d)
	c.mu.Unlock()
}

// hub starts a hub on a test clock, closed when the test ends.
func hub(t *testing.T, runDir string) (*live.Hub, *clock) {
	t.Helper()
	c := &clock{now: t0}
	h := live.NewHub(live.HubOptions{Campaign: "test", RunDir: runDir, Now: c.Now,
		PublishEvery: 5 * time.Millisecond, StatusEvery: 5 * time.Millisecond})
	t.Cleanup(func() { h.Close(live.Ended{State: live.RunFinished}) })
	return h, c
}

// await waits, at most 5 s, for a view of h that satisfies ok.
func await(t *testing.T, h *live.Hub, what string, ok func(*live.Snapshot) bool) *live.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v := h.Latest()
	for !ok(v.Snap) {
		var err error
		if v, err = h.Next(ctx, v.Seq); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("no view in 5 s shows %s; the last: %+v", what, h.Latest().Snap.Totals)
			}
			t.Fatalf("waiting for a view that shows %s: %v", what, err)
		}
	}
	return v.Snap
}

func model(t *testing.T, s *live.Snapshot, name string) live.Model {
	t.Helper()
	for _, m := range s.Models {
		if m.Model == name {
			return m
		}
	}
	t.Fatalf("no model %s in the snapshot", name)
	return live.Model{}
}

func task(t *testing.T, m live.Model, key string) live.Task {
	t.Helper()
	for _, k := range m.Tasks {
		if k.Task == key {
			return k
		}
	}
	t.Fatalf("model %s has no task %s", m.Model, key)
	return live.Task{}
}
