//go:build cgo && libdeflate

package imaging

/*
#cgo LDFLAGS: -ldeflate
#include <libdeflate.h>
*/
import "C"

import (
	"errors"
	"unsafe"
)

// defaultInflate: with libdeflate built in, the whole image data is
// inflated in one call.
const defaultInflate = inflateWhole

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
