package send

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks/journal"
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

func TestLineProgressShowsTheWaitInsteadOfTheETA(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out).(*lineProgress)
	now := time.Date(2026, 5, 14, 10, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	p.Start("M", 10)
	now = now.Add(time.Second)
	p.Record(journal.Record{Model: "M", Status: journal.StatusAnswered})
	p.Waiting("M", "1 request(s) waiting to retry, next in 25s, after: connect: refused")
	p.Waiting("M", "1 request(s) waiting to retry, next in 24s, after: connect: refused") // too soon to repeat
	now = now.Add(30 * time.Second)
	// The retry answered: the wait is over, and the line says so at once,
	// before the run's watcher clears it.
	p.Record(journal.Record{Model: "M", Status: journal.StatusAnswered})
	want := "M: 10 requests\n" +
		"M: 1/10 done, waiting: 1 request(s) waiting to retry, next in 25s, after: connect: refused\n" +
		"M: 2/10 done, 0.1/s, ETA 2m4s, 0 not run\n"
	if out.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", out.String(), want)
	}
}
