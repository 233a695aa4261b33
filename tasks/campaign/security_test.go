package campaign

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/tasks"
	"github.com/npcorch/npcorch/tasks/dataset"
	"github.com/npcorch/npcorch/tasks/npcbench"
)

// securityCampaign's engines decode 10 tokens a second, so that each
// serves for a few tenths of a second, long enough for watchEngines to
// find it listening and ask it for a file, however fast the client.
const securityCampaign = `
name: security
node: fake:a800-sxm-8
output: run
seed: 3
%s
tasks: [pathology, sequence]
dataset: {raw: %q, prepared: %q}
client: {connect_timeout: 2s, first_token_timeout: 20s, chunk_timeout: 10s, total_timeout: 1m, backoff: 50ms}
models:
  - name: Qwen3-VL-8B-Instruct
    engine: {kind: sim, replicas: 2, sim: [--sim-policy, oracle, --sim-workers, "1", --sim-decode-tps, "10"]}
  - name: Lingshu-7B
    engine: {kind: sim, replicas: 1, sim: [--sim-policy, "right=0.5", --sim-workers, "1", --sim-decode-tps, "10"]}
`

// engineSeen is what the watcher learned about one engine process while
// the campaign ran.
type engineSeen struct {
	pid       int
	argv      []string
	key       string   // VLLM_API_KEY of its environment (only its owner reads /proc/PID/environ)
	listen    []string // local addresses of its listening sockets
	mediaTest string   // the answer to a file:// request outside the prepared root
}

// environ is the value of variable name in process pid's environment.
func environ(pid int, name string) string {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	if err != nil {
		return ""
	}
	for _, kv := range strings.Split(string(data), "\x00") {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func (e *engineSeen) flag(name string) string {
	for i, a := range e.argv {
		if a == name && i+1 < len(e.argv) {
			return e.argv[i+1]
		}
	}
	return ""
}

// watchEngines records, until ctx ends, every simulated engine process
// whose command line mentions runDir: its argv, its listening sockets, and
// how it answers a request for a file outside the prepared root.
func watchEngines(ctx context.Context, runDir string) map[int]*engineSeen {
	seen := map[int]*engineSeen{}
	var probes sync.WaitGroup
	defer probes.Wait()
	for {
		for _, pid := range pidsMentioning(runDir) {
			if _, ok := seen[pid]; ok {
				continue
			}
			cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			if err != nil {
				continue
			}
			argv := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
			if len(argv) < 3 || argv[1] != "sim-engine" || argv[2] != "serve" {
				continue // the shim, or a worker
			}
			// Each engine is probed on its own, so that a slow answer never
			// keeps the watcher from seeing a short-lived replica.
			e := &engineSeen{pid: pid, argv: argv, key: environ(pid, "VLLM_API_KEY")}
			seen[pid] = e
			probes.Add(1)
			go func() { defer probes.Done(); e.probe(ctx) }()
		}
		select {
		case <-ctx.Done():
			return seen
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// probe watches one engine until ctx ends: its key, the addresses it
// listens on, then its answer to a file:// request outside the prepared
// folder. The key is read again while empty: a process caught in the middle
// of exec shows its new command line before its environment.
func (e *engineSeen) probe(ctx context.Context) {
	for e.key == "" || e.listen == nil || e.mediaTest == "" {
		if e.key == "" {
			e.key = environ(e.pid, "VLLM_API_KEY")
		}
		if e.listen == nil {
			e.listen = listeners(e.flag("--port"))
		}
		if e.key != "" && e.listen != nil && e.mediaTest == "" {
			e.mediaTest = askForFile(ctx, e, "/etc/passwd")
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func pidsMentioning(s string) []int {
	var out []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if cmd, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); err == nil && bytes.Contains(cmd, []byte(s)) {
			out = append(out, pid)
		}
	}
	return out
}

// listeners returns the local addresses of the listening TCP sockets on
// port, read from /proc/net/tcp and tcp6.
func listeners(port string) []string {
	p, err := strconv.Atoi(port)
	if err != nil {
		return nil
	}
	var out []string
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			addr, hexPort, ok := strings.Cut(fields[1], ":")
			if n, err := strconv.ParseUint(hexPort, 16, 16); !ok || err != nil || int(n) != p {
				continue
			}
			out = append(out, decodeAddr(addr))
		}
		f.Close()
	}
	return out
}

// decodeAddr turns /proc/net/tcp's little-endian hex address into text.
func decodeAddr(h string) string {
	b, err := hex.DecodeString(h)
	if err != nil {
		return h
	}
	if len(b) == 4 {
		return fmt.Sprintf("%d.%d.%d.%d", b[3], b[2], b[1], b[0])
	}
	// IPv6: four little-endian 32-bit words.
	for i := 0; i+4 <= len(b); i += 4 {
		b[i], b[i+1], b[i+2], b[i+3] = b[i+3], b[i+2], b[i+1], b[i]
	}
	if bytes.Equal(b, make([]byte, 16)) {
		return "::"
	}
	if bytes.Equal(b[:15], make([]byte, 15)) && b[15] == 1 {
		return "::1"
	}
	return hex.EncodeToString(b)
}

// askForFile sends the engine a chat whose image is file://path with the
// engine's own API key, and returns the HTTP status and body.
func askForFile(ctx context.Context, e *engineSeen, path string) string {
	body, _ := json.Marshal(map[string]any{"model": e.flag("--served-model-name"), "max_tokens": 4, "messages": []any{
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "file://" + path}},
			map[string]any{"type": "text", "text": "?"},
		}}}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%s/v1/chat/completions", e.flag("--port")), bytes.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "" // not serving yet: ask again on the next look
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable {
		return "" // stopping: its engine core is gone, the question is moot
	}
	data, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%d %s", resp.StatusCode, data)
}

// runWatched runs the security campaign with hostLine in the campaign
// file, watching its engines, and returns what was seen and everything
// npcorch printed.
func runWatched(t *testing.T, hostLine string) (o *Outcome, seen map[int]*engineSeen, printed string) {
	t.Helper()
	data, prepDir := fixture(t)
	dir := t.TempDir()
	c, err := configs.ParseCampaign("security.yaml", dir, []byte(fmt.Sprintf(securityCampaign, hostLine, data, prepDir)), nil)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	var out, log, progress bytes.Buffer
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); seen = watchEngines(ctx, c.Path(c.Output)) }()
	o, err = Run(context.Background(), Options{Campaign: c, Self: []string{exe}, Out: &out, Log: &log, Progress: &progress, Timing: testTiming()})
	stop()
	wg.Wait()
	if err != nil {
		t.Fatalf("campaign: %v\n%s", err, log.String())
	}
	if len(seen) < 3 {
		t.Fatalf("saw %d engine processes, want the 3 replicas at least", len(seen))
	}
	return o, seen, out.String() + log.String() + progress.String()
}

