package pqread

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio/internal/pagecodec"
)

// A streamed column whose data pages are larger than a segment (DuckDB
// writes a single page per column chunk: 8 MB for a million doubles)
// would keep most of a decoded page per column between segments, which
// over 64 columns is most of the row group. A PLAIN page of more than
// Tuning.HugePageBytes (256 KB), stored, snappy or gzip, is instead
// decompressed as a stream, read from the file in small pieces: the
// column keeps a read buffer, the decompressor's window and the page's
// validity bitmap, and each segment takes its rows from the stream. So is a zstd page of more
// than 4 MB: DuckDB's zstd frames of a million doubles have a 2 MB window,
// and kept whole such pages took 800 MB for one 1M-row group.

// pageStreamBuffer is the read buffer of a streamed page, snappyStreamBuffer
// that of a streamed snappy page. A snappy page's long literals are read
// from the file straight into place past what the buffer holds, and
// incompressible data (an embedding's float32s) is one literal per 64 KB:
// a 64 KB buffer, filled as the literal's tag is read, held nearly all of
// each literal, which was then copied out of it (0.15 CPU-s over 1.5 GB).
const (
	pageStreamBuffer   = 64 << 10
	snappyStreamBuffer = 8 << 10
)

// codecLZ4Raw is Parquet's LZ4_RAW codec number (parquet.thrift
// CompressionCodec), which Arrow v15's table of codecs lacks.
const codecLZ4Raw = compress.Compression(7)

// Streamed pages come and go a column at a time; their read buffers and
// snappy windows are pooled rather than left to the collector (at 64
// columns a row group, the churn showed in the peak RSS).
var (
	readerPool       = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, pageStreamBuffer) }}
	snappyReaderPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, snappyStreamBuffer) }}
	windowPool       = sync.Pool{New: func() any { b := make([]byte, 0, 2*snappyWindow); return &b }}
)

// pageStream is a data page being decoded as a stream.
type pageStream struct {
	br    *bufio.Reader         // pooled
	hist  *[]byte               // pooled, of a snappy stream
	cz    *pagecodec.ZstdReader // pooled decoder, of a zstd stream
	cg    *pagecodec.GzipReader // pooled inflater, of a gzip stream
	dec   io.Reader
	split *splitStream // a BYTE_STREAM_SPLIT page read a range at a time
	valid []byte       // the page's validity bitmap, nil for a required column
	n     int64        // rows of the page
	row   int64        // rows handed out
	live  *Stats       // whose LiveStreams counts it, while it is open
}

// streamable reports whether the data page h of a chunk compressed with
// codec may be streamed.
func (t *Tuning) streamable(h *pageHeader, codec compress.Compression) bool {
	if h.enc != encodingPlain || h.usize <= t.HugePageBytes {
		return false
	}
	switch codec {
	case compress.Codecs.Uncompressed, compress.Codecs.Snappy:
		return true
	case compress.Codecs.Gzip, compress.Codecs.Zstd:
		// Inflating from a bufio.Reader is slower than from the whole
		// page: only pages far larger than a segment's share are worth it
		// (DuckDB's 8 MB pages of a million rows, not its 1 MB ones). A
		// zstd stream keeps the frame's window (DuckDB's: 2 MB), not the
		// page: at 64 columns a one-row-group file otherwise holds its
		// whole decoded row group.
		return h.usize > 16*t.HugePageBytes
	case codecLZ4Raw:
		// Streamed only where decoding whole costs memory out of
		// proportion (DuckDB's 8 MB pages: 830 MB for a 1M-row group):
		// pierrec's block decoder is faster than this stream.
		return h.usize > 16*t.HugePageBytes
	}
	return false
}

