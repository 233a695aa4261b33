package send

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/schedule"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
)

// Run sends every (item, repeat) of mr that the journal does not already
// answer, longest first, each item that needs other answers as soon as
// they are there (dispatch.go): a care question once the model's own
// findings of its patient exist, a serial conversation's turn once the
// earlier turns it replays are answered. It returns when all are
// journaled, or with the first
// journal error or ctx's end.
func (r *Runner) Run(ctx context.Context, mr ModelRun) (Summary, error) {
	if r.state == nil {
		r.SetState(&journal.State{Records: map[string]journal.Record{}})
	}
	if mr.Repeats < 1 {
		mr.Repeats = 1
	}
	if mr.Items == nil {
		mr.Items = tasks.ItemList(nil)
	}
	s := Summary{Model: mr.Model.Name, Requests: mr.Items.Len() * mr.Repeats, Failures: map[string]int{}, Reasons: map[string]int{}}
	act := newActivity(r.clock())
	if r.Progress != nil {
		r.Progress.Start(mr.Model.Name, s.Requests)
		defer func() { r.Progress.Finish(mr.Model.Name, s) }()
		if wr, ok := r.Progress.(WaitReporter); ok {
			stop := r.watchWaits(mr.Model.Name, act, wr)
			defer stop()
		}
	}
	err := r.newDispatcher(ctx, mr, act, &s).run()
	return s, err
}

// How a model's requests reach its engines (issue 17): one dispatcher
// takes a slot in the pool (first come, first served) for the next request
// in line and hands the request to a goroutine of its own, which sends it,
// retries it and journals it. The line is task by task, longest first
// (rankTasks): the longest requests start while the engine is full, and
// the shortest fill its slots at the end. An item that needs answers (a
// care question, its own patient's pathology and MRI answers; a
// conversation's turn, the turn before) is held until they exist, then
// goes first in the line (next): it waits for its own patient's answers
// and nothing longer, never for every other answer, and a chain of turns
// never ends the run alone. One whose needs ended not run, or were never
// sent, is a problem.

// outputWeight is how many prompt tokens one output token weighs in a
// request's time on the engine: a sequence prefills about 20,000 tokens a
// second and decodes 25 (an engine's batch shares its GPUs; each sequence
// gets that), so one output token holds a slot as long as 800 prompt
// tokens.
const outputWeight = 800

// defaultImageTokens stands for an image of unknown size: a 512×1644
// plane group's tokens (schedule.ImageTokens).
const defaultImageTokens = 1000

// rankTasks returns the tasks of mr's items in the order the runner sends
// them: by priority, the estimated time an item holds a slot (its prompt
// tokens, images and text, and output budget; see outputWeight) plus the longest chain of
// tasks whose prompts wait for its answers, highest first; ties in the
// order the tasks first appear. It reads the items once.
func (r *Runner) rankTasks(mr ModelRun) []string {
	type stat struct {
		items  int
		tokens float64
	}
	stats := map[string]*stat{}
	var order []string
	for it := range mr.Items.Items() {
		s := stats[it.Task]
		if s == nil {
			s = &stat{}
			stats[it.Task] = s
			order = append(order, it.Task)
		}
		s.items++
		s.tokens += promptTokens(it, mr.Model.Tasks[it.Task].MaxImages)
	}
	cost := map[string]float64{}
	for task, s := range stats {
		cost[task] = s.tokens/float64(s.items) + r.textTokens(task) + outputWeight*float64(r.maxTokens(mr.Model, task))
	}
	prio := map[string]float64{}
	var priority func(task string, path []string) float64
	priority = func(task string, path []string) float64 {
		if p, ok := prio[task]; ok {
			return p
		}
		tail := 0.0
		for _, d := range order {
			t := r.Tasks.Lookup(d)
			if t == nil || !slices.Contains(t.After, task) || slices.Contains(path, d) {
				continue // not a dependent, or a cycle (a task after itself)
			}
			tail = max(tail, priority(d, append(path, d)))
		}
		prio[task] = cost[task] + tail
		return prio[task]
	}
	ranked := slices.Clone(order)
	slices.SortStableFunc(ranked, func(a, b string) int {
		return cmp.Compare(priority(b, []string{b}), priority(a, []string{a}))
	})
	return ranked
}

