//go:build cgo

package fastcodec

/*
#include "fastcodec.h"
*/
import "C"

import (
	"bufio"
	"errors"
	"io"
	"runtime"
	"unsafe"
)

var inflatePool = cpool{
	new: func() unsafe.Pointer { return C.pate_inflate_new() },
	del: func(d unsafe.Pointer) { C.pate_inflate_free(d) },
}

// errGzipStream is the error of a corrupt gzip stream.
var errGzipStream = errors.New("corrupt gzip stream")

// GzipReader inflates one gzip member with zlib's C inflater (1.5x the
// Go decoder's speed), reading its input from the buffer of a
// bufio.Reader (no copy); it stops at the member's end, as a Go
// gzip.Reader with Multistream(false) does. Close gives its state back.
type GzipReader struct {
	st  *cState
	br  *bufio.Reader
	err error
}

// cState owns a C decoder state while a reader uses it; a reader dropped
// without Close frees it through a cleanup.
type cState struct {
	d    unsafe.Pointer
	free func(unsafe.Pointer)
}

func newCState[T any](d unsafe.Pointer, free func(unsafe.Pointer), owner *T) *cState {
	st := &cState{d, free}
	runtime.AddCleanup(owner, func(st *cState) {
		if st.d != nil {
			st.free(st.d)
		}
	}, st)
	return st
}

// NewGzipReader returns a reader of the gzip member r holds (read through
// a bufio.Reader of 64 KiB unless r is one); ok is false without the C
// decoders.
func NewGzipReader(r io.Reader) (*GzipReader, bool) {
	d := inflatePool.get()
	if d == nil {
		return nil, false
	}
	br, isBuf := r.(*bufio.Reader)
	if !isBuf {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	z := &GzipReader{br: br}
	z.st = newCState(d, inflatePool.del, z)
	return z, true
}

func (z *GzipReader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if z.st.d == nil {
		return 0, errors.New("fastcodec: read of a closed gzip reader")
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if z.br.Buffered() == 0 {
			if _, err := z.br.Peek(1); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				z.err = err
				return 0, err
			}
		}
		in, _ := z.br.Peek(z.br.Buffered())
		inUsed, outUsed := C.size_t(0), C.size_t(0)
		rc := C.pate_inflate_read(z.st.d, ptr(in), C.size_t(len(in)), &inUsed, ptr(p), C.size_t(len(p)), &outUsed)
		runtime.KeepAlive(in)
		runtime.KeepAlive(p)
		if _, err := z.br.Discard(int(inUsed)); err != nil {
			z.err = err
			return int(outUsed), err
		}
		switch {
		case rc < 0 || (rc == 1 && inUsed == 0 && outUsed == 0):
			z.err = errGzipStream
			return int(outUsed), z.err
		case rc == 0:
			z.err = io.EOF
			if outUsed > 0 {
				return int(outUsed), nil
			}
			return 0, io.EOF
		}
		if outUsed > 0 {
			return int(outUsed), nil
		}
	}
}

// Close gives the inflater back (to a pool); the reader is done.
func (z *GzipReader) Close() error {
	if d := z.st.d; d != nil {
		z.st.d = nil
		C.pate_inflate_reset(d)
		inflatePool.put(d)
	}
	return nil
}