// newPageStream returns a stream of a page of n rows of the column, with
// its validity bitmap (the column's, reused) if the column is nullable,
// and the function that reads the page's definition levels into it and
// returns the values present.
func (cs *colStream) newPageStream(n int64) (*pageStream, func([]byte) (int64, bool)) {
	ps := &pageStream{n: n}
	if cs.chunk.valid != nil {
		if int64(cap(cs.valid)) < bitutil.BytesForBits(n) {
			cs.valid = make([]byte, bitutil.BytesForBits(n))
		}
		ps.valid = cs.valid[:bitutil.BytesForBits(n)]
	}
	return ps, func(b []byte) (int64, bool) {
		lc := plainChunk{valid: ps.valid, rows: n}
		return lc.levels(b, n)
	}
}

// openStream starts decoding the page sp of the column as a stream.
func (cs *colStream) openStream(pd *plainDecoder, sp *streamPage) (*pageStream, bool) {
	if sp.h.enc == encodingBSS {
		return cs.openSplit(pd, sp)
	}
	h := &sp.h
	c := &cs.chunk
	w := int64(c.w)
	n := int64(h.numValues)
	body := sp.off + int64(sp.hlen)
	ps, levels := cs.newPageStream(n)
	nullable := c.valid != nil
	codec := c.codecID
	nn := n
	var values int64 // decompressed bytes of the values
	switch {
	case h.v1:
		if nullable && h.defEnc != encodingRLE {
			return nil, false
		}
		if !ps.open(pd, codec, io.NewSectionReader(pd.r, body, int64(h.csize)), int64(h.usize)) {
			return nil, false
		}
		values = int64(h.usize)
		if nullable {
			var ok bool
			if nn, values, ok = v1Levels(ps.dec, values, levels); !ok {
				ps.close()
				return nil, false
			}
		}
	case h.v2:
		var ok bool
		if nn, ok = v2Levels(pd, h, body, n, nullable, levels); !ok {
			return nil, false
		}
		if !h.compressed {
			codec = compress.Codecs.Uncompressed
		}
		values = int64(h.usize - h.defLen)
		if !ps.open(pd, codec, io.NewSectionReader(pd.r, body+int64(h.defLen), int64(h.csize-h.defLen)), values) {
			return nil, false
		}
	default:
		return nil, false
	}
	if values != nn*w {
		ps.close()
		return nil, false
	}
	ps.start(pd.stat())
	return ps, true
}

// v1Levels reads the definition levels at the start of a DATA_PAGE's
// decoded bytes (r, size of them: a 4-byte length, then the levels) with
// levels, and returns the values present and the bytes after the levels.
func v1Levels(r io.Reader, size int64, levels func([]byte) (int64, bool)) (nn, rest int64, ok bool) {
	var lb [4]byte
	if size < 4 {
		return 0, 0, false
	}
	if _, err := io.ReadFull(r, lb[:]); err != nil {
		return 0, 0, false
	}
	ln := int64(binary.LittleEndian.Uint32(lb[:]))
	if ln > size-4 {
		return 0, 0, false
	}
	lv := make([]byte, ln)
	if _, err := io.ReadFull(r, lv); err != nil {
		return 0, 0, false
	}
	if nn, ok = levels(lv); !ok {
		return 0, 0, false
	}
	return nn, size - 4 - ln, true
}

// v2Levels checks the DATA_PAGE_V2 header h of n rows of a flat column and
// reads its definition levels (defLen bytes at body, never compressed)
// with levels if the column is nullable; it returns the values present.
func v2Levels(pd *plainDecoder, h *pageHeader, body, n int64, nullable bool, levels func([]byte) (int64, bool)) (int64, bool) {
	if h.numRows != h.numValues || h.repLen != 0 || h.defLen < 0 || h.numNulls < 0 || h.defLen > h.csize || h.defLen > h.usize {
		return 0, false
	}
	if !nullable {
		return n, h.defLen == 0 && h.numNulls == 0
	}
	lv := make([]byte, h.defLen)
	if m, err := pd.r.ReadAt(lv, body); m != len(lv) || err != nil && err != io.EOF {
		return 0, false
	}
	nn, ok := levels(lv)
	return nn, ok && n-nn == int64(h.numNulls)
}

