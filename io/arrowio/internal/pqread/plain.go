package pqread

import (
	"encoding/binary"
	"io"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/endian"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/apache/arrow/go/v15/parquet/schema"

	"github.com/pate-tool/pate/io/arrowio/internal/pagecodec"
)

//go:generate go run gen_unpack.go

// The fast path for flat fixed-width PLAIN and dictionary-encoded columns.
//
// pqarrow copies each byte of such a column four times: the read into the
// page reader's buffer, the buffered stream, the decompressed page and the
// PLAIN decoder's copy into the Arrow values. plainColumn reads the column
// chunk with one ReadAt into a buffer the worker keeps, parses the page
// headers itself and decompresses (or copies) each page's values straight
// into the Arrow values buffer. It takes only the simplest chunks (see
// plainLeaf and plainColumn) and gives up on anything else, whereupon the
// caller decodes the column with pqarrow as before: it never returns an
// error, so errors on corrupt input are pqarrow's.
//
// A chunk may start with a dictionary page (what pyarrow and pandas write
// by default): its PLAIN values are kept in a buffer of the worker, and the
// data pages encoded RLE_DICTIONARY or PLAIN_DICTIONARY, whose values are
// indices into it (a bit width, then the RLE/bit-packed hybrid), are
// gathered from it into the Arrow values. Data pages after the writer fell
// back to PLAIN (the dictionary grew too large) decode as PLAIN pages.
//
// Data pages encoded BYTE_STREAM_SPLIT (DuckDB's choice for FLOAT and
// DOUBLE columns with PARQUET_VERSION v2) hold the nn values' bytes as w
// streams of nn bytes, byte b of every value in stream b; Arrow v15 has no
// decoder for them (its column reader fails, and pqarrow reads the chunk
// as empty), so the fast path is the only reader of such columns.

// maxPlainKeep bounds the buffers a plainDecoder keeps between chunks.
const maxPlainKeep = 32 << 20

// Parquet's Thrift enums, as in parquet.thrift.
const (
	pageData          = 0
	pageDictionary    = 2
	pageDataV2        = 3
	encodingPlain     = 0
	encodingPlainDict = 2
	encodingRLE       = 3
	encodingRLEDict   = 8
	encodingBSS       = 9 // BYTE_STREAM_SPLIT
	maxThriftDepth    = 16
)

// maxDictBytes bounds the dictionary page the fast path decodes (writers
// cap theirs at 1 MB by default); a larger one goes to pqarrow.
const maxDictBytes = 16 << 20

// plainDecoder is one row-group worker's state for the fast path.
type plainDecoder struct {
	tune    *Tuning // its reader's (nil: the defaults)
	stats   *Stats  // its reader's (nil: its own, made when first counted)
	r       io.ReaderAt
	size    int64    // of the file
	chunk   []byte   // the column chunk, reused
	scratch []byte   // a decompressed page whose values must be scattered, reused
	dict    []byte   // the decoded dictionary of the chunk, reused
	idx     []uint32 // a page's dictionary indices, reused
	split   []byte   // a BYTE_STREAM_SPLIT page's joined values, reused
	behind  []byte   // the values a page is decompressed over (placePage), reused
	frag    []byte   // a snappy fragment of a page read by ranges, reused
	fragIn  []byte   // its compressed bytes, reused
	splitIn []byte   // byte streams' ranges of a page read by ranges, reused

	// win holds the file's bytes from winAt on, winN of them: a streamed
	// small page is read with the pages after it (readPage).
	win   []byte
	winAt int64
	winN  int
}

// pageWindow is how much of the file readPage reads at once for pages
// smaller than a quarter of it: with 8 KB pages (Polars'
// dataPagesizeLimit), one read per page cost more than decoding them.
const pageWindow = 256 << 10

// readPage returns the file's size bytes from off on. A small page comes
// from the worker's read window, which is refilled from off on when the
// page is not in it; a larger one is read into pd.chunk. The bytes stay
// valid until the next readPage.
func (pd *plainDecoder) readPage(off int64, size int) ([]byte, bool) {
	if size < 0 || off < 0 {
		return nil, false
	}
	if size < pageWindow/4 {
		if off >= pd.winAt && off+int64(size) <= pd.winAt+int64(pd.winN) {
			return pd.win[off-pd.winAt:][:size], true
		}
		if pd.win == nil {
			pd.win = make([]byte, pageWindow)
		}
		n := int(min(int64(pageWindow), pd.size-off))
		pd.winN = 0
		if n < size {
			return nil, false
		}
		if m, err := pd.r.ReadAt(pd.win[:n], off); m != n || (err != nil && err != io.EOF) {
			return nil, false
		}
		pd.winAt, pd.winN = off, n
		return pd.win[:size], true
	}
	if cap(pd.chunk) < size {
		pd.chunk = make([]byte, size)
	}
	buf := pd.chunk[:size]
	if m, err := pd.r.ReadAt(buf, off); m != len(buf) || (err != nil && err != io.EOF) {
		return nil, false
	}
	return buf, true
}

// chunkStart returns where column chunk cc starts in its file: at its
// dictionary page, if any, as pqarrow's row group reader computes it.
func chunkStart(cc *metadata.ColumnChunkMetaData) int64 {
	start := cc.DataPageOffset()
	if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 && cc.DictionaryPageOffset() < start {
		start = cc.DictionaryPageOffset()
	}
	return start
}

// plainLeaf returns the leaf column of the projected top-level field k if
// the fast path may decode it: a flat leaf (no repetition, definition level
// at most 1) of physical type INT32, INT64, FLOAT or DOUBLE read as exactly
// int32, int64, float32 or float64; -1 otherwise.
func plainLeaf(md *metadata.FileMetaData, m *pqarrow.SchemaManifest, fi int, dt arrow.DataType) int {
	if fi >= 0 && fi < len(m.Fields) && listFast(dt) {
		return listLeaf(md, &m.Fields[fi], dt)
	}
	if fi < 0 || fi >= len(m.Fields) || !m.Fields[fi].IsLeaf() {
		return -1
	}
	c := m.Fields[fi].ColIndex
	if c < 0 || c >= md.Schema.NumColumns() {
		return -1
	}
	d := md.Schema.Column(c)
	if d.MaxRepetitionLevel() != 0 || d.MaxDefinitionLevel() > 1 {
		return -1
	}
	if plainWidth(d.PhysicalType(), dt) == 0 {
		return -1
	}
	return c
}

