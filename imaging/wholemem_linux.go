//go:build linux

package imaging

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allocWhole returns n zero bytes for decodeIDATWhole, mapped from the
// kernel outside Go's heap, so a slide's compressed data and rows (tens of
// megabytes, alive for one decode) do not raise the collector's target,
// and in huge pages where the kernel has them (madvise mode): a few dozen
// page faults a slide instead of fifteen thousand. freeWhole unmaps them.
func allocWhole(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, fmt.Errorf("png: cannot map %d MB to inflate the image data: %w", n>>20, err)
	}
	_ = unix.Madvise(b, unix.MADV_HUGEPAGE) // advice: without it, small pages
	return b, nil
}

// reallocWhole returns b's bytes in n bytes (n > len(b)), b given back:
// the kernel moves its pages, nothing is copied.
func reallocWhole(b []byte, n int) ([]byte, error) {
	if cap(b) == 0 {
		return allocWhole(n)
	}
	nb, err := unix.Mremap(b[:cap(b)], n, unix.MREMAP_MAYMOVE)
	if err != nil {
		return nil, fmt.Errorf("png: cannot map %d MB to read the image data: %w", n>>20, err)
	}
	_ = unix.Madvise(nb, unix.MADV_HUGEPAGE)
	return nb, nil
}

// freeWhole unmaps memory from allocWhole or reallocWhole; b must not be
// used after.
func freeWhole(b []byte) {
	if cap(b) > 0 {
		_ = unix.Munmap(b[:cap(b)]) // only fails for memory it did not map
	}
}