// feedOrder returns the order in which the feeder reads the ranked tasks:
// the rank's, except that a task whose prompts need answers (After) comes
// right after the last of the tasks it needs. Its items are then held from
// early on and go as soon as their own answers exist (next), instead of
// reaching the dispatcher behind every longer task: a chain of turns, or
// a patient's care questions, moves on while the engine is busy and never
// ends the run alone. Tasks it needs that are not ranked (not in this
// run) count as read.
func (r *Runner) feedOrder(ranked []string) []string {
	in := map[string]bool{}
	for _, task := range ranked {
		in[task] = true
	}
	read := map[string]bool{}
	ready := func(task string) bool {
		t := r.Tasks.Lookup(task)
		if t == nil {
			return true
		}
		for _, up := range t.After {
			if in[up] && !read[up] {
				return false
			}
		}
		return true
	}
	var order []string
	var take func(task string)
	take = func(task string) {
		order = append(order, task)
		read[task] = true
		for _, d := range ranked {
			if t := r.Tasks.Lookup(d); !read[d] && t != nil && len(t.After) > 0 && ready(d) {
				take(d)
			}
		}
	}
	for _, task := range ranked {
		if !read[task] && ready(task) {
			take(task)
		}
	}
	for _, task := range ranked { // a cycle of After: in rank order
		if !read[task] {
			take(task)
		}
	}
	return order
}

// promptTokens estimates an item's prompt tokens from its images (at most
// limit of them when limit is positive).
func promptTokens(it tasks.Item, limit int) float64 {
	images := it.Images
	if limit > 0 && len(images) > limit {
		images = images[:limit]
	}
	n := 0.0
	for _, img := range images {
		if img.Width > 0 && img.Height > 0 {
			n += float64(schedule.ImageTokens(img.Width, img.Height))
		} else {
			n += defaultImageTokens
		}
	}
	return n
}

// textTokens is the paper's estimate of the text in task's prompts.
func (r *Runner) textTokens(task string) float64 {
	if t := r.Tasks.Lookup(task); t != nil {
		return float64(t.Paper.TextTokens)
	}
	return 0
}

// maxTokens is the output budget of task's requests for model m.
func (r *Runner) maxTokens(m configs.Model, task string) int {
	if n := m.Tasks[task].MaxTokens; n > 0 {
		return n
	}
	if t := r.Tasks.Lookup(task); t != nil {
		return t.Paper.MaxTokens
	}
	return 0
}

// candidate is one (item, repeat) on its way to the engine: req is built,
// or nil for an item that needs other answers (built once they are there).
type candidate struct {
	it  tasks.Item
	rep int
	req *tasks.Request
}

// held is an item waiting for missing answers; queued once it is in line.
type held struct {
	c       candidate
	missing int
	queued  bool
}

// dispatcher sends one model run's requests (see the comment above
// outputWeight). Its state has one owner, the run's goroutine, which runs
// its loop (next, resolve, start); the feeder and the requests' goroutines
// never touch it: they post what happened (a problem, a skipped request, a
// journaled record) as a function the loop runs (post), and the loop drains
// those until every goroutine has returned.
type dispatcher struct {
	r   *Runner
	mr  ModelRun
	act *activity
	g   *errgroup.Group
	ctx context.Context
	// events carries what the feeder and the requests' goroutines report,
	// to be applied by the loop; unbuffered, so that a report is applied
	// before its goroutine goes on.
	events chan func()

	// Owned by the loop.
	s        *Summary
	ready    []*held                // released items, in the order released
	waiting  map[itemRepeat][]*held // held items by a missing answer
	failed   map[itemRepeat]string  // answers that will not come this run: the root cause
	inflight int
	settle   bool           // nothing more will be answered: held items are problems
	rank     map[string]int // each task's place in the feeder's order
	// cap bounds the requests in flight (ModelRun.Workers); nil: the
	// pool alone bounds them.
	cap chan struct{}
}

