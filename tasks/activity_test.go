package tasks

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks/dataset"
)

func TestActivitySaysWhatAStalledRunWaitsOn(t *testing.T) {
	now := time.Date(2026, 5, 14, 10, 0, 0, 0, time.UTC)
	a := newActivity(func() time.Time { return now })
	w1, w2 := a.worker(), a.worker()
	a.set(w1, phaseSend, time.Time{}, "")
	a.set(w2, phaseSend, time.Time{}, "")
	now = now.Add(5 * time.Second)
	if got := a.waiting(10 * time.Second); got != "" {
		t.Errorf("5 s without an answer: %q, want the ETA to stand", got)
	}
	now = now.Add(85 * time.Second)
	if got, want := a.waiting(10*time.Second), "2 request(s) in flight, none answered for 1m30s"; !strings.HasPrefix(got, want) {
		t.Errorf("in flight: %q, want %q…", got, want)
	}
	a.set(w1, phaseBackoff, now.Add(25*time.Second), "connect: connection refused")
	a.set(w2, phaseAcquire, time.Time{}, "")
	if got, want := a.waiting(10*time.Second), "1 request(s) waiting to retry, next in 25s, after: connect: connection refused"; got != want {
		t.Errorf("backoff: %q, want %q", got, want)
	}
	a.set(w1, phaseAcquire, time.Time{}, "")
	if got, want := a.waiting(10*time.Second), "no replica ready to take requests for 1m30s"; !strings.HasPrefix(got, want) {
		t.Errorf("no replica: %q, want %q…", got, want)
	}
	a.recorded()
	if got := a.waiting(10 * time.Second); got != "" {
		t.Errorf("just answered: %q", got)
	}
}

// waits records what a run reports it waits on.
type waits struct {
	mu   sync.Mutex
	seen []string
}

func (w *waits) Start(string, int)      {}
func (w *waits) Record(Record)          {}
func (w *waits) Finish(string, Summary) {}
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
	items := []Item{{ID: "pathology/P01", Task: configs.TaskPathology, Patient: "P01", Images: []dataset.Image{img}, Gold: Gold{Label: "1"}}}
	s, err := r.Run(context.Background(), ModelRun{Model: model, Builder: RequestBuilder{Model: model, Media: configs.MediaBase64, Root: root},
		Pool: NewPool([]launcher.Endpoint{ep}, 1), Items: ItemList(items)})
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

func TestLineProgressShowsTheWaitInsteadOfTheETA(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out).(*lineProgress)
	now := time.Date(2026, 5, 14, 10, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	p.Start("M", 10)
	now = now.Add(time.Second)
	p.Record(Record{Model: "M", Status: StatusAnswered})
	p.Waiting("M", "1 request(s) waiting to retry, next in 25s, after: connect: refused")
	p.Waiting("M", "1 request(s) waiting to retry, next in 24s, after: connect: refused") // too soon to repeat
	now = now.Add(30 * time.Second)
	// The retry answered: the wait is over, and the line says so at once,
	// before the run's watcher clears it.
	p.Record(Record{Model: "M", Status: StatusAnswered})
	want := "M: 10 requests\n" +
		"M: 1/10 done, waiting: 1 request(s) waiting to retry, next in 25s, after: connect: refused\n" +
		"M: 2/10 done, 0.1/s, ETA 2m4s, 0 not run\n"
	if out.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", out.String(), want)
	}
}
