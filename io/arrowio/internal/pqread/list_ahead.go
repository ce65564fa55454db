package pqread

import (
	"io"
)

// Pages decompressed ahead of a list cursor. A list chunk's pages are
// opened in order, by one worker at a time, and the worker that opens a
// page decompressed it while the workers of the later segments waited for
// the column: Polars' 1 MB zstd pages of a million FLOAT[384] rows are 1.3
// CPU-s of decompression, which ran on one core. The cursor now reads the
// headers of the next pages as it opens one and decompresses those pages
// in goroutines of their own, so that decompression runs on every core and
// the page it opens next is usually ready. A PLAIN page with no null is
// then handed out from its decompressed bytes, not copied to buf first.
//
// Only compressed DATA_PAGEs (v1) of at most aheadPageBytes are read
// ahead; the read-ahead stops at any other page, which the cursor opens as
// before, and goes on after it. A header the read-ahead cannot read stops
// it too: the cursor then reads it and fails as it did.

// Bounds of a cursor's read-ahead: pages, and their decoded bytes; and
// of all the read-ahead of a reader's cursors (aheadShared).
const (
	aheadPages     = 4
	aheadBytes     = 32 << 20
	aheadPageBytes = 16 << 20
	aheadShared    = 96 << 20
)

// The list cursors of one reader share a budget (a stateBudget of
// aheadShared bytes) for the buffers they hold for their read-ahead: pages
// being decompressed or read ahead, the page open from one, spare buffers.
// Each cursor may hold 64 MB, and a file with several embedding columns
// has a cursor for each of them and each row group in flight. A cursor
// that finds the budget spent reads no further ahead: it opens its pages
// itself, as a cursor did before the read-ahead.

// aheadPage is a page being, or done, decompressed ahead of the cursor.
type aheadPage struct {
	pos, next int64 // where its header starts; where the page after it starts
	at        int64 // where its body starts
	h         pageHeader
	body      []byte // the compressed page
	page      []byte // its decompressed bytes, when ok
	charged   int64  // the bytes of body and page taken from the budget
	ok        bool
	done      chan struct{}
}

// readAhead starts decompressing the pages after those read ahead so far,
// within the bounds.
func (lr *listCursor) readAhead(pd *plainDecoder) {
	c := &lr.lc.plainChunk
	if c.codec == nil {
		return // nothing to decompress: the cursor reads pages straight
	}
	if len(lr.ahead) == 0 {
		lr.scan = lr.pos
	}
	lr.ahc.r, lr.ahc.size = pd.r, pd.size
	for len(lr.ahead) < aheadPages && lr.scan < lr.end {
		h, hl, err := lr.ahc.header(lr.scan, lr.end)
		if err != nil || h.csize < 0 || h.usize < 0 || int64(h.csize) > lr.end-lr.scan-int64(hl) {
			return
		}
		if t := pd.tuning(); h.typ != pageData || !h.v1 || h.v2 || t.streamable(h, c.codecID) || t.splittable(h, c.codecID) ||
			h.usize > aheadPageBytes || h.csize > aheadPageBytes ||
			len(lr.ahead) > 0 && lr.aheadBytes+int64(h.usize) > aheadBytes {
			return
		}
		a := &aheadPage{pos: lr.scan, at: lr.scan + int64(hl), h: *h, done: make(chan struct{})}
		a.next = a.at + int64(h.csize)
		var ok bool
		if a.body, ok = lr.spareBuf(int(h.csize), &a.charged); !ok {
			return
		}
		if a.page, ok = lr.spareBuf(int(h.usize), &a.charged); !ok {
			lr.keepSpare(a.body) // with its charge
			return
		}
		lr.scan = a.next
		lr.ahead = append(lr.ahead, a)
		lr.aheadBytes += int64(h.usize)
		// The codec and its id, not the chunk: a DATA_PAGE_V2 swaps the
		// chunk's codec while it is decoded.
		go inflateAhead(a, plainChunk{codec: c.codec, codecID: c.codecID}, pd.r, pd.stat())
	}
}