// start counts the page stream as opened and live in st.
func (ps *pageStream) start(st *Stats) {
	st.PageStreams.Add(1)
	ps.live = st
	notePeak(&st.PeakStreams, st.LiveStreams.Add(1))
}

// open sets up the decompression of src, whose decompressed bytes are
// size long, with pooled buffers, for pd's reader.
func (ps *pageStream) open(pd *plainDecoder, codec compress.Compression, src io.Reader, size int64) bool {
	if codec == compress.Codecs.Snappy {
		ps.br = snappyReaderPool.Get().(*bufio.Reader)
	} else {
		ps.br = readerPool.Get().(*bufio.Reader)
	}
	ps.br.Reset(src)
	if codec == compress.Codecs.Snappy || codec == codecLZ4Raw {
		ps.hist = windowPool.Get().(*[]byte)
	}
	switch codec {
	case compress.Codecs.Gzip:
		z, ok := pagecodec.NewGzipReader(ps.br)
		if ok {
			ps.cg, ps.dec = z, z
		}
		return ok
	case compress.Codecs.Zstd:
		z, ok := pagecodec.NewZstdReader(ps.br)
		if ok {
			ps.cz, ps.dec = z, z
		}
		return ok
	}
	ps.dec = decompressor(codec, ps.br, src, size, ps.hist, pd.tuning().DirectLiteral)
	return ps.dec != nil
}

// maxZstdWindow bounds the window of a streamed zstd frame (its decoder
// keeps that much of the page); a page with a larger one fails to
// stream and so to decode.
const maxZstdWindow = pagecodec.MaxStreamWindow

// close gives the pooled buffers back; ps is done with.
func (ps *pageStream) close() {
	if ps.live != nil {
		ps.live.LiveStreams.Add(-1)
		ps.live = nil
	}
	if ps.br != nil {
		ps.br.Reset(nil)
		if ps.br.Size() == snappyStreamBuffer {
			snappyReaderPool.Put(ps.br)
		} else {
			readerPool.Put(ps.br)
		}
		ps.br = nil
	}
	if ps.hist != nil {
		*ps.hist = (*ps.hist)[:0]
		windowPool.Put(ps.hist)
		ps.hist = nil
	}
	if ps.cz != nil {
		ps.cz.Close()
		ps.cz = nil
	}
	if ps.cg != nil {
		ps.cg.Close()
		ps.cg = nil
	}
	ps.dec = nil
}

// decompressor reads the decompressed bytes (size of them) of br, which
// buffers src (nil: br alone is read); hist is the window of a snappy
// stream (nil: its own), direct its Tuning.DirectLiteral.
func decompressor(codec compress.Compression, br *bufio.Reader, src io.Reader, size int64, hist *[]byte, direct int) io.Reader {
	switch codec {
	case compress.Codecs.Uncompressed:
		return br
	case codecLZ4Raw:
		s := &lz4Stream{r: br, left: size}
		if hist != nil {
			s.hist = (*hist)[:0]
		}
		return s
	case compress.Codecs.Snappy:
		m, err := binary.ReadUvarint(br)
		if err != nil || m != uint64(size) {
			return nil
		}
		s := &snappyStream{r: br, src: src, left: size, direct: direct}
		if hist != nil {
			s.hist = (*hist)[:0]
		}
		return s
	}
	return nil
}

