package simengine

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// logger writes log lines shaped like a vLLM server's: vLLM's own records
// ("INFO 05-14 10:00:00 [file.py:123] ...") and uvicorn's access lines on
// stdout, uvicorn's server lines ("INFO:     ...") and tracebacks on stderr.
// It is safe for concurrent use.
type logger struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	now    func() time.Time
	pid    int
}

// vllm logs one record of the API server process.
func (l *logger) vllm(level, src, format string, a ...any) {
	l.line(l.stdout, fmt.Sprintf("%s %s [%s] %s", level, l.now().Format("01-02 15:04:05"), src, fmt.Sprintf(format, a...)))
}

// core logs one record of the engine core, prefixed as vLLM V1 does.
func (l *logger) core(level, src, format string, a ...any) {
	l.line(l.stdout, fmt.Sprintf("(EngineCore_DP0 pid=%d) %s %s [%s] %s", l.pid, level,
		l.now().Format("01-02 15:04:05"), src, fmt.Sprintf(format, a...)))
}

// uvicorn logs one line of the HTTP server.
func (l *logger) uvicorn(format string, a ...any) {
	l.line(l.stderr, "INFO:     "+fmt.Sprintf(format, a...))
}

// access logs one request the way uvicorn's access log does.
func (l *logger) access(remote, method, path, proto string, status int) {
	l.line(l.stdout, fmt.Sprintf("INFO:     %s - \"%s %s %s\" %d %s", remote, method, path, proto, status, http.StatusText(status)))
}

// block writes lines (a traceback) to stderr in one piece.
func (l *logger) block(text string) {
	l.line(l.stderr, strings.TrimRight(text, "\n"))
}

func (l *logger) line(w io.Writer, s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = io.WriteString(w, s+"\n")
}
