package pqread

import (
	"encoding/binary"
	"errors"
	"io"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/golang/snappy"
)

// A BYTE_STREAM_SPLIT page holds byte b of value i at b*nn+i, so its
// values cannot be decoded in order as a PLAIN page's can. DuckDB writes
// them with PARQUET_VERSION v2, one page per chunk: in a 1M-row group, 8
// MB a column of doubles. Decoded whole and kept for the later segments,
// such pages went to the spill file, and the writes and reads of half a
// gigabyte of page cache made the file 1.5-2.3x as slow as gen.go's.
//
// A page stored uncompressed, or compressed with snappy, is instead read
// a range at a time, w ranges a segment (the segment's bytes of each
// stream). Snappy decodes from any 64 KB fragment of the output on its
// own: the snappy encoders (C++, Go, Rust) compress 64 KB blocks apart,
// so no copy reaches back past the start of its fragment. When the page
// is opened, its tags are walked (literals skipped, not read) to find
// where each fragment starts and to check that it holds: a page that
// breaks it is decoded whole as before.

// splittable reports whether the data page h of a chunk compressed with
// codec is a BYTE_STREAM_SPLIT page to read a range at a time: one whose
// overhang would not be kept in memory (DuckDB's 1 MB pages of its
// default row groups are faster decoded whole and kept).
func (t *Tuning) splittable(h *pageHeader, codec compress.Compression) bool {
	if h.enc != encodingBSS || int64(h.usize) <= t.MaxFreeLeft {
		return false
	}
	if h.v2 && !h.compressed {
		return true
	}
	return codec == compress.Codecs.Uncompressed || codec == compress.Codecs.Snappy
}

// rangePage is a page (or a v2 page's values) whose decoded bytes are read
// a range at a time.
type rangePage struct {
	r     io.ReaderAt
	at    int64 // the stored bytes, in the file
	csize int64
	size  int64 // decoded
	// frags[f] is where the compressed bytes of fragment f start, from at
	// (frags[len-1] = csize); nil for a page stored uncompressed.
	frags []int64
	frag  int64 // the fragment's size (Tuning.SnappyFragment)
}

// openRangePage sets up the reading of the csize bytes at at of pd's
// file, which decode (with codec, Uncompressed or Snappy) to size bytes.
func openRangePage(pd *plainDecoder, codec compress.Compression, at, csize, size int64) (*rangePage, bool) {
	frag := pd.tuning().SnappyFragment
	p := &rangePage{r: pd.r, at: at, csize: csize, size: size, frag: frag}
	switch codec {
	case compress.Codecs.Uncompressed:
		return p, csize == size
	case compress.Codecs.Snappy:
		frags, ok := snappyFragments(pd.r, at, csize, size, frag)
		p.frags = frags
		return p, ok
	}
	return nil, false
}

// tagWindow is how much of a snappy block its walk reads at once: the
// tags of a compressible stream are read through it, the literals of an
// incompressible one skipped.
const tagWindow = 16 << 10

// snappyFragments walks the tags of the snappy block of csize bytes at at
// in r, which must decode to size bytes, and returns where each fragment
// of its output (fragment bytes long) starts in it (and csize last); false
// if a tag spans two fragments, a copy reaches back past the start of its
// fragment, or the block is not one of size bytes.
func snappyFragments(r io.ReaderAt, at, csize, size, fragment int64) ([]int64, bool) {
	var win [tagWindow]byte
	var winAt, winN int64 // win holds the block's bytes [winAt, winAt+winN)
	fill := func(pos int64) bool {
		n := min(tagWindow, csize-pos)
		if n <= 0 {
			return false
		}
		if m, err := r.ReadAt(win[:n], at+pos); int64(m) != n || err != nil && err != io.EOF {
			return false
		}
		winAt, winN = pos, n
		return true
	}
	if !fill(0) {
		return nil, false
	}
	v, k := binary.Uvarint(win[:winN])
	if k <= 0 || v != uint64(size) || size <= 0 {
		return nil, false
	}
	frags := make([]int64, 0, (size+fragment-1)/fragment+1)
	pos, out := int64(k), int64(0)
	var from, end int64 = 0, -1 // the current fragment's output
	for out < size {
		if out > end {
			// (No tag ends past its fragment's end.)
			from, end = out, min(out+fragment, size)-1
			frags = append(frags, pos)
		}
		// The common tags (short literals, copies with 1- and 2-byte
		// offsets) in a loop over the window with local indices, while it
		// holds 5 bytes of tag and the fragment goes on; any other tag,
		// or one that breaks a rule, is left to the general step below.
		if i := pos - winAt; i >= 0 {
			i, out = snappyCommonTags(win[:winN], i, out, from, end+1)
			pos = winAt + i
			if out > end || out >= size {
				continue
			}
		}
		// At least 5 bytes of tag in the window, or the block's end.
		if i := pos - winAt; i < 0 || i >= winN || i+5 > winN && winAt+winN < csize {
			if !fill(pos) {
				return nil, false
			}
		}
		n, adv, ok := snappyTag(win[pos-winAt:winN], out, from, end+1)
		if !ok {
			return nil, false
		}
		pos += adv
		out += n
	}
	if pos != csize {
		return nil, false
	}
	return append(frags, csize), true
}

