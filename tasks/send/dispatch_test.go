package send_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// promptLog is a fake engine that answers as careEpisodeAnswer does and
// remembers each prompt in arrival order; hold, when set, may keep a
// request (its text and image count) waiting: it returns once the
// request may be answered.
type promptLog struct {
	mu      sync.Mutex
	prompts []string
	hold    func(text string, images int)
}

func (l *promptLog) handler(w http.ResponseWriter, r *http.Request) {
	var req sentChat
	json.NewDecoder(r.Body).Decode(&req)
	var text string
	images := 0
	for _, p := range req.Messages[0].Content {
		if p.Type == "text" {
			text = p.Text
		} else {
			images++
		}
	}
	l.mu.Lock()
	l.prompts = append(l.prompts, text)
	l.mu.Unlock()
	if l.hold != nil {
		l.hold(text, images)
	}
	sse(w, chunk(careEpisodeAnswer(text), "stop"))
	sse(w, "[DONE]")
}

func (l *promptLog) sent() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.prompts...)
}

// TestRunnerSendsTheLongestRequestsFirst is issue 17's third cause: the
// longest requests (MRI pages) went last, in the dataset's order, and the
// engine drained for seconds with one or two of them. With one slot the
// engine sees every MRI request (eight images) before any pathology slide
// (one image), whatever the order of the items.
func TestRunnerSendsTheLongestRequestsFirst(t *testing.T) {
	root := t.TempDir()
	var items []tasks.Item
	for i := range 6 {
		p := fmt.Sprintf("C%02d", i)
		var mri []dataset.Image
		for k := range 8 {
			mri = append(mri, imageFile(t, root, 100*(i+1)+k+1, true))
		}
		items = append(items,
			tasks.Item{ID: npcbench.CPPathology + "/" + p, Task: npcbench.CPPathology, Patient: p, Gold: tasks.Gold{Label: "1"},
				Images: []dataset.Image{imageFile(t, root, 100*(i+1), true)}},
			tasks.Item{ID: npcbench.CPMRI + "/" + p, Task: npcbench.CPMRI, Patient: p, Gold: tasks.Gold{Label: "T2"}, Images: mri})
	}
	eng := &promptLog{}
	ep := serve(t, eng.handler)
	model := simModelConfig(t)
	r := testRunner(t, t.TempDir())
	s, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 1), Items: tasks.ItemList(items), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if s.Answered != len(items) {
		t.Fatalf("summary %+v", s)
	}
	var order []string
	for _, p := range eng.sent() {
		if strings.Contains(p, "MRI panels") {
			order = append(order, "mri")
		} else {
			order = append(order, "pathology")
		}
	}
	want := strings.Repeat("mri ", 6) + strings.TrimSpace(strings.Repeat("pathology ", 6))
	if got := strings.Join(order, " "); got != want {
		t.Errorf("sent %s; want the six MRI requests first", got)
	}
}

// TestCareQuestionWaitsOnlyForItsOwnPatient is issue 17's global barrier:
// every care question waited until every other answer of the model
// existed. Here the engine holds patient B's MRI request (three pages; A's
// has two) until one of patient A's care questions arrives: they must go
// once A's own findings are answered. Before, B's MRI was held until
// waitLimit, and A's care questions came after it.
func TestCareQuestionWaitsOnlyForItsOwnPatient(t *testing.T) {
	root := t.TempDir()
	a, b := carePatients(t, root, 1, 2), carePatients(t, root, 2, 3)[4:]
	items := append(a, b...)
	careOfA := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	heldTooLong := false
	eng := &promptLog{hold: func(text string, images int) {
		switch {
		case images == 0:
			once.Do(func() { close(careOfA) })
		case images == 3:
			select {
			case <-careOfA:
			case <-time.After(waitLimit):
				mu.Lock()
				heldTooLong = true
				mu.Unlock()
			}
		}
	}}
	ep := serve(t, eng.handler)
	model := simModelConfig(t)
	r := testRunner(t, t.TempDir())
	s, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 2), Items: tasks.ItemList(items)})
	if err != nil {
		t.Fatal(err)
	}
	if s.Answered != len(items) || len(s.Problems) != 0 {
		t.Fatalf("summary %+v: want all %d answered", s, len(items))
	}
	mu.Lock()
	defer mu.Unlock()
	if heldTooLong {
		t.Errorf("patient A's care questions went only after patient B's MRI answer: a care question waited for another patient's findings")
	}
	for _, p := range eng.sent() {
		if strings.Contains(p, "Which treatment intent fits?") && !strings.Contains(p, "MRI T stage (model prediction): T4") {
			t.Errorf("a care question went without its patient's findings:\n%s", p)
		}
	}
}

