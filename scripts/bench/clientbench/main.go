package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/simengine"
	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/npcbench"
)

// roleEnv marks a child process: its first argument is then its role.
const roleEnv = "CLIENTBENCH_CHILD"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv(roleEnv) == "1" && len(os.Args) > 1 {
		os.Exit(child(ctx, os.Args[1], os.Args[2:]))
	}
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "clientbench:", err)
		os.Exit(1)
	}
}

func child(ctx context.Context, role string, args []string) int {
	var err error
	switch role {
	case "sim-engine":
		return simengine.ExitCode(simengine.Main(ctx, args, os.Stdout, os.Stderr))
	case "go-client":
		err = goClient(ctx, args, os.Stdout)
	case "go-runner":
		err = goRunner(ctx, args, os.Stdout)
	case "go-floor":
		err = goFloor(ctx, args, os.Stdout)
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "clientbench %s: %v\n", role, err)
		return 1
	}
	return 0
}

// options are the command line of a benchmark run.
type options struct {
	out         string
	requests    int
	concurrency int
	reps        int
	images      int
	python      string
	script      string
	mem         bool
	memSizes    []int
	memWorkers  int
	decodeTPS   float64
	media       []configs.MediaMode
	memList     bool
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseOptions(args)
	if err != nil {
		return err
	}
	w, err := prepareWorkload(o)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	base, stopEngine, err := startEngine(ctx, exe, w.root, w.keyPath, filepath.Join(o.out, "engine.log"), o.decodeTPS)
	if err != nil {
		return err
	}
	defer stopEngine()

	results, err := runClients(ctx, o, w, exe, base)
	if err != nil {
		return err
	}
	report := report{Machine: machine(), Requests: o.requests, Concurrency: o.concurrency, Images: o.images,
		ImageBytes: meanBytes(w.images), Clients: results}
	if o.mem {
		if report.Memory, err = runMemChecks(ctx, o, w, exe, base); err != nil {
			return err
		}
	}
	if err := writeJSON(filepath.Join(o.out, "results.json"), report); err != nil {
		return err
	}
	report.write(stdout)
	return nil
}

// parseOptions reads the flags into options, refusing counts, media modes
// and speeds the benchmark cannot run; out becomes absolute.
func parseOptions(args []string) (options, error) {
	var o options
	var sizes string
	fs := flag.NewFlagSet("clientbench", flag.ContinueOnError)
	fs.StringVar(&o.out, "out", "", "work folder (images, key, journals, results.json); required")
	fs.IntVar(&o.requests, "requests", 40, "requests per client and media mode")
	fs.IntVar(&o.concurrency, "concurrency", 4, "requests in flight per client")
	fs.IntVar(&o.reps, "reps", 3, "repetitions of each client run (the median is reported)")
	fs.IntVar(&o.images, "images", 80, "images per request")
	fs.StringVar(&o.python, "python", "/usr/bin/python3", "Python with aiohttp (Debian python3-aiohttp)")
	fs.StringVar(&o.script, "script", "scripts/bench/client_bench.py", "the Python client")
	fs.BoolVar(&o.mem, "mem", false, "also run the memory-flatness check of the runner")
	fs.StringVar(&sizes, "mem-sizes", "1000,10000", "item counts of the memory check; the first is also run with 10 repeats")
	fs.IntVar(&o.memWorkers, "mem-workers", 4, "requests in flight in the memory check")
	fs.Float64Var(&o.decodeTPS, "decode-tps", 1e9, "the engine's decode speed per request, tokens/s (1e9: as fast as it can write; a real engine streams 20-150)")
	media := fs.String("media", string(configs.MediaFile)+","+string(configs.MediaBase64), "media modes to run, separated by commas")
	fs.BoolVar(&o.memList, "mem-list", true, "also run the largest memory check with its items in an in-memory list, for comparison")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.out == "" {
		return o, errors.New("-out is required (a folder for images, key and results)")
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-mem-sizes %q: want positive counts separated by commas", sizes)
		}
		o.memSizes = append(o.memSizes, n)
	}
	for _, name := range strings.Split(*media, ",") {
		m := configs.MediaMode(strings.TrimSpace(name))
		if m != configs.MediaFile && m != configs.MediaBase64 {
			return o, fmt.Errorf("-media %q: want %s and/or %s separated by commas", *media, configs.MediaFile, configs.MediaBase64)
		}
		o.media = append(o.media, m)
	}
	if o.decodeTPS <= 0 {
		return o, fmt.Errorf("-decode-tps %g: want a positive speed", o.decodeTPS)
	}
	var err error
	o.out, err = filepath.Abs(o.out)
	return o, err
}

