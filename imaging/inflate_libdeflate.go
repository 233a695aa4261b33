//go:build cgo && libdeflate

package imaging

/*
#cgo LDFLAGS: -ldeflate
#include <stdlib.h>
#include <libdeflate.h>

// npcorch_alloc is malloc, which, unlike cgo's C.malloc, may say no.
static void *npcorch_alloc(size_t n) { return malloc(n); }
static void *npcorch_realloc(void *p, size_t n) { return realloc(p, n); }
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// defaultInflate: with libdeflate built in, the whole image data is
// inflated in one call.
const defaultInflate = inflateWhole

// allocWhole returns n bytes for decodeIDATWhole from C's heap, outside
// Go's, so a slide's compressed data and rows (tens of megabytes, alive
// for one decode) do not raise the collector's target; freeWhole gives
// them back.
func allocWhole(n int) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	p := C.npcorch_alloc(C.size_t(n))
	if p == nil {
		return nil, fmt.Errorf("png: cannot allocate %d MB to inflate the image data", n>>20)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// reallocWhole returns b's bytes in n bytes (n > len(b)) from C's heap,
// b given back (realloc: a large block is remapped, not copied).
func reallocWhole(b []byte, n int) ([]byte, error) {
	var old unsafe.Pointer
	if cap(b) > 0 {
		old = unsafe.Pointer(unsafe.SliceData(b))
	}
	p := C.npcorch_realloc(old, C.size_t(n))
	if p == nil {
		return nil, fmt.Errorf("png: cannot allocate %d MB to read the image data", n>>20)
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// freeWhole frees memory from allocWhole; b must not be used after.
func freeWhole(b []byte) {
	if cap(b) > 0 {
		C.free(unsafe.Pointer(unsafe.SliceData(b)))
	}
}

// inflateZlib inflates the zlib stream src into exactly len(dst) bytes
// with libdeflate. src must end with the stream.
func inflateZlib(dst, src []byte) error {
	if len(src) == 0 || len(dst) == 0 {
		return errors.New("png: not enough pixel data")
	}
	d := C.libdeflate_alloc_decompressor()
	if d == nil {
		return errors.New("png: libdeflate: cannot allocate a decompressor")
	}
	defer C.libdeflate_free_decompressor(d)
	var in, out C.size_t
	r := C.libdeflate_zlib_decompress_ex(d, unsafe.Pointer(&src[0]), C.size_t(len(src)),
		unsafe.Pointer(&dst[0]), C.size_t(len(dst)), &in, &out)
	switch {
	case r == C.LIBDEFLATE_INSUFFICIENT_SPACE:
		return errors.New("png: too much pixel data")
	case r != C.LIBDEFLATE_SUCCESS:
		return errors.New("png: zlib: invalid data")
	case int(out) != len(dst):
		return errors.New("png: not enough pixel data")
	case int(in) != len(src):
		return errors.New("png: data after the zlib stream")
	}
	return nil
}
