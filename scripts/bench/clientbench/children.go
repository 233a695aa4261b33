package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// benchModel is the served model name of the benchmark engine.
const benchModel = "bench-model"

// benchTask is the task of the 80-image requests: T staging from plane
// groups (prompt A9), one request per patient.
const benchTask = npcbench.TGroups

// clientResult is what a client child reports on stdout, Go or Python.
type clientResult struct {
	Client      string            `json:"client"`
	Media       configs.MediaMode `json:"media"`
	Requests    int               `json:"requests"`
	Errors      int               `json:"errors"`
	WrongAnswer int               `json:"wrong_answers"`
	CPUSeconds  float64           `json:"cpu_s"` // user + system time of the sending loop
	WallSeconds float64           `json:"wall_s"`
	MaxRSSKB    int64             `json:"maxrss_kb"`
	BodyBytes   int               `json:"body_bytes"`
	// ProcessCPUSeconds is the child's whole user + system time, start-up
	// included, as the parent saw it.
	ProcessCPUSeconds float64 `json:"process_cpu_s"`
}

// benchModelConfig is Lingshu-7B's registry entry served as benchModel,
// sending every image of a request (no sub-sampling).
func benchModelConfig() (configs.Model, error) {
	reg, err := configs.DefaultRegistry()
	if err != nil {
		return configs.Model{}, err
	}
	m, ok := reg.Get("Lingshu-7B")
	if !ok {
		return configs.Model{}, errors.New("Lingshu-7B is missing from the model registry")
	}
	m.Name = benchModel
	s := m.Tasks[benchTask]
	s.MaxImages = 0
	m.Tasks[benchTask] = s
	return m, nil
}

// clientInputs loads what both client children send: the generated
// images, the bench model and the embedded prompts.
func clientInputs(imagesJSON string) ([]dataset.Image, configs.Model, *tasks.Prompts, error) {
	images, err := readImages(imagesJSON)
	if err != nil {
		return nil, configs.Model{}, nil, err
	}
	m, err := benchModelConfig()
	if err != nil {
		return nil, configs.Model{}, nil, err
	}
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", npcbench.Registry(configs.DefaultStructures()))
	return images, m, prompts, err
}

// stagingItem is one patient's T-staging request over all the images.
func stagingItem(images []dataset.Image) tasks.Item {
	return tasks.Item{ID: benchTask + "/BENCH", Task: benchTask, Patient: "BENCH", Images: images, Gold: tasks.Gold{Label: "T3"}}
}

func readImages(path string) ([]dataset.Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var images []dataset.Image
	if err := json.Unmarshal(data, &images); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return images, nil
}

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func maxRSSKB() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Maxrss
}

func clientSettings() configs.ClientSettings {
	return configs.ClientSettings{ConnectTimeout: 10 * time.Second, FirstTokenTimeout: 5 * time.Minute,
		ChunkTimeout: time.Minute, TotalTimeout: 10 * time.Minute}
}