// plainWidth is the byte width of physical type pt read as Arrow type dt,
// or 0 if the pair is not one the fast path decodes.
func plainWidth(pt parquet.Type, dt arrow.DataType) int {
	switch {
	case pt == parquet.Types.Int32 && dt.ID() == arrow.INT32,
		pt == parquet.Types.Float && dt.ID() == arrow.FLOAT32:
		return 4
	case pt == parquet.Types.Int64 && dt.ID() == arrow.INT64,
		pt == parquet.Types.Double && dt.ID() == arrow.FLOAT64:
		return 8
	}
	return 0
}

// plainFileOK reports whether the fast path may be used on any column of
// the file whose footer is md: not encrypted, little-endian host, and not
// written by a parquet-mr old enough for pqarrow to pad its chunk ranges
// (PARQUET-816).
func plainFileOK(md *metadata.FileMetaData) bool {
	return !endian.IsBigEndian && md != nil &&
		!md.IsSetEncryptionAlgorithm() && md.FileDecryptor == nil &&
		!md.WriterVersion().LessThan(metadata.Parquet816FixedVersion)
}

// plainColumn decodes column chunk leaf of row group rg (rows rows, flat,
// physical type of the descriptor d, Arrow type dt), or returns ok false
// when the chunk is not one it takes or anything in it is unexpected.
func (pd *plainDecoder) plainColumn(md *metadata.FileMetaData, rg, leaf int, rows int64, dt arrow.DataType, mem memory.Allocator) (arr arrow.Array, ok bool) {
	return pd.plainGroup(md, rg, []int64{rows}, leaf, dt, mem)
}

// plainGroup decodes the chunks of column leaf in the row groups first,
// first+1, ... (rows[i] rows in row group first+i) into one array, as
// plainColumn decodes one: a file of many small row groups is decoded in
// batches of a useful size. ok is false if any chunk is not one it takes.
// A list column is decoded a row group at a time (rows of length one).
func (pd *plainDecoder) plainGroup(md *metadata.FileMetaData, first int, rows []int64, leaf int, dt arrow.DataType, mem memory.Allocator) (arr arrow.Array, ok bool) {
	// The codecs panic on corrupt input: that too is a reason to fall back.
	defer func() {
		if recover() != nil {
			arr, ok = nil, false
		}
	}()
	if pd != nil && listFast(dt) {
		if len(rows) != 1 {
			return nil, false
		}
		return pd.listColumn(md, first, leaf, rows[0], dt, mem)
	}
	var total int64
	for _, n := range rows {
		if n <= 0 || n > pd.tuning().MaxColumnwiseRows {
			return nil, false
		}
		total += n
	}
	if pd == nil || total <= 0 || total > pd.tuning().MaxColumnwiseRows {
		return nil, false
	}
	d := md.Schema.Column(leaf)
	w := plainWidth(d.PhysicalType(), dt)
	if w == 0 || d.MaxRepetitionLevel() != 0 || d.MaxDefinitionLevel() > 1 {
		return nil, false
	}
	defer pd.trim()
	values := memory.NewResizableBuffer(mem)
	defer values.Release()
	values.Resize(int(total) * w)
	var valid *memory.Buffer
	if d.MaxDefinitionLevel() == 1 {
		valid = memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(total)))
		clear(valid.Bytes())
	}
	col := plainChunk{w: w, values: values.Bytes()}
	if valid != nil {
		col.valid = valid.Bytes()
	}
	for i, n := range rows {
		if !pd.readChunk(md, first+i, leaf, n, d, &col) {
			return nil, false
		}
		col.rows = col.row + n
		if _, ok := col.decode(pd); !ok {
			return nil, false
		}
	}
	bufs := []*memory.Buffer{nil, values}
	if col.nulls > 0 {
		bufs[0] = valid
	}
	data := array.NewData(dt, int(total), bufs, nil, int(col.nulls), 0)
	defer data.Release()
	pd.stat().PlainColumns.Add(int64(len(rows)))
	return array.MakeFromData(data), true
}

// readChunk reads the bytes of column chunk leaf of row group rg (rows
// rows, descriptor d) into c, with its codec, if it is one the fast path
// takes.
func (pd *plainDecoder) readChunk(md *metadata.FileMetaData, rg, leaf int, rows int64, d *schema.Column, c *plainChunk) bool {
	if rg < 0 || rg >= len(md.RowGroups) || leaf >= len(md.RowGroups[rg].GetColumns()) || md.RowGroups[rg].GetColumns()[leaf].GetMetaData() == nil {
		return false
	}
	cc, err := md.RowGroup(rg).ColumnChunk(leaf)
	if err != nil || cc == nil || cc.CryptoMetadata() != nil || cc.FilePath() != "" {
		return false
	}
	if cc.NumValues() != rows || cc.Type() != d.PhysicalType() {
		return false
	}
	// Every codec Arrow v15 has: snappy, gzip, zstd, brotli (not LZ4).
	codec, ok := streamCodec(cc)
	if !ok {
		return false
	}
	off, n := chunkStart(cc), cc.TotalCompressedSize()
	if off < 4 || n <= 0 || n > pd.tuning().MaxColumnwiseBytes || off > pd.size || n > pd.size-off {
		return false
	}
	if int64(cap(pd.chunk)) < n {
		pd.chunk = make([]byte, n)
	}
	buf := pd.chunk[:n]
	if m, err := pd.r.ReadAt(buf, off); m != len(buf) || (err != nil && err != io.EOF) {
		return false
	}
	c.buf, c.codec, c.codecID = buf, codec, cc.Compression()
	return true
}