// inflateAhead reads a's body and decompresses it, counted in st. A
// codec's panic on a corrupt page (Arrow's snappy decoder panics) fails
// the page.
func inflateAhead(a *aheadPage, pc plainChunk, r io.ReaderAt, st *Stats) {
	defer close(a.done)
	defer func() {
		if recover() != nil {
			a.ok = false
		}
	}()
	if m, err := r.ReadAt(a.body, a.at); m != len(a.body) || err != nil && err != io.EOF {
		return
	}
	a.page, a.ok = pc.inflate(a.page, a.body, int(a.h.usize))
	st.AheadPagesRead.Add(1)
}

// takeAhead returns the page at lr.pos if it was read ahead, once it is
// decompressed, moves lr.pos past it and reads further ahead; nil if it
// was not read ahead.
func (lr *listCursor) takeAhead(pd *plainDecoder) *aheadPage {
	lr.readAhead(pd)
	if len(lr.ahead) == 0 || lr.ahead[0].pos != lr.pos {
		return nil
	}
	a := lr.ahead[0]
	lr.ahead = lr.ahead[1:]
	lr.aheadBytes -= int64(a.h.usize)
	lr.pos = a.next
	lr.readAhead(pd)
	<-a.done
	return a
}

// spareBuf returns a buffer of n bytes, a spare one if one is large
// enough, else a new one if the budget has room for it; it adds the
// buffer's bytes to *charged (a spare's were charged when it was kept).
func (lr *listCursor) spareBuf(n int, charged *int64) ([]byte, bool) {
	for i, b := range lr.spare {
		if cap(b) >= n {
			lr.spare[i] = lr.spare[len(lr.spare)-1]
			lr.spare = lr.spare[:len(lr.spare)-1]
			lr.spareBytes -= int64(cap(b))
			*charged += int64(cap(b))
			return b[:n], true
		}
	}
	if !lr.budget.reserve(int64(n)) {
		return nil, false
	}
	*charged += int64(n)
	return make([]byte, n), true
}

// recycle gives back a page's bytes and keeps its buffers for the pages
// after it, aheadBytes of them at most, while the budget has room.
func (lr *listCursor) recycle(a *aheadPage) {
	lr.budget.release(a.charged)
	a.charged = 0
	for _, b := range [][]byte{a.body, a.page} {
		if cap(b) > 0 && lr.spareBytes+int64(cap(b)) <= aheadBytes && lr.budget.reserve(int64(cap(b))) {
			lr.keepSpare(b)
		}
	}
	a.body, a.page = nil, nil
}

// keepSpare adds b, whose bytes are charged, to the spare buffers.
func (lr *listCursor) keepSpare(b []byte) {
	lr.spare = append(lr.spare, b[:0])
	lr.spareBytes += int64(cap(b))
}

// stopAhead waits for the pages read ahead and drops them, the page held
// and the spare buffers, and gives their bytes back.
func (lr *listCursor) stopAhead() {
	for _, a := range lr.ahead {
		<-a.done
		lr.budget.release(a.charged)
	}
	if lr.held != nil {
		lr.budget.release(lr.held.charged)
	}
	lr.budget.release(lr.spareBytes)
	lr.ahead, lr.aheadBytes, lr.spare, lr.spareBytes = nil, 0, nil, 0
	lr.held = nil
}

// decodeAhead decodes a page read ahead (header h, decompressed page):
// its levels, and its values, which a PLAIN page with no null hands out
// from page itself.
func (lr *listCursor) decodeAhead(pd *plainDecoder, h *pageHeader, page []byte) bool {
	lc := &lr.lc
	c := &lc.plainChunk
	n, ok := lc.v1Entries(h)
	if !ok {
		return false
	}
	vals, slots, present, ok := lc.v1Levels(page, n)
	if !ok {
		return false
	}
	if h.enc == encodingPlain && slots == present {
		if int64(len(vals)) != slots*lr.w {
			return false
		}
		c.row += slots
		lr.vals = vals
		return true
	}
	if int64(cap(lr.buf)) < n*lr.w {
		lr.buf = make([]byte, n*lr.w)
	}
	c.values = lr.buf[:n*lr.w]
	if !lc.values(pd, h, vals, slots, present) {
		return false
	}
	lr.vals = c.values
	return true
}
