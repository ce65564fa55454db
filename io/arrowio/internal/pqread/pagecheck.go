package pqread

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/schema"

	"github.com/pate-tool/pate/io/arrowio/internal/pagecodec"
)

// Arrow v15's page reader parses each page header with the general Thrift
// decoder, and a page header of a few hundred hostile bytes (containers
// declaring huge sizes, nested many levels deep) sends it into a loop that
// allocates without bound: a 473-byte file found by FuzzReadParquet took
// gigabytes and never returned. Before Arrow reads a column chunk, pate
// walks the chunk's page headers with the bounded reader of its own fast
// path (depth at most 16, no container larger than the bytes left) and
// refuses the file if one does not parse. Headers that parse are small and
// well-formed, and Arrow's decoder handles them.
//
// A dictionary page's header needs one more check: Arrow sizes the
// dictionary it decodes by the header's num_values before it looks at the
// page (make([]T, 0, num_values): 2^31 values of 24 bytes for a byte
// array column), so a header declaring more values than its page's bytes
// can hold is refused too.
//
// And a page stored uncompressed must state the same compressed and
// uncompressed sizes: Arrow's "decompression" of a DATA_PAGE or dictionary
// page in an uncompressed chunk copies min(sizes) bytes into a buffer of
// the uncompressed size and goes on, so a page said to be shorter is
// silently cut, and one said to be longer is padded with whatever its
// pooled buffer held before (a corrupt page then decodes to values that
// depend on the pages read earlier); of an uncompressed DATA_PAGE_V2 it
// reads the uncompressed size, off the end of the page.

// And Arrow's snappy codec allocates the decoded length a block states
// (up to 4 GB) when it is more than the page's, before decoding a byte,
// and its zstd codec sizes its output by a frame's stated content size:
// so a snappy or zstd page whose body states more bytes than the page's
// uncompressed size is refused too. (pate's own page decoders refuse such
// pages themselves: package pagecodec; Arrow's table keeps Arrow's codecs.)
//
// And Arrow's reader builds a list row from all of its level entries at
// once, sizing its buffers by them (some 16 bytes an entry), and a page of
// a few bytes may declare one row of 2^31 entries (an RLE run). So a data
// page may not declare more values than its chunk has left, and a chunk
// of a nested column that Arrow decodes may have at most
// Tuning.MaxNestedValues level entries (pate's own list path, which takes
// float lists up to 4 GiB of values or by segments, does not go through
// this check).

// errNestedTooLarge marks a nested chunk of more than Tuning.MaxNestedValues
// entries.
var errNestedTooLarge = errors.New("too many values for Arrow's reader")

// maxPageHeaderWindow is the most a header check reads for one page header
// (Arrow's own limit on a page header's size).
const maxPageHeaderWindow = 16 << 20

// errPageHeader marks a page header that does not parse.
var errPageHeader = errors.New("unreadable page header")

// headerChecker checks the page headers of column chunks of one file; it
// keeps its read buffer between chunks. One worker uses it.
type headerChecker struct {
	maxNested int64 // Tuning.MaxNestedValues (0: the default)
	r         io.ReaderAt
	size      int64 // the file's size
	buf       []byte
	// The file's bytes from at on are in buf[:n]: a header that lies in
	// what the last read brought in is parsed from there (pages smaller
	// than the read window).
	at int64
	n  int
}

// chunk checks the page headers of column leaf of row group rg, up to the
// chunk's number of values. The footer has passed checkRowGroups (a chunk per
// leaf, each with metadata, none encrypted); a chunk in another file is
// left to the Arrow reader, which reports it.
func (hc *headerChecker) chunk(md *metadata.FileMetaData, rg, leaf int) error {
	if md.RowGroups[rg].GetColumns()[leaf].GetFilePath() != "" {
		return nil
	}
	cc, err := md.RowGroup(rg).ColumnChunk(leaf)
	if err != nil {
		return nil
	}
	start := chunkStart(cc)
	end := start + cc.TotalCompressedSize()
	if start < 0 || cc.TotalCompressedSize() < 0 || end < start || (hc.size >= 0 && end > hc.size) {
		return nil // Arrow refuses a chunk outside the file with its own error
	}
	want := cc.NumValues()
	maxNested := hc.maxNested
	if maxNested == 0 {
		maxNested = defaults.MaxNestedValues
	}
	if want > maxNested && md.Schema.Column(leaf).MaxRepetitionLevel() > 0 {
		return fmt.Errorf("%w: a nested column chunk of %d values, more than the %d pate decodes outside its list path (a list of float32 or float64 at most one level deep)", errNestedTooLarge, want, maxNested)
	}
	var seen int64
	for pos := start; pos < end && seen < want; {
		h, n, err := hc.header(pos, end)
		if err != nil {
			return fmt.Errorf("%w at byte %d", err, pos)
		}
		if h.csize < 0 {
			return fmt.Errorf("%w at byte %d: negative page size", errPageHeader, pos)
		}
		stored := cc.Compression() == compress.Codecs.Uncompressed || h.v2 && !h.compressed
		if stored && h.usize != h.csize {
			return fmt.Errorf("%w at byte %d: an uncompressed page of %d bytes said to hold %d", errPageHeader, pos, h.csize, h.usize)
		}
		if !stored {
			if err := hc.checkStatedSize(h, cc.Compression(), pos+int64(n), end); err != nil {
				return fmt.Errorf("%w at byte %d", err, pos)
			}
		}
		if h.typ == pageDictionary {
			if err := checkDictHeader(h, md.Schema.Column(leaf)); err != nil {
				return fmt.Errorf("%w at byte %d", err, pos)
			}
		}
		if h.v1 || h.v2 {
			if int64(h.numValues) > want-seen {
				return fmt.Errorf("%w at byte %d: a page of %d values, its chunk has %d left", errPageHeader, pos, h.numValues, want-seen)
			}
			seen += int64(h.numValues)
		}
		pos += int64(n) + int64(h.csize)
	}
	return nil
}

