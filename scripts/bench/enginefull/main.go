// Command enginefull measures how full `npcorch run` keeps its engines
// (issue 17): it runs one campaign with an npcorch binary, finds each
// simulated engine's address in its log (RUN/engines/*.log), samples its
// /metrics every -interval, and prints one Markdown table row: the
// engine-full share (samples with every slot running, or requests waiting,
// among the samples with anything running or waiting), the same share as
// the engine integrated it on its own clock (npcorch_sim:full_seconds_total
// over npcorch_sim:serving_seconds_total), the mean slot occupancy (busy
// slot-seconds over slots × wall), the wall time (first request sent to
// last answer received, from the journal's timings), and two lower
// bounds: the paced work of all
// requests (npcorch_sim:work_seconds_total) over the slots of all
// replicas, and that or the longest request's paced time when larger (no
// order beats it).
//
// Usage (from the repository root; scripts/bench/enginefull.sh runs it
// for each configuration, before and after):
//
//	go run ./scripts/bench/enginefull -npcorch BIN -campaign FILE -out RUN -label "1×8 after" [-repeat 4] [-interval 100ms]
//
// It starts nothing but the npcorch run (in a process group of its own,
// killed when the command ends) and writes nothing outside -out, the
// run's own log, RUN.log, and the samples, RUN.timeline.tsv (seconds since
// the first sample, engine, running, waiting, and the engine's full and
// serving seconds so far).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func main() {
	var (
		bin, campaign, out, label string
		repeat                    int
		interval                  time.Duration
		prefill, decode           float64
	)
	flag.StringVar(&bin, "npcorch", "", "npcorch binary")
	flag.StringVar(&campaign, "campaign", "", "campaign file")
	flag.StringVar(&out, "out", "", "run directory (must not exist)")
	flag.StringVar(&label, "label", "", "first column of the row")
	flag.IntVar(&repeat, "repeat", 4, "--repeat of the run")
	flag.DurationVar(&interval, "interval", 100*time.Millisecond, "how often each engine's /metrics is sampled")
	flag.Float64Var(&prefill, "prefill-tps", 20000, "the engines' --sim-prefill-tps (for the longest request's time)")
	flag.Float64Var(&decode, "decode-tps", 25, "the engines' --sim-decode-tps")
	flag.Parse()
	if bin == "" || campaign == "" || out == "" {
		fmt.Fprintln(os.Stderr, "enginefull: -npcorch, -campaign and -out are required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	row, err := measure(ctx, bin, campaign, out, repeat, interval)
	if err != nil {
		fmt.Fprintln(os.Stderr, "enginefull:", err)
		os.Exit(1)
	}
	row.requests, row.longest, row.wall = journalWork(out, prefill, decode)
	if row.slots > 0 && row.wall > 0 {
		row.occupancy = row.slotSeconds / (row.slots * row.wall)
	}
	fmt.Println(row.markdown(label))
}

// sample is one scrape of one engine.
type sample struct {
	at               time.Time
	engine           string
	running, waiting float64
	maxSeqs          float64
	full, serving    float64 // the engine's integrals so far (seconds)
	slot, work       float64
}

// result is what a run's samples and journal say.
type result struct {
	requests                  int // answered
	engines                   int
	slots                     float64
	sampledShare, engineShare float64
	occupancy, slotSeconds    float64
	wall, bound, longest      float64
	exit                      float64
}

func (r result) markdown(label string) string {
	lb := max(r.bound, r.longest)
	return fmt.Sprintf("| %s | %d | %d | %.0f | %.3f | %.3f | %.3f | %.2f | %.2f | %.3f | %.2f | %.3f | %.0f |",
		label, r.requests, r.engines, r.slots, r.sampledShare, r.engineShare, r.occupancy, r.wall, r.bound, r.wall/r.bound, lb, r.wall/lb, r.exit)
}

// logURL finds the engine's address in its log.
var logURL = regexp.MustCompile(`Starting vLLM API server 0 on (http://[0-9.:]+)`)

// measure runs the campaign and samples its engines until it ends.
func measure(ctx context.Context, bin, campaign, out string, repeat int, interval time.Duration) (result, error) {
	if _, err := os.Stat(out); err == nil {
		return result{}, fmt.Errorf("%s exists; give a new run directory", out)
	}
	logf, err := os.Create(out + ".log")
	if err != nil {
		return result{}, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "run", "-c", campaign, "--out", out, "--repeat", fmt.Sprint(repeat))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	hc := &http.Client{Timeout: time.Second}
	logs := &engineLogs{run: out, seen: map[string]*engineLog{}}
	var samples []sample
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var runErr error
loop:
	for {
		select {
		case runErr = <-done:
			break loop
		case <-ctx.Done():
			return result{}, ctx.Err()
		case <-tick.C:
		}
		for _, url := range logs.urls() {
			if s, ok := scrape(hc, url); ok {
				samples = append(samples, s)
			}
		}
	}
	exit := 0.0
	if ee, ok := runErr.(*exec.ExitError); ok {
		exit = float64(ee.ExitCode())
	}
	r := summarize(samples)
	r.exit = exit
	return r, writeTimeline(out+".timeline.tsv", samples)
}

// writeTimeline writes the samples, one a line: seconds since the first,
// engine, running, waiting.
func writeTimeline(path string, samples []sample) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, s := range samples {
		fmt.Fprintf(w, "%.2f\t%s\t%.0f\t%.0f\t%.3f\t%.3f\n", s.at.Sub(samples[0].at).Seconds(), s.engine, s.running, s.waiting, s.full, s.serving)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// engineLogs follows the engines' logs for their addresses, reading each
// log's new lines only (a log grows by a line a request).
type engineLogs struct {
	run  string
	seen map[string]*engineLog
}

type engineLog struct {
	offset int64
	url    string
}

// urls returns the address of every engine started so far: the last one
// each log has named (a restarted engine names its new one).
func (e *engineLogs) urls() []string {
	logs, _ := filepath.Glob(filepath.Join(e.run, "engines", "*.log"))
	var urls []string
	for _, path := range logs {
		l := e.seen[path]
		if l == nil {
			l = &engineLog{}
			e.seen[path] = l
		}
		l.follow(path)
		if l.url != "" {
			urls = append(urls, l.url)
		}
	}
	return urls
}

// follow reads the log's complete lines past the offset.
func (l *engineLog) follow(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(l.offset, io.SeekStart); err != nil {
		return
	}
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return // a partial line is read again next time
		}
		l.offset += int64(len(line))
		if strings.Contains(line, "Starting vLLM API server") {
			if m := logURL.FindStringSubmatch(line); m != nil {
				l.url = m[1]
			}
		}
	}
}

