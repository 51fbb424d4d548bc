// Package bodyread reads a body of bounded size into memory. The gateway reads every client
// request body and every JSON response of a backend this way: at most limit bytes, never
// buffering past limit+1, and straight into the caller's buffer so a body costs at most the
// growth of that buffer.
package bodyread

import (
	"errors"
	"io"
)

// ErrTooLarge is returned when the body holds more than limit bytes.
var ErrTooLarge = errors.New("body exceeds the size limit")

// Append reads r to its end and appends what it read to dst. It returns ErrTooLarge as soon as
// more than limit bytes were read (dst then holds at most limit+1 of them), and any other read
// error as it is. Give dst the capacity the body is expected to need, plus one byte to read the
// end of the body into, and Append allocates nothing.
func Append(dst []byte, r io.Reader, limit int64) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)] // grow; at most limit bytes are in dst here
		}
		end := cap(dst)
		// Never read past limit+1 bytes of body. left is what the limit still allows (at least
		// 0: past it Append has returned), counted without limit+1, which a limit at the top
		// of int64 would overflow.
		if left := limit - int64(len(dst)-start); left < int64(end-len(dst)-1) {
			end = len(dst) + int(left) + 1
		}
		n, err := r.Read(dst[len(dst):end])
		dst = dst[:len(dst)+n]
		if int64(len(dst)-start) > limit {
			return dst, ErrTooLarge
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
