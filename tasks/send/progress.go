package send

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// NewProgress returns live bars on a terminal and plain log lines
// elsewhere (CI logs, files).
func NewProgress(w io.Writer) Progress {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &barProgress{w: w, bars: map[string]*modelBar{}}
	}
	return &lineProgress{w: w, every: 10 * time.Second, state: map[string]*lineState{}, now: time.Now}
}

type modelBar struct {
	bar *mpb.Bar
	// errors and waiting are read by mpb's render goroutine.
	errors  atomic.Int64
	waiting atomic.Pointer[string]
}

// barProgress draws one bar per model. Its mpb container lives while any
// model runs: when the last running model finishes, the container is
// waited for (so its final frame is drawn) and the next Start opens a new
// one.
type barProgress struct {
	mu     sync.Mutex
	w      io.Writer
	p      *mpb.Progress
	active int
	bars   map[string]*modelBar
}

func (b *barProgress) Start(model string, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.p == nil {
		b.p = mpb.New(mpb.WithOutput(b.w), mpb.WithWidth(40))
	}
	b.active++
	mb := &modelBar{}
	eta := decor.AverageETA(decor.ET_STYLE_GO)
	mb.bar = b.p.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name(model, decor.WCSyncSpaceR), decor.CountersNoUnit("%d/%d", decor.WCSyncSpace)),
		mpb.AppendDecorators(decor.AverageSpeed(0, "%.1f/s", decor.WCSyncSpace),
			// What a stalled run waits on replaces an ETA that would
			// ignore the wait.
			decor.Any(func(st decor.Statistics) string {
				if w := mb.waiting.Load(); w != nil && *w != "" {
					return "waiting: " + *w
				}
				str, _ := eta.Decor(st)
				return "ETA " + str
			}, decor.WCSyncSpace),
			decor.Any(func(decor.Statistics) string {
				n := mb.errors.Load()
				if n == 0 {
					return ""
				}
				return fmt.Sprintf(" %d not run", n)
			})))
	b.bars[model] = mb
}

func (b *barProgress) Record(rec journal.Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if mb, ok := b.bars[rec.Model]; ok {
		if rec.Status == journal.StatusNotRun {
			mb.errors.Add(1)
		}
		mb.waiting.Store(nil) // an outcome ends the wait: the ETA is back
		mb.bar.Increment()
	}
}

// Waiting implements WaitReporter: the bar shows what the model's run
// waits on instead of its ETA.
func (b *barProgress) Waiting(model, what string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if mb, ok := b.bars[model]; ok {
		mb.waiting.Store(&what)
	}
}

// Finish completes a model's bar; after the last running model it waits
// until the bars are drawn for good.
func (b *barProgress) Finish(model string, s Summary) {
	b.mu.Lock()
	mb, ok := b.bars[model]
	if !ok {
		b.mu.Unlock()
		return
	}
	delete(b.bars, model)
	mb.bar.SetTotal(mb.bar.Current(), true)
	b.active--
	var done *mpb.Progress
	if b.active == 0 {
		done, b.p = b.p, nil
	}
	b.mu.Unlock()
	if done != nil {
		done.Wait()
	}
}

type lineState struct {
	total, done, notRun int
	start, last         time.Time
	// waiting is what the run waits on ("" while answers flow), last
	// printed at waitShown.
	waiting   string
	waitShown time.Time
}

// lineProgress prints one line per model at most every few seconds.
type lineProgress struct {
	mu    sync.Mutex
	w     io.Writer
	every time.Duration
	state map[string]*lineState
	now   func() time.Time
}

func (l *lineProgress) Start(model string, total int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.state[model] = &lineState{total: total, start: now, last: now}
	fmt.Fprintf(l.w, "%s: %d requests\n", model, total)
}

func (l *lineProgress) Record(rec journal.Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.state[rec.Model]
	if !ok {
		return
	}
	s.done++
	if rec.Status == journal.StatusNotRun {
		s.notRun++
	}
	// An outcome ends the wait (the run watcher clears it on its next
	// tick): this line must not repeat a wait that is over.
	s.waiting = ""
	if now := l.now(); now.Sub(s.last) >= l.every {
		s.last = now
		rate := float64(s.done) / now.Sub(s.start).Seconds()
		eta := time.Duration(float64(s.total-s.done) / rate * float64(time.Second))
		fmt.Fprintf(l.w, "%s: %d/%d done, %.1f/s, ETA %s, %d not run\n", rec.Model, s.done, s.total, rate, eta.Round(time.Second), s.notRun)
	}
}

// Waiting implements WaitReporter: a line says what the run waits on when
// the wait begins, then at most every few seconds while it lasts.
func (l *lineProgress) Waiting(model, what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.state[model]
	if !ok {
		return
	}
	began := s.waiting == "" && what != ""
	s.waiting = what
	if what == "" {
		return
	}
	if now := l.now(); began || now.Sub(s.waitShown) >= l.every {
		s.waitShown = now
		fmt.Fprintf(l.w, "%s: %d/%d done, waiting: %s\n", model, s.done, s.total, what)
	}
}

func (l *lineProgress) Finish(model string, sum Summary) {
	l.mu.Lock()
	defer l.mu.Unlock()
	end := "finished"
	if left := sum.Requests - sum.Answered - sum.Skipped - sum.NotRun; left > 0 {
		end = fmt.Sprintf("stopped with %d left", left) // interrupted, or its run ended early
	}
	fmt.Fprintf(l.w, "%s: %s: %d answered, %d already in the journal, %d not run, %d problems\n",
		model, end, sum.Answered, sum.Skipped, sum.NotRun, len(sum.Problems))
}
