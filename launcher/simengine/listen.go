package simengine

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// boundSocket is a TCP socket that is bound but not yet listening: like
// vLLM's, the port is taken while the model loads, yet connections to it are
// refused until listen.
type boundSocket struct {
	fd   int
	addr string // host:port actually bound
}

// bindTCP binds host:port with SO_REUSEADDR and SO_REUSEPORT, as uvicorn
// does under vLLM (so a second engine on the same port may not fail).
func bindTCP(host string, port int) (*boundSocket, error) {
	if host == "" {
		host = "0.0.0.0"
	}
	ta, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("resolve --host %q: %w", host, err)
	}
	domain := unix.AF_INET
	var sa unix.Sockaddr
	if ip4 := ta.IP.To4(); ip4 != nil || ta.IP == nil {
		a := &unix.SockaddrInet4{Port: ta.Port}
		copy(a.Addr[:], ip4)
		sa = a
	} else {
		domain = unix.AF_INET6
		a := &unix.SockaddrInet6{Port: ta.Port}
		copy(a.Addr[:], ta.IP.To16())
		sa = a
	}
	fd, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	for _, opt := range []int{unix.SO_REUSEADDR, unix.SO_REUSEPORT} {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, 1); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("setsockopt: %w", err)
		}
	}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("[Errno %d] error while attempting to bind on address (%s, %d): %w",
			int(errnoOf(err)), ta.IP, ta.Port, err)
	}
	b := &boundSocket{fd: fd}
	got, err := unix.Getsockname(fd)
	if err == nil {
		switch a := got.(type) {
		case *unix.SockaddrInet4:
			b.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
		case *unix.SockaddrInet6:
			b.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
		}
	}
	return b, nil
}

// listen starts accepting connections and hands the socket to a
// net.Listener; the boundSocket is spent afterwards.
func (b *boundSocket) listen() (net.Listener, error) {
	if err := unix.Listen(b.fd, 4096); err != nil {
		unix.Close(b.fd)
		return nil, fmt.Errorf("listen on %s: %w", b.addr, err)
	}
	f := os.NewFile(uintptr(b.fd), "tcp:"+b.addr)
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", b.addr, err)
	}
	return ln, nil
}

// close releases a socket that never listened.
func (b *boundSocket) close() { unix.Close(b.fd) }

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return 0
}
