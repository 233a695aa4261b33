package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// soakOptions size the soak.
type soakOptions struct {
	Dir         string
	Self        []string
	Requests    int
	Concurrency int
	Replicas    int
}

// soakModel is the registry model the soak's engines pretend to serve.
const soakModel = "Qwen3-VL-8B-Instruct"

// runSoak streams o.Requests text-only requests through npcorch's own
// client, pool, runner and journal to fast simulated engines started by
// the launcher, sampling this process's RSS as it goes.
func runSoak(ctx context.Context, o soakOptions, w io.Writer) error {
	m, err := soakEngineModel(o)
	if err != nil {
		return err
	}
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", npcbench.Registry(configs.DefaultStructures()))
	if err != nil {
		return err
	}
	tep, stopEngines, err := startSoakEngines(ctx, o, m)
	defer stopEngines(w)
	if err != nil {
		return fmt.Errorf("soak: start the engines: %w", err)
	}
	items := make([]tasks.Item, o.Requests)
	for i := range items {
		id := fmt.Sprintf("P%05d", i)
		items[i] = tasks.Item{ID: npcbench.Pathology + "/" + id, Task: npcbench.Pathology, Patient: id, Gold: tasks.Gold{Label: "1"}}
	}
	runDir := filepath.Join(o.Dir, "run")
	j, err := journal.Open(runDir)
	if err != nil {
		return err
	}
	defer j.Close()
	cs := configs.ClientSettings{ConnectTimeout: 2 * time.Second, FirstTokenTimeout: 30 * time.Second, ChunkTimeout: 10 * time.Second,
		TotalTimeout: time.Minute, Retries: new(3), Backoff: 100 * time.Millisecond}
	client := inference.NewClient(cs)
	defer client.Close()
	prog := &soakProgress{every: 100}
	r := &send.Runner{Client: client, Journal: j, Prompts: prompts, Progress: prog, Retries: cs.RetryLimit(), Backoff: cs.Backoff}
	pool := inference.NewPool(tep, o.Concurrency)

	before, err := cpuTime()
	if err != nil {
		return err
	}
	start := time.Now()
	sum, err := r.Run(ctx, send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: o.Dir},
		Pool: pool, Items: tasks.ItemList(items), Workers: o.Concurrency})
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("soak: %w", err)
	}
	after, err := cpuTime()
	if err != nil {
		return err
	}
	writeSoakReport(w, o, sum, wall, after-before, prog)
	if sum.Answered != sum.Requests {
		return fmt.Errorf("soak: %d of %d requests not answered", sum.Requests-sum.Answered, sum.Requests)
	}
	return nil
}

// soakEngineModel is the soak's model served by a simulated engine that
// answers garbage as fast as it can, o.Concurrency requests at a time.
func soakEngineModel(o soakOptions) (configs.Model, error) {
	reg, err := configs.DefaultRegistry()
	if err != nil {
		return configs.Model{}, err
	}
	m, ok := reg.Get(soakModel)
	if !ok {
		return configs.Model{}, fmt.Errorf("soak: %s is not in the registry", soakModel)
	}
	m.Engine = configs.Engine{Kind: configs.EngineSim, MaxNumSeqs: o.Concurrency,
		Sim: []string{"--sim-policy", "garbage", "--sim-workers", "0", "--sim-decode-tps", "1000000",
			"--sim-prefill-tps", "1000000000", "--sim-chunk-tokens", "8", "--disable-uvicorn-access-log"}}
	return m, nil
}

// startSoakEngines starts o.Replicas replicas of m through the launcher.
// stop stops them all, verified, within 30 s, saying on w why it could
// not; call it whether or not the start succeeded.
func startSoakEngines(ctx context.Context, o soakOptions, m configs.Model) (eps []launcher.Endpoint, stop func(w io.Writer), err error) {
	sup := launcher.NewSupervisor(launcher.Config{
		Engines: launcher.Engines{Sim: append(append([]string{}, o.Self...), "sim-engine")},
		Shim:    append(append([]string{}, o.Self...), "serve", "engine-shim"),
		LogDir:  filepath.Join(o.Dir, "engines"),
		Timing:  launcher.Timing{Grace: 2 * time.Second, RestartBackoff: 100 * time.Millisecond},
	})
	specs := make([]launcher.ReplicaSpec, o.Replicas)
	for i := range specs {
		specs[i] = launcher.ReplicaSpec{Model: m, Replica: i}
	}
	eps, err = sup.Start(ctx, specs...)
	stop = func(w io.Writer) {
		stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := sup.StopAll(stopCtx); err != nil {
			fmt.Fprintln(w, "soak: stopping the engines:", err)
		}
	}
	return eps, stop, err
}