// scrape reads one engine's gauges and occupancy series.
func scrape(hc *http.Client, url string) (sample, bool) {
	resp, err := hc.Get(url + "/metrics")
	if err != nil {
		return sample{}, false
	}
	defer resp.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return sample{}, false
	}
	v := func(name string) float64 {
		f := fams[name]
		if f == nil {
			return 0
		}
		t := 0.0
		for _, m := range f.GetMetric() {
			t += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
		return t
	}
	return sample{at: time.Now(), engine: url, running: v("vllm:num_requests_running"), waiting: v("vllm:num_requests_waiting"),
		maxSeqs: v("npcorch_sim:max_num_seqs"), full: v("npcorch_sim:full_seconds_total"), serving: v("npcorch_sim:serving_seconds_total"),
		slot: v("npcorch_sim:slot_seconds_total"), work: v("npcorch_sim:work_seconds_total")}, true
}

// summarize turns the samples into the row's figures.
func summarize(samples []sample) result {
	var r result
	last := map[string]sample{}
	busy, full := 0, 0
	for _, s := range samples {
		if prev, ok := last[s.engine]; ok && s.serving < prev.serving {
			// Counters that go down are another engine's, one that took the
			// port after the run's stopped (the machine is shared).
			continue
		}
		last[s.engine] = s
		if s.running > 0 || s.waiting > 0 {
			busy++
			if s.running >= s.maxSeqs || s.waiting > 0 {
				full++
			}
		}
	}
	var fullS, servingS, work float64
	engines := make([]string, 0, len(last))
	for e := range last {
		engines = append(engines, e)
	}
	sort.Strings(engines)
	for _, e := range engines {
		s := last[e]
		r.slots += s.maxSeqs
		fullS, servingS, r.slotSeconds, work = fullS+s.full, servingS+s.serving, r.slotSeconds+s.slot, work+s.work
	}
	r.engines = len(engines)
	if busy > 0 {
		r.sampledShare = float64(full) / float64(busy)
	}
	if servingS > 0 {
		r.engineShare = fullS / servingS
	}
	if r.slots > 0 {
		r.bound = work / r.slots
	}
	return r
}

// journalWork reads the run's journal: how many requests were answered,
// the longest one's paced time at the engines' speeds (prompt tokens not
// served from cache over prefillTPS, output tokens over decodeTPS), and
// the wall time from the first request sent to the last answer received,
// on the client's clock (Timing.Started and E2E).
func journalWork(run string, prefillTPS, decodeTPS float64) (answered int, longest, wall float64) {
	var first, last time.Time
	files, _ := filepath.Glob(filepath.Join(run, "journal", "*", "*.jsonl"))
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var rec struct {
				Status string `json:"status"`
				Answer *struct {
					Usage struct {
						PromptTokens     int  `json:"prompt_tokens"`
						CompletionTokens int  `json:"completion_tokens"`
						CachedTokens     *int `json:"cached_tokens"`
					} `json:"usage"`
					Timing struct {
						E2Ems   float64   `json:"e2e_ms"`
						Started time.Time `json:"started"`
					} `json:"timing"`
				} `json:"answer"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil || rec.Answer == nil || rec.Status != "answered" {
				continue
			}
			answered++
			u := rec.Answer.Usage
			prompt := u.PromptTokens
			if u.CachedTokens != nil {
				prompt -= *u.CachedTokens
			}
			longest = max(longest, float64(prompt)/prefillTPS+float64(u.CompletionTokens)/decodeTPS)
			start := rec.Answer.Timing.Started
			end := start.Add(time.Duration(rec.Answer.Timing.E2Ems * float64(time.Millisecond)))
			if first.IsZero() || start.Before(first) {
				first = start
			}
			if end.After(last) {
				last = end
			}
		}
		f.Close()
	}
	return answered, longest, last.Sub(first).Seconds()
}
