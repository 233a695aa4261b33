package inference

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/npcorch/npcorch/launcher"
)

// Pool spreads one model's requests over its replicas: least outstanding
// first, each replica bounded by a limit that starts at its ceiling (the
// engine's batch, max_num_seqs, and a small queue the engine holds, see
// Headroom) and backs off only on evidence of harm in the engine's
// /metrics (Adapt). Requests are admitted in the order they asked
// (Acquire). A replica whose connection failed is set aside for a while;
// its in-flight requests are retried on the others. Replicas come and go
// as their engines start, crash and restart; once no replica will ever
// come again, its owner closes the pool and every wait ends.
type Pool struct {
	mu      sync.Mutex
	members []*PoolMember
	// queue holds the Acquire calls waiting for a slot, oldest first.
	queue []*waiter
	// timer grants waiting calls a slot when a set-aside replica comes
	// back.
	timer  *time.Timer
	closed error // why no replica will come; set once by Close
	// Down is how long a replica is set aside after a connection failure.
	Down time.Duration
	now  func() time.Time
}

// waiter is one Acquire call waiting in the queue: done closes once it is
// given a lease, or an error when the pool closed.
type waiter struct {
	done  chan struct{}
	lease Lease
	err   error
}

// PoolMember is one replica's endpoint in a pool, with its concurrency
// state.
type PoolMember struct {
	// Name is how the journal and the pool name the replica
	// (MemberName).
	Name     string
	Endpoint launcher.Endpoint
	// batch is the engine's max_num_seqs (or the pool's concurrency when
	// the endpoint does not say); ceiling the most requests ever in
	// flight on it; limit the current bound, 1..ceiling.
	batch    int
	ceiling  int
	limit    float64
	inflight int
	downTill time.Time
	removed  bool
	// What the last scrape of its /metrics said (Adapt).
	scraped     bool
	preemptions float64
	waiting     float64
	// preempted: the limit is below the ceiling because the engine
	// preempted requests, and climbs back step by step (Adapt).
	preempted bool
}

// Headroom is how many requests beyond an engine's batch (max_num_seqs)
// the pool keeps in flight on it, so that the engine's own queue holds the
// next request when one ends: a slot never waits for the client's round
// trip. It is 2, or a quarter of the batch for batches above 8 (64 at
// vLLM's default of 256): enough for the requests that end during one
// round trip of the client and for those still on their way in (a
// request the client counts is not in the engine's queue until its server
// has read it and its images), and small beside the batch, so a queued
// request waits for the next free slot and no longer. An eighth left a
// 256-slot engine short of requests in 4 of 4 paired runs of
// scripts/bench/enginefull.sh (docs/BENCHMARKS.md).
func Headroom(batch int) int { return max(2, batch/4) }

// kvFull is the KV-cache usage at which an engine counts as full: a queue
// that grows beside it waits for cache, not for a slot.
const kvFull = 0.9

// kvBound says that what waits in the engine waits for KV cache, not for
// a slot: the cache is full (kvFull), or what is free of it would not
// hold one more request of the average size of those running. Such a
// queue is the engine being full, not harm: vLLM's scheduler admits
// waiting requests in order while their KV blocks can be allocated and
// stops at the first that cannot ("if new_blocks is None: … break" in
// Scheduler.schedule, vllm/v1/core/sched/scheduler.py at
// vllm-project/vllm@b4622cf924bc72504aed99e486062d6633fde39e), so a large
// multimodal request at the head waits, with slots free, until running
// ones end and free their cache; what it serves as
// vllm:num_requests_waiting counts it. Harm from the cache shows as
// preemptions instead (vllm:num_preemptions_total, from _preempt_request
// in the same file), which Adapt backs off from.
func (l Load) kvBound() bool {
	return l.KVCache >= kvFull || (l.Running > 0 && 1-l.KVCache < l.KVCache/l.Running)
}

// MemberName is how the journal and the pool name replica number replica
// of model: "Lingshu-7B#0".
func MemberName(model string, replica int) string { return fmt.Sprintf("%s#%d", model, replica) }

// memberName names ep's replica; an endpoint npcorch did not start is
// "MODEL#ext".
func memberName(ep launcher.Endpoint) string {
	if ep.External {
		return ep.Model + "#ext"
	}
	return MemberName(ep.Model, ep.Replica)
}

