package tasks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/npcbench"
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
	s, err := r.Run(context.Background(), tasks.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: tasks.NewPool([]launcher.Endpoint{ep}, 1), Items: tasks.ItemList(items), Workers: 1})
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
	s, err := r.Run(context.Background(), tasks.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: tasks.NewPool([]launcher.Endpoint{ep}, 2), Items: tasks.ItemList(items)})
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
