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
		cmd, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte(mark)) {
			continue
		}
		state, pgid, ok := stat(pid)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
		out = append(out, Proc{PID: pid, PGID: pgid, Argv: argv})
	}
	return out
}

// GroupMembers lists the live processes of the process groups in pgids.
func GroupMembers(pgids map[int]bool) []Proc {
	var out []Proc
	for _, pid := range pids() {
		state, pgid, ok := stat(pid)
		if !ok || !pgids[pgid] || state == 'Z' || state == 'X' {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		out = append(out, Proc{PID: pid, PGID: pgid, Argv: strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")})
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

// stat reads a process's state and process group from /proc/PID/stat; the
// command name in parentheses may hold spaces, so fields count from the
// last ')'.
func stat(pid int) (state byte, pgid int, ok bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	pgid, err = strconv.Atoi(f[2])
	if err != nil || len(f[0]) == 0 {
		return 0, 0, false
	}
	return f[0][0], pgid, true
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
