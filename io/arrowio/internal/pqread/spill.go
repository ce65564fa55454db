package pqread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio/internal/pagecodec"
)

// A streamed row group holds, between its segments, some state for every
// column whose current page overhangs the segment: a page stream's
// decompressor (parquet_pagestream.go) or the decoded rest of the page
// (colStream.left). Over 64 columns of a one-row-group file that was most
// of the memory: DuckDB's zstd frames of 1M doubles keep a 2 MB window
// each (64 live streams), and its v2 pages (BYTE_STREAM_SPLIT, which cannot
// be read in order) were held decoded whole, 8 MB a column.
//
// So each reader has a budget for the page streams' state (Tuning.StreamBudget),
// which a stream takes from while it lives. A page whose stream does not
// fit is still decoded as a stream, but at once and to the end, by the
// worker at hand, a block at a time into a temporary file from which the
// later segments pread their rows: the kernel's page cache is not the
// process's memory. (BYTE_STREAM_SPLIT pages stored or snappy are read a
// range at a time instead, parquet_splitstream.go.) A page that cannot be
// streamed (BYTE_STREAM_SPLIT with zstd or gzip, brotli, ...) and whose
// decoded overhang is over Tuning.MaxFreeLeft bytes is decoded whole into the
// worker's scratch buffer (back to leftPool at once) and written there
// too. The budget is shared by the row groups in
// flight, so a row group's streams starting while the previous one's are
// still live cannot add up either.
//
// The temporary file is created in ReadOptions.TempDir (by default
// os.TempDir, where standard input is spooled too) when the first page is
// spilled, removed from the directory at once (where the system allows
// it; otherwise when the reader is closed), and closed with the reader,
// or at the end of the file: nothing is left behind on an error or an
// abort. Its space is reused as columns are read through. If it cannot be
// created or written, pages are kept in memory, or streamed, as before.

// Tuning.StreamBudget bounds the bytes of the page streams' state in one
// reader: 64 snappy, LZ4 or gzip streams of 1M nullable rows (about 320 KB
// each) fit, about nine of DuckDB's zstd streams (2.4 MB each) do. (At
// 64 MB, 1M-row zstd files peaked at 1.26x gen.go's layout, and at 16 MB
// spilled more for 12 MB less.) Tuning.MaxFreeLeft is the decoded
// overhang of a page that cannot be streamed that is kept in memory (a
// writer's 1 MB pages: the 64 MB their overhangs take over 64 columns are
// what row groups of that size took anyway).

// stateBudget is a reader's budget of bytes: for the state of its
// streamed columns, and for its list cursors' read-ahead (aheadShared). A
// nil budget is unbounded.
type stateBudget struct {
	limit int64
	live  atomic.Int64
	peak  *atomic.Int64 // where the largest charge is noted, if anywhere
}

// reserve takes n bytes from the budget if they fit.
func (b *stateBudget) reserve(n int64) bool {
	if b == nil {
		return true
	}
	for {
		old := b.live.Load()
		if old+n > b.limit {
			return false
		}
		if b.live.CompareAndSwap(old, old+n) {
			b.notePeak(old + n)
			return true
		}
	}
}

// force takes n bytes whether or not they fit (a page that could not be
// spilled stays in memory, and is counted).
func (b *stateBudget) force(n int64) {
	if b != nil {
		b.notePeak(b.live.Add(n))
	}
}

func (b *stateBudget) release(n int64) {
	if b != nil && n != 0 {
		b.live.Add(-n)
	}
}

func (b *stateBudget) notePeak(v int64) {
	if b.peak != nil {
		notePeak(b.peak, v)
	}
}

// streamCost estimates the memory a stream of page sp of the column
// keeps: its read buffer, the codec's window and buffers, the validity
// bitmap.
func (cs *colStream) streamCost(pd *plainDecoder, sp *streamPage) int64 {
	h := &sp.h
	var cost int64
	if cs.chunk.valid != nil {
		cost = bitutil.BytesForBits(int64(h.numValues))
	}
	if h.enc == encodingBSS {
		// A page read by ranges keeps where its fragments start.
		return cost + 8*(int64(h.usize)/pd.tuning().SnappyFragment+2)
	}
	cost += pageStreamBuffer
	codec := cs.chunk.codecID
	if h.v2 && !h.compressed {
		codec = compress.Codecs.Uncompressed
	}
	switch codec {
	case compress.Codecs.Snappy, codecLZ4Raw:
		cost += 2 * snappyWindow
	case compress.Codecs.Gzip:
		cost += 48 << 10 // the inflater's 32 KB window and its state
	case compress.Codecs.Zstd:
		// The frame's window, from its header, and the decoder's block
		// buffers; a header that does not say is charged the most a
		// stream may keep.
		body := sp.off + int64(sp.hlen)
		if h.v2 {
			body += int64(h.defLen)
		}
		var b [18]byte
		m, _ := pd.r.ReadAt(b[:], body)
		win, ok := zstdWindow(b[:m])
		if !ok || win > maxZstdWindow {
			win = maxZstdWindow
		}
		cost += win + 3*(128<<10)
	}
	return cost
}