// trim drops buffers too large to keep.
func (pd *plainDecoder) trim() {
	if cap(pd.chunk) > maxPlainKeep {
		pd.chunk = nil
	}
	if cap(pd.scratch) > maxPlainKeep {
		pd.scratch = nil
	}
	if cap(pd.dict) > maxPlainKeep {
		pd.dict = nil
	}
	if cap(pd.idx) > maxPlainKeep/4 {
		pd.idx = nil
	}
	if cap(pd.splitIn) > maxPlainKeep {
		pd.splitIn = nil
	}
	if cap(pd.split) > maxPlainKeep {
		pd.split = nil
	}
}

// plainChunk is one column chunk being decoded.
type plainChunk struct {
	buf     []byte // the chunk's bytes
	codec   compress.Codec
	codecID compress.Compression
	w       int
	rows    int64
	values  []byte // rows*w bytes
	valid   []byte // validity bitmap, nil for a required column
	row     int64  // rows decoded so far
	nulls   int64
	dict    []byte // the dictionary's values (dictN*w bytes) once its page is read
	dictN   int64  // number of dictionary values, -1 before a dictionary page
}

// decode decodes every page of the chunk; the chunk must hold exactly rows
// values in data pages and nothing else.
func (c *plainChunk) decode(pd *plainDecoder) (nulls int64, ok bool) {
	if !c.decodePages(pd, c.pageV1, c.pageV2) || c.row != c.rows {
		return 0, false
	}
	return c.nulls, true
}

// pageFunc decodes one data page (header h, body) of a chunk.
type pageFunc func(pd *plainDecoder, h *pageHeader, body []byte) bool

// decodePages decodes every page held in c.buf with decodePage: the plain
// and the list chunks walk their pages alike and differ only in how they
// decode a data page (v1 and v2).
func (c *plainChunk) decodePages(pd *plainDecoder, v1, v2 pageFunc) bool {
	pos := 0
	c.dictN = -1
	for page := 0; pos < len(c.buf); page++ {
		var h pageHeader
		n, ok := h.parse(c.buf[pos:])
		if !ok {
			return false
		}
		pos += n
		if h.csize < 0 || h.usize < 0 || int64(h.csize) > int64(len(c.buf)-pos) {
			return false
		}
		body := c.buf[pos : pos+int(h.csize)]
		pos += int(h.csize)
		if !c.decodePage(pd, &h, body, page, v1, v2) {
			return false
		}
	}
	return true
}

// decodePage decodes page number page of the chunk (header h, body): a
// data page with v1 or v2 by its layout, the chunk's dictionary when it is
// the first page; anything else (a late dictionary, index or unknown
// pages) fails.
func (c *plainChunk) decodePage(pd *plainDecoder, h *pageHeader, body []byte, page int, v1, v2 pageFunc) bool {
	switch {
	case h.typ == pageData && h.v1 && !h.v2:
		return v1(pd, h, body)
	case h.typ == pageDataV2 && h.v2 && !h.v1:
		return v2(pd, h, body)
	case h.typ == pageDictionary && h.dict && !h.v1 && !h.v2 && page == 0:
		return c.dictPage(pd, h, body)
	}
	return false
}

// pageRows checks a page's value count and returns it.
func (c *plainChunk) pageRows(n int32) (int64, bool) {
	if n <= 0 || int64(n) > c.rows-c.row {
		return 0, false
	}
	return int64(n), true
}

// inflate decompresses src, which must inflate to exactly size bytes, into
// dst[:size] (dst is used if large enough) and returns it.
func (c *plainChunk) inflate(dst, src []byte, size int) ([]byte, bool) {
	if c.codec == nil {
		if len(src) != size {
			return nil, false
		}
		return src, true
	}
	// The decoded length leads a snappy block and, if stated, a zstd
	// frame: checking it first keeps a corrupt length from allocating
	// gigabytes. (A zstd frame that does not state it, as the Go writer's
	// frames of small pages, is decoded as pqarrow would: the same call.)
	switch c.codecID {
	case compress.Codecs.Snappy:
		m, k := binary.Uvarint(src)
		if k <= 0 || m != uint64(size) {
			return nil, false
		}
	case compress.Codecs.Zstd:
		if m, ok := pagecodec.ZstdContentSize(src); ok && m != uint64(size) {
			return nil, false
		}
	}
	if cap(dst) < size {
		dst = make([]byte, size)
	}
	dst = dst[:size]
	out := c.codec.Decode(dst, src)
	if len(out) != size {
		return nil, false
	}
	if size > 0 && unsafe.SliceData(out) != unsafe.SliceData(dst) {
		copy(dst, out)
	}
	return dst, true
}

// inflateInPlace decompresses src, the size bytes of n PLAIN values with
// no nulls, straight into c.values at row c.row, and moves c.row past them.
func (c *plainChunk) inflateInPlace(src []byte, size int, n int64) bool {
	if int64(size) != n*int64(c.w) {
		return false
	}
	at := int(c.row) * c.w
	page, ok := c.inflate(c.values[at:at+size:at+size], src, size)
	if !ok {
		return false
	}
	if unsafe.SliceData(page) != unsafe.SliceData(c.values[at:]) {
		copy(c.values[at:], page)
	}
	c.row += n
	return true
}

// A DATA_PAGE (v1) of a nullable column, or of a list, starts with its
// levels: its values could not be decompressed straight into place, as a
// required column's are, and were decompressed into scratch and copied out
// (1.5 GB for a million FLOAT[384] rows in gen.go's file: 0.28 CPU-s).
// When the rows before the page's are already in c.values (a chunk decoded
// whole, after its first page), the page is now decompressed over the last
// bytes of them, as many as its levels take if it has no null (its size
// less its values'): its values then land in place. The bytes written
// over are kept in pd.behind and put back (putBehind) once the levels are
// read and the values placed. With no room behind (a chunk's first page),
// the page is decompressed where its values go and they are moved back by
// its levels' length: a copy, but no scratch buffer as large as the page.

