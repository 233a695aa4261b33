package launcher

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ChildSpec describes a helper process that is no engine (a tool server, a
// sidecar) but lives by the engines' rules: the leader of its own process
// group, started through the engine shim (so it dies when npcorch is killed,
// even by SIGKILL) or with Pdeathsig, ready only once it answers over HTTP,
// and stopped by SIGTERM, grace, SIGKILL to the group and a check that no
// member is left. The launcher knows it only as a command line, an output
// line that announces its address, and a health path.
type ChildSpec struct {
	// Name names the child in errors and in its log ("tool server").
	Name string
	// Argv is the command; Env is exactly its environment.
	Argv, Env []string
	// Shim is the engine shim's command (Config.Shim); empty: the child is
	// started with Pdeathsig instead, which covers the child but not the
	// processes it starts.
	Shim []string
	// Log receives the child's output, line by line; nil discards it.
	Log io.Writer
	// Announce matches the output line in which the child names the address
	// it listens on (it may have chosen the port itself, 127.0.0.1:0); its
	// first group is HOST:PORT.
	Announce *regexp.Regexp
	// Health is the path that must answer 200 to a GET at the announced
	// address before the child counts as ready ("/healthz").
	Health string
	// ReadyWithin bounds the start; Grace separates SIGTERM and SIGKILL;
	// Verify bounds the wait for an empty group; WaitDelay bounds waiting
	// for the output pipes after exit. Zero fields take DefaultTiming's
	// HardCap, Grace, Verify and WaitDelay.
	ReadyWithin, Grace, Verify, WaitDelay time.Duration
	// Scan finds the group's members; nil reads /proc.
	Scan GroupScanner
}

// Child is a started ChildSpec. Stop it exactly once; Stop proves its
// process group empty.
type Child struct {
	spec ChildSpec
	proc *process
	log  *logSink
	addr string
	once sync.Once
	err  error
}

// StartChild starts the child and waits until it is ready: until an output
// line matches Announce and a GET of Health at that address answers 200.
// A child that exits, or is not ready within ReadyWithin, or ctx's end,
// is stopped (group verified empty) and the error says what was awaited.
func StartChild(ctx context.Context, spec ChildSpec) (*Child, error) {
	spec = spec.withDefaults()
	if len(spec.Argv) == 0 || spec.Announce == nil || spec.Health == "" {
		return nil, fmt.Errorf("%s: a child needs a command, an Announce pattern and a Health path", spec.Name)
	}
	ann := &announceWriter{out: spec.Log, re: spec.Announce, found: make(chan string, 1)}
	p, log, err := startProcess(spec.Argv, spec.Env, spec.Shim, spec.Grace, spec.WaitDelay,
		func(onLine func()) *logSink { return newLogSink(ann, nil, onLine) })
	if err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", spec.Name, spec.Argv[0], err)
	}
	c := &Child{spec: spec, proc: p, log: log}
	if err := c.awaitReady(ctx, ann.found); err != nil {
		return nil, errors.Join(err, c.Stop())
	}
	return c, nil
}

func (s ChildSpec) withDefaults() ChildSpec {
	d := DefaultTiming
	orDefault(&s.ReadyWithin, d.HardCap)
	orDefault(&s.Grace, d.Grace)
	orDefault(&s.Verify, d.Verify)
	orDefault(&s.WaitDelay, d.WaitDelay)
	if s.Scan == nil {
		s.Scan = ProcScanner{}
	}
	if s.Name == "" {
		s.Name = "child process"
	}
	return s
}

// childPoll spaces health checks during a start.
const childPoll = 20 * time.Millisecond

// awaitReady waits for the announcement, then for the health answer.
func (c *Child) awaitReady(ctx context.Context, found <-chan string) error {
	ctx, cancel := context.WithTimeout(ctx, c.spec.ReadyWithin)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	last := "no answer yet"
	for {
		if c.addr == "" {
			select {
			case c.addr = <-found:
			default:
			}
		}
		if c.addr != "" {
			status, err := getStatus(ctx, client, "http://"+c.addr+c.spec.Health)
			if status == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("answered %d", status)
			if err != nil {
				last = err.Error()
			}
		}
		select {
		case <-c.proc.done:
			return fmt.Errorf("%s (pgid %d) %s before it was ready; its last output: %s", c.spec.Name, c.proc.pgid,
				describeExit(c.proc.err), strings.Join(c.log.tail(), " | "))
		case <-ctx.Done():
			return c.notReady(ctx.Err(), last)
		case <-time.After(childPoll):
		}
	}
}

func (c *Child) notReady(cause error, last string) error {
	what := fmt.Sprintf("an output line matching %q", c.spec.Announce)
	if c.addr != "" {
		what = fmt.Sprintf("GET http://%s%s to answer 200 (last: %s)", c.addr, c.spec.Health, last)
	}
	return fmt.Errorf("%s (pgid %d) not ready: waited %v for %s: %w", c.spec.Name, c.proc.pgid, c.spec.ReadyWithin, what, cause)
}

func getStatus(ctx context.Context, client *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// Addr is the HOST:PORT the child announced.
func (c *Child) Addr() string { return c.addr }

// PGID is the child's process group (the shim's when there is one).
func (c *Child) PGID() int { return c.proc.pgid }

// Done is closed when the group's leader has exited.
func (c *Child) Done() <-chan struct{} { return c.proc.done }

// Stop ends the child's process group: SIGTERM, Grace, SIGKILL, and a check
// within Verify that no member is left. Later calls return the first
// result.
func (c *Child) Stop() error {
	c.once.Do(func() {
		killed, err := stopGroup(c.proc, c.spec.Scan, c.spec.Grace, c.spec.Verify)
		if killed {
			c.log.note(fmt.Sprintf("npcorch: %s ignored SIGTERM for the %v grace period; sent SIGKILL to process group %d", c.spec.Name, c.spec.Grace, c.proc.pgid))
		}
		if err != nil {
			c.err = fmt.Errorf("%s: stop: %w", c.spec.Name, err)
		}
	})
	return c.err
}

// announceWriter passes the child's output lines on and sends the first
// address its pattern finds.
type announceWriter struct {
	out   io.Writer
	re    *regexp.Regexp
	found chan string
	sent  bool
}

// Write is called by the log sink with whole lines, under its lock.
func (a *announceWriter) Write(p []byte) (int, error) {
	if !a.sent {
		if m := a.re.FindSubmatch(p); len(m) > 1 {
			a.found <- string(m[1])
			a.sent = true
		}
	}
	if a.out == nil {
		return len(p), nil
	}
	return a.out.Write(p)
}