// emit decodes the stream's next k rows into dst (values) and dvalid (the
// validity bitmap, nil for a required column) from row at on.
func (ps *pageStream) emit(pd *plainDecoder, dst, dvalid []byte, at, k int64, w int) bool {
	if k <= 0 || k > ps.n-ps.row {
		return false
	}
	if ps.split != nil {
		return ps.split.emit(pd, ps, dst, dvalid, at, k, w)
	}
	out := dst[at*int64(w) : (at+k)*int64(w)]
	if ps.valid == nil {
		if _, err := io.ReadFull(ps.dec, out); err != nil {
			return false
		}
		ps.row += k
		return true
	}
	bitutil.CopyBitmap(ps.valid, int(ps.row), int(k), dvalid, int(at))
	m := int64(bitutil.CountSetBits(ps.valid, int(ps.row), int(k)))
	if m == k {
		if _, err := io.ReadFull(ps.dec, out); err != nil {
			return false
		}
		ps.row += k
		return true
	}
	if int64(cap(pd.split)) < m*int64(w) {
		pd.split = make([]byte, m*int64(w))
	}
	src := pd.split[:m*int64(w)]
	if _, err := io.ReadFull(ps.dec, src); err != nil {
		return false
	}
	ps.spread(out, src, k, w)
	return true
}

// spread puts the present values of src into the k rows of out (w bytes
// a value) that the page's bitmap says are not null from its next row on,
// zeroes the others, and moves the page on by k rows.
func (ps *pageStream) spread(out, src []byte, k int64, w int) {
	j := 0
	for i := range int(k) {
		d := out[i*w : (i+1)*w]
		if bitutil.BitIsSet(ps.valid, int(ps.row)+i) {
			copy(d, src[j:j+w])
			j += w
		} else {
			clear(d)
		}
	}
	ps.row += k
}

// finish checks that the page's stream ends with its last row.
func (ps *pageStream) finish() bool {
	if ps.split != nil {
		return ps.split.vrow == ps.split.nn
	}
	var b [1]byte
	m, err := ps.dec.Read(b[:])
	for m == 0 && err == nil {
		m, err = ps.dec.Read(b[:])
	}
	return m == 0 && errors.Is(err, io.EOF)
}

// snappyWindow is the history a snappyStream keeps: the snappy encoders
// (C++, Go, Rust) compress in blocks of 64 KB, and no copy reaches back
// further.
const snappyWindow = 64 << 10

var errSnappy = errors.New("snappy: corrupt input, or a copy beyond the stream's window")

// snappyStream decodes a snappy block (after its length) incrementally,
// keeping the last snappyWindow bytes of output for copies.
type snappyStream struct {
	r      *bufio.Reader
	src    io.Reader // what r buffers, for long literals; nil: r alone
	left   int64     // bytes of output still to come
	hist   []byte
	lit    int // bytes of a literal still to copy
	cp     int // bytes of a copy still to make
	cpOff  int
	failed bool
	direct int // Tuning.DirectLiteral
}

// readWindowed reads into p with read and keeps the last window bytes of
// the output in *hist (a buffer of twice the window, so that it is moved
// down once every window bytes, not on every call): the history of the
// snappy and LZ4 streams, whose copies take their bytes from p itself
// while they were written by this call, else from the history.
func readWindowed(hist *[]byte, window int, p []byte, read func([]byte) (int, error)) (int, error) {
	if *hist == nil {
		*hist = make([]byte, 0, 2*window)
	}
	n, err := read(p)
	if b := p[:n]; n >= window {
		*hist = append((*hist)[:0], b[n-window:]...)
	} else if n > 0 {
		h := *hist
		if len(h)+n > 2*window {
			keep := window - n
			copy(h, h[len(h)-keep:])
			h = h[:keep]
		}
		*hist = append(h, b...)
	}
	return n, err
}

// Read implements io.Reader.
func (s *snappyStream) Read(p []byte) (int, error) {
	if s.failed {
		return 0, errSnappy
	}
	return readWindowed(&s.hist, snappyWindow, p, s.read)
}