// snappyCommonTags walks the common tags of a snappy block (short
// literals, copies with 1- and 2-byte offsets) from win[i] on, the output
// being at out, while win holds 5 bytes of tag and the output stays before
// fe, the end of the fragment that starts at from. It returns where it
// stopped, in win and in the output: at a tag of another kind, at one that
// breaks a rule (a copy reaching before from, a tag running past fe), or at
// the window's or the fragment's end.
func snappyCommonTags(win []byte, i, out, from, fe int64) (int64, int64) {
	winN := int64(len(win))
	for i+5 <= winN && out < fe {
		tag := win[i]
		var n int64
		switch tag & 3 {
		case 0:
			if tag >= 60<<2 {
				return i, out
			}
			n = int64(tag>>2) + 1
			if out+n > fe {
				return i, out
			}
			i += 1 + n
		case 1:
			n = 4 + int64(tag>>2&7)
			off := int64(tag&0xe0)<<3 | int64(win[i+1])
			if off == 0 || off > out-from || out+n > fe {
				return i, out
			}
			i += 2
		case 2:
			n = 1 + int64(tag>>2)
			off := int64(win[i+1]) | int64(win[i+2])<<8
			if off == 0 || off > out-from || out+n > fe {
				return i, out
			}
			i += 3
		default:
			return i, out
		}
		out += n
	}
	return i, out
}

// snappyTag reads the snappy tag at the start of b, the output being at
// out in the fragment from..fe: the bytes it outputs, and the bytes of the
// block it takes (its header, and a literal's bytes). ok is false if the
// tag is cut short, or it runs past fe, or (a copy) it reaches before from.
func snappyTag(b []byte, out, from, fe int64) (n, adv int64, ok bool) {
	tag := b[0]
	var hdr, off int64
	switch tag & 3 {
	case 0: // a literal
		n, hdr = int64(tag>>2), 1
		if n >= 60 {
			nb := int(n - 59)
			if len(b) < 1+nb {
				return 0, 0, false
			}
			var le [4]byte
			copy(le[:], b[1:1+nb])
			n, hdr = int64(binary.LittleEndian.Uint32(le[:])), int64(1+nb)
		}
		n++
		return n, hdr + n, out+n <= fe
	case 1:
		if len(b) < 2 {
			return 0, 0, false
		}
		n, hdr, off = 4+int64(tag>>2&7), 2, int64(tag&0xe0)<<3|int64(b[1])
	case 2:
		if len(b) < 3 {
			return 0, 0, false
		}
		n, hdr, off = 1+int64(tag>>2), 3, int64(binary.LittleEndian.Uint16(b[1:]))
	case 3:
		if len(b) < 5 {
			return 0, 0, false
		}
		n, hdr, off = 1+int64(tag>>2), 5, int64(binary.LittleEndian.Uint32(b[1:]))
	}
	return n, hdr, off > 0 && off <= out-from && out+n <= fe
}

// read decodes the page's bytes from off on into dst.
func (p *rangePage) read(pd *plainDecoder, dst []byte, off int64) bool {
	if off < 0 || off+int64(len(dst)) > p.size {
		return false
	}
	if p.frags == nil {
		m, err := p.r.ReadAt(dst, p.at+off)
		return m == len(dst) && (err == nil || err == io.EOF)
	}
	for len(dst) > 0 {
		f := off / p.frag
		from := f * p.frag
		n := min(from+p.frag, p.size) - from
		cn := p.frags[f+1] - p.frags[f]
		if cn <= 0 || cn > int64(snappy.MaxEncodedLen(int(p.frag))) {
			return false
		}
		// The fragment as a snappy block of its own: its length, then its
		// tags.
		if cap(pd.fragIn) < int(cn)+binary.MaxVarintLen64 {
			pd.fragIn = make([]byte, snappy.MaxEncodedLen(int(p.frag))+binary.MaxVarintLen64)
		}
		k := binary.PutUvarint(pd.fragIn[:binary.MaxVarintLen64], uint64(n))
		src := pd.fragIn[:k+int(cn)]
		if m, err := p.r.ReadAt(src[k:], p.at+p.frags[f]); m != int(cn) || err != nil && err != io.EOF {
			return false
		}
		// Straight into dst when the fragment is wanted whole, else into
		// a scratch buffer and copied. (A range mostly ends inside a
		// fragment, which the next range decodes again: keeping the
		// fragment for it, 64 KB a byte stream, saved no time.)
		whole := off == from && int64(len(dst)) >= n
		out := dst
		if !whole {
			if int64(cap(pd.frag)) < p.frag {
				pd.frag = make([]byte, p.frag)
			}
			out = pd.frag
		}
		out = out[:n]
		d, err := snappy.Decode(out, src)
		if err != nil || len(d) != int(n) || unsafe.SliceData(d) != unsafe.SliceData(out) {
			return false
		}
		c := int(n)
		if !whole {
			c = copy(dst, out[off-from:])
		}
		dst = dst[c:]
		off += int64(c)
	}
	return true
}

