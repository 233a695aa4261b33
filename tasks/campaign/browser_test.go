package campaign

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium or Chrome to drive, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium or Chrome on PATH (chromium, chromium-browser, google-chrome, headless-shell): the live page is not tested in a browser")
	return ""
}

// cutProxy forwards TCP connections to a server and can cut every one of
// them at once, as a dropped SSH tunnel or a laptop that sleeps would.
type cutProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(p.close)
	return p
}

func (p *cutProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

func (p *cutProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// cut closes every connection open now.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *cutProxy) close() {
	p.ln.Close()
	p.cut()
	p.wg.Wait()
}

// pageNum evaluates a JavaScript number on the page.
func pageNum(ctx context.Context, expr string) (float64, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[float64](expr))
}

// pageWait polls a JavaScript condition every 50 ms until it holds, at
// most d.
func pageWait(t *testing.T, ctx context.Context, d time.Duration, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("Boolean("+cond+")"))
		if err != nil {
			t.Fatalf("evaluating %q on the page: %v", cond, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			snap, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({received: window.npcorch.received, opens: window.npcorch.opens, state: window.npcorch.snap && window.npcorch.snap.state, totals: window.npcorch.snap && window.npcorch.snap.totals})`))
			t.Fatalf("the page did not show %s within %s (%s); the page's state: %s", what, d, cond, snap)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLivePageInChromium drives the live page in a real headless Chromium
// while a simulated campaign runs: the numbers rise, an engine crash shows
// within a second, the page comes back after its connection is cut, and
// it ends showing the finished run. It saves screenshots as artifacts
// (go test -artifacts keeps them).
func TestLivePageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real engine processes and Chromium")
	}
	exe := chromium(t)
	// The browser first: its start must not eat into the run.
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1400, 1100))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 3*time.Minute)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium (%s): %v", exe, err)
	}

	// About 1 s per request, one at a time: a run of half a minute, the
	// second model's engine crashing after every 8 answers.
	addr, wait := startWatched(t, 60, 8)
	proxy := newCutProxy(t, addr)
	url := "http://" + proxy.ln.Addr().String() + "/"
	if _, err := chromedp.Run(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("Chromium at %s: %v", url, err)
	}
	pageWait(t, ctx, 60*time.Second, "the running campaign", `window.npcorch.snap && window.npcorch.snap.state === "running" && window.npcorch.snap.totals.answered > 0`)

	// The numbers rise, in the data and on the screen.
	first, err := pageNum(ctx, `window.npcorch.snap.totals.answered`)
	if err != nil {
		t.Fatal(err)
	}
	pageWait(t, ctx, 30*time.Second, "more answers", `window.npcorch.snap.totals.answered > `+strconv.Itoa(int(first)))
	pageWait(t, ctx, 5*time.Second, "the count on screen", `document.getElementById("total-answered").textContent === window.npcorch.snap.totals.answered.toLocaleString("en-US")`)

	// The crash: shown within a second of the launcher noticing it.
	pageWait(t, ctx, 60*time.Second, "an engine crash", `Object.keys(window.npcorch.crashSeen).length > 0`)
	delays, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`window.npcorch.crashSeen`))
	if err != nil {
		t.Fatal(err)
	}
	for crash, ms := range delays {
		t.Logf("crash %s shown %.0f ms after it happened", crash, ms)
		if ms > 1000 {
			t.Errorf("crash %s was shown %.0f ms after it happened, want within 1 s", crash, ms)
		}
	}
	pageWait(t, ctx, 10*time.Second, "the crashed engine's restart in the engines table", `document.querySelector('tr[data-engine="Qwen3-VL-8B-Instruct/r0"]:not([data-restarts="0"])')`)
	shot(t, ctx, "live-page-running.png")

	// The connection is cut: the page reconnects by itself and goes on.
	received, err := pageNum(ctx, `window.npcorch.received`)
	if err != nil {
		t.Fatal(err)
	}
	proxy.cut()
	pageWait(t, ctx, 10*time.Second, "a reconnect", `window.npcorch.opens >= 2 && window.npcorch.received > `+strconv.Itoa(int(received)))

	if _, err := wait(); err != nil && !errors.Is(err, ErrIncomplete) {
		t.Fatalf("the campaign: %v", err)
	}
	pageWait(t, ctx, 10*time.Second, "the run's end", `window.npcorch.snap.state === "finished" || window.npcorch.snap.state === "incomplete"`)
	// The server ended with the run: the page says so instead of retrying.
	pageWait(t, ctx, 10*time.Second, "that the run ended", `document.getElementById("conn").textContent === "run ended"`)
	shot(t, ctx, "live-page-finished.png")
}

// shot saves a full-page screenshot as a test artifact and checks it is
// a picture.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil || img.Bounds().Dx() < 800 {
		t.Fatalf("the screenshot is not a page-sized PNG: %v", err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}