func (s *snappyStream) read(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		if s.left == 0 {
			if s.lit > 0 || s.cp > 0 {
				s.failed = true
				return done, errSnappy
			}
			if done == 0 {
				if _, err := s.r.ReadByte(); err != io.EOF {
					s.failed = true // bytes after the block
					return 0, errSnappy
				}
				return 0, io.EOF
			}
			return done, nil
		}
		room := int(min(int64(len(p)-done), s.left))
		switch {
		case s.lit > 0:
			k := min(s.lit, room)
			if err := s.literal(p[done : done+k]); err != nil {
				s.failed = true
				return done, errSnappy
			}
			s.lit -= k
			done += k
			s.left -= int64(k)
		case s.cp > 0:
			var k int
			if s.cpOff <= done {
				k = min(s.cp, room, s.cpOff)
				copy(p[done:done+k], p[done-s.cpOff:done-s.cpOff+k])
			} else {
				back := s.cpOff - done // tag checked it is in the window
				k = min(s.cp, room, back)
				from := len(s.hist) - back
				copy(p[done:done+k], s.hist[from:from+k])
			}
			s.cp -= k
			done += k
			s.left -= int64(k)
		default:
			if !s.tag(len(s.hist) + done) {
				s.failed = true
				return done, errSnappy
			}
		}
	}
	return done, nil
}

// literal reads the next len(p) bytes of a literal into p. What r holds is
// copied from it; the rest of a long literal is read from src straight into
// p. Snappy stores incompressible data (random doubles, an embedding's
// float32s) as one literal per 64 KB, and copying each through r's buffer
// was a memmove of the whole page (0.3 CPU-s over DuckDB's 1.5 GB of
// FLOAT[384]).
func (s *snappyStream) literal(p []byte) error {
	if s.src == nil || len(p) < s.direct {
		_, err := io.ReadFull(s.r, p)
		return err
	}
	b := min(s.r.Buffered(), len(p))
	if _, err := io.ReadFull(s.r, p[:b]); err != nil {
		return err
	}
	if b == len(p) {
		return nil
	}
	// r's buffer is empty: its next read starts where this one ends.
	_, err := io.ReadFull(s.src, p[b:])
	return err
}

// tag reads the next element's tag and sets up the literal or copy; avail
// is the output a copy may reach back into.
func (s *snappyStream) tag(avail int) bool {
	b, err := s.r.ReadByte()
	if err != nil {
		return false
	}
	var n, off int
	switch b & 3 {
	case 0: // literal
		n = int(b >> 2)
		if n >= 60 {
			k := n - 59
			var x [4]byte
			if _, err := io.ReadFull(s.r, x[:k]); err != nil {
				return false
			}
			n = int(binary.LittleEndian.Uint32(x[:]))
		}
		n++
		if n <= 0 || int64(n) > s.left {
			return false
		}
		s.lit = n
		return true
	case 1:
		c, err := s.r.ReadByte()
		if err != nil {
			return false
		}
		n = 4 + int(b>>2&7)
		off = int(b&0xe0)<<3 | int(c)
	case 2:
		var x [2]byte
		if _, err := io.ReadFull(s.r, x[:]); err != nil {
			return false
		}
		n = 1 + int(b>>2)
		off = int(binary.LittleEndian.Uint16(x[:]))
	case 3:
		var x [4]byte
		if _, err := io.ReadFull(s.r, x[:]); err != nil {
			return false
		}
		n = 1 + int(b>>2)
		off = int(binary.LittleEndian.Uint32(x[:]))
	}
	if off <= 0 || off > avail || off > snappyWindow || int64(n) > s.left {
		return false
	}
	s.cp, s.cpOff = n, off
	return true
}

// lz4Window is the history an lz4Stream keeps: an LZ4 match reaches back
// at most 65,535 bytes.
const lz4Window = 64 << 10

var errLZ4Stream = errors.New("lz4: corrupt block, or a match beyond the stream's window")