// conversation is a registry of three text turns per patient, each
// turn's prompt including the answer to the turn before (After, Needs,
// Prior): a chain as deep as a conversation's; and the tasks named by
// others, which need no answer. Every prompt names its patient.
func conversation(t *testing.T, others ...string) (*tasks.Registry, *tasks.Prompts, configs.Model) {
	t.Helper()
	turns := []string{"turn1", "turn2", "turn3"}
	var list []*tasks.Task
	m := configs.Model{Name: "M", Engine: configs.Engine{Kind: configs.EngineSim}, Tasks: map[string]configs.TaskSettings{}}
	files := fstest.MapFS{}
	for i, key := range append(turns, others...) {
		task := &tasks.Task{Key: key, Level: "L5", Title: key, Cohort: dataset.CohortPathology, Build: func(*tasks.Builder) {},
			Sim: tasks.Sim{Marker: key, Answers: func(tasks.Item) tasks.SimAnswers { return tasks.SimAnswers{Right: "x"} }}}
		prev := ""
		if i > 0 && i < len(turns) {
			prev = turns[i-1]
			task.After = []string{prev}
			task.Needs = func(it tasks.Item) []string { return []string{prev + "/" + it.Patient} }
		}
		task.Prior = func(it tasks.Item, answers map[string]*journal.Record) []string {
			out := []string{"patient " + it.Patient}
			if rec := answers[prev+"/"+it.Patient]; rec != nil && rec.Answer != nil {
				out = append(out, "earlier: "+rec.Answer.Content)
			}
			return out
		}
		list = append(list, task)
		m.Tasks[key] = configs.TaskSettings{MaxTokens: 16}
		files["prompts/"+key+".tmpl"] = &fstest.MapFile{Data: []byte(key + "{{range .Prior}}\n{{.}}{{end}}\n")}
	}
	reg, err := tasks.NewRegistry(tasks.Benchmark{Structures: configs.DefaultStructures(), Tasks: list})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tasks.LoadPrompts(files, "prompts", reg)
	if err != nil {
		t.Fatal(err)
	}
	return reg, p, m
}

// runTwoSlots runs items on ep through a pool of two slots, with a
// journal of its own, and returns the run's summary.
func runTwoSlots(t *testing.T, reg *tasks.Registry, prompts *tasks.Prompts, model configs.Model, ep launcher.Endpoint, items []tasks.Item) send.Summary {
	t.Helper()
	j, err := journal.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	r := &send.Runner{Client: inference.NewClient(testSettings()), Journal: j, Prompts: prompts, Tasks: reg, Retries: 1, Backoff: time.Millisecond}
	s, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: t.TempDir()},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 2), Items: tasks.ItemList(items)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConversationTurnsGoAfterTheirEarlierAnswers: a turn goes once the
