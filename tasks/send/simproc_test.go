package send_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher"
	"github.com/npcorch/npcorch/launcher/proctest"
	"github.com/npcorch/npcorch/launcher/simkey"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/inference"
	"github.com/npcorch/npcorch/tasks/journal"
	"github.com/npcorch/npcorch/tasks/npcbench"
	"github.com/npcorch/npcorch/tasks/send"
)

// simModel is the served name of every simulated engine in these tests.
const simModel = "sim-model"

// waitLimit bounds every wait for a process or engine event; it is a safety
// net against hangs, never a latency assertion.
const waitLimit = 30 * time.Second

// simEngine is a simulated engine running as a real child process in its
// own process group.
type simEngine struct {
	t      testing.TB
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:PORT
	out    *proctest.Buffer
	exited chan struct{}
}

// spawnEngine starts `sim-engine serve sim-model --host 127.0.0.1 --port P
// --sim-workers 0 args...` without waiting for it to be ready.
func spawnEngine(t testing.TB, args ...string) *simEngine {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	port := proctest.FreePort(t)
	full := append([]string{"sim-engine", "serve", simModel, "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--sim-workers", "0", "--disable-uvicorn-access-log"}, args...)
	cmd := exec.Command(exe, full...)
	cmd.Env = append(os.Environ(), send.ChildEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	e := &simEngine{t: t, cmd: cmd, base: fmt.Sprintf("http://127.0.0.1:%d", port), out: &proctest.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = e.out, e.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(e.exited)
	}()
	t.Cleanup(func() {
		e.kill()
		if t.Failed() {
			t.Logf("engine %s output:\n%s", e.base, e.out)
		}
	})
	return e
}

// startEngine spawns an engine and waits until /health answers 200.
func startEngine(t testing.TB, args ...string) *simEngine {
	t.Helper()
	e := spawnEngine(t, args...)
	eventually(t, "engine "+e.base+" is ready", func() bool {
		select {
		case <-e.exited:
			t.Fatalf("engine exited during start-up:\n%s", e.out)
		default:
		}
		resp, err := http.Get(e.base + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return e
}

// kill SIGKILLs the engine's process group and waits for it.
func (e *simEngine) kill() {
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	<-e.exited
}

// endpoint is the engine as the client sees it.
func (e *simEngine) endpoint(name string, maxNumSeqs int) launcher.Endpoint {
	return launcher.Endpoint{Model: name, BaseURL: e.base + "/v1", MaxNumSeqs: maxNumSeqs, MetricsURL: e.base + "/metrics"}
}

// eventually polls cond until it holds, failing the test after waitLimit.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sent is one chat request as it crossed the recording proxy.
type sent struct {
	Text   string   // every text part, joined by "\n"
	Images []string // image URLs (file:// paths, or data URLs)
}

// recorder is a reverse proxy in front of an engine that remembers every
// chat request it forwards, in arrival order.
type recorder struct {
	mu   sync.Mutex
	reqs []sent
	URL  string // base URL of the proxy, ending in /v1
}

func newRecorder(t testing.TB, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // pass SSE chunks through at once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions") {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			rec.add(body)
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rec.URL = srv.URL + "/v1"
	return rec
}

// sentChat is what the tests read of a chat completion request: the text
// and image parts of its messages.
type sentChat struct {
	Messages []struct {
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		} `json:"content"`
	} `json:"messages"`
}

func (rec *recorder) add(body []byte) {
	var req sentChat
	_ = json.Unmarshal(body, &req)
	var s sent
	var texts []string
	for _, m := range req.Messages {
		for _, p := range m.Content {
			if p.Type == "text" {
				texts = append(texts, p.Text)
			} else {
				s.Images = append(s.Images, p.ImageURL.URL)
			}
		}
	}
	s.Text = strings.Join(texts, "\n")
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, s)
	rec.mu.Unlock()
}

// requests returns a copy of what was sent so far.
func (rec *recorder) requests() []sent {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]sent(nil), rec.reqs...)
}

// endpoint is the proxied engine as the client sees it.
func (rec *recorder) endpoint(name string, maxNumSeqs int) launcher.Endpoint {
	return launcher.Endpoint{Model: name, BaseURL: rec.URL, MaxNumSeqs: maxNumSeqs}
}

// pngBytes is a small, valid, distinct PNG for each seed.
func pngBytes(seed int) []byte {
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	for i := range img.Pix {
		img.Pix[i] = byte(seed*31 + i*7)
	}
	img.Set(0, 0, color.Gray{Y: byte(seed >> 8)})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return b.Bytes()
}

// imageFile describes a PNG under root, writing it when write is set.
func imageFile(t testing.TB, root string, seed int, write bool) dataset.Image {
	t.Helper()
	data := pngBytes(seed)
	name := fmt.Sprintf("img%05d.png", seed)
	if write {
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum := sha256.Sum256(data)
	return dataset.Image{Path: name, SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(data)), Width: 8, Height: 8}
}

