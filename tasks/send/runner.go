package send

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
)

// Progress hears about a model's run as it goes.
type Progress interface {
	// Start announces how many requests a model's run will send.
	Start(model string, total int)
	// Record reports one journaled outcome.
	Record(rec journal.Record)
	// Finish closes a model's run.
	Finish(model string, s Summary)
}

// Runner sends a model's items through its pool and journals every outcome.
type Runner struct {
	Client  *inference.Client
	Journal *journal.Journal
	Prompts *tasks.Prompts
	// Tasks says which items' prompts include the answers to which others
	// (Task.Needs and Prior); nil: no item needs another's answer.
	Tasks    *tasks.Registry
	Progress Progress
	// Retries and Backoff bound the attempts after infrastructure failures.
	Retries int
	Backoff time.Duration
	// MaxBackoff caps the doubling backoff.
	MaxBackoff time.Duration
	// StallAfter is how long a model run may journal nothing before its
	// progress shows what it waits on instead of an ETA (0 = 10 s); only
	// a Progress that is a WaitReporter hears it.
	StallAfter time.Duration
	// Now is the runner's clock (time.Now when nil).
	Now func() time.Time

	mu    sync.Mutex
	state *journal.State
	// done holds the keys answered by this runner, as 32 bytes each, so
	// that a long run's memory does not grow with its answers.
	done map[[32]byte]struct{}
	// byItem keeps the answered records of the tasks other tasks' prompts
	// include (Registry.Upstream), and only those.
	byItem map[itemRepeat]journal.Record
}

// keyID is the 32-byte form of a request key (its sha256 hex digits).
func keyID(key string) [32]byte {
	var id [32]byte
	if n, err := hex.Decode(id[:], []byte(key)); err == nil && n == len(id) {
		return id
	}
	return sha256.Sum256([]byte(key))
}

// upstream reports whether other tasks' prompts include a task's answers.
func (r *Runner) upstream(task string) bool {
	return r.Tasks != nil && r.Tasks.Upstream(task)
}

type itemRepeat struct {
	model, item string
	repeat      int
}

// ModelRun is one model's share of a campaign.
type ModelRun struct {
	Model   configs.Model
	Builder tasks.RequestBuilder
	Pool    *inference.Pool
	// Items are the model's items, read once to rank its tasks and once
	// per task (Runner.Run).
	Items   tasks.ItemSource
	Repeats int
	// Workers caps the requests in flight at once across the pool, now
	// and after replicas are added (0 = no cap but the pool's: each
	// replica's ceiling, however many replicas join).
	Workers int
	// OnRecord, when set, hears each request journaled by this run, as
	// Progress does; it must not block (the campaign measures its
	// replicas' speeds from it).
	OnRecord func(journal.Record)
}

// Summary counts a model's run.
type Summary struct {
	Model string `json:"model"`
	// Requests is every (item, repeat) of the run; Skipped were already
	// answered in the journal; Answered and NotRun are this run's outcomes.
	Requests int `json:"requests"`
	Skipped  int `json:"skipped"`
	Answered int `json:"answered"`
	NotRun   int `json:"not_run"`
	// Problems are items that could not be sent (bad input, missing
	// dependency); each is listed.
	Problems []tasks.ItemProblem `json:"problems,omitempty"`
	// Failures counts failed attempts by kind (retried or not).
	Failures map[string]int `json:"failures,omitempty"`
	// Reasons counts the NotRun requests by why they were not run: a
	// problem's reason, or a request's last failure (see NotRunReason).
	Reasons map[string]int `json:"not_run_reasons,omitempty"`
}

// FailNoReplica is the failure of a request that was never sent: its
// model's pool was closed, because no replica will serve the model again.
const FailNoReplica = "no_replica"

// SetState gives the runner the journal as read before the run, so that
// answered requests are skipped and care questions find their findings.
func (r *Runner) SetState(st *journal.State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state = st
	r.done = map[[32]byte]struct{}{}
	r.byItem = map[itemRepeat]journal.Record{}
	for _, rec := range st.Records {
		if rec.Status == journal.StatusAnswered && r.upstream(rec.Task) {
			r.byItem[itemRepeat{rec.Model, rec.Item, rec.Repeat}] = rec
		}
	}
}

// rememberLocked notes a record journaled by this runner. The journal
// state given to SetState is left as it was read.
func (r *Runner) rememberLocked(rec journal.Record) {
	if rec.Status != journal.StatusAnswered {
		return
	}
	r.done[keyID(rec.Key)] = struct{}{}
	if r.upstream(rec.Task) {
		r.byItem[itemRepeat{rec.Model, rec.Item, rec.Repeat}] = rec
	}
}

func (r *Runner) answered(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.state.Answered(key); ok {
		return true
	}
	_, ok := r.done[keyID(key)]
	return ok
}

func (r *Runner) lookup(model, item string, repeat int) (journal.Record, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.byItem[itemRepeat{model, item, repeat}]
	return rec, ok
}

func (r *Runner) clock() func() time.Time {
	if r.Now != nil {
		return r.Now
	}
	return time.Now
}