// turn before it, for its own patient, is answered, whatever the depth of
// the chain, and carries that answer. Before, the runner sent in two
// phases (items needing no answer, then the others), and a third turn
// found its second turn unanswered.
func TestConversationTurnsGoAfterTheirEarlierAnswers(t *testing.T) {
	reg, prompts, model := conversation(t)
	var items []tasks.Item
	for _, key := range []string{"turn3", "turn2", "turn1"} { // the last turns first in the source
		for _, p := range []string{"A", "B", "C"} {
			// A question item: its prompt has the prior lines.
			items = append(items, tasks.Item{ID: key + "/" + p, Task: key, Patient: p, Gold: tasks.Gold{Label: "x"},
				Care: &dataset.CareQuestion{ID: key, Question: "next?"}})
		}
	}
	var mu sync.Mutex
	answered := map[string]bool{}
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		var req sentChat
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 || len(req.Messages[0].Content) == 0 {
			t.Errorf("request body: %v", err)
			return
		}
		lines := append(strings.Split(req.Messages[0].Content[0].Text, "\n"), "", "")
		turn, patient := lines[0], strings.TrimPrefix(lines[1], "patient ")
		mu.Lock()
		if prev := map[string]string{"turn2": "turn1", "turn3": "turn2"}[turn]; prev != "" {
			if !answered[prev+"/"+patient] || lines[2] != "earlier: answer of "+prev+"/"+patient {
				t.Errorf("%s of %s went before its earlier turn was answered, or without it: %q", turn, patient, lines)
			}
		}
		// Marked before the answer leaves: the client may send the next
		// turn as soon as it has read it.
		answered[turn+"/"+patient] = true
		mu.Unlock()
		sse(w, chunk("answer of "+turn+"/"+patient, "stop"))
		sse(w, "[DONE]")
	})
	s := runTwoSlots(t, reg, prompts, model, ep, items)
	if s.Answered != len(items) || len(s.Problems) != 0 {
		t.Fatalf("summary %+v: want all %d turns answered", s, len(items))
	}
}

// TestChainMovesOnWhileTheEngineIsBusy: a conversation's next turn goes as
// soon as the turn before is answered, ahead of the longer requests still
// in line, so that its chain is done long before the end. Before, a
// released turn waited for its task's place in the line, behind every
// request of a longer task: at 1×256, 192 CarePath chains then ran turn
// after turn at the end of the run with the engine 60 % full for over a
// second (issue 17).
func TestChainMovesOnWhileTheEngineIsBusy(t *testing.T) {
	reg, prompts, model := conversation(t, "long")
	model.Tasks["turn1"] = configs.TaskSettings{MaxTokens: 4096} // the chain's head ranks first
	model.Tasks["long"] = configs.TaskSettings{MaxTokens: 1024}  // then every long request
	var items []tasks.Item
	for i := range 40 {
		p := fmt.Sprintf("L%02d", i)
		items = append(items, tasks.Item{ID: "long/" + p, Task: "long", Patient: p, Gold: tasks.Gold{Label: "x"},
			Care: &dataset.CareQuestion{ID: "long", Question: "next?"}})
	}
	for _, key := range []string{"turn1", "turn2", "turn3"} {
		items = append(items, tasks.Item{ID: key + "/A", Task: key, Patient: "A", Gold: tasks.Gold{Label: "x"},
			Care: &dataset.CareQuestion{ID: key, Question: "next?"}})
	}
	var mu sync.Mutex
	var order []string
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		var req sentChat
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 || len(req.Messages[0].Content) == 0 {
			t.Errorf("request body: %v", err)
			return
		}
		task, _, _ := strings.Cut(req.Messages[0].Content[0].Text, "\n")
		mu.Lock()
		order = append(order, task)
		mu.Unlock()
		if task == "long" {
			time.Sleep(50 * time.Millisecond) // 40 of them keep two slots busy for 1 s
		}
		sse(w, chunk("answer of "+task, "stop"))
		sse(w, "[DONE]")
	})
	s := runTwoSlots(t, reg, prompts, model, ep, items)
	if s.Answered != len(items) {
		t.Fatalf("summary %+v: want all %d answered", s, len(items))
	}
	mu.Lock()
	defer mu.Unlock()
	if i := slices.Index(order, "turn1"); i > 1 { // two slots: the first two race on the wire
		t.Errorf("the chain's head was request %d, want one of the first two (it ranks first)", i+1)
	}
	last := slices.Index(order, "turn3")
	after := 0
	for _, task := range order[last+1:] {
		if task == "long" {
			after++
		}
	}
	if after < 10 { // two round trips of the chain's turns against 0.75 s of long requests
		t.Errorf("the chain ended with %d long requests left to send, want at least 10 of 40: its turns waited behind the long task\norder: %v", after, order)
	}
}
