package launcher

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
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
// one free by binding it before use. The zero value is ready to use.
type Ports struct {
	// Host is the address probed, 127.0.0.1 when empty.
	Host string
	// First and Last bound the range, DefaultFirstPort..DefaultLastPort
	// when zero.
	First, Last int

	mu     sync.Mutex
	next   int
	owners map[int]string
}

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
		p.owners = make(map[int]string)
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
		if p.probe(port) != nil {
			continue
		}
		p.owners[port] = owner
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

// Release returns port to the pool.
func (p *Ports) Release(port int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.owners, port)
}

// Owner reports who holds port in this registry.
func (p *Ports) Owner(port int) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.owners[port]
	return o, ok
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
