//go:build cgo

package fastcodec

/*
#cgo CFLAGS: -O2 -w -I${SRCDIR}/brotli/c/include
#include "fastcodec.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Available says whether the C decoders are compiled in.
const Available = true

// cpool keeps C decoder states between calls: creating a zstd context
// costs about as much as decoding a small page. At most max states are
// kept; the rest are freed, so nothing outlives its use unbounded.
type cpool struct {
	mu   sync.Mutex
	free []unsafe.Pointer
	new  func() unsafe.Pointer
	del  func(unsafe.Pointer)
}

func (p *cpool) get() unsafe.Pointer {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		d := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return d
	}
	p.mu.Unlock()
	return p.new()
}

func (p *cpool) put(d unsafe.Pointer) {
	p.mu.Lock()
	if len(p.free) < 2*runtime.GOMAXPROCS(0) {
		p.free = append(p.free, d)
		d = nil
	}
	p.mu.Unlock()
	if d != nil {
		p.del(d)
	}
}

var (
	deflatePool = cpool{
		new: func() unsafe.Pointer { return C.pate_deflate_new() },
		del: func(d unsafe.Pointer) { C.pate_deflate_free(d) },
	}
	zstdPool = cpool{
		new: func() unsafe.Pointer { return C.pate_zstd_new() },
		del: func(d unsafe.Pointer) { C.pate_zstd_free(d) },
	}
)

// ptr returns a pointer to b's first byte, nil for an empty b.
func ptr(b []byte) unsafe.Pointer {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Pointer(unsafe.SliceData(b))
}

// Gzip decodes src, gzip members end to end, into dst, which it must
// fill exactly; it reports false if src is anything else.
func Gzip(dst, src []byte) bool { return inflate(dst, src, false) }

// Zlib decodes the zlib stream that begins src into dst, which it must
// fill exactly; it reports false if it does not.
func Zlib(dst, src []byte) bool { return inflate(dst, src, true) }

// inflate runs libdeflate's gzip or zlib decoder on a pooled state.
func inflate(dst, src []byte, zlib bool) bool {
	if len(dst) == 0 || len(src) == 0 {
		return false
	}
	d := deflatePool.get()
	if d == nil {
		return false
	}
	defer deflatePool.put(d)
	var out C.size_t
	var ok bool
	if zlib {
		ok = C.pate_zlib_decode(d, ptr(src), C.size_t(len(src)), ptr(dst), C.size_t(len(dst)), &out) == 1
	} else {
		ok = C.pate_gzip_decode(d, ptr(src), C.size_t(len(src)), ptr(dst), C.size_t(len(dst)), &out) == 1
	}
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	return ok && int(out) == len(dst)
}

// Zstd decodes src, zstd (and skippable) frames end to end, into dst and
// returns the decoded length; ok is false if src is not such frames or
// does not fit in dst.
func Zstd(dst, src []byte) (n int, ok bool) {
	if len(dst) == 0 {
		return 0, false
	}
	d := zstdPool.get()
	if d == nil {
		return 0, false
	}
	defer zstdPool.put(d)
	var out C.size_t
	ok = C.pate_zstd_decode(d, ptr(src), C.size_t(len(src)), ptr(dst), C.size_t(len(dst)), &out) == 1
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	if !ok || int(out) > len(dst) {
		return 0, false
	}
	return int(out), true
}

// Brotli decodes src, one brotli stream with nothing after it, into dst
// and returns the decoded length; ok is false if src is not such a stream
// or does not fit in dst.
func Brotli(dst, src []byte) (n int, ok bool) {
	if len(dst) == 0 || len(src) == 0 {
		return 0, false
	}
	var out C.size_t
	ok = C.pate_brotli_decode(ptr(src), C.size_t(len(src)), ptr(dst), C.size_t(len(dst)), &out) == 1
	runtime.KeepAlive(src)
	runtime.KeepAlive(dst)
	if !ok || int(out) > len(dst) {
		return 0, false
	}
	return int(out), true
}