// workload is what every client sends: the images (written under root and
// listed in imagesJSON), the staging prompt over them, the answer the
// simulated engine gives (its key at keyPath) and the request's token
// budget.
type workload struct {
	root, imagesJSON, keyPath string
	images                    []dataset.Image
	prompt, answer            string
	maxTokens                 int
}

// prepareWorkload writes the images, their list and the engine's answer
// key into o.out, and renders the prompt.
func prepareWorkload(o options) (*workload, error) {
	w := &workload{root: filepath.Join(o.out, "images"), imagesJSON: filepath.Join(o.out, "images.json"), keyPath: filepath.Join(o.out, "simkey.json")}
	fmt.Fprintf(os.Stderr, "writing %d images of %dx%d into %s\n", o.images, imageWidth, imageHeight, w.root)
	var err error
	if w.images, err = writeImages(w.root, o.images, 1); err != nil {
		return nil, err
	}
	if err := writeJSON(w.imagesJSON, w.images); err != nil {
		return nil, err
	}
	m, err := benchModelConfig()
	if err != nil {
		return nil, err
	}
	w.maxTokens = m.Tasks[benchTask].MaxTokens
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", npcbench.Registry(configs.DefaultStructures()))
	if err != nil {
		return nil, err
	}
	if w.prompt, err = prompts.Render(stagingItem(w.images), nil); err != nil {
		return nil, err
	}
	w.answer = stagingAnswer(configs.DefaultStructures())
	if err := writeKey(w.keyPath, w.images, w.answer); err != nil {
		return nil, err
	}
	return w, nil
}

// runClients runs every client o.reps times per media mode against the
// engine at base: the Go client, the Python one, and (for file://) the two
// floors. A failed request or a wrong answer stops the benchmark.
func runClients(ctx context.Context, o options, w *workload, exe, base string) ([]clientResult, error) {
	abs := make([]string, len(w.images))
	for i, img := range w.images {
		abs[i] = filepath.Join(w.root, img.Path)
	}
	var results []clientResult
	for rep := 0; rep < o.reps; rep++ {
		for _, media := range o.media {
			spec := pySpec{Base: base, Model: benchModel, Prompt: w.prompt, Images: abs, Media: media, Requests: o.requests,
				Concurrency: o.concurrency, MaxTokens: w.maxTokens, Expect: w.answer}
			specPath := filepath.Join(o.out, "python-"+string(media)+".json")
			if err := writeJSON(specPath, spec); err != nil {
				return nil, err
			}
			for _, argv := range clientCommands(o, w, exe, base, media, specPath) {
				r, err := runClient(ctx, argv)
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(os.Stderr, "rep %d: %s %s: %.1f ms CPU/request, %d MB peak, %d errors\n", rep+1, r.Client, r.Media,
					1000*r.CPUSeconds/float64(r.Requests), r.MaxRSSKB/1024, r.Errors+r.WrongAnswer)
				if r.Errors+r.WrongAnswer > 0 {
					return nil, fmt.Errorf("%s client (%s): %d failed requests and %d wrong answers; see %s", r.Client, r.Media, r.Errors, r.WrongAnswer, filepath.Join(o.out, "engine.log"))
				}
				results = append(results, r)
			}
		}
	}
	return results, nil
}

// clientCommands are the command lines of the clients of one media mode:
// the Go client, the Python one (reading specPath) and, for file://, the
// HTTP and TCP floors.
func clientCommands(o options, w *workload, exe, base string, media configs.MediaMode, specPath string) [][]string {
	goArgs := []string{exe, "go-client", "-base", base, "-root", w.root, "-images", w.imagesJSON, "-media", string(media),
		"-requests", strconv.Itoa(o.requests), "-concurrency", strconv.Itoa(o.concurrency), "-expect", w.answer}
	clients := [][]string{goArgs, {o.python, o.script, specPath}}
	if media == configs.MediaFile {
		for _, mode := range []string{"http", "tcp"} {
			clients = append(clients, []string{exe, "go-floor", "-mode", mode, "-base", base, "-root", w.root, "-images", w.imagesJSON,
				"-requests", strconv.Itoa(o.requests), "-concurrency", strconv.Itoa(o.concurrency)})
		}
	}
	return clients
}

