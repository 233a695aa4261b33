package launcher

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"
)

// errorWords mark the log lines worth keeping for a failure report. They
// are looked for as plain substrings: an engine writes a line a request,
// and a regular expression of these alternatives cost the client more CPU
// than the line itself at a thousand requests a second.
var errorWords = []string{"Traceback", "Error", "ERROR", "Exception", "error:", "out of memory", "OOM", "CUDA error",
	"FATAL", "Fatal", "fatal", "not supported", "divisible", "Address already in use", "Killed", "Segmentation fault",
	"core dumped", "exit status", "not found"}

// isErrorLine reports whether l holds one of the errorWords.
func isErrorLine(l string) bool {
	for _, w := range errorWords {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// notProgress matches the log lines that requests cause, which say
// nothing about an engine's start-up: npcorch probes a starting engine
// every 50 ms, so counting them would keep a hung start alive for ever.
// They are uvicorn's access lines (vLLM, SGLang), whatever the path,
// client or prefix:
//
//	INFO:     127.0.0.1:51234 - "GET /health HTTP/1.1" 200 OK
//	(APIServer pid=4242) INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error
//
// vLLM's periodic throughput line (vllm/v1/metrics/loggers.py,
// LoggingStatLogger.log; "Engine 000: " since V1):
//
//	INFO 12-01 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, Prefix cache hit rate: 0.0%
//
// vLLM's per-request lines (--enable-log-requests) and SGLang's
// per-batch lines ("Prefill batch. #new-seq: 1, ...", "Decode batch.
// #running-req: 1, ...").
var notProgress = regexp.MustCompile(strings.Join([]string{
	`"[A-Z]+ /\S* HTTP/[0-9.]+" \d{3}`,
	`Avg prompt throughput: [0-9.]+ tokens/s`,
	`\b(Received|Added|Finished|Aborted) request `,
	`\b(Prefill|Decode) batch[.,] #`,
}, "|"))

// notProgressHints are substrings of every line notProgress matches, one
// per alternative: a line without any of them is progress, and is not
// given to the regular expression.
var notProgressHints = []string{" HTTP/", "Avg prompt throughput: ", " request ", " batch"}

// isProgress reports whether l says something about an engine's start-up.
func isProgress(l string) bool {
	for _, h := range notProgressHints {
		if strings.Contains(l, h) {
			return !notProgress.MatchString(l)
		}
	}
	return true
}

// Size limits of the in-memory tail.
const (
	tailErrorLines = 40
	tailLastLines  = 20
	maxLineBytes   = 16 << 10
	tailLineBytes  = 600
)

// logSink writes an engine's output to its log file line by line, with
// secrets redacted, keeps the last error-looking lines in memory, and
// calls onLine for each complete line (start-up progress) except the lines
// requests cause (see notProgress), which would otherwise keep a hung
// start alive for ever. It is safe for the concurrent writers os/exec
// uses for stdout and stderr.
type logSink struct {
	mu      sync.Mutex
	out     io.Writer
	redact  *strings.Replacer
	onLine  func()
	partial []byte
	errs    []string
	last    []string
}

func newLogSink(out io.Writer, secrets []string, onLine func()) *logSink {
	var pairs []string
	for _, s := range secrets {
		if s != "" {
			pairs = append(pairs, s, "<redacted>")
		}
	}
	return &logSink{out: out, redact: strings.NewReplacer(pairs...), onLine: onLine}
}

// Write implements io.Writer. '\r' ends a line too (progress bars).
func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexAny(p, "\n\r")
		if i < 0 {
			s.partial = append(s.partial, p...)
			if len(s.partial) > maxLineBytes {
				s.line(s.partial)
				s.partial = s.partial[:0]
			}
			break
		}
		s.partial = append(s.partial, p[:i]...)
		s.line(s.partial)
		s.partial = s.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// flush writes a final unterminated line.
func (s *logSink) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.line(s.partial)
		s.partial = s.partial[:0]
	}
}

func (s *logSink) line(b []byte) {
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	l := s.redact.Replace(string(b))
	if s.out != nil {
		_, _ = io.WriteString(s.out, l+"\n") // a full disk must not stop the engine
	}
	short := l
	if len(short) > tailLineBytes {
		short = short[:tailLineBytes] + "…"
	}
	if isErrorLine(l) {
		s.errs = appendRing(s.errs, short, tailErrorLines)
	}
	if !isProgress(l) {
		return // a request's line: the tail of a crash or a slow start is the engine's own lines
	}
	s.last = appendRing(s.last, short, tailLastLines)
	if s.onLine != nil {
		s.onLine()
	}
}

// note writes a line of npcorch's own into the log (not into the tail).
func (s *logSink) note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out != nil {
		_, _ = io.WriteString(s.out, "[npcorch] "+s.redact.Replace(msg)+"\n")
	}
}

// tail returns the last error-looking lines, or the last lines when none
// looked like an error.
func (s *logSink) tail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) > 0 {
		return append([]string(nil), s.errs...)
	}
	return append([]string(nil), s.last...)
}

// lastLine is the engine's last line (redacted, shortened), "" before
// its first.
func (s *logSink) lastLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last) == 0 {
		return ""
	}
	return s.last[len(s.last)-1]
}

// lines returns every line kept, for classification.
func (s *logSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(append([]string(nil), s.errs...), s.last...)
}

func appendRing(ring []string, l string, n int) []string {
	if len(ring) >= n {
		copy(ring, ring[1:])
		ring = ring[:n-1]
	}
	return append(ring, l)
}
