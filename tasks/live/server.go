package live

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/npcorch/npcorch/configs"
	"github.com/npcorch/npcorch/launcher/access"
)

//go:embed page/index.html
var page []byte

// TokenEnv is the environment variable that may hold the server's token.
const TokenEnv = configs.LiveTokenEnv

// DefaultPort is the port `--listen` takes when given none.
const DefaultPort = "9410"

// writeTimeout bounds the sending of one event to a stream's client.
const writeTimeout = 10 * time.Second

// tokenCookie carries the token from the page to its event stream.
const tokenCookie = "npcorch_live_token"

// Listener is the live server's socket, bound before the campaign starts
// so that a bad address fails at once.
type Listener struct {
	ln       net.Listener
	token    string
	loopback bool
}

// Listen binds addr for the live server. An address without a host is on
// the loopback interface ("9410", "localhost:9410"); any other needs a
// token (Authorization: Bearer, or ?token= once in the page's address):
// without one Listen refuses it. A token given on loopback is required
// too.
func Listen(addr, token string) (*Listener, error) {
	addr = normalAddr(addr)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w (choose another address or port)", addr, err)
	}
	l := &Listener{ln: ln, token: token, loopback: access.LoopbackAddr(ln.Addr())}
	if !l.loopback && token == "" {
		ln.Close()
		return nil, fmt.Errorf("--listen %s is reachable from other machines: give a token (--token-file FILE, or the environment variable %s) or listen on loopback (127.0.0.1:PORT) and tunnel to it", addr, TokenEnv)
	}
	return l, nil
}

// normalAddr puts an address without a host on loopback: "9410" and
// "localhost:9410" stay on this machine; ":9410" means every interface.
func normalAddr(addr string) string {
	if addr == "" {
		return "127.0.0.1:" + DefaultPort
	}
	if _, err := strconv.Atoi(addr); err == nil {
		return "127.0.0.1:" + addr
	}
	return addr
}

// Addr is the address listened on.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// Describe says in one line where the page is and what it takes to open
// it, without the token.
func (l *Listener) Describe() string {
	u := "http://" + l.ln.Addr().String() + "/"
	if t, ok := l.ln.Addr().(*net.TCPAddr); ok && t.IP.IsUnspecified() {
		// Every interface: the machine's name is what to open.
		host, _ := os.Hostname()
		u = "http://" + net.JoinHostPort(cmp.Or(host, "HOST"), strconv.Itoa(t.Port)) + "/"
	}
	switch {
	case l.token != "" && !l.loopback:
		return fmt.Sprintf("live page at %s — reachable from other machines: a token is required (open %s?token=TOKEN once, or send Authorization: Bearer TOKEN; metrics at /metrics, JSON at /api/status)", u, u)
	case l.token != "":
		return fmt.Sprintf("live page at %s — loopback only; a token is required (open %s?token=TOKEN once, or send Authorization: Bearer TOKEN)", u, u)
	}
	return fmt.Sprintf("live page at %s — loopback only, no token (from a laptop: ssh -L %s:localhost:%s HOST); metrics at %smetrics, JSON at %sapi/status", u, portOf(l.ln.Addr()), portOf(l.ln.Addr()), u, u)
}

func portOf(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return strconv.Itoa(t.Port)
	}
	return DefaultPort
}

// Close closes the socket of a listener that was never served.
func (l *Listener) Close() error { return l.ln.Close() }

// Server serves a Hub's views on a Listener.
type Server struct {
	srv    *http.Server
	gpus   *gpuSlot
	cancel context.CancelFunc
	done   chan error
}

// Serve serves hub on l until Close: the page at /, its event stream at
// /events, Prometheus metrics at /metrics and the JSON at /api/status.
func (l *Listener) Serve(hub *Hub) (*Server, error) {
	reg := prometheus.NewRegistry()
	gpus := &gpuSlot{}
	if err := errors.Join(reg.Register(&collector{hub: hub}), reg.Register(gpus)); err != nil {
		return nil, fmt.Errorf("live: metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", servePage)
	mux.HandleFunc("GET /api/status", func(w http.ResponseWriter, r *http.Request) { serveStatus(w, hub) })
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) { serveEvents(w, r, hub) })
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{gpus: gpus, cancel: cancel, done: make(chan error, 1)}
	s.srv = &http.Server{Handler: l.guard(mux), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() { s.done <- s.srv.Serve(l.ln) }()
	return s, nil
}

// SetGPUs serves c at /metrics beside the campaign's metrics: the GPU
// exporter (gpu.Collector, DCGM's names), once the run has opened its GPUs.
// A nil Server or collector is ignored.
func (s *Server) SetGPUs(c prometheus.Collector) {
	if s != nil && c != nil {
		s.gpus.c.Store(&c)
	}
}

// gpuSlot is the GPU collector, set once the run knows its GPUs: an
// unchecked collector (it describes nothing ahead).
type gpuSlot struct {
	c atomic.Pointer[prometheus.Collector]
}

func (g *gpuSlot) Describe(chan<- *prometheus.Desc) {}

func (g *gpuSlot) Collect(ch chan<- prometheus.Metric) {
	if c := g.c.Load(); c != nil {
		(*c).Collect(ch)
	}
}

// Close ends every event stream and stops the server, waiting at most 5 s
// for requests in flight. A nil Server has nothing to close.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		// A client that stopped reading holds its stream open: cut it.
		err = fmt.Errorf("live server: requests still open after 5 s were cut: %w", errors.Join(err, s.srv.Close()))
	}
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// guard checks every request: with a token, that it carries it; on
// loopback without one, that its Host is a loopback name, so that a web
// page elsewhere cannot read the server through a name it re-points at
// 127.0.0.1 (DNS rebinding).
func (l *Listener) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.token == "" {
			if !access.LoopbackHost(r.Host) {
				http.Error(w, "the live server listens on loopback without a token and answers only requests to localhost, 127.0.0.1 or [::1]", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if q := r.URL.Query().Get("token"); q != "" && r.URL.Path == "/" && l.valid(q) {
			// The page's address carried the token: keep it in a cookie
			// for the event stream and drop it from the address bar.
			http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		if !l.valid(requestToken(r)) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="npcorch"`)
			http.Error(w, "a token is required: open /?token=TOKEN once in the browser, or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *Listener) valid(t string) bool {
	return access.TokenMatches(t, l.token)
}

// requestToken is the bearer token, or the page's cookie.
func requestToken(r *http.Request) string {
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(auth)
	}
	if c, err := r.Cookie(tokenCookie); err == nil {
		return c.Value
	}
	return ""
}

// servePage serves the page: everything it needs is inside it.
func servePage(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:")
	h.Set("Cache-Control", "no-store")
	w.Write(page)
}

func serveStatus(w http.ResponseWriter, hub *Hub) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(hub.Latest().JSON)
}

// serveEvents streams every view as a server-sent event until the client
// goes, the hub closes or the server stops. A client that comes back
// (EventSource does by itself) starts with the latest view.
func serveEvents(w http.ResponseWriter, r *http.Request, hub *Hub) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	if _, err := fmt.Fprint(w, "retry: 1000\n\n"); err != nil {
		return
	}
	var seq uint64
	for {
		v, err := hub.Next(r.Context(), seq)
		if err != nil {
			return
		}
		seq = v.Seq
		// A client that stops reading must not hold the handler: each
		// event gets writeTimeout to go out.
		if err := rc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "id: %d\ndata: %s\n\n", v.Seq, v.JSON); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