// runMemChecks runs the runner's memory-flatness check: the same items
// sent 10 times over, then more items: requests grow 10-fold either way.
// The items come from a source that makes each when the runner asks; the
// last run hands the largest count over as an item list instead.
func runMemChecks(ctx context.Context, o options, w *workload, exe, base string) ([]memResult, error) {
	type memRun struct {
		items, repeats int
		list           bool
	}
	runs := []memRun{{o.memSizes[0], 1, false}, {o.memSizes[0], 10, false}}
	for _, n := range o.memSizes[1:] {
		runs = append(runs, memRun{n, 1, false})
	}
	if o.memList {
		runs = append(runs, memRun{o.memSizes[len(o.memSizes)-1], 1, true})
	}
	var out []memResult
	for _, mr := range runs {
		dir := filepath.Join(o.out, fmt.Sprintf("mem-%dx%d", mr.items, mr.repeats))
		if mr.list {
			dir += "-list"
		}
		r, err := runMem(ctx, exe, base, w.root, w.imagesJSON, dir, mr.items, mr.repeats, o.memWorkers, mr.list)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "memory: %d items x %d from %s: peak live heap %.1f MB, max RSS %.1f MB\n", mr.items, mr.repeats,
			r.from(), float64(r.PeakLiveBytes)/(1<<20), float64(r.MaxRSSKB)/1024)
		out = append(out, r)
	}
	return out, nil
}

// stagingAnswer is a realistic L3 T-staging answer (about 700 characters,
// streamed one token per chunk).
func stagingAnswer(st *configs.Structures) string {
	var b strings.Builder
	b.WriteString(`{"structure_invasion":{`)
	for i, id := range st.IDs() {
		if i > 0 {
			b.WriteByte(',')
		}
		inv := 0
		if i%5 == 0 {
			inv = 1
		}
		fmt.Fprintf(&b, "%q:%d", id, inv)
	}
	b.WriteString(`},"t_stage":"T3"}`)
	return b.String()
}

// writeKey writes the engine's answer key: the staging answer for the
// whole image set, and "1" for each image alone (the memory check's
// pathology requests).
func writeKey(path string, images []dataset.Image, answer string) error {
	key := &simkey.Key{Format: simkey.Format}
	all := make([]string, len(images))
	for i, img := range images {
		all[i] = img.SHA256
	}
	key.Items = append(key.Items, simkey.Item{ID: benchTask + "/BENCH", Images: simkey.Fingerprint(all), Right: answer})
	for i, img := range images {
		key.Items = append(key.Items, simkey.Item{ID: fmt.Sprintf("pathology/%d", i), Images: simkey.Fingerprint([]string{img.SHA256}), Right: "1"})
	}
	return key.Write(path)
}

// startEngine starts the simulated engine as a child in its own process
// group and waits until it is ready. Prefill is near-instant; decode runs at
// decodeTPS tokens/s per request, one token per event (1e9: as fast as the
// engine can write, so that the clients' own work dominates).
func startEngine(ctx context.Context, exe, root, key, logPath string, decodeTPS float64) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	logf, err := os.Create(logPath)
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe, "sim-engine", "serve", benchModel, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--sim-workers", "0", "--disable-uvicorn-access-log", "--allowed-local-media-path", root, "--sim-key", key,
		"--max-num-seqs", "256", "--max-model-len", "1000000", "--sim-kv-tokens", "1000000000",
		"--sim-prefill-tps", "1e12", "--sim-decode-tps", strconv.FormatFloat(decodeTPS, 'g', -1, 64), "--sim-chunk-tokens", "1")
	cmd.Env = append(os.Environ(), roleEnv+"=1", simengine.SelfEnv+"="+exe)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return "", nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logf.Close()
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base, stop, nil
			}
		}
		select {
		case <-exited:
			return "", nil, fmt.Errorf("the sim engine exited during start-up; see %s", logPath)
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("the sim engine was not ready within 30 s; see %s", logPath)
		}
	}
}

// pySpec is what scripts/bench/client_bench.py reads.
type pySpec struct {
	Base        string            `json:"base"`
	Model       string            `json:"model"`
	Prompt      string            `json:"prompt"`
	Images      []string          `json:"images"`
	Media       configs.MediaMode `json:"media"`
	Requests    int               `json:"requests"`
	Concurrency int               `json:"concurrency"`
	MaxTokens   int               `json:"max_tokens"`
	Expect      string            `json:"expect"`
}

// runClient runs one client process and reads its clientResult.
func runClient(ctx context.Context, argv []string) (clientResult, error) {
	var r clientResult
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), roleEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return r, fmt.Errorf("%s: %w\n%s", strings.Join(argv[:2], " "), err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return r, fmt.Errorf("%s printed %q: %w", strings.Join(argv[:2], " "), out.String(), err)
	}
	r.ProcessCPUSeconds = (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	return r, nil
}