// placePage returns where in c.values a page of size bytes, lead of them
// before its values, is decompressed (from), and keeps the bytes before
// row c.row it covers; ok is false when it does not fit or has no levels.
func (c *plainChunk) placePage(pd *plainDecoder, size, lead int) (from int, ok bool) {
	at := int(c.row) * c.w
	if lead <= 0 || size < lead || at > len(c.values) {
		return 0, false
	}
	from = at - lead
	if from < 0 {
		from = at
	}
	if size > len(c.values)-from {
		return 0, false
	}
	pd.behind = append(pd.behind[:0], c.values[from:at]...)
	return from, true
}

// inflatePlaced decompresses src (size bytes inflated, lead of them
// levels if it has no null) into c.values where placePage puts it and
// returns it and where it starts; nil (and true) when there is no room or
// no codec: the caller then inflates the page into scratch. A page that
// does not decompress has its bytes put back.
func (c *plainChunk) inflatePlaced(pd *plainDecoder, src []byte, size, lead int) (page []byte, from int, ok bool) {
	if c.codec == nil {
		return nil, 0, true
	}
	from, ok = c.placePage(pd, size, lead)
	if !ok {
		return nil, 0, true
	}
	page, ok = c.inflate(c.values[from:from+size:from+size], src, size)
	if !ok {
		c.putBehind(pd, from)
		return nil, 0, false
	}
	return page, from, true
}

// putBehind puts back the bytes placePage kept, from byte from of
// c.values.
func (c *plainChunk) putBehind(pd *plainDecoder, from int) {
	copy(c.values[from:], pd.behind)
}

// inflateScratch decompresses src (size bytes inflated) into the worker's
// scratch buffer, which the next page reuses, and returns it; a stored page
// is src itself.
func (c *plainChunk) inflateScratch(pd *plainDecoder, src []byte, size int) ([]byte, bool) {
	page, ok := c.inflate(pd.scratch, src, size)
	if ok && c.codec != nil {
		pd.scratch = page
	}
	return page, ok
}

// v2Codec drops the chunk's codec while a DATA_PAGE_V2 whose values are
// stored uncompressed (is_compressed false) is decoded; the returned
// function puts it back.
func (c *plainChunk) v2Codec(h *pageHeader) (restore func()) {
	was := c.codec
	if !h.compressed {
		c.codec = nil
	}
	return func() { c.codec = was }
}

// pageV1 decodes a DATA_PAGE: the whole page is compressed; for an
// optional column it starts with the definition levels (RLE, 4-byte length
// prefix).
func (c *plainChunk) pageV1(pd *plainDecoder, h *pageHeader, body []byte) bool {
	dict := dictEncoded(h.enc)
	if h.enc != encodingPlain && h.enc != encodingBSS && !dict {
		return false
	}
	n, ok := c.pageRows(h.numValues)
	if !ok {
		return false
	}
	if c.valid == nil && h.enc == encodingPlain {
		// The page is the values: inflate them in place.
		return c.inflateInPlace(body, int(h.usize), n)
	}
	if c.valid != nil && h.defEnc != encodingRLE {
		return false
	}
	page, ok := c.inflateScratch(pd, body, int(h.usize))
	if !ok {
		return false
	}
	nn := n
	if c.valid != nil {
		if len(page) < 4 {
			return false
		}
		ln := binary.LittleEndian.Uint32(page)
		if uint64(ln) > uint64(len(page)-4) {
			return false
		}
		if nn, ok = c.levels(page[4:4+int(ln)], n); !ok {
			return false
		}
		page = page[4+int(ln):]
	}
	switch {
	case dict:
		return c.dictValues(pd, page, n, nn)
	case h.enc == encodingBSS:
		return c.splitValues(pd, page, n, nn)
	}
	return c.scatter(page, n, nn)
}

// pageV2 decodes a DATA_PAGE_V2: the levels come first, uncompressed, then
// the values, compressed if is_compressed.
func (c *plainChunk) pageV2(pd *plainDecoder, h *pageHeader, body []byte) bool {
	dict := dictEncoded(h.enc)
	if h.enc != encodingPlain && h.enc != encodingBSS && !dict || h.numRows != h.numValues || h.repLen != 0 || h.defLen < 0 || h.numNulls < 0 {
		return false
	}
	n, ok := c.pageRows(h.numValues)
	if !ok || int64(h.numNulls) > n || int(h.defLen) > len(body) || h.defLen > h.usize {
		return false
	}
	levels, rest := body[:h.defLen], body[h.defLen:]
	vsize := int(h.usize - h.defLen)
	nn := n
	if c.valid == nil {
		if h.defLen != 0 || h.numNulls != 0 {
			return false
		}
	} else {
		if nn, ok = c.levels(levels, n); !ok || n-nn != int64(h.numNulls) {
			return false
		}
	}
	if !dict && int64(vsize) != nn*int64(c.w) {
		return false
	}
	defer c.v2Codec(h)()
	if nn == n && h.enc == encodingPlain {
		// No nulls: the values go straight into place.
		return c.inflateInPlace(rest, vsize, n)
	}
	page, ok := c.inflateScratch(pd, rest, vsize)
	if !ok {
		return false
	}
	switch {
	case dict:
		return c.dictValues(pd, page, n, nn)
	case h.enc == encodingBSS:
		return c.splitValues(pd, page, n, nn)
	}
	return c.scatter(page, n, nn)
}

// splitValues decodes the values section of a BYTE_STREAM_SPLIT page (nn
// values, byte b of value i at src[b*nn+i]) into the n rows from c.row on
// (validity already decoded), zeroing the null slots.
func (c *plainChunk) splitValues(pd *plainDecoder, src []byte, n, nn int64) bool {
	w := c.w
	if int64(len(src)) != nn*int64(w) {
		return false
	}
	at := int(c.row) * w
	if nn == n {
		unsplit(c.values[at:at+int(n)*w], src, w)
		c.row += n
		return true
	}
	if int64(cap(pd.split)) < nn*int64(w) {
		pd.split = make([]byte, nn*int64(w))
	}
	joined := pd.split[:nn*int64(w)]
	unsplit(joined, src, w)
	return c.scatter(joined, n, nn)
}