// splitStream is a BYTE_STREAM_SPLIT page being read a segment at a time.
type splitStream struct {
	page   *rangePage
	vstart int64 // where the values start in the decoded page
	nn     int64 // values (rows that are not null)
	vrow   int64 // values handed out
}

// openSplit starts reading the BYTE_STREAM_SPLIT page sp of the column a
// range at a time (see splittable).
func (cs *colStream) openSplit(pd *plainDecoder, sp *streamPage) (*pageStream, bool) {
	h := &sp.h
	c := &cs.chunk
	w := int64(c.w)
	n := int64(h.numValues)
	body := sp.off + int64(sp.hlen)
	ps, levels := cs.newPageStream(n)
	nullable := c.valid != nil
	codec := c.codecID
	ss := &splitStream{nn: n}
	var values int64
	switch {
	case h.v1:
		if nullable && h.defEnc != encodingRLE {
			return nil, false
		}
		page, ok := openRangePage(pd, codec, body, int64(h.csize), int64(h.usize))
		if !ok {
			return nil, false
		}
		ss.page, values = page, page.size
		if nullable {
			if ss.nn, values, ok = v1Levels(&rangeReader{p: page, pd: pd}, page.size, levels); !ok {
				return nil, false
			}
			ss.vstart = page.size - values
		}
	case h.v2:
		var ok bool
		if ss.nn, ok = v2Levels(pd, h, body, n, nullable, levels); !ok {
			return nil, false
		}
		if !h.compressed {
			codec = compress.Codecs.Uncompressed
		}
		values = int64(h.usize - h.defLen)
		if ss.page, ok = openRangePage(pd, codec, body+int64(h.defLen), int64(h.csize-h.defLen), values); !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	if values != ss.nn*w {
		return nil, false
	}
	ps.split = ss
	ps.start(pd.stat())
	return ps, true
}

// values decodes the m values from value from on into dst (m*w bytes):
// m bytes from each of the w byte streams, joined.
func (ss *splitStream) values(pd *plainDecoder, dst []byte, from, m int64, w int) bool {
	if from < 0 || m < 0 || m > ss.nn-from || int64(len(dst)) < m*int64(w) {
		return false
	}
	mw := m * int64(w)
	if int64(cap(pd.splitIn)) < mw {
		pd.splitIn = make([]byte, mw)
	}
	streams := pd.splitIn[:mw]
	for b := range int64(w) {
		if !ss.page.read(pd, streams[b*m:(b+1)*m], ss.vstart+b*ss.nn+from) {
			return false
		}
	}
	unsplit(dst[:mw], streams, w)
	return true
}

// emit decodes the page's next k rows into dst (and dvalid) from row at
// on: m values, m bytes from each of the w byte streams, joined.
func (ss *splitStream) emit(pd *plainDecoder, ps *pageStream, dst, dvalid []byte, at, k int64, w int) bool {
	out := dst[at*int64(w) : (at+k)*int64(w)]
	m := k
	if ps.valid != nil {
		bitutil.CopyBitmap(ps.valid, int(ps.row), int(k), dvalid, int(at))
		m = int64(bitutil.CountSetBits(ps.valid, int(ps.row), int(k)))
	}
	if m == k {
		if !ss.values(pd, out, ss.vrow, m, w) {
			return false
		}
		ss.vrow += m
		ps.row += k
		return true
	}
	mw := m * int64(w)
	if int64(cap(pd.split)) < mw {
		pd.split = make([]byte, mw)
	}
	joined := pd.split[:mw]
	if !ss.values(pd, joined, ss.vrow, m, w) {
		return false
	}
	ss.vrow += m
	ps.spread(out, joined, k, w)
	return true
}

// rangeReader reads a rangePage in order (a page's levels).
type rangeReader struct {
	p   *rangePage
	pd  *plainDecoder
	off int64
}

func (r *rangeReader) Read(b []byte) (int, error) {
	if r.off >= r.p.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), r.p.size-r.off))
	if !r.p.read(r.pd, b[:n], r.off) {
		return 0, errSplitPage
	}
	r.off += int64(n)
	return n, nil
}

var errSplitPage = errors.New("byte stream split page: corrupt")
