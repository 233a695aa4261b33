// Package access owns the rule for who may reach an HTTP server npcorch
// serves (the live page, the CliniCARE tool server): on loopback without a
// token only requests whose Host names this machine are answered, so that a
// web page elsewhere cannot reach the server through a name it re-points at
// 127.0.0.1 (DNS rebinding); anywhere else a bearer token is required. It
// knows no server, page or tool: callers keep their own messages.
package access

import (
	"crypto/subtle"
	"net"
	"strings"
)

// LoopbackAddr reports whether a listener's address is a loopback one.
func LoopbackAddr(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && t.IP.IsLoopback()
}

// LoopbackHost reports whether a request's Host (with or without a port)
// names this machine: localhost, 127.0.0.0/8 or [::1].
func LoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// TokenMatches compares a token a request carried with the server's in
// constant time; an empty one never matches.
func TokenMatches(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
