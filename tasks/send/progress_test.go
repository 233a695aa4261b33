package send

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/journal"
)

func TestLineProgressReportsRateETAAndNotRun(t *testing.T) {
	var out bytes.Buffer
	p, ok := NewProgress(&out).(*lineProgress)
	if !ok {
		t.Fatalf("a non-terminal writer got %T, want plain lines", NewProgress(&out))
	}
	now := time.Date(2026, 5, 14, 10, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	p.Start("Qwen3-VL-8B-Instruct", 100)
	// 30 records, one every 0.5 s, every tenth not run: a line at 10 s
	// (20 done) and none before; the next would be at 20 s.
	for i := 1; i <= 30; i++ {
		now = now.Add(500 * time.Millisecond)
		rec := journal.Record{Model: "Qwen3-VL-8B-Instruct", Status: journal.StatusAnswered}
		if i%10 == 0 {
			rec.Status = journal.StatusNotRun
		}
		p.Record(rec)
		p.Record(journal.Record{Model: "a model that never started", Status: journal.StatusNotRun})
	}
	p.Finish("Qwen3-VL-8B-Instruct", Summary{Requests: 35, Answered: 27, Skipped: 5, NotRun: 3, Problems: []tasks.ItemProblem{{Item: "x"}}})
	// A model whose run was cut (Ctrl-C) does not say it finished.
	p.Finish("Lingshu-7B", Summary{Requests: 100, Answered: 76})
	want := "Qwen3-VL-8B-Instruct: 100 requests\n" +
		"Qwen3-VL-8B-Instruct: 20/100 done, 2.0/s, ETA 40s, 2 not run\n" +
		"Qwen3-VL-8B-Instruct: finished: 27 answered, 5 already in the journal, 3 not run, 1 problems\n" +
		"Lingshu-7B: stopped with 24 left: 76 answered, 0 already in the journal, 0 not run, 0 problems\n"
	if out.String() != want {
		t.Errorf("progress lines:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestLineProgressETARoundsToSeconds(t *testing.T) {
	var out bytes.Buffer
	p := NewProgress(&out).(*lineProgress)
	now := time.Date(2026, 5, 14, 10, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	p.Start("M", 13)
	for i := 0; i < 5; i++ {
		now = now.Add(2200 * time.Millisecond)
		p.Record(journal.Record{Model: "M", Status: journal.StatusAnswered})
	}
	// 5 done in 11 s, 8 left: 17.6 s, shown as 18 s.
	if !strings.Contains(out.String(), "M: 5/13 done, 0.5/s, ETA 18s, 0 not run\n") {
		t.Errorf("progress lines:\n%s", out.String())
	}
}

// progressBarsChild is the "progress-bars" role: bars for one model on
// its stdout, which the test makes a pseudo-terminal.
func progressBarsChild() {
	p := NewProgress(os.Stdout)
	if _, ok := p.(*barProgress); !ok {
		os.Stdout.WriteString("not a terminal: plain lines\n")
	}
	p.Start("Lingshu-7B", 5)
	for i := 0; i < 5; i++ {
		st := journal.StatusAnswered
		if i == 2 {
			st = journal.StatusNotRun
			// A stalled run shows what it waits on in place of its ETA
			// for a few frames.
			if wr, ok := p.(WaitReporter); ok {
				wr.Waiting("Lingshu-7B", "no replica ready to take requests for 12s")
				time.Sleep(500 * time.Millisecond)
				wr.Waiting("Lingshu-7B", "")
			}
		}
		p.Record(journal.Record{Model: "Lingshu-7B", Status: st})
	}
	p.Finish("Lingshu-7B", Summary{Answered: 4, NotRun: 1})
}

func TestBarProgressOnAPseudoTerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("util-linux script is not installed; the bar mode needs a pseudo-terminal")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A pseudo-terminal made without a terminal on stdin has no size, and
	// mpb draws nothing on a zero-width terminal: give it one.
	cmd := exec.Command(script, "-qec", "stty cols 120 rows 40; "+exe+" progress-bars", "/dev/null")
	cmd.Env = append(os.Environ(), ChildEnv+"=1", "TERM=xterm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{"Lingshu-7B", "5/5", "1 not run", "waiting: no replica ready to take requests for 12s"} {
		if !strings.Contains(text, want) {
			t.Errorf("bar output lacks %q:\n%q", want, text)
		}
	}
	if strings.Contains(text, "plain lines") || strings.Contains(text, "requests\n") {
		t.Errorf("a terminal got plain lines:\n%q", text)
	}
}
