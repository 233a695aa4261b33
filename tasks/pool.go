package tasks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/npcorch/npcorch/launcher"
)

// Pool spreads one model's requests over its replicas: least outstanding
// first, each replica bounded by an adaptive limit that never exceeds its
// max-num-seqs. A replica whose connection failed is set aside for a while;
// its in-flight requests are retried on the others. Replicas come and go
// as their engines start, crash and restart; once no replica will ever
// come again, its owner closes the pool and every wait ends.
type Pool struct {
	mu      sync.Mutex
	members []*PoolMember
	changed chan struct{}
	closed  error // why no replica will come; set once by Close
	// Down is how long a replica is set aside after a connection failure.
	Down time.Duration
	now  func() time.Time
}

// PoolMember is one replica's endpoint in a pool, with its concurrency
// state.
type PoolMember struct {
	// Name is how the journal and the pool name the replica
	// (MemberName).
	Name     string
	Endpoint launcher.Endpoint
	limit    float64
	ceiling  int
	inflight int
	downTill time.Time
	removed  bool
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

// newMember makes ep a member whose in-flight requests are capped at its
// max-num-seqs, or at concurrency when lower (0: no cap of its own).
func newMember(ep launcher.Endpoint, concurrency int) *PoolMember {
	ceil := ep.MaxNumSeqs
	if concurrency > 0 && (ceil == 0 || concurrency < ceil) {
		ceil = concurrency
	}
	ceil = max(ceil, 1)
	// Start at half the ceiling and let the metrics raise it.
	return &PoolMember{Name: memberName(ep), Endpoint: ep, ceiling: ceil, limit: max(1, float64(ceil)/2)}
}

// NewPool makes a pool over the endpoints. concurrency caps in-flight
// requests per replica (0 = each endpoint's MaxNumSeqs).
func NewPool(eps []launcher.Endpoint, concurrency int) *Pool {
	p := &Pool{changed: make(chan struct{}), Down: time.Second, now: time.Now}
	for _, ep := range eps {
		p.members = append(p.members, newMember(ep, concurrency))
	}
	return p
}

// Upsert adds a replica, or replaces the endpoint of the same replica (a
// restart may move it to another port) and marks it up.
func (p *Pool) Upsert(ep launcher.Endpoint, concurrency int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	name := memberName(ep)
	for _, r := range p.members {
		if r.Name == name {
			r.Endpoint, r.downTill, r.removed = ep, time.Time{}, false
			p.wakeLocked()
			return
		}
	}
	p.members = append(p.members, newMember(ep, concurrency))
	p.wakeLocked()
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
	if p.closed == nil {
		p.closed = fmt.Errorf("%w: %s", ErrPoolClosed, why)
		p.wakeLocked()
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

// Lease is one slot on a replica, taken by Acquire and given back with
// Release. Endpoint is the replica's endpoint when the slot was taken: a
// restart may move the replica to another port meanwhile; Member names
// the replica.
type Lease struct {
	Member   string
	Endpoint launcher.Endpoint
	replica  *PoolMember
}

// Acquire waits for a replica with room and takes one slot on it. It
// returns an error wrapping ErrPoolClosed once the pool is closed, or
// ctx's error.
func (p *Pool) Acquire(ctx context.Context) (Lease, error) {
	for {
		p.mu.Lock()
		if p.closed != nil {
			err := p.closed
			p.mu.Unlock()
			return Lease{}, err
		}
		r, wake := p.pickLocked()
		if r != nil {
			r.inflight++
			l := Lease{Member: r.Name, Endpoint: r.Endpoint, replica: r}
			p.mu.Unlock()
			return l, nil
		}
		ch := p.changed
		p.mu.Unlock()
		if err := waitFor(ctx, ch, wake); err != nil {
			return Lease{}, err
		}
	}
}

// waitFor blocks until ch closes, wake passes (when positive) or ctx ends.
func waitFor(ctx context.Context, ch <-chan struct{}, wake time.Duration) error {
	var timer <-chan time.Time
	if wake > 0 {
		t := time.NewTimer(wake)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ch:
	case <-timer:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// pickLocked returns the up replica with the lowest load, or the time until
// a down replica comes back.
func (p *Pool) pickLocked() (*PoolMember, time.Duration) {
	now := p.now()
	var best *PoolMember
	var wake time.Duration
	for _, r := range p.members {
		if r.removed {
			continue
		}
		if now.Before(r.downTill) {
			if w := r.downTill.Sub(now); wake == 0 || w < wake {
				wake = w
			}
			continue
		}
		if float64(r.inflight) >= r.limit {
			continue
		}
		if best == nil || float64(r.inflight)/r.limit < float64(best.inflight)/best.limit {
			best = r
		}
	}
	return best, wake
}

// Release returns a slot. down sets the replica aside for p.Down: its
// connection was refused or it answered 5xx, so retries go to the others
// while the launcher restarts it or it recovers.
func (p *Pool) Release(l Lease, down bool) {
	r := l.replica
	p.mu.Lock()
	r.inflight--
	// A replica restarted meanwhile (Upsert) is not set aside for what
	// its old endpoint did.
	if down && r.Endpoint.BaseURL == l.Endpoint.BaseURL {
		r.downTill = p.now().Add(p.Down)
	}
	p.wakeLocked()
	p.mu.Unlock()
}

func (p *Pool) wakeLocked() {
	close(p.changed)
	p.changed = make(chan struct{})
}

// Load is what an engine's /metrics says about its queue.
type Load struct {
	Running float64
	Waiting float64
	// KVCache is the KV-cache usage, 0..1.
	KVCache float64
}

// Adapt moves a replica's limit from its engine's load: additive increase
// while nothing waits and the KV cache has room, multiplicative decrease
// when requests queue in the engine or the cache is nearly full.
func (p *Pool) Adapt(r *PoolMember, l Load) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case l.Waiting > 0 || l.KVCache > 0.92:
		r.limit = max(1, r.limit*0.75)
	case float64(r.inflight) >= r.limit-0.5:
		r.limit = min(float64(r.ceiling), r.limit+1)
	}
	p.wakeLocked()
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

// WatchMetrics scrapes each replica's /metrics every interval and adapts its
// limit, until ctx ends. Replicas without a metrics URL keep their ceiling.
func (p *Pool) WatchMetrics(ctx context.Context, hc *http.Client, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, r := range p.Members() {
			p.mu.Lock()
			url := r.Endpoint.MetricsURL
			if url == "" {
				r.limit = float64(r.ceiling)
			}
			p.mu.Unlock()
			if url == "" {
				continue
			}
			if l, err := ScrapeLoad(ctx, hc, url); err == nil {
				p.Adapt(r, l)
			}
		}
	}
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
					total += m.GetGauge().GetValue()
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
	}, nil
}
