package pqread

import (
	"strconv"
	"sync"

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
	base   memory.Allocator
	max    int
	poison bool   // Tuning.PoisonRecycled
	stats  *Stats // counts the buffers handed out again

	mu     sync.Mutex
	free   map[int][][]byte // by length
	held   int
	closed bool
}

// NewRecycler returns a Recycler over base that keeps up to max bytes,
// poisoning the buffers it keeps if poison is set (Tuning.PoisonRecycled)
// and counting those it hands out again in st (nil: its own Stats).
func NewRecycler(base memory.Allocator, max int, poison bool, st *Stats) *Recycler {
	if st == nil {
		st = new(Stats)
	}
	return &Recycler{base: base, max: max, poison: poison, stats: st, free: make(map[int][][]byte)}
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
		r.stats.RecycledBuffers.Add(1)
		if r.poison {
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
		if r.poison {
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

// Poisoning (Tuning.PoisonRecycled) fills every buffer the recycler keeps
// with poisonByte and checks, when it hands the buffer out again, that
// nobody wrote to it in between.
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