// unsplit joins the w byte streams of src (len(src)/w values) into dst,
// value after value. On x86-64 unsplitBlocks joins 16 values at a time
// with SSE2 (8x as fast), and the loops below the rest. Widths 4 and 8
// take 8 values at a time: one 64-bit
// load per stream, a byte transpose in registers (rounds that swap 4-, 2-
// and 1-byte blocks across the diagonal, swapBlocks), and 64-bit stores.
func unsplit(dst, src []byte, w int) {
	nn := len(src) / w
	i := unsplitBlocks(dst, src, w, nn)
	const m4, m2, m1 = 0x00000000ffffffff, 0x0000ffff0000ffff, 0x00ff00ff00ff00ff
	le := binary.LittleEndian
	switch w {
	case 4:
		s0, s1, s2, s3 := src[:nn], src[nn:2*nn], src[2*nn:3*nn], src[3*nn:4*nn]
		d := dst[:4*nn]
		for ; i+8 <= nn; i += 8 {
			// Row k holds stream k's bytes of values i..i+7; after the
			// rounds, half h of a_r is value i+4h+r.
			a0, a1, a2, a3 := le.Uint64(s0[i:]), le.Uint64(s1[i:]), le.Uint64(s2[i:]), le.Uint64(s3[i:])
			a0, a2 = swapBlocks(a0, a2, 16, m2)
			a1, a3 = swapBlocks(a1, a3, 16, m2)
			a0, a1 = swapBlocks(a0, a1, 8, m1)
			a2, a3 = swapBlocks(a2, a3, 8, m1)
			o := d[4*i : 4*i+32]
			le.PutUint64(o[0:], a0&m4|a1<<32)
			le.PutUint64(o[8:], a2&m4|a3<<32)
			le.PutUint64(o[16:], a0>>32|a1&^m4)
			le.PutUint64(o[24:], a2>>32|a3&^m4)
		}
		for ; i < nn; i++ {
			d[4*i], d[4*i+1], d[4*i+2], d[4*i+3] = s0[i], s1[i], s2[i], s3[i]
		}
	case 8:
		s0, s1, s2, s3 := src[:nn], src[nn:2*nn], src[2*nn:3*nn], src[3*nn:4*nn]
		s4, s5, s6, s7 := src[4*nn:5*nn], src[5*nn:6*nn], src[6*nn:7*nn], src[7*nn:8*nn]
		d := dst[:8*nn]
		for ; i+8 <= nn; i += 8 {
			// Row k holds stream k's bytes of values i..i+7; after the
			// rounds, a_j is value i+j.
			a0, a1, a2, a3 := le.Uint64(s0[i:]), le.Uint64(s1[i:]), le.Uint64(s2[i:]), le.Uint64(s3[i:])
			a4, a5, a6, a7 := le.Uint64(s4[i:]), le.Uint64(s5[i:]), le.Uint64(s6[i:]), le.Uint64(s7[i:])
			a0, a4 = swapBlocks(a0, a4, 32, m4)
			a1, a5 = swapBlocks(a1, a5, 32, m4)
			a2, a6 = swapBlocks(a2, a6, 32, m4)
			a3, a7 = swapBlocks(a3, a7, 32, m4)
			a0, a2 = swapBlocks(a0, a2, 16, m2)
			a1, a3 = swapBlocks(a1, a3, 16, m2)
			a4, a6 = swapBlocks(a4, a6, 16, m2)
			a5, a7 = swapBlocks(a5, a7, 16, m2)
			a0, a1 = swapBlocks(a0, a1, 8, m1)
			a2, a3 = swapBlocks(a2, a3, 8, m1)
			a4, a5 = swapBlocks(a4, a5, 8, m1)
			a6, a7 = swapBlocks(a6, a7, 8, m1)
			o := d[8*i : 8*i+64]
			le.PutUint64(o[0:], a0)
			le.PutUint64(o[8:], a1)
			le.PutUint64(o[16:], a2)
			le.PutUint64(o[24:], a3)
			le.PutUint64(o[32:], a4)
			le.PutUint64(o[40:], a5)
			le.PutUint64(o[48:], a6)
			le.PutUint64(o[56:], a7)
		}
		for ; i < nn; i++ {
			le.PutUint64(d[8*i:], uint64(s0[i])|uint64(s1[i])<<8|uint64(s2[i])<<16|uint64(s3[i])<<24|
				uint64(s4[i])<<32|uint64(s5[i])<<40|uint64(s6[i])<<48|uint64(s7[i])<<56)
		}
	default:
		for i := range nn {
			for b := range w {
				dst[i*w+b] = src[b*nn+i]
			}
		}
	}
}

// swapBlocks is one round of a byte transpose: it swaps the s-bit blocks
// of a that mask m picks, shifted up by s, with those of b that m picks.
func swapBlocks(a, b uint64, s uint, m uint64) (uint64, uint64) {
	t := (a>>s ^ b) & m
	return a ^ t<<s, b ^ t
}

// dictEncoded reports whether a data page's values are dictionary indices.
func dictEncoded(enc int32) bool {
	return enc == encodingRLEDict || enc == encodingPlainDict
}

// dictPage reads the chunk's DICTIONARY_PAGE: num_values PLAIN values of
// the column's width, decompressed into the worker's dictionary buffer.
func (c *plainChunk) dictPage(pd *plainDecoder, h *pageHeader, body []byte) bool {
	if !h.hasDictNum || h.dictEnc != encodingPlain && h.dictEnc != encodingPlainDict || h.dictNum < 0 {
		return false
	}
	size := int64(h.dictNum) * int64(c.w)
	if size != int64(h.usize) || size > maxDictBytes {
		return false
	}
	dict, ok := c.inflate(pd.dict, body, int(size))
	if !ok {
		return false
	}
	if c.codec == nil {
		// dict is the chunk's bytes: copy them where the values are
		// aligned for the gather.
		if int64(cap(pd.dict)) < size {
			pd.dict = make([]byte, size)
		}
		dict = pd.dict[:size]
		copy(dict, body)
	}
	pd.dict = dict
	c.dict, c.dictN = dict, int64(h.dictNum)
	return true
}