func (r *Runner) newDispatcher(ctx context.Context, mr ModelRun, act *activity, s *Summary) *dispatcher {
	g, ctx := errgroup.WithContext(ctx)
	d := &dispatcher{r: r, mr: mr, act: act, g: g, ctx: ctx, s: s, events: make(chan func()),
		rank: map[string]int{}, waiting: map[itemRepeat][]*held{}, failed: map[itemRepeat]string{}}
	if mr.Workers > 0 {
		d.cap = make(chan struct{}, mr.Workers)
	}
	return d
}

// post hands the loop a report to apply. It is called only from the
// dispatcher's goroutines, which the loop waits for, so it always returns.
func (d *dispatcher) post(f func()) { d.events <- f }

// run sends every request of the run and returns once all are journaled,
// or with the first error.
func (d *dispatcher) run() error {
	ch := make(chan candidate, max(d.mr.Workers, d.mr.Pool.Capacity(), 1))
	order := d.r.feedOrder(d.r.rankTasks(d.mr))
	for i, task := range order {
		d.rank[task] = i
	}
	d.g.Go(func() error { return d.feed(order, ch) })
	w := d.act.worker()
	defer d.act.forget(w)
	f := &feederLine{ch: ch}
	for {
		c, ok := d.next(f)
		if !ok {
			break
		}
		req := d.resolve(c)
		if req == nil {
			continue
		}
		if err := d.start(req, w); err != nil {
			break
		}
	}
	// Apply what the goroutines still report until the last has returned.
	done := make(chan error, 1)
	go func() { done <- d.g.Wait() }()
	for {
		select {
		case apply := <-d.events:
			apply()
		case err := <-done:
			return err
		}
	}
}

// feed reads the items task by task in rank order and sends each (item,
// repeat) that is not answered yet: built when it needs no other answer.
// What it cannot send, it reports to the loop.
func (d *dispatcher) feed(order []string, out chan<- candidate) error {
	defer close(out)
	for _, task := range order {
		for it := range d.mr.Items.Items() {
			if it.Task != task {
				continue
			}
			dependent := len(d.r.Tasks.Needs(it)) > 0
			var built *tasks.Request // it's request for an earlier repeat
			for rep := range d.mr.Repeats {
				c := candidate{it: it, rep: rep}
				if !dependent {
					var report func()
					if c.req, built, report = d.build(it, rep, built); c.req == nil {
						d.post(report)
						continue
					}
				}
				select {
				case out <- c:
				case <-d.ctx.Done():
					return d.ctx.Err()
				}
			}
		}
	}
	return nil
}

// build makes the request of (it, rep) — as like's for another repeat
// when like is given (Request.ForRepeat) — and returns it twice: as req
// when it is to be sent, and as built for the item's next repeat. req is
// nil for a problem (built is then like) or a request answered before;
// report is then what the loop must count (it touches no state itself,
// so that the feeder may call it).
func (d *dispatcher) build(it tasks.Item, rep int, like *tasks.Request) (req, built *tasks.Request, report func()) {
	var problem *tasks.ItemProblem
	if like != nil {
		var err error
		if req, err = like.ForRepeat(rep); err != nil {
			problem = &tasks.ItemProblem{Item: it.ID, Reason: err.Error()}
		}
	} else {
		req, problem = d.r.prepare(d.mr, it, rep)
	}
	switch {
	case problem != nil:
		p := *problem
		return nil, like, func() { d.problem(it, rep, p, p.Reason) }
	case d.r.answered(req.Key):
		return nil, req, func() { d.s.Skipped++ }
	}
	return req, req, nil
}

// problem counts (it, rep) not run for p, and, when other items' prompts
// need its answer, fails them with cause: the root of a chain of items
// that wait for each other, so that a conversation's last turn says why
// its first was not answered. The loop alone calls it.
func (d *dispatcher) problem(it tasks.Item, rep int, p tasks.ItemProblem, cause string) {
	d.s.Problems = append(d.s.Problems, p)
	d.s.NotRun++
	d.s.Reasons[p.Reason]++
	if d.r.upstream(it.Task) {
		d.fail(itemRepeat{d.mr.Model.Name, it.ID, rep}, cause)
	}
}

