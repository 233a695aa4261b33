package send_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// message is one chat message as an engine receives it.
type message struct{ role, text string }

// convEngine records every request's messages and answers turn k (the
// k-th user message) with "Turn k: \boxed{A}".
type convEngine struct {
	mu       sync.Mutex
	requests [][]message
}

func (e *convEngine) handler(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	var msgs []message
	users := 0
	for _, m := range req.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct{ Type, Text string }
			json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		msgs = append(msgs, message{m.Role, text})
		if m.Role == "user" {
			users++
		}
	}
	e.mu.Lock()
	e.requests = append(e.requests, msgs)
	e.mu.Unlock()
	sse(w, chunk(fmt.Sprintf("Turn %d: \\boxed{A}", users), "stop"))
	sse(w, "[DONE]")
}

// serialRaw is one trajectory of three checkpoints.
func serialRaw() *dataset.Raw {
	opts := []dataset.Option{{Letter: "A", Text: "proceed"}, {Letter: "B", Text: "stop"}}
	cp := func(id string, day int) dataset.Checkpoint {
		return dataset.Checkpoint{Choice: dataset.Choice{ID: id, Options: opts, Answer: []string{"A"}}, Day: day, Category: "treatment", Current: "findings at " + id}
	}
	return &dataset.Raw{Longitudinal: []dataset.Trajectory{{Patient: "L1", Baseline: "T3N2M0",
		Records: []dataset.HistoryRecord{
			{Day: 1, Section: "Admission 1", Kind: "Chemotherapy", Text: "cycle 1"},
			{Day: 2, Section: "Admission 1", Kind: "Laboratory", Text: "blood count 1"},
			{Day: 30, Section: "Admission 2", Kind: "Chemotherapy", Text: "cycle 2"},
			{Day: 60, Section: "Follow-up", Kind: "Imaging", Text: "MRI"},
		},
		Checkpoints: []dataset.Checkpoint{cp("c1", 10), cp("c2", 40), cp("c3", 70)}}}}
}

// The serial control's turns are sent one round each, every turn after
// the answers it replays: turn k carries the earlier prompts as user
// messages and the model's own journaled answers as the assistant's, and
// a resumed run replays the answers the journal holds.
func TestRunnerSendsSerialTurnsAfterTheAnswersTheyReplay(t *testing.T) {
	items, problems, err := tasks.BuildItems(benchmark(), serialRaw(), &dataset.Prepared{}, []string{npcbench.LRevSerial})
	if err != nil || len(problems) > 0 || len(items) != 3 {
		t.Fatalf("items %d, problems %v, err %v", len(items), problems, err)
	}
	eng := &convEngine{}
	ep := serve(t, eng.handler)
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	model.Name = "M"
	run := t.TempDir()
	mr := func(its []tasks.Item) send.ModelRun {
		return send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: t.TempDir()},
			Pool: inference.NewPool([]launcher.Endpoint{ep}, 4), Items: tasks.ItemList(its), Repeats: 1}
	}
	// First only turn 1, then (resumed, by a new runner) all three turns.
	r := testRunner(t, run)
	if s, err := r.Run(context.Background(), mr(items[:1])); err != nil || s.Answered != 1 {
		t.Fatalf("turn 1: %+v, %v", s, err)
	}
	r.Journal.Close()
	s, err := testRunner(t, run).Run(context.Background(), mr(items))
	if err != nil || s.Answered != 2 || s.Skipped != 1 || len(s.Problems) != 0 {
		t.Fatalf("resumed run: %+v, %v; want turns 2 and 3 answered, turn 1 skipped", s, err)
	}
	if len(eng.requests) != 3 {
		t.Fatalf("%d requests, want 3", len(eng.requests))
	}
	first := eng.requests[0]
	for k, req := range eng.requests {
		if len(req) != 2*k+1 {
			t.Fatalf("request %d has %d messages, want %d (turns in order, each after the ones it replays)", k, len(req), 2*k+1)
		}
		for j := 0; j < k; j++ {
			if req[2*j].role != "user" || req[2*j+1].role != "assistant" || req[2*j+1].text != fmt.Sprintf("Turn %d: \\boxed{A}", j+1) {
				t.Errorf("request %d, turn %d: %+v %+v; want the prompt, then the model's own answer", k, j+1, req[2*j], req[2*j+1])
			}
		}
		last := req[len(req)-1].text
		if !strings.Contains(last, fmt.Sprintf("Decision point %d: current findings\nfindings at c%d", k+1, k+1)) {
			t.Errorf("request %d asks:\n%s", k, last)
		}
	}
	if eng.requests[2][0].text != first[0].text {
		t.Error("a later turn does not replay the first prompt as it was sent")
	}
	if !strings.Contains(eng.requests[1][2].text, "New records since the previous decision point\nAdmission 2\n- Day 30; cycle 2") ||
		strings.Contains(eng.requests[1][2].text, "cycle 1") {
		t.Errorf("turn 2 must bring only the records since turn 1:\n%s", eng.requests[1][2].text)
	}
}

// A turn's request key covers the answers it replays: another earlier
// answer is another request, asked again rather than taken from the
// journal.
func TestSerialTurnKeyCoversTheReplayedAnswers(t *testing.T) {
	items, _, _ := tasks.BuildItems(benchmark(), serialRaw(), &dataset.Prepared{}, []string{npcbench.LRevSerial})
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	b := tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: t.TempDir()}
	p1, _ := prompts.Render(items[0], nil)
	a, err := b.BuildTurns(prompts, items[1], 0, nil, []tasks.Turn{{Prompt: p1, Reply: `\boxed{A}`}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := b.BuildTurns(prompts, items[1], 0, nil, []tasks.Turn{{Prompt: p1, Reply: `\boxed{B}`}})
	alone, _ := b.Build(prompts, items[1], 0, nil)
	if a.Key == c.Key || a.Key == alone.Key {
		t.Error("the request key does not change with the conversation it replays")
	}
	if len(a.Body.Messages) != 3 || a.Body.Messages[1].Role != "assistant" || a.Body.Messages[1].Content != `\boxed{A}` {
		t.Errorf("messages %+v", a.Body.Messages)
	}
}