// dictValues decodes the values section of a dictionary-encoded data page
// (a byte of bit width, then the RLE/bit-packed hybrid of nn indices) and
// gathers the dictionary's values into the n rows from c.row on, zeroing
// the null slots (validity already decoded).
func (c *plainChunk) dictValues(pd *plainDecoder, src []byte, n, nn int64) bool {
	if c.dictN < 0 || len(src) > 0 && src[0] > 32 {
		return false
	}
	at := int(c.row) * c.w
	dst := c.values[at : at+int(n)*c.w]
	if nn == n && n > 0 { // no nulls: the indices go straight to the values
		if len(src) == 0 {
			return false
		}
		var ok bool
		switch c.w {
		case 4:
			ok = hybridGather(src[1:], int(src[0]), words[uint32](dst), words[uint32](c.dict))
		case 8:
			ok = hybridGather(src[1:], int(src[0]), words[uint64](dst), words[uint64](c.dict))
		}
		if !ok {
			return false
		}
		c.row += n
		return true
	}
	var idx []uint32
	if nn > 0 {
		if len(src) == 0 {
			return false
		}
		if int64(cap(pd.idx)) < nn {
			pd.idx = make([]uint32, nn)
		}
		idx = pd.idx[:nn]
		if !hybrid(src[1:], int(src[0]), idx, uint32(c.dictN)) {
			return false
		}
	}
	var valid []byte
	if nn != n {
		valid = c.valid
	}
	switch c.w {
	case 4:
		gather(words[uint32](dst), words[uint32](c.dict), idx, valid, c.row)
	case 8:
		gather(words[uint64](dst), words[uint64](c.dict), idx, valid, c.row)
	default:
		return false
	}
	c.nulls += n - nn
	c.row += n
	return true
}

// words views b (aligned, little-endian host) as a slice of T.
func words[T uint32 | uint64](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var x T
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/int(unsafe.Sizeof(x)))
}

// gather writes dict[idx[j]] to the rows of dst, in order: every row if
// valid is nil, else the rows whose bit (from row on) is set, zeroing the
// others. Every index is below len(dict) (hybrid checked it).
func gather[T uint32 | uint64](dst, dict []T, idx []uint32, valid []byte, row int64) {
	if valid == nil {
		dst = dst[:len(idx)]
		for i, k := range idx {
			dst[i] = dict[k]
		}
		return
	}
	j, i := 0, 0
	// Row by row up to a byte of the bitmap, then eight rows a byte: all
	// valid or all null without looking at each bit.
	for ; i < len(dst) && (int(row)+i)%8 != 0; i++ {
		j = gatherOne(dst, dict, idx, valid, row, i, j)
	}
	for ; i+8 <= len(dst); i += 8 {
		switch v := valid[(int(row)+i)/8]; v {
		case 0xff:
			d := dst[i : i+8 : i+8]
			x := idx[j : j+8 : j+8]
			d[0], d[1], d[2], d[3] = dict[x[0]], dict[x[1]], dict[x[2]], dict[x[3]]
			d[4], d[5], d[6], d[7] = dict[x[4]], dict[x[5]], dict[x[6]], dict[x[7]]
			j += 8
		case 0:
			clear(dst[i : i+8])
		default:
			for k := range 8 {
				j = gatherOne(dst, dict, idx, valid, row, i+k, j)
			}
		}
	}
	for ; i < len(dst); i++ {
		j = gatherOne(dst, dict, idx, valid, row, i, j)
	}
}

// gatherOne writes dict[idx[j]] to dst[i] if row row+i is valid (and
// returns j+1), else zero (and returns j).
func gatherOne[T uint32 | uint64](dst, dict []T, idx []uint32, valid []byte, row int64, i, j int) int {
	if bitutil.BitIsSet(valid, int(row)+i) {
		dst[i] = dict[idx[j]]
		return j + 1
	}
	dst[i] = 0
	return j
}

// hybrid decodes len(out) values of bit width bw (0..32) from the
// RLE/bit-packed hybrid encoding in b into out; every value must be below
// limit. Bytes after the values needed are ignored, as pqarrow does.
func hybrid(b []byte, bw int, out []uint32, limit uint32) bool {
	mask := uint64(1)<<bw - 1
	return hybridRuns(b, bw, int64(len(out)), func(v uint32, lo, hi int64) bool {
		if v >= limit {
			return false
		}
		run := out[lo:hi]
		for i := range run {
			run[i] = v
		}
		return true
	}, func(packed []byte, lo, hi int64) bool {
		return unpack(packed, bw, mask, out[lo:hi], limit)
	})
}

// hybridGather decodes len(dst) dictionary indices of bit width bw (0..32)
// as hybrid does and writes the dictionary's values at them to dst, in
// one pass; every index must be below len(dict).
func hybridGather[T uint32 | uint64](b []byte, bw int, dst, dict []T) bool {
	return hybridRuns(b, bw, int64(len(dst)), func(v uint32, lo, hi int64) bool {
		if int64(v) >= int64(len(dict)) {
			return false
		}
		x := dict[v]
		run := dst[lo:hi]
		for i := range run {
			run[i] = x
		}
		return true
	}, func(packed []byte, lo, hi int64) bool {
		return unpackGather(packed, bw, dst[lo:hi], dict)
	})
}

// hybridRuns walks the runs of n values of bit width bw (0..32) in the
// RLE/bit-packed hybrid encoding in b: repeated calls rle with the value
// of a repeated run and the values lo..hi it covers, packed with the bytes
// of a bit-packed run (at least (hi-lo)*bw bits) and the values it covers.
// Either returns false to stop the walk, which then fails.
func hybridRuns(b []byte, bw int, n int64, repeated func(v uint32, lo, hi int64) bool, packed func(run []byte, lo, hi int64) bool) bool {
	vb := (bw + 7) / 8
	done := int64(0)
	for done < n {
		hdr, k := binary.Uvarint(b)
		if k <= 0 || hdr > 1<<31 {
			return false
		}
		b = b[k:]
		if hdr&1 == 1 { // bit-packed: groups of 8 values, bw bytes a group
			groups := int64(hdr >> 1)
			size := groups * int64(bw)
			if groups == 0 || size > int64(len(b)) {
				return false
			}
			take := min(groups*8, n-done)
			if !packed(b[:size], done, done+take) {
				return false
			}
			b = b[size:]
			done += take
			continue
		}
		count := int64(hdr >> 1)
		if count == 0 || len(b) < vb {
			return false
		}
		var v uint32
		for i := vb - 1; i >= 0; i-- {
			v = v<<8 | uint32(b[i])
		}
		take := min(count, n-done)
		if !repeated(v, done, done+take) {
			return false
		}
		b = b[vb:]
		done += take
	}
	return true
}

