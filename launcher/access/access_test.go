package access

import (
	"net"
	"testing"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "localhost:9410": true, "127.0.0.1": true, "127.0.0.1:80": true, "127.1.2.3:1": true,
		"[::1]:9410": true, "::1": true,
		"evil.example:9410": false, "10.0.0.1:80": false, "": false, "[::2]:1": false, "localhost.evil.example": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestLoopbackAddr(t *testing.T) {
	if !LoopbackAddr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}) || LoopbackAddr(&net.TCPAddr{IP: net.IPv4zero}) {
		t.Error("127.0.0.1 is loopback and 0.0.0.0 is not")
	}
	if LoopbackAddr(&net.UnixAddr{Name: "/tmp/x"}) {
		t.Error("a unix socket is no TCP loopback address")
	}
}

func TestTokenMatches(t *testing.T) {
	if !TokenMatches("s3cret", "s3cret") || TokenMatches("s3cre", "s3cret") || TokenMatches("", "") {
		t.Error("only the same, non-empty token matches")
	}
}