// writeSoakReport writes what the soak measured: throughput, CPU per
// request, peak RSS, and the RSS and live heap per thousand requests,
// first against last.
func writeSoakReport(w io.Writer, o soakOptions, sum send.Summary, wall, cpu time.Duration, prog *soakProgress) {
	peak, _ := procStatus("VmHWM")
	first, last := prog.window(0, 1000), prog.window(o.Requests-1000, o.Requests)
	fmt.Fprintf(w, "soak: %d requests (%d answered, %d not run) over %d sim engine replicas, %d in flight\n",
		sum.Requests, sum.Answered, sum.NotRun, o.Replicas, o.Concurrency)
	fmt.Fprintf(w, "throughput: %.0f requests/s (%.1fs wall)\n", float64(sum.Requests)/wall.Seconds(), wall.Seconds())
	fmt.Fprintf(w, "npcorch CPU: %.0f µs per request (%.1fs user+system in all)\n",
		float64(cpu.Microseconds())/float64(sum.Requests), cpu.Seconds())
	fmt.Fprintf(w, "npcorch peak RSS (VmHWM): %.1f MiB\n", float64(peak)/1024)
	fmt.Fprintf(w, "RSS over requests 0–1000: max %.1f MiB; over the last 1000: max %.1f MiB; change %+.1f %%\n",
		float64(first)/1024, float64(last)/1024, 100*(float64(last)-float64(first))/float64(first))
	fmt.Fprintf(w, "RSS per thousand requests (MiB):")
	for k := 1000; k <= o.Requests; k += 1000 {
		fmt.Fprintf(w, " %.1f", float64(prog.window(k-1000, k))/1024)
	}
	fmt.Fprintln(w)
	l0, l1 := prog.live[1000], prog.live[o.Requests-o.Requests%1000]
	fmt.Fprintf(w, "live Go heap after 1000 requests: %.1f MiB; after %d: %.1f MiB; change %+.1f %%\n",
		float64(l0)/(1<<20), o.Requests-o.Requests%1000, float64(l1)/(1<<20), 100*(float64(l1)-float64(l0))/float64(max(l0, 1)))
	fmt.Fprintf(w, "live Go heap per thousand requests (MiB):")
	for k := 1000; k <= o.Requests; k += 1000 {
		fmt.Fprintf(w, " %.1f", float64(prog.live[k])/(1<<20))
	}
	fmt.Fprintln(w)
}

// soakProgress samples the RSS every `every` journaled requests.
type soakProgress struct {
	every int

	mu      sync.Mutex
	n       int
	samples map[int]int64  // requests done → RSS in KiB
	live    map[int]uint64 // requests done → live Go heap in bytes after the last GC
}

func (p *soakProgress) Start(string, int) {}

func (p *soakProgress) Finish(string, send.Summary) {}

func (p *soakProgress) Record(journal.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.n%p.every == 0 {
		if p.samples == nil {
			p.samples = map[int]int64{}
		}
		if rss, err := procStatus("VmRSS"); err == nil {
			p.samples[p.n] = rss
		}
		if p.live == nil {
			p.live = map[int]uint64{}
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		p.live[p.n] = s[0].Value.Uint64()
	}
}

// window is the largest RSS sampled with from < requests done <= to.
func (p *soakProgress) window(from, to int) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]int, 0, len(p.samples))
	for k := range p.samples {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var m int64
	for _, k := range keys {
		if k > from && k <= to {
			m = max(m, p.samples[k])
		}
	}
	return m
}

// procStatus reads a kB field of /proc/self/status.
func procStatus(field string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", field)
}

// cpuTime is this process's user plus system CPU time (children apart).
func cpuTime() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