// unansweredNeed is the problem of an item whose prompt needs an answer
// that will not come this run, for cause. The reason names the task of the
// answer, not its item, so the summary groups like problems on one line.
func unansweredNeed(it tasks.Item, need, cause string) tasks.ItemProblem {
	task, _, _ := strings.Cut(need, "/")
	return tasks.ItemProblem{Item: it.ID, Reason: fmt.Sprintf("its prompt needs the model's answer to a %s item, which was not answered: %s", task, cause)}
}

// feederLine is the feeder's side of the line, read by the dispatcher's
// loop alone: its channel (nil once drained) and the candidate taken from
// it but not sent yet.
type feederLine struct {
	ch      <-chan candidate
	pending *candidate
}

// peek returns the feeder's next candidate without taking it, waiting for
// none: nil when the feeder has none ready, or is done.
func (f *feederLine) peek() *candidate {
	if f.pending == nil && f.ch != nil {
		select {
		case c, ok := <-f.ch:
			if ok {
				f.pending = &c
			} else {
				f.ch = nil
			}
		default:
		}
	}
	return f.pending
}

// next returns the next candidate in line: a released item (its answers
// arrived) before the feeder's next. A care question thus goes as soon as
// its own patient's findings exist, and a conversation's turn as soon as
// the turn before is answered: a chain of turns moves on while the engine
// is busy with the longer requests, instead of running one turn after
// another with the engine half empty at the end. Once the feeder's last
// candidate is read and nothing is in flight, the items still held are
// released as problems (their answers will not come); ok is false when
// nothing is left, or the run is ending. While it waits, it applies what
// the goroutines report.
func (d *dispatcher) next(f *feederLine) (c candidate, ok bool) {
	for {
		d.applyReported()
		if len(d.ready) > 0 {
			h := d.ready[0]
			d.ready[0] = nil
			d.ready = d.ready[1:]
			return h.c, true
		}
		if f.peek() != nil {
			c := *f.pending
			f.pending = nil
			return c, true
		}
		if f.ch == nil && d.inflight == 0 {
			if len(d.waiting) == 0 {
				return candidate{}, false
			}
			d.settleHeld()
			continue
		}
		select {
		case c, ok := <-f.ch:
			if !ok {
				f.ch = nil // closed and drained: the feeder is done
				continue
			}
			f.pending = &c // compared with what was released meanwhile
		case apply := <-d.events:
			apply()
		case <-d.ctx.Done():
			return candidate{}, false
		}
	}
}

// applyReported applies every report a goroutine is waiting to hand over,
// without waiting for more: what was answered is released before the
// feeder's next candidate is taken.
func (d *dispatcher) applyReported() {
	for {
		select {
		case apply := <-d.events:
			apply()
		default:
			return
		}
	}
}

// settleHeld puts every held item in line: nothing more will be
// answered, so resolve makes each a problem.
func (d *dispatcher) settleHeld() {
	d.settle = true
	var hs []*held
	for key, waiting := range d.waiting {
		hs = append(hs, waiting...)
		delete(d.waiting, key)
	}
	// The tasks needed first, then by item and repeat: a chain's later
	// turn is resolved after the turn it needs has failed, so its reason
	// is the root cause's, and in the same order on every run.
	slices.SortStableFunc(hs, func(a, b *held) int {
		return cmp.Or(cmp.Compare(d.rank[a.c.it.Task], d.rank[b.c.it.Task]),
			cmp.Compare(a.c.it.ID, b.c.it.ID), cmp.Compare(a.c.rep, b.c.rep))
	})
	for _, h := range hs {
		d.queue(h)
	}
}

func (d *dispatcher) queue(h *held) {
	if !h.queued {
		h.queued = true
		d.ready = append(d.ready, h)
	}
}

