package pqread

import (
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Recycler is an allocator that keeps the buffers freed to it, up to max
// bytes, and hands them out again for requests of the same size, without
// zeroing them. The fast Parquet path allocates the value and validity
// buffers of every column chunk through it and overwrites every byte it
// exposes: a stream of row groups then reuses a few row groups' worth of
// buffers instead of asking the Go heap, and the kernel, for fresh zeroed
// pages all the time (on the 64-feature speed workload that was two thirds
// of the run's page faults). Unlike a pagePool, whose page buffers Arrow
// frees while it still reads them, a buffer freed here is done with: its
// last reference was released. It is safe for concurrent use.
type Recycler struct {
	base memory.Allocator
	max  int

	mu     sync.Mutex
	free   map[int][][]byte // by length
	held   int
	closed bool
}

// recycledBuffers counts the buffers handed out again (tests).
var recycledBuffers atomic.Int64

// NewRecycler returns a Recycler over base that keeps up to max bytes.
func NewRecycler(base memory.Allocator, max int) *Recycler {
	return &Recycler{base: base, max: max, free: make(map[int][][]byte)}
}

// Allocate implements memory.Allocator. A recycled buffer holds whatever
// was written to it before.
func (r *Recycler) Allocate(n int) []byte {
	r.mu.Lock()
	if l := r.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		r.free[n] = l[:len(l)-1]
		r.held -= n
		r.mu.Unlock()
		recycledBuffers.Add(1)
		if poisonRecycled {
			checkPoison(b)
		}
		return b
	}
	r.mu.Unlock()
	return r.base.Allocate(n)
}

// Reallocate implements memory.Allocator.
func (r *Recycler) Reallocate(n int, b []byte) []byte {
	if n == len(b) {
		return b
	}
	nb := r.Allocate(n)
	copy(nb, b)
	r.Free(b)
	return nb
}

// Free implements memory.Allocator: b is kept for reuse while there is
// room, else given back to the base allocator.
func (r *Recycler) Free(b []byte) {
	if len(b) == 0 {
		r.base.Free(b)
		return
	}
	r.mu.Lock()
	if !r.closed && r.held+len(b) <= r.max {
		if poisonRecycled {
			fillPoison(b)
		}
		r.free[len(b)] = append(r.free[len(b)], b)
		r.held += len(b)
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.base.Free(b)
}

// close gives every kept buffer back to the base allocator; buffers freed
// later go straight there.
func (r *Recycler) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for n, l := range r.free {
		for _, b := range l {
			r.base.Free(b)
		}
		delete(r.free, n)
	}
	r.held = 0
}

// poisonRecycled makes the recycler fill every buffer it keeps with a
// pattern and check, when it hands the buffer out again, that nobody wrote
// to it in between: a use after release shows as a panic in tests, and as
// garbage in any value read after release. Tests turn it on, and so does
// PATE_DEBUG_RECYCLE=poison in the environment (to run other packages'
// tests, or the tool, that way).
var poisonRecycled = os.Getenv("PATE_DEBUG_RECYCLE") == "poison"

const poisonByte = 0xa5

func fillPoison(b []byte) {
	for i := range b {
		b[i] = poisonByte
	}
}

func checkPoison(b []byte) {
	for i, v := range b {
		if v != poisonByte {
			panic("io: a recycled buffer was written after it was freed (byte " + strconv.Itoa(i) + ")")
		}
	}
}
