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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
func Procs(mark string) []Proc {
	var out []Proc
	for _, pid := range pids() {
		st, ok := stat(pid)
		if !ok || !st.live() {
			continue
		}
		cmd := cmdline(pid, st)
		if !bytes.Contains(cmd, []byte(mark)) {
			continue
		}
		out = append(out, Proc{PID: pid, PGID: st.pgid, Argv: argv(cmd)})
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
func cmdline(pid int, st procStat) []byte {
	path := filepath.Join("/proc", strconv.Itoa(pid), "cmdline")
	end := time.Now().Add(execWindow)
	for {
		cmd, err := os.ReadFile(path)
		if err != nil || len(cmd) > 0 || st.kernelThread() || time.Now().After(end) {
			return cmd
		}
		time.Sleep(time.Millisecond)
		if now, ok := stat(pid); !ok || !now.live() {
			return nil
		}
	}
}

func argv(cmd []byte) []string {
	return strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
}

// GroupMembers lists the live processes of the process groups in pgids.
func GroupMembers(pgids map[int]bool) []Proc {
	var out []Proc
	for _, pid := range pids() {
		st, ok := stat(pid)
		if !ok || !pgids[st.pgid] || !st.live() {
			continue
		}
		out = append(out, Proc{PID: pid, PGID: st.pgid, Argv: argv(cmdline(pid, st))})
	}
	return out
}

func pids() []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	slices.Sort(out)
	return out
}

// procStat is what /proc/PID/stat tells of a process that Procs needs.
type procStat struct {
	state byte
	pgid  int
	flags uint64
}

// live reports whether the process still runs: not a zombie, not dead.
func (s procStat) live() bool { return s.state != 'Z' && s.state != 'X' }

// kernelThread reports PF_KTHREAD, set on threads that never have a
// command line.
func (s procStat) kernelThread() bool { return s.flags&0x00200000 != 0 }

// stat reads a process's state, process group and flags from
// /proc/PID/stat; the command name in parentheses may hold spaces, so
// fields count from the last ')'.
func stat(pid int) (procStat, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 7 || len(f[0]) == 0 {
		return procStat{}, false
	}
	pgid, err := strconv.Atoi(f[2])
	if err != nil {
		return procStat{}, false
	}
	flags, err := strconv.ParseUint(f[6], 10, 64)
	if err != nil {
		return procStat{}, false
	}
	return procStat{state: f[0][0], pgid: pgid, flags: flags}, true
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
