//go:build !linux

package imaging

// allocWhole returns n bytes for decodeIDATWhole, on Go's heap on this
// system.
func allocWhole(n int) ([]byte, error) { return make([]byte, n), nil }

// reallocWhole returns b's bytes in n bytes (n > len(b)).
func reallocWhole(b []byte, n int) ([]byte, error) {
	return append(b[:len(b):len(b)], make([]byte, n-len(b))...), nil
}

// freeWhole lets the collector have b.
func freeWhole(b []byte) {}