// zstdWindow returns the window size the zstd frame header at the start
// of b asks for (RFC 8878, section 3.1.1.1.2): a single-segment frame's
// window is its content.
func zstdWindow(b []byte) (int64, bool) {
	if len(b) < 6 || binary.LittleEndian.Uint32(b) != 0xFD2FB528 {
		return 0, false
	}
	if b[4]&0x20 == 0 {
		wd := b[5]
		base := int64(1) << (10 + wd>>3)
		return base + base/8*int64(wd&7), true
	}
	n, ok := pagecodec.ZstdContentSize(b)
	return int64(min(n, uint64(maxStreamPage))), ok
}

// spillFile is a reader's temporary file of decoded pages.
type spillFile struct {
	dir    string
	onRead func(name string) error // Tuning.OnSpillRead
	stats  *Stats                  // the reader's
	mu     sync.Mutex
	f      *os.File
	name   string // to remove on close: it could not be removed at once
	end    int64
	free   []spillRegion
	failed bool // creating or writing it failed: pages stay in memory
	closed bool
}

// spillRegion is a page's place in the spill file.
type spillRegion struct{ off, n int64 }

var errSpillClosed = errors.New("spill file closed")

// alloc finds room for n bytes, creating the file if need be (s.mu held).
func (s *spillFile) alloc(n int64) (spillRegion, error) {
	if s.closed {
		return spillRegion{}, errSpillClosed
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "pate-spill-*")
		if err != nil {
			return spillRegion{}, err
		}
		s.stats.OpenSpills.Add(1)
		s.f = f
		if os.Remove(f.Name()) != nil {
			s.name = f.Name()
		}
	}
	for i, r := range s.free {
		if r.n >= n {
			if r.n == n {
				s.free = append(s.free[:i], s.free[i+1:]...)
			} else {
				s.free[i] = spillRegion{r.off + n, r.n - n}
			}
			return spillRegion{r.off, n}, nil
		}
	}
	r := spillRegion{s.end, n}
	s.end += n
	return r, nil
}

// reserve finds room for n bytes; ok is false if the file cannot be
// used (the page then stays in memory).
func (s *spillFile) reserve(n int64) (spillRegion, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed {
		return spillRegion{}, false
	}
	r, err := s.alloc(n)
	if err != nil {
		s.failed = true
		return spillRegion{}, false
	}
	return r, true
}

// writeAt writes b at off, in a region reserved; false if that failed
// (and the file is not used again).
func (s *spillFile) writeAt(b []byte, off int64) bool {
	s.mu.Lock()
	f := s.f
	s.mu.Unlock()
	if f == nil {
		return false
	}
	if _, err := f.WriteAt(b, off); err != nil {
		s.mu.Lock()
		s.failed = true
		s.mu.Unlock()
		return false
	}
	return true
}

// write stores the values and validity bitmap of a decoded page and
// returns where; ok is false if the file cannot be used.
func (s *spillFile) write(values, valid []byte) (spillRegion, bool) {
	r, ok := s.reserve(int64(len(values) + len(valid)))
	if !ok {
		return r, false
	}
	if !s.writeAt(values, r.off) || len(valid) > 0 && !s.writeAt(valid, r.off+int64(len(values))) {
		s.release(r)
		return spillRegion{}, false
	}
	s.stats.SpilledPages.Add(1)
	return r, true
}

// usable reports whether pages may be spilled to s (it has not failed).
func (s *spillFile) usable() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.failed && !s.closed
}

// readAt reads len(b) bytes at off of the file.
func (s *spillFile) readAt(b []byte, off int64) error {
	s.mu.Lock()
	f := s.f
	closed := s.closed
	s.mu.Unlock()
	if closed || f == nil {
		return errSpillClosed
	}
	if s.onRead != nil {
		if err := s.onRead(f.Name()); err != nil {
			return err
		}
	}
	m, err := f.ReadAt(b, off)
	if m == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// release makes region r's room available again.
func (s *spillFile) release(r spillRegion) {
	if r.n == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.off+r.n == s.end {
		s.end = r.off
		return
	}
	s.free = append(s.free, r)
}

// close closes (and if need be removes) the file; the workers are done.
func (s *spillFile) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.f != nil {
		s.f.Close()
		if s.name != "" {
			os.Remove(s.name)
		}
		s.f, s.name, s.free = nil, "", nil
		s.stats.OpenSpills.Add(-1)
	}
}