// TestEnginesBindLoopbackAndKeysAreNeverWritten runs a campaign and
// checks every engine it started: bound to 127.0.0.1 only, given the
// prepared folder as its only local media root (a file outside is
// refused), and guarded by a key that appears nowhere in the run
// directory (journal, engine logs, events.log, run.json, scores, sim keys)
// nor in anything npcorch printed.
func TestEnginesBindLoopbackAndKeysAreNeverWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	o, seen, printed := runWatched(t, "")
	var run, prep string
	if data, err := os.ReadFile(filepath.Join(o.RunDir, "run.json")); err == nil {
		var m Meta
		_ = json.Unmarshal(data, &m)
		run, prep = o.RunDir, m.Prepared
	}
	keys := map[string]bool{}
	asked := 0 // engines caught serving and asked for a file outside the root
	listening := 0
	for pid, e := range seen {
		if h := e.flag("--host"); h != "127.0.0.1" {
			t.Errorf("engine %d started with --host %q, want 127.0.0.1", pid, h)
		}
		if len(e.listen) == 0 {
			// A replica that lived only a moment (stopped as its model
			// finished) can escape the /proc poll; its --host is checked above.
			t.Logf("engine %d (port %s) was never seen listening", pid, e.flag("--port"))
		} else {
			listening++
		}
		for _, a := range e.listen {
			if a != "127.0.0.1" {
				t.Errorf("engine %d listens on %s:%s, want loopback only", pid, a, e.flag("--port"))
			}
		}
		if got := e.flag("--allowed-local-media-path"); got != prep {
			t.Errorf("engine %d: --allowed-local-media-path %q, want the prepared folder %q", pid, got, prep)
		}
		if e.mediaTest != "" {
			asked++
			if !strings.HasPrefix(e.mediaTest, "400 ") || !strings.Contains(e.mediaTest, "must be a subpath of `--allowed-local-media-path`") {
				t.Errorf("engine %d answered a request for file:///etc/passwd with %q, want a 400 refusal", pid, e.mediaTest)
			}
		}
		key := e.key
		if len(key) < 20 {
			t.Errorf("engine %d: API key %q is too short to be generated", pid, key)
		}
		if strings.Contains(strings.Join(e.argv, " "), key) {
			t.Errorf("engine %d has its API key on its command line, which every user can read", pid)
		}
		keys[key] = true
	}
	if listening < 2 {
		t.Errorf("only %d engines were seen listening; the check needs at least 2", listening)
	}
	if asked < 2 {
		t.Errorf("only %d engines could be asked for a file outside the prepared folder while they served", asked)
	}
	if len(keys) < 3 {
		t.Errorf("%d distinct API keys for %d engine processes; every replica needs its own", len(keys), len(seen))
	}
	leaks := 0
	err := filepath.WalkDir(run, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for k := range keys {
			if bytes.Contains(data, []byte(k)) {
				t.Errorf("API key written to %s", path)
				leaks++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		if strings.Contains(printed, k) {
			t.Error("API key printed by npcorch (out, log or progress)")
		}
	}
	// The engine logs do record each command line: the walk above would
	// be vacuous if they recorded nothing.
	logs, _ := filepath.Glob(filepath.Join(run, "engines", "*.log"))
	launches := 0
	for _, l := range logs {
		data, _ := os.ReadFile(l)
		launches += bytes.Count(data, []byte("sim-engine serve "))
	}
	if launches < 3 {
		t.Errorf("engine logs show %d command lines, want one per launch", launches)
	}
}

// TestCampaignHostReachesEngines: a campaign that asks for another bind
// address gets it (and then sends images as base64, since a remote client
// would not share the disk).
func TestCampaignHostReachesEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes")
	}
	_, seen, _ := runWatched(t, "host: 0.0.0.0")
	for pid, e := range seen {
		if h := e.flag("--host"); h != "0.0.0.0" {
			t.Errorf("engine %d started with --host %q, want the campaign's 0.0.0.0", pid, h)
		}
		for _, a := range e.listen {
			if a != "0.0.0.0" && a != "::" {
				t.Errorf("engine %d listens on %s, want all interfaces as the campaign says", pid, a)
			}
		}
	}
}

