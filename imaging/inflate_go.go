//go:build !cgo || !libdeflate

package imaging

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zlib"
)

// defaultInflate: without libdeflate, rows are inflated as they are
// needed, which holds less memory at the same speed.
const defaultInflate = inflateStream

// inflateZlib inflates the zlib stream src into exactly len(dst) bytes
// with klauspost's zlib reader. src must end with the stream.
func inflateZlib(dst, src []byte) error {
	br := bytes.NewReader(src)
	zr, err := zlib.NewReader(br)
	if err != nil {
		return fmt.Errorf("png: %w", err)
	}
	defer zr.Close()
	if _, err := io.ReadFull(zr, dst); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return errors.New("png: not enough pixel data")
		}
		return fmt.Errorf("png: %w", err)
	}
	var one [1]byte
	if n, err := io.ReadFull(zr, one[:]); n != 0 || err != io.EOF {
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return fmt.Errorf("png: %w", err)
		}
		return errors.New("png: too much pixel data")
	}
	if br.Len() != 0 {
		return errors.New("png: data after the zlib stream")
	}
	return nil
}
