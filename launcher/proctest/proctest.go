// Package proctest finds live processes through /proc, for the tests and
// scripts that prove npcorch leaves no engine, worker or shim behind. It
// reads only; it starts and signals nothing. FreePort and Buffer serve the
// tests that start engines.
package proctest

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/npcorch/npcorch/launcher"
)

// Proc is a live process seen in /proc.
type Proc struct {
	PID, PGID int
	Argv      []string
}

// String names the process for a report.
func (p Proc) String() string {
	return strconv.Itoa(p.PID) + " (pgid " + strconv.Itoa(p.PGID) + "): " + strings.Join(p.Argv, " ")
}

// Flag returns the value after name in the process's argv, "" if absent.
func (p Proc) Flag(name string) string {
	for i, a := range p.Argv {
		if a == name && i+1 < len(p.Argv) {
			return p.Argv[i+1]
		}
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// Procs lists the live processes (zombies excluded) whose command line
// contains mark, ordered by pid.
func Procs(mark string) []Proc { return Matching(mark, nil) }

// Matching lists, ordered by pid and each once, the live processes
// (zombies excluded) whose command line contains mark (unless mark is
// empty) or whose process group is in groups.
func Matching(mark string, groups map[int]bool) []Proc {
	var scan launcher.ProcScanner
	pids, _ := scan.PIDs()
	var out []Proc
	for _, pid := range pids {
		st, err := scan.Stat(pid)
		if err != nil || !st.Live() {
			continue
		}
		cmd := cmdline(scan, pid, st)
		if !groups[st.PGID] && (mark == "" || !bytes.Contains(cmd, []byte(mark))) {
			continue
		}
		out = append(out, Proc{PID: pid, PGID: st.PGID, Argv: strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")})
	}
	return out
}

// execWindow bounds how long cmdline waits for a process caught inside
// execve to show its new command line.
const execWindow = time.Second

// cmdline reads a process's NUL-separated argv. The kernel lets a parent
// waiting on exec's close-on-exec pipe go on before it has set up the new
// program's arguments, and in that window the command line reads empty
// (seen for a fifth of the children read at once after exec.Cmd.Start, and
// for up to 4 ms when the program's file is not in the page cache, as on a
// fresh CI machine). A live user process with an empty command line is
// therefore read again until its arguments appear, it ends, or the window
// closes; kernel threads have none and are not waited for.
func cmdline(scan launcher.ProcScanner, pid int, st launcher.ProcStat) []byte {
	path := filepath.Join("/proc", strconv.Itoa(pid), "cmdline")
	end := time.Now().Add(execWindow)
	for {
		cmd, err := os.ReadFile(path)
		if err != nil || len(cmd) > 0 || st.KernelThread() || time.Now().After(end) {
			return cmd
		}
		time.Sleep(time.Millisecond)
		if now, err := scan.Stat(pid); err != nil || !now.Live() {
			return nil
		}
	}
}

// Buffer is a bytes.Buffer that a process's output writers and a test
// reading it may share.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// FreePort returns a loopback port nobody listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