// lz4Stream decodes a bare LZ4 block (an LZ4_RAW page) incrementally,
// keeping the last lz4Window bytes of output for matches, as snappyStream
// does for snappy.
type lz4Stream struct {
	r      *bufio.Reader
	left   int64 // bytes of output still to come
	hist   []byte
	lit    int  // bytes of a literal run still to copy
	match  int  // the match length nibble of the current sequence
	inSeq  bool // the literals of a sequence are done, its match is next
	cp     int  // bytes of a match still to make
	cpOff  int
	failed bool
}

// Read implements io.Reader.
func (s *lz4Stream) Read(p []byte) (int, error) {
	if s.failed {
		return 0, errLZ4Stream
	}
	return readWindowed(&s.hist, lz4Window, p, s.read)
}

func (s *lz4Stream) fail(done int) (int, error) {
	s.failed = true
	return done, errLZ4Stream
}

func (s *lz4Stream) read(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		if s.left == 0 {
			// The block ends with a sequence's literals and nothing after.
			if s.lit > 0 || s.cp > 0 || s.inSeq {
				return s.fail(done)
			}
			if done == 0 {
				if _, err := s.r.ReadByte(); err != io.EOF {
					return s.fail(0) // bytes after the block
				}
				return 0, io.EOF
			}
			return done, nil
		}
		room := int(min(int64(len(p)-done), s.left))
		switch {
		case s.lit > 0:
			k := min(s.lit, room)
			if _, err := io.ReadFull(s.r, p[done:done+k]); err != nil {
				return s.fail(done)
			}
			s.lit -= k
			done += k
			s.left -= int64(k)
			if s.lit == 0 && s.left > 0 {
				s.inSeq = true
			} else if s.lit == 0 && s.match != 0 {
				// The output is complete but the sequence announced a
				// match: the block's last sequence must be literals alone,
				// as the block decoder of whole pages requires.
				return s.fail(done)
			}
		case s.cp > 0:
			var k int
			if s.cpOff <= done {
				k = min(s.cp, room, s.cpOff)
				copy(p[done:done+k], p[done-s.cpOff:done-s.cpOff+k])
			} else {
				back := s.cpOff - done // checked to be in the window
				k = min(s.cp, room, back)
				from := len(s.hist) - back
				copy(p[done:done+k], s.hist[from:from+k])
			}
			s.cp -= k
			done += k
			s.left -= int64(k)
		case s.inSeq:
			if !s.matchStart(len(s.hist) + done) {
				return s.fail(done)
			}
		default:
			if !s.token() {
				return s.fail(done)
			}
		}
	}
	return done, nil
}

// length reads the bytes that extend a length nibble of 15.
func (s *lz4Stream) length(n int) (int, bool) {
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return 0, false
		}
		n += int(b)
		if n > maxStreamPage {
			return 0, false
		}
		if b != 255 {
			return n, true
		}
	}
}

// token reads a sequence's token and literal length.
func (s *lz4Stream) token() bool {
	b, err := s.r.ReadByte()
	if err != nil {
		return false
	}
	n := int(b >> 4)
	if n == 15 {
		var ok bool
		if n, ok = s.length(n); !ok {
			return false
		}
	}
	if int64(n) > s.left {
		return false
	}
	s.lit, s.match = n, int(b&15)
	if n == 0 {
		s.inSeq = true
	}
	return true
}

// matchStart reads the match's offset and length; avail is the output a
// match may reach back into.
func (s *lz4Stream) matchStart(avail int) bool {
	var x [2]byte
	if _, err := io.ReadFull(s.r, x[:]); err != nil {
		return false
	}
	off := int(binary.LittleEndian.Uint16(x[:]))
	n := s.match
	if n == 15 {
		var ok bool
		if n, ok = s.length(n); !ok {
			return false
		}
	}
	n += 4
	if off <= 0 || off > avail || off > lz4Window || int64(n) > s.left {
		return false
	}
	s.cp, s.cpOff, s.inSeq = n, off, false
	return true
}
