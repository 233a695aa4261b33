package launcher

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Default port range: below Linux's ephemeral range (32768-60999), so
// outgoing connections never take an engine's port.
const (
	DefaultFirstPort = 20000
	DefaultLastPort  = 29999
)

// Ports allocates engine ports. vLLM binds with SO_REUSEPORT, so a second
// server on a taken port may start without error: npcorch therefore owns
// allocation, keeps a registry of the ports it handed out, and proves each
// one free by binding it before use.
//
// A bind proves a port free only at that instant, and an engine listens
// only once its model is loaded: two npcorch processes on one machine
// (a run beside a serve, or test packages run in parallel) could hand the
// same port to two engines in between, and both would then fail as
// foreign listeners. So every allocation also takes an exclusive flock
// on LockDir/PORT.lock, which other npcorch processes honour; the kernel
// drops it when this process exits, however it ends. The zero value is
// ready to use.
type Ports struct {
	// Host is the address probed, 127.0.0.1 when empty.
	Host string
	// First and Last bound the range, DefaultFirstPort..DefaultLastPort
	// when zero.
	First, Last int
	// LockDir holds the machine-wide port locks; DefaultPortLockDir()
	// when empty. Where it cannot be written, allocation relies on the
	// bind probe alone.
	LockDir string

	mu     sync.Mutex
	next   int
	owners map[int]reservation
}

// reservation is one port handed out: to whom, and the lock file that
// keeps other npcorch processes off it (nil when locks are unavailable).
type reservation struct {
	owner string
	lock  *os.File
}

// DefaultPortLockDir is where npcorch processes of every user of this
// machine reserve engine ports.
func DefaultPortLockDir() string { return filepath.Join(os.TempDir(), "npcorch-ports") }

// ErrNoPort is returned when every port of the range is taken.
var ErrNoPort = errors.New("no free port")

// Allocate reserves a free port for owner (a model/replica name used in
// messages). Ports held by this registry and ports another process
// listens on are skipped.
func (p *Ports) Allocate(owner string) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	first, last := p.bounds()
	if p.owners == nil {
		p.owners = make(map[int]reservation)
	}
	if p.next < first || p.next > last {
		p.next = first
	}
	for range last - first + 1 {
		port := p.next
		p.next++
		if p.next > last {
			p.next = first
		}
		if _, taken := p.owners[port]; taken {
			continue
		}
		lock, held := p.lock(port)
		if held {
			continue // another npcorch process reserved it
		}
		if p.probe(port) != nil {
			if lock != nil {
				lock.Close()
			}
			continue
		}
		p.owners[port] = reservation{owner: owner, lock: lock}
		return port, nil
	}
	return 0, fmt.Errorf("allocate a port for %s in %d-%d: %w; widen the range or stop other servers", owner, first, last, ErrNoPort)
}

// Check proves that port, reserved by this registry, is still free of
// foreign listeners; call it right before starting an engine on it.
func (p *Ports) Check(port int) error {
	if err := p.probe(port); err != nil {
		return fmt.Errorf("port %d: another process listens on it (%v): %w", port, err, ErrPortInUse)
	}
	return nil
}

// Release returns port to the pool and drops its machine-wide lock.
func (p *Ports) Release(port int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.owners[port]; ok && r.lock != nil {
		r.lock.Close()
	}
	delete(p.owners, port)
}

// Owner reports who holds port in this registry.
func (p *Ports) Owner(port int) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.owners[port]
	return r.owner, ok
}

// lock takes the machine-wide lock of port. held reports that another
// process (or another registry) holds it; a nil file with held false
// means locks are unavailable here and the bind probe decides alone.
func (p *Ports) lock(port int) (f *os.File, held bool) {
	dir := p.LockDir
	if dir == "" {
		dir = DefaultPortLockDir()
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, false
	}
	// Sticky and writable by all, like /tmp: every user's npcorch shares
	// the machine's ports. Only the directory's owner can change it.
	_ = os.Chmod(dir, 0o777|os.ModeSticky)
	// Read-only is enough for flock, and opens a file another user made.
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)+".lock"), os.O_RDONLY|os.O_CREATE, 0o666)
	if err != nil {
		return nil, false
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, errors.Is(err, unix.EWOULDBLOCK)
	}
	return f, false
}

func (p *Ports) bounds() (int, int) {
	first, last := p.First, p.Last
	if first <= 0 {
		first = DefaultFirstPort
	}
	if last < first {
		last = max(first, DefaultLastPort)
	}
	return first, last
}

// probe binds host:port without SO_REUSEPORT: the bind fails when any
// socket listens there, with or without SO_REUSEPORT.
func (p *Ports) probe(port int) error {
	host := p.Host
	if host == "" {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return ln.Close()
}