// le64 loads the 8 bytes at p, little-endian.
func le64(p unsafe.Pointer) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(p), 8))
}

// unpack reads len(out) values of bw bits, LSB first, from run (which
// holds at least len(out)*bw bits); every value must be below limit.
func unpack(run []byte, bw int, mask uint64, out []uint32, limit uint32) bool {
	var hi uint32 // the largest value, checked once at the end
	bit, i := 0, 0
	// Whole groups of eight through the width's kernel
	// (unpack_gen.go), while a group's last load stays in run.
	if bw >= 1 && bw <= maxGatherWidth && len(run) >= bw+7 {
		groups := min(len(out)/8, (len(run)-7)/bw)
		hi = unpackKernel(bw)(run, out[:groups*8])
		i, bit = groups*8, groups*8*bw
	}
	// While 8 bytes from the value's first byte are in run, one load
	// (at most 7+32 bits are needed).
	for ; i < len(out) && bit>>3+8 <= len(run); i++ {
		x := uint32(binary.LittleEndian.Uint64(run[bit>>3:]) >> (bit & 7) & mask)
		hi = max(hi, x)
		out[i] = x
		bit += bw
	}
	for ; i < len(out); i++ {
		var v uint64
		for j := len(run) - 1; j >= bit>>3; j-- {
			v = v<<8 | uint64(run[j])
		}
		x := uint32(v >> (bit & 7) & mask)
		hi = max(hi, x)
		out[i] = x
		bit += bw
	}
	return len(out) == 0 || hi < limit
}

// unpackGather is unpack and gather in one pass: it writes dict[x] to
// dst for each of the len(dst) values x of bw bits in run (which holds at
// least len(dst)*bw bits), which must be below len(dict). Whole groups of
// eight go through the width's kernel (unpack_gen.go) while a
// group's last 8-byte load stays in run; the rest value by value.
func unpackGather[T uint32 | uint64](run []byte, bw int, dst, dict []T) bool {
	i := 0
	if bw >= 1 && bw <= maxGatherWidth && len(run) >= bw+7 {
		groups := min(len(dst)/8, (len(run)-7)/bw)
		if !gatherKernel[T](bw)(run, dst[:groups*8], dict) {
			return false
		}
		i = groups * 8
	}
	mask := uint64(1)<<bw - 1
	for bit := i * bw; i < len(dst); i++ {
		var v uint64
		for j := min(len(run), bit>>3+8) - 1; j >= bit>>3; j-- {
			v = v<<8 | uint64(run[j])
		}
		x := v >> (bit & 7) & mask
		if x >= uint64(len(dict)) {
			return false
		}
		dst[i] = dict[x]
		bit += bw
	}
	return true
}

// levels decodes the n definition levels of a page (bit width 1, the
// RLE/bit-packed hybrid) into the validity bitmap from c.row on and
// returns the number of non-null values.
func (c *plainChunk) levels(b []byte, n int64) (int64, bool) {
	done := int64(0)
	for done < n {
		hdr, k := binary.Uvarint(b)
		if k <= 0 || hdr > 1<<31 {
			return 0, false
		}
		b = b[k:]
		if hdr&1 == 1 { // bit-packed groups of 8 levels, LSB first: a bitmap
			groups := int64(hdr >> 1)
			if groups == 0 || groups > int64(len(b)) {
				return 0, false
			}
			take := min(groups*8, n-done)
			bitutil.CopyBitmap(b, 0, int(take), c.valid, int(c.row+done))
			b = b[groups:]
			done += take
			continue
		}
		count := int64(hdr >> 1)
		if count == 0 || len(b) < 1 || b[0] > 1 {
			return 0, false
		}
		take := min(count, n-done)
		bitutil.SetBitsTo(c.valid, c.row+done, take, b[0] == 1)
		b = b[1:]
		done += take
	}
	return int64(bitutil.CountSetBits(c.valid, int(c.row), int(n))), true
}

// scatter copies the nn non-null values of src to their rows (the n rows
// from c.row on, validity already decoded), zeroing the null slots.
func (c *plainChunk) scatter(src []byte, n, nn int64) bool {
	w := c.w
	if int64(len(src)) != nn*int64(w) {
		return false
	}
	at := int(c.row) * w
	if nn == n {
		copy(c.values[at:], src)
	} else {
		dst := c.values[at : at+int(n)*w]
		j := 0
		for i := range int(n) {
			if bitutil.BitIsSet(c.valid, int(c.row)+i) {
				copy(dst[i*w:(i+1)*w], src[j:j+w])
				j += w
			} else {
				clear(dst[i*w : (i+1)*w])
			}
		}
	}
	c.nulls += n - nn
	c.row += n
	return true
}

// pageHeader holds the fields of a Thrift PageHeader the fast path reads.
type pageHeader struct {
	typ, usize, csize            int32
	hasType, hasUsize, hasCsize  bool
	v1, v2, dict                 bool // data_page_header / data_page_header_v2 / dictionary_page_header present
	numValues, enc, defEnc       int32
	repEnc                       int32
	numNulls, numRows            int32
	defLen, repLen               int32
	compressed                   bool
	hasNum, hasEnc, hasV2Lengths bool
	dictNum, dictEnc             int32 // of the dictionary page header
	hasDictNum                   bool  // its num_values and encoding
}

