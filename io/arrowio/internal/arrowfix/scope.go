package arrowfix

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Scope is an allocator that remembers the buffers allocated since its last
// commit. Arrow v15's IPC decoder leaks the buffers of a record batch it
// fails to decode (found by FuzzReadIPCStream); after such a failure the
// reader is released first, which frees everything it still owns, and
// rollback then frees what is left: the leaked buffers. Upstream fix that
// retires it: Arrow Go's IPC decoder releasing the buffers it allocated on
// every error path.
//
// A Scope also bounds each allocation (SetLimit): Arrow v15's loader reads
// a record batch's buffers by index without checking the index against
// the batch's buffer vector, so a hostile batch with fewer buffers than
// its schema needs has it read a length from other bytes and allocate it
// (2⁴⁷ bytes, a fatal out-of-memory, found by FuzzReadIPCFile). layout.go
// now refuses such a batch before Arrow loads it; the limit stays as a
// second line, for an allocation whose size comes from bytes no check
// covers. Past the limit Allocate panics, which the reader turns into
// ErrFormat. Upstream fix that retires it: the loader checking buffer and
// node indices, and bounding its allocations by the bytes present.
type Scope struct {
	parent memory.Allocator
	mu     sync.Mutex
	open   map[unsafe.Pointer][]byte
	limit  atomic.Int64 // 0: none
}

// SetLimit bounds each allocation to n bytes (0: no bound): the most a
// sound batch needs, its body or a decompressed buffer.
func (s *Scope) SetLimit(n int64) { s.limit.Store(n) }

func (s *Scope) check(n int) {
	// 64: Arrow rounds a buffer's capacity up to a multiple of 64 bytes.
	if l := s.limit.Load(); l > 0 && int64(n) > l+64 {
		panic(fmt.Errorf("%w: the decoder asked for %d bytes, more than the %d a sound batch of this input needs", errFB, n, l))
	}
}

// NewScope returns a Scope over parent.
func NewScope(parent memory.Allocator) *Scope {
	return &Scope{parent: parent, open: make(map[unsafe.Pointer][]byte)}
}

func (s *Scope) track(b []byte) {
	if cap(b) > 0 {
		s.open[unsafe.Pointer(unsafe.SliceData(b))] = b
	}
}

func (s *Scope) untrack(b []byte) {
	if cap(b) > 0 {
		delete(s.open, unsafe.Pointer(unsafe.SliceData(b)))
	}
}

// Allocate implements memory.Allocator.
func (s *Scope) Allocate(n int) []byte {
	s.check(n)
	b := s.parent.Allocate(n)
	s.mu.Lock()
	s.track(b)
	s.mu.Unlock()
	return b
}

// Reallocate implements memory.Allocator.
func (s *Scope) Reallocate(n int, b []byte) []byte {
	s.check(n)
	s.mu.Lock()
	_, mine := s.open[unsafe.Pointer(unsafe.SliceData(b))]
	s.untrack(b)
	s.mu.Unlock()
	nb := s.parent.Reallocate(n, b)
	if mine {
		s.mu.Lock()
		s.track(nb)
		s.mu.Unlock()
	}
	return nb
}

// Free implements memory.Allocator.
func (s *Scope) Free(b []byte) {
	s.mu.Lock()
	s.untrack(b)
	s.mu.Unlock()
	s.parent.Free(b)
}

// commit forgets the buffers allocated so far: they belong to a batch that
// was handed out.
func (s *Scope) Commit() {
	s.mu.Lock()
	clear(s.open)
	s.mu.Unlock()
}

// rollback frees the buffers allocated since the last commit that nobody
// freed. Call it only once nothing references them any more.
func (s *Scope) Rollback() {
	s.mu.Lock()
	open := s.open
	s.open = make(map[unsafe.Pointer][]byte)
	s.mu.Unlock()
	for _, b := range open {
		s.parent.Free(b)
	}
}