// watchWaits tells wr, as it changes, what model's run waits on while it
// journals nothing; stop ends the watch (and clears the wait).
func (r *Runner) watchWaits(model string, act *activity, wr WaitReporter) (stop func()) {
	after := r.StallAfter
	if after <= 0 {
		after = 10 * time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(min(time.Second, after/2))
		defer t.Stop()
		shown := ""
		for {
			select {
			case <-done:
				if shown != "" {
					wr.Waiting(model, "")
				}
				return
			case <-t.C:
			}
			if what := act.waiting(after); what != shown {
				shown = what
				wr.Waiting(model, what)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// prepare builds the request of one (item, repeat), with the prior lines
// its task writes (about the answers it needs, and what the item supplies)
// and the earlier turns of its conversation, each with the model's own
// answer; a problem says why it cannot be sent.
func (r *Runner) prepare(mr ModelRun, it tasks.Item, rep int) (*tasks.Request, *tasks.ItemProblem) {
	answers := map[string]*journal.Record{}
	for _, id := range r.Tasks.Needs(it) {
		rec, ok := r.lookup(mr.Model.Name, id, rep)
		if !ok {
			return nil, &tasks.ItemProblem{Item: it.ID, Reason: fmt.Sprintf("its prompt needs the model's answer to %s, which this run never sent (an item left out of the dataset, or one waiting itself for such an answer); fix that and resume the run", id)}
		}
		answers[id] = &rec
	}
	turns := make([]tasks.Turn, len(it.Earlier))
	for i, e := range it.Earlier {
		rec := answers[e.ID]
		if rec == nil || rec.Answer == nil {
			return nil, &tasks.ItemProblem{Item: it.ID, Reason: fmt.Sprintf("its conversation replays %s, which its task does not name among the answers it needs", e.ID)}
		}
		prompt, err := r.Prompts.Render(e, r.prior(e, answers))
		if err != nil {
			return nil, &tasks.ItemProblem{Item: it.ID, Reason: err.Error()}
		}
		turns[i] = tasks.Turn{Prompt: prompt, Reply: rec.Answer.Content}
	}
	req, err := mr.Builder.BuildTurns(r.Prompts, it, rep, r.prior(it, answers), turns)
	if err != nil {
		return nil, &tasks.ItemProblem{Item: it.ID, Reason: err.Error()}
	}
	return req, nil
}

// prior is the prior lines an item's task writes, nil for a task without.
func (r *Runner) prior(it tasks.Item, answers map[string]*journal.Record) []string {
	if task := r.Tasks.Lookup(it.Task); task != nil && task.Prior != nil {
		return task.Prior(it, answers)
	}
	return nil
}

// send makes the attempts of one request, the first on lease (or with
// acquired, Acquire's error), and returns its record and the kinds of the
// failed attempts. An error means the run is ending (ctx), and nothing is
// journaled for the request.
func (r *Runner) send(ctx context.Context, mr ModelRun, req *tasks.Request, act *activity, w *workerState, lease inference.Lease, acquired error) (journal.Record, []string, error) {
	rec := journal.Record{Key: req.Key, Item: req.Item.ID, Task: req.Item.Task, Patient: req.Item.Patient,
		Model: mr.Model.Name, Repeat: req.Repeat, Images: len(req.Images)}
	rec.Prior = req.Prior
	var kinds []string
	for attempt := 1; ; attempt++ {
		err := acquired
		if attempt > 1 {
			act.set(w, phaseAcquire, time.Time{}, "")
			lease, err = mr.Pool.Acquire(ctx)
		}
		if errors.Is(err, inference.ErrPoolClosed) {
			// No replica will come: the request ends not run, with why.
			kinds = append(kinds, FailNoReplica)
			rec.Failures = append(rec.Failures, err.Error())
			rec.Status = journal.StatusNotRun
			return rec, kinds, nil
		}
		if err != nil {
			return rec, kinds, err
		}
		act.set(w, phaseSend, time.Time{}, "")
		var ans *inference.Answer
		ans, err = r.Client.Send(ctx, lease.Endpoint, req.Body, req.Inline)
		var f *inference.AttemptFailure
		errors.As(err, &f)
		mr.Pool.Release(lease, f != nil && (f.Kind == inference.FailConnect || f.Kind == inference.FailTransport || f.Kind == inference.FailServer))
		rec.Attempts, rec.Replica = attempt, lease.Member
		if err == nil {
			rec.Status, rec.Answer = journal.StatusAnswered, ans
			return rec, kinds, nil
		}
		if ctx.Err() != nil {
			return rec, kinds, ctx.Err()
		}
		kinds = append(kinds, f.Kind)
		rec.Failures = append(rec.Failures, f.Error())
		if !f.Retryable() || attempt > r.Retries {
			rec.Status = journal.StatusNotRun
			return rec, kinds, nil
		}
		wait := r.backoff(attempt)
		act.set(w, phaseBackoff, r.clock()().Add(wait), journal.NotRunReason(rec))
		if err := sleepCtx(ctx, wait); err != nil {
			return rec, kinds, err
		}
	}
}

func (r *Runner) backoff(attempt int) time.Duration {
	d := r.Backoff
	for i := 1; i < attempt && (r.MaxBackoff == 0 || d < r.MaxBackoff); i++ {
		d *= 2
	}
	if r.MaxBackoff > 0 && d > r.MaxBackoff {
		d = r.MaxBackoff
	}
	return d
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Add returns t with s's counts added (the model is t's).
func (t Summary) Add(s Summary) Summary {
	t.Requests += s.Requests
	t.Skipped += s.Skipped
	t.Answered += s.Answered
	t.NotRun += s.NotRun
	t.Problems = append(t.Problems, s.Problems...)
	for _, m := range []struct {
		to   *map[string]int
		from map[string]int
	}{{&t.Failures, s.Failures}, {&t.Reasons, s.Reasons}} {
		for k, n := range m.from {
			if *m.to == nil {
				*m.to = map[string]int{}
			}
			(*m.to)[k] += n
		}
	}
	return t
}
