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

// ZstdStreamWindowLog is the largest window (1<<23, 8 MiB) a streamed
// zstd frame may ask for: the decoder keeps that much of the stream.
const ZstdStreamWindowLog = 23

var zstdStreamPool = cpool{
	new: func() unsafe.Pointer { return C.pate_zstds_new(ZstdStreamWindowLog) },
	del: func(d unsafe.Pointer) { C.pate_zstds_free(d) },
}

// errZstdStream is the error of a corrupt or truncated zstd stream.
var errZstdStream = errors.New("corrupt zstd stream")

// zstdState owns a C decoder state while a reader uses it; a reader
// dropped without Close frees it through a cleanup.
type zstdState struct{ d unsafe.Pointer }

// ZstdReader decodes a stream of zstd frames with the C decoder, reading
// its input from the buffer of a bufio.Reader (no copy); Close gives its
// decoder state back.
type ZstdReader struct {
	st      *zstdState
	br      *bufio.Reader
	inFrame bool
	err     error
}

// NewZstdReader returns a reader of the zstd frames r holds (read through
// a bufio.Reader of 64 KiB unless r is one); ok is false without the C
// decoders.
func NewZstdReader(r io.Reader) (*ZstdReader, bool) {
	d := zstdStreamPool.get()
	if d == nil {
		return nil, false
	}
	br, isBuf := r.(*bufio.Reader)
	if !isBuf {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	st := &zstdState{d}
	z := &ZstdReader{st: st, br: br}
	runtime.AddCleanup(z, func(st *zstdState) {
		if st.d != nil {
			C.pate_zstds_free(st.d)
		}
	}, st)
	return z, true
}

func (z *ZstdReader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if z.st.d == nil {
		return 0, errors.New("fastcodec: read of a closed zstd reader")
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if z.br.Buffered() == 0 {
			if _, err := z.br.Peek(1); err != nil {
				if err == io.EOF && z.inFrame {
					err = io.ErrUnexpectedEOF
				}
				z.err = err
				return 0, err
			}
		}
		in, _ := z.br.Peek(z.br.Buffered())
		inPos, outPos := C.size_t(0), C.size_t(0)
		rc := C.pate_zstds_read(z.st.d, ptr(in), C.size_t(len(in)), &inPos, ptr(p), C.size_t(len(p)), &outPos)
		runtime.KeepAlive(in)
		runtime.KeepAlive(p)
		if _, err := z.br.Discard(int(inPos)); err != nil {
			z.err = err
			return int(outPos), err
		}
		if rc < 0 || (inPos == 0 && outPos == 0) {
			z.err = errZstdStream
			return int(outPos), z.err
		}
		z.inFrame = rc == 1
		if outPos > 0 {
			return int(outPos), nil
		}
	}
}

// Close gives the decoder state back (to a pool); the reader is done.
func (z *ZstdReader) Close() error {
	if d := z.st.d; d != nil {
		z.st.d = nil
		C.pate_zstds_reset(d)
		zstdStreamPool.put(d)
	}
	return nil
}

var zstdStablePool = cpool{
	new: func() unsafe.Pointer { return C.pate_zstds_new_stable(ZstdStreamWindowLog) },
	del: func(d unsafe.Pointer) { C.pate_zstds_free(d) },
}

// DecodeZstdInto decodes the zstd frames br holds into dst, which they
// must fill exactly, reading br's buffer (no copy) and writing dst in
// place: unlike a ZstdReader's, the decoder keeps no window buffer and
// copies nothing out of one. ok is false without the C decoders or on a
// corrupt or truncated stream, or one that does not decode to len(dst)
// bytes; dst then holds anything.
func DecodeZstdInto(br *bufio.Reader, dst []byte) bool {
	if len(dst) == 0 {
		return false
	}
	d := zstdStablePool.get()
	if d == nil {
		return false
	}
	defer func() {
		C.pate_zstds_reset(d)
		zstdStablePool.put(d)
	}()
	outPos := C.size_t(0)
	for {
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); err != nil {
				return false
			}
		}
		in, _ := br.Peek(br.Buffered())
		inPos, was := C.size_t(0), outPos
		rc := C.pate_zstds_read(d, ptr(in), C.size_t(len(in)), &inPos, ptr(dst), C.size_t(len(dst)), &outPos)
		runtime.KeepAlive(in)
		runtime.KeepAlive(dst)
		if _, err := br.Discard(int(inPos)); err != nil || rc < 0 || inPos == 0 && outPos == was {
			return false
		}
		if rc == 0 && int(outPos) == len(dst) {
			// The last frame ended where dst does: nothing may follow.
			_, err := br.Peek(1)
			return err == io.EOF
		}
	}
}