// from names where a memory run's items came from.
func (m memResult) from() string {
	if m.List {
		return "item list"
	}
	return "source"
}

// runMem runs the runner over n requests in a child and reads its result.
func runMem(ctx context.Context, exe, base, root, imagesJSON, runDir string, n, repeats, workers int, list bool) (memResult, error) {
	var r memResult
	if err := os.RemoveAll(runDir); err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, exe, "go-runner", "-base", base, "-root", root, "-images", imagesJSON,
		"-n", strconv.Itoa(n), "-repeats", strconv.Itoa(repeats), "-workers", strconv.Itoa(workers), "-run", runDir,
		"-list="+strconv.FormatBool(list))
	cmd.Env = append(os.Environ(), roleEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return r, fmt.Errorf("go-runner -n %d: %w\n%s", n, err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return r, fmt.Errorf("go-runner printed %q: %w", out.String(), err)
	}
	if r.Answered != n*repeats {
		return r, fmt.Errorf("go-runner -n %d -repeats %d answered %d (not run %d)", n, repeats, r.Answered, r.NotRun)
	}
	return r, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func meanBytes(images []dataset.Image) int64 {
	var total int64
	for _, img := range images {
		total += img.Bytes
	}
	return total / int64(max(len(images), 1))
}

// machine describes where the benchmark ran.
func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs", model, runtime.NumCPU())
}

// report is results.json and the Markdown tables.
type report struct {
	Machine     string         `json:"machine"`
	Requests    int            `json:"requests"`
	Concurrency int            `json:"concurrency"`
	Images      int            `json:"images"`
	ImageBytes  int64          `json:"mean_image_bytes"`
	Clients     []clientResult `json:"clients"`
	Memory      []memResult    `json:"memory,omitempty"`
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func (r report) write(w io.Writer) {
	if len(r.Clients) > 0 {
		r.writeClients(w)
	}
	if len(r.Memory) > 0 {
		r.writeMemory(w)
	}
}

func (r report) writeClients(w io.Writer) {
	fmt.Fprintf(w, "Machine: %s. %d requests of %d images (mean %d KB) per run, %d in flight, median of the runs.\n\n",
		r.Machine, r.Requests, r.Images, r.ImageBytes/1000, r.Concurrency)
	fmt.Fprintln(w, "| media | client | CPU ms / request | CPU ratio Python/Go | whole-process CPU s | peak RSS MB | request body bytes |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, media := range []configs.MediaMode{configs.MediaFile, configs.MediaBase64} {
		clients := []string{"go", "python"}
		if media == configs.MediaFile {
			clients = append(clients, floorHTTP, floorTCP)
		}
		type row struct {
			cpu, proc, rss float64
			body           int
			ran            bool
		}
		rows := map[string]row{}
		for _, client := range clients {
			var cpu, proc, rss []float64
			var rw row
			for _, c := range r.Clients {
				if c.Media == media && c.Client == client {
					cpu = append(cpu, 1000*c.CPUSeconds/float64(c.Requests))
					proc = append(proc, c.ProcessCPUSeconds)
					rss = append(rss, float64(c.MaxRSSKB)/1024)
					rw.body, rw.ran = c.BodyBytes, true
				}
			}
			rw.cpu, rw.proc, rw.rss = median(cpu), median(proc), median(rss)
			rows[client] = rw
		}
		for _, client := range clients {
			rw := rows[client]
			if !rw.ran {
				continue
			}
			ratio := ""
			if client != "python" && rw.cpu > 0 {
				ratio = fmt.Sprintf("%.1fx", rows["python"].cpu/rw.cpu)
			}
			fmt.Fprintf(w, "| %s | %s | %.2f | %s | %.2f | %.0f | %d |\n", media, client, rw.cpu, ratio, rw.proc, rw.rss, rw.body)
		}
	}
	fmt.Fprintln(w)
}

func (r report) writeMemory(w io.Writer) {
	fmt.Fprintln(w, "| items × repeats | items from | requests answered | item list MB | peak live heap MB | peak heap objects MB | max RSS MB | CPU s | wall s |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, m := range r.Memory {
		mb := func(b uint64) float64 { return float64(b) / (1 << 20) }
		fmt.Fprintf(w, "| %d × %d | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", m.Items, m.Repeats, m.from(), m.Answered, mb(m.ItemsBytes),
			mb(m.PeakLiveBytes), mb(m.PeakHeapBytes), float64(m.MaxRSSKB)/1024, m.CPUSeconds, m.WallSeconds)
	}
	fmt.Fprintln(w, "\nitem list MB: what a list of the run's items holds (measured after the run where a source made them; held for the whole run where a list was given).")
}