// pathologyItems are n single-image pathology items, golds alternating.
func pathologyItems(t testing.TB, root string, n int, write bool) []tasks.Item {
	t.Helper()
	items := make([]tasks.Item, n)
	for i := range items {
		p := fmt.Sprintf("P%04d", i)
		items[i] = tasks.Item{ID: "pathology/" + p, Task: npcbench.Pathology, Patient: p,
			Images: []dataset.Image{imageFile(t, root, i, write)}, Gold: tasks.Gold{Label: strconv.Itoa(i % 2)}}
	}
	return items
}

// simModelConfig is Lingshu-7B's registry entry served under simModel.
func simModelConfig(t testing.TB) configs.Model {
	t.Helper()
	reg, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	m, ok := reg.Get("Lingshu-7B")
	if !ok {
		t.Fatal("Lingshu-7B is not in the registry")
	}
	m.Name = simModel
	return m
}

func defaultPrompts(t testing.TB) *tasks.Prompts {
	t.Helper()
	p, err := tasks.LoadPrompts(configs.Defaults, "prompts", benchmark())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writeSimKey writes the answer key of items (as BuildSimKey derives it)
// into dir and returns the --sim-key flag pair.
func writeSimKey(t testing.TB, dir string, b tasks.RequestBuilder, items []tasks.Item) []string {
	t.Helper()
	key, err := tasks.BuildSimKey(benchmark(), b, defaultPrompts(t), tasks.ItemList(items).Items())
	if err != nil {
		t.Fatal(err)
	}
	return writeKey(t, dir, key)
}

func writeKey(t testing.TB, dir string, key *simkey.Key) []string {
	t.Helper()
	path := filepath.Join(dir, "simkey.json")
	if err := key.Write(path); err != nil {
		t.Fatal(err)
	}
	return []string{"--sim-key", path}
}

// engineSettings are client limits generous enough that only the faults a
// test injects make requests fail.
func engineSettings() configs.ClientSettings {
	return configs.ClientSettings{ConnectTimeout: 2 * time.Second, FirstTokenTimeout: 10 * time.Second,
		ChunkTimeout: 10 * time.Second, TotalTimeout: 20 * time.Second}
}

// newEngineRunner is a Runner over a journal in run, with the real findings
// extractor.
func newEngineRunner(t testing.TB, run string, s configs.ClientSettings) *send.Runner {
	t.Helper()
	j, err := journal.Open(run)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	st, err := journal.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	c := inference.NewClient(s)
	t.Cleanup(c.Close)
	r := &send.Runner{Client: c, Journal: j, Prompts: defaultPrompts(t), Tasks: benchmark(),
		Retries: 2, Backoff: time.Millisecond}
	r.SetState(st)
	return r
}

// runnerSpec tells a runner child process what to run.
type runnerSpec struct {
	Run     string `json:"run"`
	Root    string `json:"root"`
	BaseURL string `json:"base_url"`
	Items   int    `json:"items"`
	Workers int    `json:"workers"`
}

// runRunnerChild runs the pathology items of a spec against its endpoint,
// journaling into its run folder: the process a test SIGKILLs mid-run.
func runRunnerChild(ctx context.Context, specPath string) (err error) {
	data, err := os.ReadFile(specPath)
	if err != nil {
		return err
	}
	var spec runnerSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		return fmt.Errorf("%s: %w", specPath, err)
	}
	t := &childTB{}
	defer t.cleanup()
	defer func() {
		switch p := recover().(type) {
		case nil:
		case childFatal:
			err = p.err
		default:
			panic(p)
		}
	}()
	r := newEngineRunner(t, spec.Run, engineSettings())
	m := simModelConfig(t)
	items := pathologyItems(t, spec.Root, spec.Items, false)
	ep := launcher.Endpoint{Model: simModel, BaseURL: spec.BaseURL, MaxNumSeqs: spec.Workers}
	_, err = r.Run(ctx, send.ModelRun{Model: m, Builder: tasks.RequestBuilder{Model: m, Media: configs.MediaFile, Root: spec.Root},
		Pool: inference.NewPool([]launcher.Endpoint{ep}, spec.Workers), Items: tasks.ItemList(items), Workers: spec.Workers})
	return err
}

// childTB lets the test helpers run in a child process, where there is no
// *testing.T: Fatal unwinds to runRunnerChild with a childFatal.
type childTB struct {
	testing.TB
	cleanups []func()
}

type childFatal struct{ err error }

func (c *childTB) Helper()                           {}
func (c *childTB) Fatal(args ...any)                 { panic(childFatal{fmt.Errorf("%s", fmt.Sprint(args...))}) }
func (c *childTB) Fatalf(format string, args ...any) { c.Fatal(fmt.Sprintf(format, args...)) }
func (c *childTB) Cleanup(f func())                  { c.cleanups = append(c.cleanups, f) }
func (c *childTB) cleanup() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
}