// checkStatedSize checks that the compressed body of page h, at body, of a
// chunk compressed with codec, does not state a decoded length larger than
// the page's uncompressed size (snappy's leading varint, a zstd frame's
// content size). A body it cannot peek at is left to the decoder.
func (hc *headerChecker) checkStatedSize(h *pageHeader, codec compress.Compression, body, end int64) error {
	if codec != compress.Codecs.Snappy && codec != compress.Codecs.Zstd {
		return nil
	}
	csize, usize := int64(h.csize), int64(h.usize)
	if h.v2 {
		lv := int64(h.defLen) + int64(h.repLen) // stored before the compressed values
		if h.defLen < 0 || h.repLen < 0 || lv > csize || lv > usize {
			return nil
		}
		body, csize, usize = body+lv, csize-lv, usize-lv
	}
	if csize <= 0 || body+csize > end {
		return nil
	}
	var head [18]byte
	b := hc.peek(head[:min(int64(len(head)), csize)], body)
	var stated uint64
	var ok bool
	if codec == compress.Codecs.Snappy {
		var k int
		stated, k = binary.Uvarint(b)
		ok = k > 0
	} else {
		stated, ok = pagecodec.ZstdContentSize(b)
	}
	if ok && stated > uint64(usize) {
		return fmt.Errorf("%w: a %s page of %d bytes said to decode to %d", errPageHeader, codec, usize, stated)
	}
	return nil
}

// peek returns the file's bytes at pos, len(dst) of them or fewer at its
// end: from the read buffer if it holds them, else read into dst.
func (hc *headerChecker) peek(dst []byte, pos int64) []byte {
	if hc.n > 0 && pos >= hc.at && pos+int64(len(dst)) <= hc.at+int64(hc.n) {
		return hc.buf[pos-hc.at : pos-hc.at+int64(len(dst))]
	}
	m, _ := hc.r.ReadAt(dst, pos)
	return dst[:m]
}

// checkDictHeader checks that a dictionary page header has its
// dictionary_page_header and that its num_values PLAIN values of column
// d's type fit in the page's uncompressed size.
func checkDictHeader(h *pageHeader, d *schema.Column) error {
	if !h.dict || !h.hasDictNum || h.dictNum < 0 || h.usize < 0 {
		return fmt.Errorf("%w: dictionary page without a valid dictionary header", errPageHeader)
	}
	bits := int64(8) // the fewest bits a PLAIN value takes: a byte array's length is 32
	switch d.PhysicalType() {
	case parquet.Types.Boolean:
		bits = 1
	case parquet.Types.Int32, parquet.Types.Float, parquet.Types.ByteArray:
		bits = 32
	case parquet.Types.Int64, parquet.Types.Double:
		bits = 64
	case parquet.Types.Int96:
		bits = 96
	case parquet.Types.FixedLenByteArray:
		bits = max(bits, 8*int64(d.TypeLength()))
	}
	if int64(h.dictNum)*bits > 8*int64(h.usize) {
		return fmt.Errorf("%w: a dictionary of %d values in %d bytes", errPageHeader, h.dictNum, h.usize)
	}
	return nil
}

// header parses the page header at pos, reading a window of 1 KB that
// doubles while the header may run past it, up to maxPageHeaderWindow. A
// header is rarely more than a few hundred bytes; a larger first window
// copies the page bodies after it for nothing (with 8 KB pages, a 64 KB
// window read the file over again).
func (hc *headerChecker) header(pos, end int64) (*pageHeader, int, error) {
	if lim := min(hc.at+int64(hc.n), end); hc.n > 0 && pos >= hc.at && pos < lim {
		var h pageHeader
		if hl, ok := h.parse(hc.buf[pos-hc.at : lim-hc.at]); ok {
			return &h, hl, nil
		}
		// It may run past what was read: read from pos on.
	}
	for window := int64(1 << 10); ; window *= 2 {
		n := min(window, end-pos)
		if int64(cap(hc.buf)) < n {
			hc.buf = make([]byte, n)
		}
		b := hc.buf[:n]
		hc.n = 0
		if m, err := hc.r.ReadAt(b, pos); m < len(b) {
			return nil, 0, fmt.Errorf("reading a page header: %w", err)
		}
		hc.at, hc.n = pos, len(b)
		var h pageHeader
		if hl, ok := h.parse(b); ok {
			return &h, hl, nil
		}
		if n == end-pos || window >= maxPageHeaderWindow {
			return nil, 0, errPageHeader
		}
	}
}

// trim drops a read buffer grown for an unusually large header.
func (hc *headerChecker) trim() {
	if cap(hc.buf) > 1<<20 {
		hc.buf, hc.n = nil, 0
	}
}