// TestRequestsNeverPointOutsideThePreparedRoot: the request builder refuses
// manifest paths that are absolute, climb out of the prepared folder, or
// link out of it, in both media modes, and never reads such a file.
func TestRequestsNeverPointOutsideThePreparedRoot(t *testing.T) {
	root := t.TempDir()
	prep, outside := filepath.Join(root, "prep"), filepath.Join(root, "secret")
	for _, d := range []string{prep, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "x.png"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x.png"), filepath.Join(prep, "link.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(prep, "dir")); err != nil {
		t.Fatal(err)
	}
	reg, err := configs.DefaultRegistry()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := reg.Get("Lingshu-7B")
	prompts, err := tasks.LoadPrompts(configs.Defaults, "prompts", Benchmark())
	if err != nil {
		t.Fatal(err)
	}
	for _, media := range []configs.MediaMode{configs.MediaFile, configs.MediaBase64} {
		b := tasks.RequestBuilder{Model: m, Media: media, Root: prep}
		for path, want := range map[string]string{
			"../secret/x.png":               "leaves the prepared folder",
			filepath.Join(outside, "x.png"): "must be relative to the prepared folder",
			"/etc/passwd":                   "must be relative to the prepared folder",
			"link.png":                      "links outside the prepared folder",
			"dir/x.png":                     "links outside the prepared folder",
			"a/../../secret/x.png":          "leaves the prepared folder",
		} {
			it := tasks.Item{ID: "pathology/P01", Task: npcbench.Pathology, Patient: "P01", Images: []dataset.Image{{Path: path}}}
			req, err := b.Build(prompts, it, 0, nil)
			if err == nil {
				t.Errorf("%s: image %q built into a request (%d bytes); want a refusal", media, path, req.Bytes)
				continue
			}
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "pathology/P01") {
				t.Errorf("%s: image %q: error %q, want it to name the item and say %q", media, path, err, want)
			}
		}
	}
}

// TestEnginesGetNoEndpointKeys: the local launcher is told to keep every
// API endpoint's key variable (models' and judges' engine.api_key_env) and
// the live page's token out of the engines it starts; the launcher's own
// test proves that such variables never reach an engine's environment.
func TestEnginesGetNoEndpointKeys(t *testing.T) {
	src := `output: o
dataset: {raw: r, prepared: p}
models:
  - Lingshu-7B
  - GPT-5.1
  - name: Lab-Endpoint
    engine: {kind: external, base_url: "http://127.0.0.1:9/v1", api_key_env: LAB_ENDPOINT_KEY, api_model: m, max_num_seqs: 4}
judges:
  - name: Judge-Endpoint
    engine: {kind: external, base_url: "http://127.0.0.1:9/v1", api_key_env: JUDGE_KEY, api_model: j, max_num_seqs: 4}
`
	c, err := configs.ParseCampaign("keys.yaml", t.TempDir(), []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{opt: Options{Campaign: c}}
	got := d.launcherConfig(machine{}).SecretEnv
	want := []string{"JUDGE_KEY", "LAB_ENDPOINT_KEY", "NPCORCH_LIVE_TOKEN", "OPENAI_API_KEY"}
	if !slices.Equal(got, want) {
		t.Errorf("SecretEnv = %q, want %q", got, want)
	}
}