// goClient is the "go-client" role: it builds and streams -requests
// requests of the staging item, -concurrency at a time, exactly as the
// runner would (RequestBuilder.Build, then Client.Stream), and reports a
// clientResult.
func goClient(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("go-client", flag.ContinueOnError)
	base := fs.String("base", "", "engine base URL")
	root := fs.String("root", "", "image folder")
	imagesJSON := fs.String("images", "", "images.json")
	media := fs.String("media", string(configs.MediaFile), "file or base64")
	n := fs.Int("requests", 10, "requests")
	conc := fs.Int("concurrency", 4, "requests in flight")
	expect := fs.String("expect", "", "the answer the engine gives")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the sending loop here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	images, m, prompts, err := clientInputs(*imagesJSON)
	if err != nil {
		return err
	}
	b := tasks.RequestBuilder{Model: m, Media: configs.MediaMode(*media), Root: *root}
	item := stagingItem(images)
	client := inference.NewClient(clientSettings())
	defer client.Close()
	ep := launcher.Endpoint{Model: benchModel, BaseURL: *base + "/v1"}

	res := clientResult{Client: "go", Media: configs.MediaMode(*media), Requests: *n}

	var errs, wrong, bodyBytes atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(*conc)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cpu0, t0 := cpuSeconds(), time.Now()
	for i := 0; i < *n; i++ {
		g.Go(func() error {
			req, err := b.Build(prompts, item, i, nil)
			if err != nil {
				return err
			}
			ans, err := client.Send(gctx, ep, req.Body, req.Inline)
			if ans != nil {
				bodyBytes.Store(ans.RequestBytes)
			}
			switch {
			case err != nil:
				errs.Add(1)
			case ans.Content != *expect:
				wrong.Add(1)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	res.CPUSeconds, res.WallSeconds = cpuSeconds()-cpu0, time.Since(t0).Seconds()
	res.Errors, res.WrongAnswer, res.MaxRSSKB = int(errs.Load()), int(wrong.Load()), maxRSSKB()
	res.BodyBytes = int(bodyBytes.Load())
	return json.NewEncoder(stdout).Encode(res)
}

// memResult is what a "go-runner" child reports.
type memResult struct {
	Items    int `json:"items"`
	Repeats  int `json:"repeats"`
	Requests int `json:"requests"`
	Answered int `json:"answered"`
	NotRun   int `json:"not_run"`
	// List is true when the runner read an in-memory item list, false when
	// it read a source that makes each item as it is asked for.
	List bool `json:"list,omitempty"`
	// ItemsBytes is the heap an item list of these items holds (measured
	// after a GC), whether or not the run holds one.
	ItemsBytes uint64 `json:"items_bytes"`
	// PeakHeapBytes is the largest heap-object total (live and not yet
	// collected) sampled every 2 ms; PeakLiveBytes the largest live heap
	// the garbage collector marked.
	PeakHeapBytes uint64  `json:"peak_heap_bytes"`
	PeakLiveBytes uint64  `json:"peak_live_bytes"`
	MaxRSSKB      int64   `json:"maxrss_kb"`
	CPUSeconds    float64 `json:"cpu_s"`
	WallSeconds   float64 `json:"wall_s"`
}

// benchItems is the memory check's item source: n distinct single-image
// pathology items, each made when the runner asks for it, so that nothing
// holds them all.
type benchItems struct {
	n      int
	images []dataset.Image
}

func (s benchItems) Len() int { return s.n }

func (s benchItems) Items() iter.Seq[tasks.Item] {
	return func(yield func(tasks.Item) bool) {
		for i := range s.n {
			p := fmt.Sprintf("P%05d", i)
			it := tasks.Item{ID: npcbench.Pathology + "/" + p, Task: npcbench.Pathology, Patient: p,
				Images: []dataset.Image{s.images[i%len(s.images)]}, Gold: tasks.Gold{Label: "1"}}
			if !yield(it) {
				return
			}
		}
	}
}

// heapObjects is the runtime's count of bytes in live and not yet swept
// heap objects.
func heapObjects() uint64 { return readMetric("/memory/classes/heap/objects:bytes") }

// heapLive is the heap the last garbage collection found live.
func heapLive() uint64 { return readMetric("/gc/heap/live:bytes") }

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// collectItems reads src into an item list of its exact length and
// measures the heap the list holds.
func collectItems(src tasks.ItemSource) (tasks.ItemList, uint64) {
	gc := func() {
		// Twice: what sync.Pools held (the HTTP client's buffers after a
		// run) outlives one collection.
		runtime.GC()
		runtime.GC()
	}
	gc()
	before := heapObjects()
	list := make(tasks.ItemList, 0, src.Len())
	for it := range src.Items() {
		list = append(list, it)
	}
	gc()
	after := heapObjects()
	return list, after - min(before, after)
}

// goRunner is the "go-runner" role: npcorch's Runner sends -n distinct
// single-image pathology items -repeats times each (base64 by default, so
// that every prepared request holds an image's bytes) and journals them; it
// reports peak memory. The items come from benchItems, made as the runner
// asks for them, or with -list from an item list held for the whole run.
func goRunner(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("go-runner", flag.ContinueOnError)
	base := fs.String("base", "", "engine base URL")
	root := fs.String("root", "", "image folder")
	imagesJSON := fs.String("images", "", "images.json")
	media := fs.String("media", string(configs.MediaBase64), "file or base64")
	n := fs.Int("n", 1000, "items")
	repeats := fs.Int("repeats", 1, "repeats of each item")
	workers := fs.Int("workers", 4, "requests in flight")
	run := fs.String("run", "", "run folder for the journal")
	useList := fs.Bool("list", false, "hand the runner an in-memory item list instead of a source that makes each item when asked")
	if err := fs.Parse(args); err != nil {
		return err
	}
	images, m, prompts, err := clientInputs(*imagesJSON)
	if err != nil {
		return err
	}
	var src tasks.ItemSource = benchItems{n: *n, images: images}
	res := memResult{Items: *n, Repeats: *repeats, Requests: *n * *repeats, List: *useList}
	if *useList {
		var list tasks.ItemList
		list, res.ItemsBytes = collectItems(src)
		src = list
	}

	j, err := journal.Open(*run)
	if err != nil {
		return err
	}
	defer j.Close()
	client := inference.NewClient(clientSettings())
	defer client.Close()
	r := &send.Runner{Client: client, Journal: j, Prompts: prompts, Retries: 2, Backoff: 10 * time.Millisecond,
		Tasks: npcbench.Registry(configs.DefaultStructures())}
	ep := launcher.Endpoint{Model: benchModel, BaseURL: *base + "/v1", MaxNumSeqs: *workers}

	var peak, live atomic.Uint64
	sctx, stop := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if h := heapObjects(); h > peak.Load() {
				peak.Store(h)
			}
			if h := heapLive(); h > live.Load() {
				live.Store(h)
			}
			select {
			case <-sctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	cpu0, t0 := cpuSeconds(), time.Now()
	s, err := r.Run(ctx, send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m, Media: configs.MediaMode(*media), Root: *root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, *workers), Items: src, Repeats: *repeats, Workers: *workers})
	stop()
	<-sampled
	if err != nil {
		return err
	}
	res.CPUSeconds, res.WallSeconds = cpuSeconds()-cpu0, time.Since(t0).Seconds()
	res.Answered, res.NotRun, res.PeakHeapBytes, res.PeakLiveBytes, res.MaxRSSKB = s.Answered, s.NotRun, peak.Load(), live.Load(), maxRSSKB()
	if !*useList {
		// What a list of the items would have held: measured after the
		// run and its peaks, so that the list never counts in them.
		_, res.ItemsBytes = collectItems(src)
	}
	runtime.KeepAlive(src)
	return json.NewEncoder(stdout).Encode(res)
}