// ceilings returns the engine's batch and the most requests the pool keeps
// in flight on ep: its max-num-seqs and the Headroom when its /metrics can
// be watched for harm, or just its max-num-seqs when not; concurrency,
// when positive, caps it (and stands for the batch an endpoint does not
// state).
func ceilings(ep launcher.Endpoint, concurrency int) (batch, ceiling int) {
	if ep.MaxNumSeqs <= 0 {
		c := max(concurrency, 1)
		return c, c
	}
	batch, ceiling = ep.MaxNumSeqs, ep.MaxNumSeqs
	if ep.MetricsURL != "" {
		ceiling += Headroom(batch)
	}
	if concurrency > 0 {
		ceiling = min(ceiling, concurrency)
	}
	return batch, ceiling
}

// newMember makes ep a member at its ceiling.
func newMember(ep launcher.Endpoint, concurrency int) *PoolMember {
	r := &PoolMember{Name: memberName(ep)}
	r.reset(ep, concurrency)
	return r
}

// reset points r at a (re)started engine: its ceiling, a limit at the
// ceiling, and no scrape yet.
func (r *PoolMember) reset(ep launcher.Endpoint, concurrency int) {
	r.Endpoint = ep
	r.batch, r.ceiling = ceilings(ep, concurrency)
	r.limit = float64(r.ceiling)
	r.scraped, r.preemptions, r.waiting, r.preempted = false, 0, 0, false
}

// NewPool makes a pool over the endpoints. concurrency caps in-flight
// requests per replica (0 = each endpoint's MaxNumSeqs, and its Headroom
// when it has a metrics URL).
func NewPool(eps []launcher.Endpoint, concurrency int) *Pool {
	p := &Pool{Down: time.Second, now: time.Now}
	for _, ep := range eps {
		p.members = append(p.members, newMember(ep, concurrency))
	}
	return p
}

// Upsert adds a replica, or replaces the endpoint of the same replica (a
// restart may move it to another port) and marks it up, at its ceiling.
func (p *Pool) Upsert(ep launcher.Endpoint, concurrency int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	name := memberName(ep)
	for _, r := range p.members {
		if r.Name == name {
			r.reset(ep, concurrency)
			r.downTill, r.removed = time.Time{}, false
			p.grantLocked()
			return
		}
	}
	p.members = append(p.members, newMember(ep, concurrency))
	p.grantLocked()
}

// SetDown takes a replica out of rotation until Upsert brings it back
// (its engine crashed and is restarting).
func (p *Pool) SetDown(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.members {
		if r.Name == name {
			r.removed = true
		}
	}
}

// Remove takes a replica out for good (stopped or failed).
func (p *Pool) Remove(name string) { p.SetDown(name) }

// ErrPoolClosed is wrapped by Acquire's error once the pool is closed: no
// replica will serve the model again.
var ErrPoolClosed = errors.New("no replica will serve this model")

// Close ends the pool for why (the model's engines failed for good, or it
// could not be placed): Acquire then returns at once, waiting or not, with
// an error that wraps ErrPoolClosed and says why. A replica added later
// does not reopen it. Only the first Close counts.
func (p *Pool) Close(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed != nil {
		return
	}
	p.closed = fmt.Errorf("%w: %s", ErrPoolClosed, why)
	for _, w := range p.queue {
		w.err = p.closed
		close(w.done)
	}
	p.queue = nil
	if p.timer != nil {
		p.timer.Stop()
	}
}

// Capacity is the most requests the pool can ever run at once.
func (p *Pool) Capacity() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.members {
		n += r.ceiling
	}
	return n
}

// Waiting is how many Acquire calls wait for a slot.
func (p *Pool) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Lease is one slot on a replica, taken by Acquire and given back with
// Release. Endpoint is the replica's endpoint when the slot was taken: a
// restart may move the replica to another port meanwhile; Member names
// the replica.
type Lease struct {
	Member   string
	Endpoint launcher.Endpoint
	replica  *PoolMember
}

// Acquire takes one slot on the replica with the most room, first come
// first served: a call waits behind those that asked before it, however
// many there are. It returns an error wrapping ErrPoolClosed once the pool
// is closed, or ctx's error.
func (p *Pool) Acquire(ctx context.Context) (Lease, error) {
	p.mu.Lock()
	if p.closed != nil {
		err := p.closed
		p.mu.Unlock()
		return Lease{}, err
	}
	if len(p.queue) == 0 {
		if r := p.pickLocked(); r != nil {
			l := p.takeLocked(r)
			p.mu.Unlock()
			return l, nil
		}
	}
	w := &waiter{done: make(chan struct{})}
	p.queue = append(p.queue, w)
	p.armLocked()
	p.mu.Unlock()
	select {
	case <-w.done:
		return w.lease, w.err
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-w.done: // answered meanwhile: a slot goes back to the next
		if w.err == nil {
			p.releaseLocked(w.lease, false)
		}
	default:
		p.queue = slices.DeleteFunc(p.queue, func(q *waiter) bool { return q == w })
	}
	return Lease{}, ctx.Err()
}