// parse reads a PageHeader (Thrift compact protocol) from the start of b
// and returns its length; ok is false on anything malformed or a missing
// required field.
func (h *pageHeader) parse(b []byte) (int, bool) {
	r := thriftReader{b: b}
	h.compressed = true
	var last int16
	for {
		id, typ, stop := r.field(&last)
		if r.bad || stop {
			break
		}
		switch {
		case id == 1 && typ == tI32:
			h.typ, h.hasType = r.i32(), true
		case id == 2 && typ == tI32:
			h.usize, h.hasUsize = r.i32(), true
		case id == 3 && typ == tI32:
			h.csize, h.hasCsize = r.i32(), true
		case id == 5 && typ == tStruct:
			h.v1 = true
			h.dataPage(&r)
		case id == 7 && typ == tStruct:
			h.dict = true
			h.dictionaryPage(&r)
		case id == 8 && typ == tStruct:
			h.v2 = true
			h.dataPageV2(&r)
		default:
			r.skip(typ, 0)
		}
	}
	if r.bad || !h.hasType || !h.hasUsize || !h.hasCsize || (h.v1 || h.v2) && !h.hasNum {
		return 0, false
	}
	if h.v2 && !h.hasV2Lengths {
		return 0, false
	}
	return r.pos, true
}

func (h *pageHeader) dataPage(r *thriftReader) {
	// Field 4, the repetition levels' encoding, is required.
	seen := r.i32Fields([]*int32{&h.numValues, &h.enc, &h.defEnc, &h.repEnc}, nil)
	h.hasNum = seen == 0b1111
}

func (h *pageHeader) dictionaryPage(r *thriftReader) {
	// Field 3, is_sorted, and unknown fields are skipped.
	seen := r.i32Fields([]*int32{&h.dictNum, &h.dictEnc}, nil)
	h.hasDictNum = seen == 0b11
}

func (h *pageHeader) dataPageV2(r *thriftReader) {
	seen := r.i32Fields([]*int32{&h.numValues, &h.numNulls, &h.numRows, &h.enc, &h.defLen, &h.repLen},
		func(id int16, typ byte) bool {
			if id == 7 && (typ == tTrue || typ == tFalse) { // is_compressed
				h.compressed = typ == tTrue
				return true
			}
			return false
		})
	h.hasNum = seen&0b1111 == 0b1111
	h.hasV2Lengths = seen&0b110000 == 0b110000
}

// i32Fields reads the fields of a Thrift struct: field i+1, when it has type
// i32, into *out[i]; a field other accepts (it reads what it needs);
// anything else is skipped. Bit i of the result says whether field i+1 was
// read into out.
func (r *thriftReader) i32Fields(out []*int32, other func(id int16, typ byte) bool) (seen uint32) {
	var last int16
	for {
		id, typ, stop := r.field(&last)
		if r.bad || stop {
			return seen
		}
		switch {
		case id >= 1 && int(id) <= len(out) && typ == tI32:
			*out[id-1] = r.i32()
			seen |= 1 << (id - 1)
		case other != nil && other(id, typ):
		default:
			r.skip(typ, 1)
		}
	}
}

// Thrift compact protocol types.
const (
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// thriftReader reads the Thrift compact protocol from a byte slice; any
// error sets bad, after which every read returns zero.
type thriftReader struct {
	b   []byte
	pos int
	bad bool
}

func (r *thriftReader) byte() byte {
	if r.bad || r.pos >= len(r.b) {
		r.bad = true
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *thriftReader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, k := binary.Uvarint(r.b[r.pos:])
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.pos += k
	return v
}

func (r *thriftReader) zigzag() int64 {
	v := r.uvarint()
	return int64(v>>1) ^ -int64(v&1)
}

func (r *thriftReader) i32() int32 {
	v := r.zigzag()
	if v != int64(int32(v)) {
		r.bad = true
		return 0
	}
	return int32(v)
}

// field reads a field header; last is the previous field id of the struct.
func (r *thriftReader) field(last *int16) (id int16, typ byte, stop bool) {
	c := r.byte()
	if r.bad || c == 0 {
		return 0, 0, true
	}
	typ = c & 0x0f
	if d := c >> 4; d != 0 {
		id = *last + int16(d)
	} else {
		v := r.zigzag()
		if v != int64(int16(v)) {
			r.bad = true
			return 0, 0, true
		}
		id = int16(v)
	}
	*last = id
	return id, typ, false
}

// skip skips a value of type typ; depth bounds the nesting.
func (r *thriftReader) skip(typ byte, depth int) {
	if r.bad {
		return
	}
	if depth > maxThriftDepth {
		r.bad = true
		return
	}
	switch typ {
	case tTrue, tFalse: // a struct field's bool is in its type
	case tByte:
		r.byte()
	case tI16, tI32, tI64:
		r.uvarint()
	case tDouble:
		r.take(8)
	case tBinary:
		r.take(r.uvarint())
	case tList, tSet:
		c := r.byte()
		n := uint64(c >> 4)
		if n == 15 {
			n = r.uvarint()
		}
		r.elems(c&0x0f, n, depth)
	case tMap:
		n := r.uvarint()
		if n == 0 {
			return
		}
		kv := r.byte()
		if n > uint64(len(r.b)) {
			r.bad = true
			return
		}
		for range n {
			r.elem(kv>>4, depth)
			r.elem(kv&0x0f, depth)
			if r.bad {
				return
			}
		}
	case tStruct:
		var last int16
		for !r.bad {
			_, t, stop := r.field(&last)
			if stop {
				return
			}
			r.skip(t, depth+1)
		}
	default:
		r.bad = true
	}
}

// elems skips n container elements of type typ.
func (r *thriftReader) elems(typ byte, n uint64, depth int) {
	if n > uint64(len(r.b)-r.pos) { // every element takes a byte or more
		r.bad = true
		return
	}
	for range n {
		r.elem(typ, depth)
		if r.bad {
			return
		}
	}
}

// elem skips one container element: a bool element is a byte.
func (r *thriftReader) elem(typ byte, depth int) {
	if typ == tTrue || typ == tFalse {
		r.byte()
		return
	}
	r.skip(typ, depth+1)
}

func (r *thriftReader) take(n uint64) {
	if r.bad || n > uint64(len(r.b)-r.pos) {
		r.bad = true
		return
	}
	r.pos += int(n)
}
