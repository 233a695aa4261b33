package live

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/renameio/v2"
)

// StatusFile is the run folder's status file: the latest Snapshot, as
// JSON, replaced atomically now and then while the run lasts and at its
// end.
const StatusFile = "status.json"

// heartbeat is the longest the Hub goes without writing status.json
// while the run lasts; Stale is how old a status file of a running
// campaign may be before `npcorch status` calls the run gone.
const (
	heartbeat = 5 * time.Second
	Stale     = 30 * time.Second
)

// HubOptions set up a Hub.
type HubOptions struct {
	Campaign string
	// RunDir is the run folder; the Hub writes RUN/status.json there.
	RunDir string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// PublishEvery is the most often a snapshot is published (0 = 250 ms);
	// StatusEvery the most often status.json is written (0 = 1 s).
	PublishEvery, StatusEvery time.Duration
	// Log receives the Hub's own problems (a status file it could not
	// write); nil discards them.
	Log io.Writer
}

// View is a published snapshot and its JSON, shared by every reader.
type View struct {
	// Seq numbers the views from 1.
	Seq  uint64
	Snap *Snapshot
	JSON []byte
}

// Hub owns a campaign's live state. Post never blocks; the Hub's
// goroutine applies the events in order, and publishes a new View at most
// every PublishEvery when something changed. Readers take the latest View
// (Latest) or wait for the next one (Next).
type Hub struct {
	opt HubOptions

	mu      sync.Mutex
	queue   []Event
	changed chan struct{} // closed when a view is published, then replaced
	closed  bool

	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	werr   error // the last status file write's error, read after done
	latest atomic.Pointer[View]
}

// NewHub starts a Hub; Close ends it.
func NewHub(opt HubOptions) *Hub {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	opt.PublishEvery = cmp.Or(opt.PublishEvery, 250*time.Millisecond)
	opt.StatusEvery = cmp.Or(opt.StatusEvery, time.Second)
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	h := &Hub{opt: opt, changed: make(chan struct{}), kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	host, _ := os.Hostname()
	s := newState(opt.Campaign, opt.RunDir, host, os.Getpid(), opt.Now)
	h.publish(s)
	go h.run(s)
	return h
}

// Post hands the Hub an event; it never blocks. A nil Hub or a closed one
// drops it.
func (h *Hub) Post(ev Event) {
	if h == nil {
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.queue = append(h.queue, ev)
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// Close posts the run's end, applies every event posted before it,
// publishes the last view, writes status.json and stops the Hub. It
// returns the status file's write error, if any.
func (h *Hub) Close(end Ended) error {
	if h == nil {
		return nil
	}
	h.Post(end)
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.stop)
	}
	h.mu.Unlock()
	<-h.done
	return h.werr
}

// Latest returns the last published view.
func (h *Hub) Latest() *View { return h.latest.Load() }

// Next waits for a view later than seq, until ctx ends or the Hub closes
// (then it returns the last view if it is later, or ctx's error or
// ErrClosed).
func (h *Hub) Next(ctx context.Context, seq uint64) (*View, error) {
	for {
		h.mu.Lock()
		ch := h.changed
		h.mu.Unlock()
		if v := h.Latest(); v.Seq > seq {
			return v, nil
		}
		select {
		case <-ch:
		case <-h.done:
			if v := h.Latest(); v.Seq > seq {
				return v, nil
			}
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// ErrClosed is returned by Next once the Hub has closed and its last view
// was read.
var ErrClosed = errors.New("live: the campaign's status hub has closed")

// run is the Hub's goroutine: the one owner of s.
func (h *Hub) run(s *state) {
	defer close(h.done)
	tick := time.NewTicker(h.opt.PublishEvery)
	defer tick.Stop()
	// last is when a view was last published (NewHub published the
	// first), by the Hub's clock, and published the same by the machine's,
	// for the pace; wrote is when status.json was last written, and
	// unwritten whether a view published since still waits for it.
	dirty, unwritten := false, true
	last, wrote, published := h.opt.Now(), time.Time{}, time.Now()
	for {
		select {
		case <-h.kick:
			dirty = h.drain(s) || dirty
			// A change after a quiet spell goes out at once (a crash
			// shows within a second); a burst waits for the tick.
			if dirty && time.Since(published) >= h.opt.PublishEvery {
				dirty, unwritten, last, published = false, true, h.opt.Now(), time.Now()
				h.publish(s)
			}
		case <-tick.C:
			now := h.opt.Now()
			// Unchanged, the view is still published and written every
			// heartbeat: its clock moves, and a status file that stops
			// moving tells `npcorch status` the run is gone.
			if dirty || now.Sub(last) >= heartbeat {
				dirty, unwritten, last, published = false, true, now, time.Now()
				h.publish(s)
			}
			if unwritten && now.Sub(wrote) >= h.opt.StatusEvery {
				unwritten, wrote = false, now
				h.write(h.Latest())
			}
		case <-h.stop:
			h.drain(s)
			h.write(h.publish(s))
			return
		}
	}
}

// drain applies the queued events; it reports whether there were any.
func (h *Hub) drain(s *state) bool {
	h.mu.Lock()
	q := h.queue
	h.queue = nil
	h.mu.Unlock()
	for _, ev := range q {
		ev.apply(s)
	}
	return len(q) > 0
}

// publish builds and publishes a view of s.
func (h *Hub) publish(s *state) *View {
	snap := s.snapshot()
	data, err := json.Marshal(snap)
	old := h.latest.Load()
	if err != nil && old != nil {
		fmt.Fprintf(h.opt.Log, "live: a snapshot does not encode, the last one stays: %v\n", err)
		return old
	}
	seq := uint64(1)
	if old != nil {
		seq = old.Seq + 1
	}
	v := &View{Seq: seq, Snap: snap, JSON: data}
	h.latest.Store(v)
	h.mu.Lock()
	close(h.changed)
	h.changed = make(chan struct{})
	h.mu.Unlock()
	return v
}

// write replaces RUN/status.json with v, atomically.
func (h *Hub) write(v *View) {
	if h.opt.RunDir == "" {
		return
	}
	h.werr = WriteStatusFile(h.opt.RunDir, v.Snap)
	if h.werr != nil {
		fmt.Fprintf(h.opt.Log, "live: %v\n", h.werr)
	}
}

// WriteStatusFile writes snap to RUN/status.json through a synced
// temporary file and a rename: a reader sees the old file or the new one,
// never a part. The file is made 0666 less the umask, as the run's other
// files.
func WriteStatusFile(runDir string, snap *Snapshot) error {
	data, err := json.MarshalIndent(snap, "", " ")
	if err != nil {
		return fmt.Errorf("status file: %w", err)
	}
	path := filepath.Join(runDir, StatusFile)
	if err := renameio.WriteFile(path, append(data, '\n'), 0o666); err != nil {
		return fmt.Errorf("status file %s: %w", path, err)
	}
	return nil
}

// ReadStatusFile reads RUN/status.json.
func ReadStatusFile(runDir string) (*Snapshot, error) {
	path := filepath.Join(runDir, StatusFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w (the run writes it whole; a damaged one was not written by npcorch)", path, err)
	}
	if s.Format != Format {
		return nil, fmt.Errorf("%s: format %q, this npcorch reads %q", path, s.Format, Format)
	}
	return &s, nil
}
