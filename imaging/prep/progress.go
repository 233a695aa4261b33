package prep

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// progress shows how far a run is: an mpb bar on a terminal, a plain line
// every tenth of the outputs planned so far otherwise (the plan grows
// patient by patient while the first images are made), nothing without a
// writer.
type progress struct {
	w                                            io.Writer
	bar                                          *mpb.Bar
	pb                                           *mpb.Progress
	mu                                           sync.Mutex
	total, finished, cached, failed, lastPrinted int
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.pb = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40))
		p.bar = p.pb.AddBar(0,
			mpb.PrependDecorators(decor.Name("prep "), decor.CountersNoUnit("%d/%d")),
			mpb.AppendDecorators(decor.Percentage()))
	}
	return p
}

func (p *progress) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total += n
	if p.bar != nil {
		p.bar.SetTotal(int64(p.total), false)
	}
}

func (p *progress) step(cached, failed bool) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	if cached {
		p.cached++
	}
	if failed {
		p.failed++
	}
	if p.bar != nil {
		p.bar.Increment()
		return
	}
	if p.finished-p.lastPrinted >= max(1, p.total/10) {
		p.print()
	}
}

// print writes the plain progress line.
func (p *progress) print() {
	p.lastPrinted = p.finished
	fmt.Fprintf(p.w, "prep: %d/%d images (%d cached, %d failed)\n", p.finished, p.total, p.cached, p.failed)
}

func (p *progress) done() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.SetTotal(int64(p.total), true)
		p.pb.Wait()
		return
	}
	if p.lastPrinted != p.finished || p.total == 0 {
		p.print()
	}
}
