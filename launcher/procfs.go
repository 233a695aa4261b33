package launcher

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// GroupScanner lists the live processes of a process group. Zombies do
// not count: they hold no memory and only wait for their parent.
type GroupScanner interface {
	Members(pgid int) ([]int, error)
}

// ProcScanner reads Linux's /proc. Root is "/proc" when empty.
type ProcScanner struct {
	Root string
}

func (s ProcScanner) root() string {
	if s.Root == "" {
		return "/proc"
	}
	return s.Root
}

// Members implements GroupScanner.
func (s ProcScanner) Members(pgid int) ([]int, error) {
	all, err := s.PIDs()
	if err != nil {
		return nil, fmt.Errorf("list processes of group %d: %w", pgid, err)
	}
	var pids []int
	for _, pid := range all {
		st, err := s.Stat(pid)
		if err != nil {
			continue // exited while we looked
		}
		if st.PGID == pgid && st.Live() {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// PIDs lists the processes in /proc, in ascending order.
func (s ProcScanner) PIDs() ([]int, error) {
	entries, err := os.ReadDir(s.root())
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// ProcStat is what /proc/PID/stat tells of a process.
type ProcStat struct {
	State      byte
	PPID, PGID int
	// Flags are the kernel's PF_* flags; 0 when the line stops short of
	// them.
	Flags uint64
}

// Live reports whether the process still runs: not a zombie, not dead.
func (s ProcStat) Live() bool { return s.State != 'Z' && s.State != 'X' }

// KernelThread reports PF_KTHREAD: a kernel thread, which never has a
// command line.
func (s ProcStat) KernelThread() bool { return s.Flags&0x00200000 != 0 }

// Stat reads /proc/PID/stat; the command name may hold spaces and
// parentheses, so fields are counted after the last ')'.
func (s ProcScanner) Stat(pid int) (ProcStat, error) {
	path := filepath.Join(s.root(), strconv.Itoa(pid), "stat")
	b, err := os.ReadFile(path)
	if err != nil {
		return ProcStat{}, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ProcStat{}, fmt.Errorf("%s: malformed", path)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return ProcStat{}, fmt.Errorf("%s: malformed", path)
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return ProcStat{}, fmt.Errorf("%s: malformed", path)
	}
	st := ProcStat{State: f[0][0], PPID: ppid, PGID: pgid}
	if len(f) > 6 {
		if st.Flags, err = strconv.ParseUint(f[6], 10, 64); err != nil {
			return ProcStat{}, fmt.Errorf("%s: malformed flags", path)
		}
	}
	return st, nil
}

// ListenerCheck tells whether the sockets listening on a port belong to a
// process group: the readiness check uses it to prove that the server
// answering is our child, not a foreign listener sharing the port.
type ListenerCheck interface {
	// Foreign returns the number of sockets listening on port that no
	// process of pgid holds, and how many listen in all.
	Foreign(port, pgid int) (foreign, total int, err error)
}

// Foreign implements ListenerCheck from /proc/net/tcp{,6} and the
// group's /proc/PID/fd links.
func (s ProcScanner) Foreign(port, pgid int) (int, int, error) {
	listening := map[string]bool{}
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		if err := listenInodes(filepath.Join(s.root(), f), port, listening); err != nil && !os.IsNotExist(err) {
			return 0, 0, err
		}
	}
	if len(listening) == 0 {
		return 0, 0, nil
	}
	pids, err := s.Members(pgid)
	if err != nil {
		return 0, 0, err
	}
	owned := 0
	for _, pid := range pids {
		fds, err := os.ReadDir(filepath.Join(s.root(), strconv.Itoa(pid), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(s.root(), strconv.Itoa(pid), "fd", fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			inode := strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")
			if listening[inode] {
				listening[inode] = false
				owned++
			}
		}
	}
	total := owned
	foreign := 0
	for _, v := range listening {
		if v {
			foreign++
			total++
		}
	}
	return foreign, total, nil
}

// listenInodes adds the inodes of sockets in state LISTEN (0A) on port.
func listenInodes(path string, port int, into map[string]bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	want := fmt.Sprintf(":%04X", port)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" || !strings.HasSuffix(fields[1], want) {
			continue
		}
		into[fields[9]] = true
	}
	return sc.Err()
}