// takeLocked takes a slot on r.
func (p *Pool) takeLocked(r *PoolMember) Lease {
	r.inflight++
	return Lease{Member: r.Name, Endpoint: r.Endpoint, replica: r}
}

// grantLocked gives slots to the waiting calls, oldest first, while a
// replica has room, and arms the timer for a replica set aside.
func (p *Pool) grantLocked() {
	for len(p.queue) > 0 {
		r := p.pickLocked()
		if r == nil {
			break
		}
		w := p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		w.lease = p.takeLocked(r)
		close(w.done)
	}
	p.armLocked()
}

// armLocked sets the timer to grant slots when the first replica set
// aside comes back, while calls wait.
func (p *Pool) armLocked() {
	if len(p.queue) == 0 {
		return
	}
	now := p.now()
	var wake time.Duration
	for _, r := range p.members {
		if !r.removed && now.Before(r.downTill) {
			if w := r.downTill.Sub(now); wake == 0 || w < wake {
				wake = w
			}
		}
	}
	if wake == 0 {
		return
	}
	if p.timer == nil {
		p.timer = time.AfterFunc(wake, p.grant)
		return
	}
	p.timer.Reset(wake)
}

func (p *Pool) grant() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.grantLocked()
}

// pickLocked returns the up replica with room and the lowest load, or nil.
func (p *Pool) pickLocked() *PoolMember {
	now := p.now()
	var best *PoolMember
	for _, r := range p.members {
		if r.removed || now.Before(r.downTill) || float64(r.inflight) >= r.limit {
			continue
		}
		if best == nil || float64(r.inflight)/r.limit < float64(best.inflight)/best.limit {
			best = r
		}
	}
	return best
}

// Release returns a slot. down sets the replica aside for p.Down: its
// connection was refused or it answered 5xx, so retries go to the others
// while the launcher restarts it or it recovers.
func (p *Pool) Release(l Lease, down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(l, down)
}

func (p *Pool) releaseLocked(l Lease, down bool) {
	r := l.replica
	r.inflight--
	// A replica restarted meanwhile (Upsert) is not set aside for what
	// its old endpoint did.
	if down && r.Endpoint.BaseURL == l.Endpoint.BaseURL {
		r.downTill = p.now().Add(p.Down)
	}
	p.grantLocked()
}

// Load is what an engine's /metrics says about its queue.
type Load struct {
	Running float64
	Waiting float64
	// KVCache is the KV-cache usage, 0..1.
	KVCache float64
	// Preemptions counts the running requests the engine has evicted
	// since it started, for want of KV cache (vLLM's
	// vllm:num_preemptions_total): each one's work is done again.
	Preemptions float64
}

// Adapt moves a replica's limit from what its engine's /metrics says. The
// limit starts at the ceiling and stays there unless the engine shows
// harm:
//   - it preempted requests since the last scrape (their work is done
//     again): the limit falls to three quarters of the requests in flight;
//   - on two scrapes in a row more requests waited in it than the
//     Headroom, no fewer the second time, while its KV cache had room
//     (Load.kvBound): it runs fewer than the pool counts on (its batch is
//     smaller than stated, or another client shares it), and what waits
//     beyond the Headroom only ages towards the client's first-token
//     timeout: the limit falls to what runs and the Headroom.
//
// A queue that waits for KV cache is not harm: the engine is full, and
// what waits runs as soon as running requests free their cache (issue 25,
// item 15: on a 32-slot engine large multimodal requests filled the cache
// with 13–19 running, and reading their queue as harm cut the limit to 22).
//
// The limit goes back to the ceiling at once when a slot is free and
// nothing waits in the engine (no request that could run may wait in
// npcorch while a slot is free), unless it fell for preemptions: then,
// while no more than the Headroom waits and the KV cache has room (below
// 0.9), it climbs back towards the ceiling by the share of the gap that
// the cache has free (at least one request): at half full it closes about
// half the gap per scrape.
func (p *Pool) Adapt(r *PoolMember, l Load) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.limit = r.next(l)
	p.grantLocked()
}

