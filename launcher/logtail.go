package launcher

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"sync"
)

// errorLine matches the log lines worth keeping for a failure report.
var errorLine = regexp.MustCompile(`Traceback|Error|ERROR|Exception|error:|out of memory|OOM|CUDA error|FATAL|[Ff]atal|not supported|divisible|Address already in use|Killed|Segmentation fault|core dumped|exit status|not found`)

// probeAccess matches the access-log lines npcorch's own readiness and
// watchdog requests cause: they are not start-up progress.
var probeAccess = regexp.MustCompile(`"(GET|POST) /(health|metrics|v1/models|v1/chat/completions)[ ?]`)

// Size limits of the in-memory tail.
const (
	tailErrorLines = 40
	tailLastLines  = 20
	maxLineBytes   = 16 << 10
	tailLineBytes  = 600
)

// logSink writes an engine's output to its log file line by line, with
// secrets redacted, keeps the last error-looking lines in memory, and
// calls onLine for each complete line (start-up progress) except access
// lines of npcorch's own probes, which would otherwise keep a hung start
// alive forever. It is safe for
// the concurrent writers os/exec uses for stdout and stderr.
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
	if errorLine.MatchString(l) {
		s.errs = appendRing(s.errs, short, tailErrorLines)
	}
	s.last = appendRing(s.last, short, tailLastLines)
	if s.onLine != nil && !probeAccess.MatchString(l) {
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