// resolve returns c's request, ready to send; nil when c waits for answers
// (it is held), is a problem, or was answered before.
func (d *dispatcher) resolve(c candidate) *tasks.Request {
	if c.req != nil {
		return c.req
	}
	model := d.mr.Model.Name
	var missing []itemRepeat
	need, cause := "", ""
	for _, id := range d.r.Tasks.Needs(c.it) {
		key := itemRepeat{model, id, c.rep}
		if _, ok := d.r.lookup(model, id, c.rep); !ok {
			missing = append(missing, key)
			if why, failed := d.failed[key]; failed && cause == "" {
				need, cause = id, why
			}
		}
	}
	if cause != "" {
		d.problem(c.it, c.rep, unansweredNeed(c.it, need, cause), cause)
		return nil
	}
	if len(missing) > 0 && !d.settle {
		h := &held{c: c, missing: len(missing)}
		for _, key := range missing {
			d.waiting[key] = append(d.waiting[key], h)
		}
		return nil
	}
	// Built now, with the answers there (prepare names a missing one).
	req, _, report := d.build(c.it, c.rep, nil)
	if report != nil {
		report()
	}
	return req
}

// start takes a slot for req (waiting in line in the pool) and sends it
// on a goroutine of its own. An error means the run is ending.
func (d *dispatcher) start(req *tasks.Request, w *workerState) error {
	if d.cap != nil {
		select {
		case d.cap <- struct{}{}:
		case <-d.ctx.Done():
			return d.ctx.Err()
		}
	}
	d.act.set(w, phaseAcquire, time.Time{}, "")
	lease, err := d.mr.Pool.Acquire(d.ctx)
	d.act.set(w, phaseIdle, time.Time{}, "")
	if d.ctx.Err() != nil {
		if err == nil {
			d.mr.Pool.Release(lease, false)
		}
		return d.ctx.Err()
	}
	d.inflight++
	d.g.Go(func() error {
		rec, fails, err := d.send(req, lease, err)
		if d.cap != nil {
			<-d.cap // before the report: the loop may be waiting for the slot
		}
		if err != nil {
			return err
		}
		d.post(func() { d.recorded(rec, fails) })
		return nil
	})
	return nil
}

// send makes the request's attempts and journals its outcome; it touches
// none of the dispatcher's state.
func (d *dispatcher) send(req *tasks.Request, lease inference.Lease, acquired error) (journal.Record, []string, error) {
	r, mr := d.r, d.mr
	w := d.act.worker()
	defer d.act.forget(w)
	rec, fails, err := r.send(d.ctx, mr, req, d.act, w, lease, acquired)
	if err != nil {
		return rec, fails, err
	}
	if err := r.Journal.Append(rec); err != nil {
		return rec, fails, err
	}
	d.act.recorded()
	r.mu.Lock()
	r.rememberLocked(rec)
	r.mu.Unlock()
	if r.Progress != nil {
		r.Progress.Record(rec)
	}
	if mr.OnRecord != nil {
		mr.OnRecord(rec)
	}
	return rec, fails, nil
}

// recorded counts a journaled record and releases the items waiting for
// its answer (or fails them, when it will not come). The loop alone calls
// it.
func (d *dispatcher) recorded(rec journal.Record, fails []string) {
	if rec.Status == journal.StatusAnswered {
		d.s.Answered++
	} else {
		d.s.NotRun++
		d.s.Reasons[journal.NotRunReason(rec)]++
	}
	for _, k := range fails {
		d.s.Failures[k]++
	}
	d.inflight--
	key := itemRepeat{d.mr.Model.Name, rec.Item, rec.Repeat}
	if rec.Status == journal.StatusAnswered {
		d.answered(key)
	} else if d.r.upstream(rec.Task) {
		d.fail(key, journal.NotRunReason(rec))
	}
}

// answered puts in line the held items whose last missing answer is key's.
func (d *dispatcher) answered(key itemRepeat) {
	for _, h := range d.waiting[key] {
		if h.missing--; h.missing == 0 {
			d.queue(h)
		}
	}
	delete(d.waiting, key)
}

// fail records that key's answer will not come this run, and why, and puts
// the items waiting for it in line, where resolve makes them problems.
func (d *dispatcher) fail(key itemRepeat, cause string) {
	d.failed[key] = cause
	for _, h := range d.waiting[key] {
		d.queue(h)
	}
	delete(d.waiting, key)
}