// next is r's limit after a scrape that said l.
func (r *PoolMember) next(l Load) float64 {
	ceiling, h := float64(r.ceiling), float64(Headroom(r.batch))
	preempted := r.scraped && l.Preemptions > r.preemptions
	queued := r.scraped && r.waiting > h && l.Waiting > h && l.Waiting >= r.waiting && !l.kvBound()
	r.scraped, r.preemptions, r.waiting = true, l.Preemptions, l.Waiting
	switch {
	case preempted:
		r.preempted = true
		return max(1, min(r.limit, float64(r.inflight))*0.75)
	case queued:
		return max(1, min(r.limit, l.Running+h))
	case !r.preempted && l.Waiting == 0 && l.Running < float64(r.batch):
		return ceiling
	case l.Waiting <= h && l.KVCache < kvFull && r.limit < ceiling:
		room := (kvFull - max(l.KVCache, 0)) / kvFull
		next := min(ceiling, r.limit+max(1, (ceiling-r.limit)*room))
		r.preempted = r.preempted && next < ceiling
		return next
	}
	return r.limit
}

// Limit returns a replica's current concurrency limit.
func (p *Pool) Limit(r *PoolMember) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return r.limit
}

// Members returns the pool's replicas.
func (p *Pool) Members() []*PoolMember {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*PoolMember(nil), p.members...)
}

// ScrapeEvery is how often a campaign reads each engine's /metrics for its
// pool: often enough that the limit follows the engine within a fraction
// of a second of a request, rarely enough that a scrape (a few
// kilobytes of text) costs the engine nothing.
const ScrapeEvery = 250 * time.Millisecond

// WatchMetrics scrapes each replica's /metrics every interval and adapts its
// limit, until ctx ends. The replicas are scraped side by side, so one
// that hangs delays no other's. Replicas without a metrics URL keep their
// ceiling.
func (p *Pool) WatchMetrics(ctx context.Context, hc *http.Client, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var wg sync.WaitGroup
		for _, r := range p.Members() {
			p.mu.Lock()
			url := r.Endpoint.MetricsURL
			p.mu.Unlock()
			if url == "" {
				continue
			}
			wg.Go(func() {
				if l, err := ScrapeLoad(ctx, hc, url); err == nil {
					p.adaptIfCurrent(r, url, l)
				}
			})
		}
		wg.Wait()
	}
}

// adaptIfCurrent adapts r to l unless a restart moved it meanwhile: a
// scrape of its old engine says nothing of the new one.
func (p *Pool) adaptIfCurrent(r *PoolMember, url string, l Load) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Endpoint.MetricsURL != url {
		return
	}
	r.limit = r.next(l)
	p.grantLocked()
}

// ScrapeLoad reads an engine's queue from its Prometheus endpoint, knowing
// vLLM's and SGLang's metric names.
func ScrapeLoad(ctx context.Context, hc *http.Client, url string) (Load, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Load{}, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Load{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return Load{}, fmt.Errorf("scrape %s: HTTP %d", url, resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(http.MaxBytesReader(nil, resp.Body, 8<<20))
	if err != nil {
		return Load{}, fmt.Errorf("scrape %s: %w", url, err)
	}
	sum := func(names ...string) float64 {
		total := 0.0
		for _, n := range names {
			if f, ok := fams[n]; ok {
				for _, m := range f.GetMetric() {
					total += m.GetGauge().GetValue() + m.GetCounter().GetValue() + m.GetUntyped().GetValue()
				}
			}
		}
		return total
	}
	// The KV-cache gauge had another name in vLLM before about 0.10
	// (vllm:gpu_cache_usage_perc, still served by forks of that age); for
	// a while both were served: read the first one present, not both.
	first := func(names ...string) float64 {
		for _, n := range names {
			if _, ok := fams[n]; ok {
				return sum(n)
			}
		}
		return 0
	}
	return Load{
		Running: sum("vllm:num_requests_running", "sglang:num_running_reqs"),
		Waiting: sum("vllm:num_requests_waiting", "sglang:num_queue_reqs"),
		KVCache: first("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc", "sglang:token_usage"),
		// The text format names a counter's family with its _total
		// suffix, as vLLM's Python client writes it. SGLang has no
		// counter of its own; its queue says enough (Adapt).
		Preemptions: sum("vllm:num_preemptions_total"),
	}, nil
}
