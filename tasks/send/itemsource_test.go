package send_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// madeItems is an ItemSource that makes each item when it is asked for and
// counts what the runner took: how many passes it started, how many items
// it pulled, and how many in the latest pass.
type madeItems struct {
	n      int
	make   func(i int) tasks.Item
	passes atomic.Int32
	pulled atomic.Int64
	inPass atomic.Int64
}

func (s *madeItems) Len() int { return s.n }

func (s *madeItems) Items() iter.Seq[tasks.Item] {
	s.passes.Add(1)
	return func(yield func(tasks.Item) bool) {
		s.inPass.Store(0)
		for i := range s.n {
			s.pulled.Add(1)
			s.inPass.Add(1)
			if !yield(s.make(i)) {
				return
			}
		}
	}
}

// TestRunnerPullsItemsFromItsSourceAsItSends checks that the runner reads
// its source lazily: when an item's request reaches the engine, the runner
// has pulled, in the pass that sends (the one after the pass that ranks
// the tasks), at most as many items beyond it as its requests in flight
// and bounded prefetch channel hold, never the whole source.
func TestRunnerPullsItemsFromItsSourceAsItSends(t *testing.T) {
	const n = 60
	src := &madeItems{n: n, make: func(i int) tasks.Item {
		p := fmt.Sprintf("P%03d", i)
		return tasks.Item{ID: npcbench.Pathology + "/" + p, Task: npcbench.Pathology, Patient: p, Gold: tasks.Gold{Label: "1"}}
	}}
	var mu sync.Mutex
	var sent int64
	var ahead []int64 // items pulled beyond those the engine has seen, at each request
	ep := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sent++
		ahead = append(ahead, src.inPass.Load()-sent)
		mu.Unlock()
		sse(w, chunk("1", "stop"))
		sse(w, "[DONE]")
	})
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	model.Name = "M"
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			src.passes.Store(0)
			src.pulled.Store(0)
			src.inPass.Store(0)
			mu.Lock()
			sent, ahead = 0, nil
			mu.Unlock()
			pool := inference.NewPool([]launcher.Endpoint{ep}, workers)
			r := testRunner(t, t.TempDir())
			s, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaFile, Root: t.TempDir()},
				Pool: pool, Items: src, Workers: workers})
			if err != nil {
				t.Fatal(err)
			}
			if s.Requests != n || s.Answered != n || len(s.Problems) != 0 {
				t.Fatalf("summary %+v: want %d requests answered", s, n)
			}
			// Beyond the requests the engine has seen, the runner may hold
			// one request per other slot, the one waiting for a slot, a
			// full prefetch channel, and the item the producer is
			// blocked on.
			bound := int64(workers-1) + int64(2*max(workers, pool.Capacity(), 1)) + 1
			mu.Lock()
			defer mu.Unlock()
			for i, a := range ahead {
				if a > bound {
					t.Fatalf("when request %d reached the engine the runner had pulled %d items beyond it (at most %d expected): it does not read its source as it sends", i+1, a, bound)
				}
			}
			if got := src.passes.Load(); got != 2 {
				t.Errorf("the source was read %d times; a run of one task reads it twice (to rank its tasks, then to send)", got)
			}
		})
	}
}

// TestRunnerReadsItsSourceOncePerTask checks that a run with care
// questions reads its source once to rank its tasks and once per task,
// and sends each care question after its patient's findings.
func TestRunnerReadsItsSourceOncePerTask(t *testing.T) {
	const patients = 5
	q := dataset.CareQuestion{ID: "q1", Checkpoint: "after induction", Question: "Next step?", Answer: "B",
		Options: []dataset.Option{{Letter: "A", Text: "surveillance"}, {Letter: "B", Text: "concurrent chemoradiotherapy"}},
		Inject:  []string{dataset.InjectPathology, dataset.InjectTStage}}
	root := t.TempDir()
	img := writeImage(t, root, "page.png", []byte("\x89PNG fake page bytes"))
	// Each patient's care question comes first: the runner must still send
	// it after the patient's pathology and MRI answers.
	src := &madeItems{n: 3 * patients, make: func(i int) tasks.Item {
		p := fmt.Sprintf("C%02d", i/3)
		switch i % 3 {
		case 0:
			return tasks.Item{ID: npcbench.CPCare + "/" + p + "/q1", Task: npcbench.CPCare, Patient: p, Gold: tasks.Gold{Label: "B"}, Care: &q}
		case 1:
			return tasks.Item{ID: npcbench.CPPathology + "/" + p, Task: npcbench.CPPathology, Patient: p,
				Images: []dataset.Image{img}, Gold: tasks.Gold{Label: "1"}}
		default:
			return tasks.Item{ID: npcbench.CPMRI + "/" + p, Task: npcbench.CPMRI, Patient: p,
				Images: []dataset.Image{img}, Gold: tasks.Gold{Label: "T3"}}
		}
	}}
	eng := &fakeEngine{answer: careEpisodeAnswer}
	ep := serve(t, eng.handler)
	reg, _ := configs.DefaultRegistry()
	model, _ := reg.Get("Lingshu-7B")
	model.Name = "M"
	r := testRunner(t, t.TempDir())
	s, err := r.Run(context.Background(), send.ModelRun{Model: model, Builder: tasks.RequestBuilder{Model: model, Media: configs.MediaFile, Root: root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, 2), Items: src, Repeats: 2, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if want := 3 * patients * 2; s.Requests != want || s.Answered != want || len(s.Problems) != 0 {
		t.Fatalf("summary %+v: want %d requests answered, no problems", s, want)
	}
	if got := src.passes.Load(); got != 4 {
		t.Errorf("the source was read %d times; want once to rank and once per task (4)", got)
	}
	if got := src.pulled.Load(); got != 4*3*patients {
		t.Errorf("%d items pulled over the four passes; want %d", got, 4*3*patients)
	}
	care := 0
	for _, p := range eng.prompts {
		if !strings.Contains(p, "Next step?") {
			continue
		}
		care++
		if !strings.Contains(p, "Pathology (model prediction): 1") || !strings.Contains(p, "MRI T stage (model prediction): T4") {
			t.Fatalf("a care question went out without its findings, or before them:\n%s", p)
		}
	}
	if care != 2*patients {
		t.Errorf("%d care questions sent; want %d", care, 2*patients)
	}
}