// spillError describes an error of the spill file without its name.
func spillError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("temporary file: %s: %w", pe.Op, pe.Err)
	}
	return fmt.Errorf("temporary file: %w", err)
}

// spillLeft writes the decoded page in cs.left (and cs.leftValid) to the
// spill file and lets go of the buffers; false if it stays in memory.
func (cs *colStream) spillLeft() bool {
	if cs.spill == nil {
		return false
	}
	n := cs.leftN
	values := cs.left[:n*int64(cs.chunk.w)]
	var valid []byte
	if cs.chunk.valid != nil {
		valid = cs.leftValid[:bitutil.BytesForBits(n)]
	}
	r, ok := cs.spill.write(values, valid)
	if !ok {
		return false
	}
	putLeft(cs.left)
	cs.left, cs.leftValid = nil, nil
	cs.inFile, cs.region = true, r
	return true
}

// keepLeft decides where the decoded overhang of a page (cs.left, leftN
// rows) waits for the next segments: in memory if small (pd's
// Tuning.MaxFreeLeft), else in the spill file (and in memory, charged to
// the budget, if that fails).
func (cs *colStream) keepLeft(pd *plainDecoder) {
	size := int64(len(cs.left)) + int64(len(cs.leftValid))
	if size <= pd.tuning().MaxFreeLeft || cs.spillLeft() {
		return
	}
	cs.budget.force(size)
	cs.leftCharge = size
}

// takeFile copies the next n rows of a spilled page into dst (and dvalid)
// from row at on.
func (cs *colStream) takeFile(dst, dvalid []byte, at, n int64) error {
	w := int64(cs.chunk.w)
	if err := cs.spill.readAt(dst[at*w:(at+n)*w], cs.region.off+cs.leftAt*w); err != nil {
		return err
	}
	if dvalid == nil {
		return nil
	}
	first, last := cs.leftAt/8, (cs.leftAt+n+7)/8
	if int64(cap(cs.vbuf)) < last-first {
		cs.vbuf = make([]byte, last-first)
	}
	b := cs.vbuf[:last-first]
	if err := cs.spill.readAt(b, cs.region.off+cs.leftN*w+first); err != nil {
		return err
	}
	bitutil.CopyBitmap(b, int(cs.leftAt%8), int(n), dvalid, int(at))
	return nil
}

// dropLeft lets go of the column's decoded overhang, wherever it is.
func (cs *colStream) dropLeft() {
	putLeft(cs.left)
	cs.left = nil
	cs.budget.release(cs.leftCharge)
	cs.leftCharge = 0
	if cs.inFile {
		cs.spill.release(cs.region)
		cs.inFile, cs.region = false, spillRegion{}
	}
}

// spillStream decodes the page sp of the column, which is streamed, into
// the spill file a block at a time, so that not even the decoded page is
// in memory: the column's state is then the region of the file. handled
// is false if the file cannot be used (the caller decodes the page as it
// would have); ok is false if the page does not decode.
func (cs *colStream) spillStream(pd *plainDecoder, sp *streamPage) (handled, ok bool) {
	if cs.spill == nil {
		return false, true
	}
	w := int64(cs.chunk.w)
	n := int64(sp.h.numValues)
	vbytes := int64(0)
	if cs.chunk.valid != nil {
		vbytes = bitutil.BytesForBits(n)
	}
	r, ok := cs.spill.reserve(n*w + vbytes)
	if !ok {
		return false, true
	}
	ps, ok := cs.openStream(pd, sp)
	if !ok {
		cs.spill.release(r)
		// A BYTE_STREAM_SPLIT page not to be read by ranges is decoded
		// whole by the caller.
		return sp.h.enc != encodingBSS, sp.h.enc == encodingBSS
	}
	defer ps.close()
	block := min(n, pd.tuning().SpillBlockRows)
	buf := getLeft(int(block * w))
	defer putLeft(buf)
	var bits []byte
	if ps.valid != nil {
		bits = make([]byte, bitutil.BytesForBits(block))
	}
	for row := int64(0); row < n; {
		k := min(block, n-row)
		if !ps.emit(pd, buf, bits, 0, k, int(w)) {
			cs.spill.release(r)
			return true, false
		}
		if !cs.spill.writeAt(buf[:k*w], r.off+row*w) {
			cs.spill.release(r)
			return false, true
		}
		row += k
	}
	if !ps.finish() {
		cs.spill.release(r)
		return true, false
	}
	if vbytes > 0 && !cs.spill.writeAt(ps.valid[:vbytes], r.off+n*w) {
		cs.spill.release(r)
		return false, true
	}
	cs.spill.stats.SpilledPages.Add(1)
	cs.leftN, cs.leftAt = n, 0
	cs.inFile, cs.region = true, r
	return true, true
}
