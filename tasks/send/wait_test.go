package send_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
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

// waits records what a run reports it waits on.
type waits struct {
	mu   sync.Mutex
	seen []string
}

func (w *waits) Start(string, int)           {}
func (w *waits) Record(journal.Record)       {}
func (w *waits) Finish(string, send.Summary) {}
func (w *waits) Waiting(_, what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, what)
}

// TestRunnerReportsWaitsInsteadOfAnETA is issue 12: the ETA ignored time
// spent in timeouts and backoff ("ETA 12s" during a two-minute wait).
// A run that answers nothing for StallAfter says what it waits on: here an
// engine that holds the first request until the first-token timeout, then
// the retry's backoff; once answers flow the wait is cleared.
func TestRunnerReportsWaitsInsteadOfAnETA(t *testing.T) {
	root := t.TempDir()
	img := writeImage(t, root, "o.png", []byte("png"))
	var mu sync.Mutex
	calls := 0
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			// No first token: the client gives up. (Reading the body lets
			// the server see the client go.)
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
			return
		}
		sse(w, chunk("1", "stop"))
		sse(w, "[DONE]")
	})
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	r := testRunner(t, t.TempDir())
	r.Backoff, r.StallAfter = 600*time.Millisecond, 200*time.Millisecond
	rep := &waits{}
	r.Progress = rep
	items := []tasks.Item{{ID: "pathology/P01", Task: npcbench.Pathology, Patient: "P01", Images: []dataset.Image{img}, Gold: tasks.Gold{Label: "1"}}}
	s, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 1), Items: tasks.ItemList(items)})
	if err != nil || s.Answered != 1 {
		t.Fatalf("run: %+v, %v", s, err)
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	all := strings.Join(rep.seen, "\n")
	for _, want := range []string{"1 request(s) in flight, none answered for", "1 request(s) waiting to retry, next in", "first_token_timeout"} {
		if !strings.Contains(all, want) {
			t.Errorf("waits reported:\n%s\nlack %q", all, want)
		}
	}
	if last := rep.seen[len(rep.seen)-1]; last != "" {
		t.Errorf("the last report %q; want the wait cleared once answers flowed", last)
	}
}
