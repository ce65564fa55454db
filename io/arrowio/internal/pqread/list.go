package pqread

import (
	"bufio"
	"encoding/binary"
	"io"
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/pate-tool/pate/io/arrowio/internal/pagecodec"
)

// The fast path for list columns of floating-point numbers (embeddings:
// DuckDB's FLOAT[384], Polars' Array(Float32, 384), a fixed_size_list or
// list of float32 or float64 written by Arrow).
//
// pqarrow decodes the repetition and definition levels of each of the
// column's values one by one and builds the list from them; for a million
// rows of 384 values that is most of the read. Embeddings mostly have the
// trivial shape: no null list, no empty list, no null element, so every
// definition level is the maximum and the repetition levels only say where
// each row starts. listColumn checks that much of the levels (a run of
// equal levels at a time) and decodes the values straight into the Arrow
// child buffer, as plainColumn does for a flat column; a page with null or
// empty lists or null elements is mapped a run of levels at a time
// (parquet_list_nulls.go). Anything else (a fixed-size list row of the
// wrong length, more than one level of nesting) gives up, and the chunk is
// decoded by pqarrow as before.

// Tuning.MaxListBytes bounds the decoded values of a list chunk the fast path
// decodes (a column chunk is decoded whole). A
// chunk over it goes to pqarrow, which takes several times the memory and
// ten times the time: 1M rows of FLOAT[384] in one row group (pyarrow's
// default row-group size, DuckDB's ROW_GROUP_SIZE 1000000) are 1.5 GB of
// values, and a bound of 2^28 values sent them there: 20 s and 7 GB of
// peak RSS, against 2.7 s and 1.9 GB decoded whole. 4 GiB holds a million
// 1,024-float32 embeddings; the offsets are int32 in any case.

// listFast reports whether dt is a list type listColumn may decode.
func listFast(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.FixedSizeListType:
		return t.Len() > 0 && floatID(t.Elem().ID())
	case *arrow.ListType:
		return floatID(t.Elem().ID())
	}
	return false
}

func floatID(id arrow.Type) bool { return id == arrow.FLOAT32 || id == arrow.FLOAT64 }

// listElem is the element type of list type dt.
func listElem(dt arrow.DataType) arrow.DataType {
	return dt.(arrow.ListLikeType).Elem()
}

// listLeaf returns the leaf column of the list field f (Arrow type dt) if
// it is a list of FLOAT or DOUBLE nested once, -1 otherwise.
func listLeaf(md *metadata.FileMetaData, f *pqarrow.SchemaField, dt arrow.DataType) int {
	// (pqarrow gives the list field its leaf's ColIndex too.)
	if len(f.Children) != 1 || !f.Children[0].IsLeaf() || len(f.Children[0].Children) != 0 {
		return -1
	}
	c := f.Children[0].ColIndex
	if c < 0 || c >= md.Schema.NumColumns() {
		return -1
	}
	d := md.Schema.Column(c)
	if d.MaxRepetitionLevel() != 1 || d.MaxDefinitionLevel() < 1 || d.MaxDefinitionLevel() > 3 {
		return -1
	}
	if plainWidth(d.PhysicalType(), listElem(dt)) == 0 {
		return -1
	}
	return c
}

// listChunk is the state of a list chunk being decoded: the values go
// through a plainChunk (its rows are the values), the row starts into
// offsets.
type listChunk struct {
	plainChunk
	maxDef  int16
	width   int64   // of a fixed-size list, 0 for a list
	offsets []int32 // row i starts at value offsets[i]; nil for a fixed-size list
	nrows   int64   // rows started so far
	lists   int64   // rows of the chunk
	cont    bool    // it may start inside a row (a page of a listCursor)

	// With nullable set, null and empty lists and null elements are read
	// (parquet_list_nulls.go): plainChunk's rows and row count child
	// slots, entries and nvals level entries.
	nullable bool
	shape    listShape
	entries  int64  // level entries read
	nvals    int64  // level entries of the chunk
	slot     int64  // the next child slot, in a page being walked
	rowValid []byte // the rows' validity, made at the first null row
	nullRows int64
	slotRow  bool  // the row started last has child slots
	rowDef   int16 // else the definition level of its entries
}

// listColumn decodes the list column chunk leaf of row group rg (rows
// rows, Arrow type dt) if it has the trivial shape (see above).
func (pd *plainDecoder) listColumn(md *metadata.FileMetaData, rg, leaf int, rows int64, dt arrow.DataType, mem memory.Allocator) (arrow.Array, bool) {
	if rows <= 0 || leaf < 0 || leaf >= md.Schema.NumColumns() {
		return nil, false
	}
	d := md.Schema.Column(leaf)
	w := plainWidth(d.PhysicalType(), listElem(dt))
	if w == 0 || d.MaxRepetitionLevel() != 1 || d.MaxDefinitionLevel() < 1 || d.MaxDefinitionLevel() > 3 {
		return nil, false
	}
	if rg < 0 || rg >= len(md.RowGroups) || leaf >= len(md.RowGroups[rg].GetColumns()) || md.RowGroups[rg].GetColumns()[leaf].GetMetaData() == nil {
		return nil, false
	}
	cc, err := md.RowGroup(rg).ColumnChunk(leaf)
	if err != nil || cc == nil || cc.CryptoMetadata() != nil || cc.FilePath() != "" || cc.Type() != d.PhysicalType() {
		return nil, false
	}
	nvals := cc.NumValues()
	shape, nullable := listShapeOf(d)
	slots := nvals // the child's slots, at most
	var width int64
	if ft, ok := dt.(*arrow.FixedSizeListType); ok {
		width = int64(ft.Len())
		if rows > math.MaxInt32/width || nvals != rows*width && !(nullable && nvals < rows*width) {
			return nil, false
		}
		slots = rows * width // a null row may have one entry, and width slots
	}
	if nvals < rows || slots > math.MaxInt32 || slots > pd.tuning().MaxListBytes/int64(w) {
		return nil, false
	}
	codec, ok := streamCodec(cc)
	if !ok {
		return nil, false
	}
	off, n := chunkStart(cc), cc.TotalCompressedSize()
	// The compressed chunk is at most a little over its decoded values.
	if off < 4 || n <= 0 || n > nvals*int64(w)*2+(1<<20) || off > pd.size || n > pd.size-off {
		return nil, false
	}
	var buf []byte
	defer pd.trim()
	if n <= pd.tuning().ListWholeBytes && !pd.firstPageStreams(off, n, cc.Compression()) {
		if int64(cap(pd.chunk)) < n {
			pd.chunk = make([]byte, n)
		}
		buf = pd.chunk[:n]
		if m, err := pd.r.ReadAt(buf, off); m != len(buf) || (err != nil && err != io.EOF) {
			return nil, false
		}
	}

	values := memory.NewResizableBuffer(mem)
	defer values.Release()
	values.Resize(int(slots) * w)
	lc := listChunk{
		plainChunk: plainChunk{buf: buf, codec: codec, codecID: cc.Compression(), w: w, rows: slots, values: values.Bytes()},
		maxDef:     d.MaxDefinitionLevel(),
		width:      width,
		lists:      rows,
		nullable:   nullable,
		shape:      shape,
		nvals:      nvals,
	}
	var offsets *memory.Buffer
	if width == 0 {
		offsets = memory.NewResizableBuffer(mem)
		defer offsets.Release()
		offsets.Resize(int(rows+1) * 4)
		lc.offsets = arrow.Int32Traits.CastFromBytes(offsets.Bytes())
	}
	if buf != nil && !lc.decode(pd) || buf == nil && !lc.decodeAt(pd, off, n) {
		return nil, false
	}
	nslots := lc.row
	if lc.offsets != nil {
		lc.offsets[rows] = int32(nslots)
	}
	var childValid, rowValid *memory.Buffer
	if lc.valid != nil && lc.plainChunk.nulls > 0 {
		childValid = memory.NewBufferBytes(lc.valid)
	}
	if lc.rowValid != nil {
		rowValid = memory.NewBufferBytes(lc.rowValid)
	}
	elem := listElem(dt)
	child := array.NewData(elem, int(nslots), []*memory.Buffer{childValid, values}, nil, int(lc.plainChunk.nulls), 0)
	defer child.Release()
	var data *array.Data
	if width > 0 {
		data = array.NewData(dt, int(rows), []*memory.Buffer{rowValid}, []arrow.ArrayData{child}, int(lc.nullRows), 0)
	} else {
		data = array.NewData(dt, int(rows), []*memory.Buffer{rowValid, offsets}, []arrow.ArrayData{child}, int(lc.nullRows), 0)
	}
	defer data.Release()
	pd.stat().PlainColumns.Add(1)
	return array.MakeFromData(data), true
}

// firstPageStreams reports whether the chunk at off (n bytes) is snappy or
// stored and its first page a data page that decodeAt would stream: such a
// chunk (gen.go's snappy embeddings: 1 MB pages of one 64 KB literal after
// another) is read a page at a time, so that its literals go from the file
// straight into the values, rather than read whole and copied out of the
// chunk's buffer. (A zstd or gzip page decodes faster whole than streamed.)
func (pd *plainDecoder) firstPageStreams(off, n int64, codec compress.Compression) bool {
	if codec != compress.Codecs.Snappy && codec != compress.Codecs.Uncompressed {
		return false
	}
	hc := headerChecker{maxNested: pd.tuning().MaxNestedValues, r: pd.r, size: pd.size}
	h, _, err := hc.header(off, off+n)
	return err == nil && h.typ == pageData && h.v1 && !h.v2 && pd.tuning().streamable(h, codec)
}

// decode decodes every page of the chunk, which must hold exactly the
// chunk's values in data pages, in lc.lists rows.
func (lc *listChunk) decode(pd *plainDecoder) bool {
	return lc.plainChunk.decodePages(pd, lc.pageV1, lc.pageV2) && lc.done()
}

// done reports whether the chunk's pages held exactly its values and rows.
func (lc *listChunk) done() bool {
	c := &lc.plainChunk
	if lc.nrows != lc.lists {
		return false
	}
	if !lc.nullable {
		return c.row == c.rows
	}
	return lc.entries == lc.nvals && (lc.width == 0 || c.row == lc.lists*lc.width)
}

// decodeAt decodes the pages of the chunk at off (n bytes) as decode
// does, reading them from the file one at a time: a chunk too large to
// read whole (DuckDB writes FLOAT[384] in pages of 100 MB, in chunks of
// 190 MB). A large PLAIN page, stored, snappy or gzip, is decompressed as
// a stream, its values straight into the Arrow buffer.
func (lc *listChunk) decodeAt(pd *plainDecoder, off, n int64) bool {
	c := &lc.plainChunk
	c.dictN = -1
	hc := headerChecker{maxNested: pd.tuning().MaxNestedValues, r: pd.r, size: pd.size}
	end := off + n
	for pos, page := off, 0; pos < end; page++ {
		h, hl, err := hc.header(pos, end)
		if err != nil || h.csize < 0 || h.usize < 0 || int64(h.csize) > end-pos-int64(hl) {
			return false
		}
		at := pos + int64(hl)
		pos = at + int64(h.csize)
		if h.typ == pageData && h.v1 && !h.v2 && pd.tuning().streamable(h, c.codecID) {
			if !lc.streamV1(pd, h, at) {
				return false
			}
			continue
		}
		body, ok := pd.readPage(at, int(h.csize))
		if !ok || !c.decodePage(pd, h, body, page, lc.pageV1, lc.pageV2) {
			return false
		}
	}
	return lc.done()
}

// streamV1 decodes the PLAIN DATA_PAGE h whose body is at byte at of the
// file as a stream: the levels into a buffer, the values straight into
// place.
func (lc *listChunk) streamV1(pd *plainDecoder, h *pageHeader, at int64) bool {
	c := &lc.plainChunk
	if h.defEnc != encodingRLE || h.repEnc != encodingRLE {
		return false
	}
	n, ok := lc.pageEntries(h.numValues)
	if !ok {
		return false
	}
	if c.codecID == compress.Codecs.Zstd {
		if done, ok := lc.zstdPlaced(pd, h, at, n); done {
			return ok
		}
	}
	var ps pageStream
	defer ps.close()
	if !ps.open(pd, c.codecID, io.NewSectionReader(pd.r, at, int64(h.csize)), int64(h.usize)) {
		return false
	}
	pd.stat().PageStreams.Add(1)
	w := int64(c.w)
	rep, def, left, ok := streamLevels(ps.dec, n, int64(h.usize))
	if !ok {
		return false
	}
	slots, present, ok := lc.pageLevels(rep, def, n)
	if !ok || left != present*w {
		return false
	}
	if present != slots {
		// Values to scatter among null slots: through the scratch buffer.
		if int64(cap(pd.scratch)) < left {
			pd.scratch = make([]byte, left)
		}
		vals := pd.scratch[:left]
		if _, err := io.ReadFull(ps.dec, vals); err != nil || !ps.finish() {
			return false
		}
		return c.scatter(vals, slots, present)
	}
	if _, err := io.ReadFull(ps.dec, c.values[c.row*w:(c.row+slots)*w]); err != nil || !ps.finish() {
		return false
	}
	c.row += slots
	return true
}

// zstdPlaced decodes the zstd DATA_PAGE h (body at byte at of the file, n
// level entries) into c.values where placePage puts it, reading the body
// through a bufio.Reader, and then reads its levels from there: the page
// is never held twice (decoded whole, DuckDB's zstd pages of 100 MB of
// FLOAT[384] were). done is false, with c.values as it
// was up to row c.row, when there is no room or the decoder does not
// decode the page: the caller then streams it (and fails a corrupt one).
func (lc *listChunk) zstdPlaced(pd *plainDecoder, h *pageHeader, at, n int64) (done, ok bool) {
	c := &lc.plainChunk
	size := int(h.usize)
	from, ok := c.placePage(pd, size, int(int64(size)-n*int64(c.w)))
	if !ok {
		return false, false
	}
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(io.NewSectionReader(pd.r, at, int64(h.csize)))
	decoded := pagecodec.DecodeZstdInto(br, c.values[from:from+size:from+size])
	br.Reset(nil)
	readerPool.Put(br)
	if !decoded {
		c.putBehind(pd, from)
		return false, false
	}
	pd.stat().ZstdPagesPlaced.Add(1)
	return true, lc.placedV1(pd, c.values[from:from+size], n, from)
}

// streamLevels reads the repetition and definition levels that open a
// streamed DATA_PAGE of n values (usize bytes decoded; each level block
// RLE with a 4-byte length prefix) and returns them with the bytes left
// for the values.
func streamLevels(dec io.Reader, n, usize int64) (rep, def []byte, left int64, ok bool) {
	left = usize
	var lv [2][]byte
	for k := range lv {
		var hdr [4]byte
		if _, err := io.ReadFull(dec, hdr[:]); err != nil {
			return nil, nil, 0, false
		}
		ln := int64(binary.LittleEndian.Uint32(hdr[:]))
		// Levels of 1 or 2 bits take at most a quarter byte a value
		// bit-packed, and their run headers a few bytes.
		if left -= 4 + ln; left < 0 || ln > n/2+4096 {
			return nil, nil, 0, false
		}
		lv[k] = make([]byte, ln)
		if _, err := io.ReadFull(dec, lv[k]); err != nil {
			return nil, nil, 0, false
		}
	}
	return lv[0], lv[1], left, true
}

// pageV1 decodes a DATA_PAGE: the whole page is compressed and starts
// with the repetition levels, then the definition levels (each RLE with a
// 4-byte length prefix), then the values.
func (lc *listChunk) pageV1(pd *plainDecoder, h *pageHeader, body []byte) bool {
	c := &lc.plainChunk
	n, ok := lc.v1Entries(h)
	if !ok {
		return false
	}
	if h.enc == encodingPlain {
		// With no null, the values are the last n*w bytes of the page.
		page, from, ok := c.inflatePlaced(pd, body, int(h.usize), int(int64(h.usize)-n*int64(c.w)))
		if !ok {
			return false
		}
		if page != nil {
			return lc.placedV1(pd, page, n, from)
		}
	}
	page, ok := c.inflateScratch(pd, body, int(h.usize))
	if !ok {
		return false
	}
	vals, slots, present, ok := lc.v1Levels(page, n)
	if !ok {
		return false
	}
	return lc.values(pd, h, vals, slots, present)
}

// placedV1 decodes a PLAIN DATA_PAGE of n level entries decompressed into
// c.values from byte from on (placePage): its levels, then its values,
// which are in place when each entry is a value and the page was placed
// behind row c.row, moved there otherwise, or scattered among its null
// slots.
func (lc *listChunk) placedV1(pd *plainDecoder, page []byte, n int64, from int) bool {
	c := &lc.plainChunk
	at := int(c.row) * c.w
	vals, slots, present, ok := lc.v1Levels(page, n)
	if !ok {
		c.putBehind(pd, from)
		return false
	}
	if present == slots && int64(len(vals)) == slots*int64(c.w) {
		if len(vals) > 0 && unsafe.SliceData(vals) != unsafe.SliceData(c.values[at:]) {
			copy(c.values[at:], vals)
		} else {
			pd.stat().ListPagesInPlace.Add(1)
		}
		c.putBehind(pd, from)
		c.row += slots
		return true
	}
	pd.scratch = append(pd.scratch[:0], vals...)
	c.putBehind(pd, from)
	return c.scatter(pd.scratch, slots, present)
}

// v1Entries checks a DATA_PAGE's encodings and returns its level entries.
func (lc *listChunk) v1Entries(h *pageHeader) (int64, bool) {
	if h.enc != encodingPlain && h.enc != encodingBSS && !dictEncoded(h.enc) || h.defEnc != encodingRLE || h.repEnc != encodingRLE {
		return 0, false
	}
	return lc.pageEntries(h.numValues)
}

// v1Levels reads the levels of a decompressed DATA_PAGE of n entries and
// returns its values' bytes, its slots and the values present.
func (lc *listChunk) v1Levels(page []byte, n int64) (vals []byte, slots, present int64, ok bool) {
	var rep, def []byte
	for _, lv := range []*[]byte{&rep, &def} {
		if len(page) < 4 {
			return nil, 0, 0, false
		}
		ln := binary.LittleEndian.Uint32(page)
		if uint64(ln) > uint64(len(page)-4) {
			return nil, 0, 0, false
		}
		*lv, page = page[4:4+int(ln)], page[4+int(ln):]
	}
	slots, present, ok = lc.pageLevels(rep, def, n)
	return page, slots, present, ok
}

// pageV2 decodes a DATA_PAGE_V2: the repetition and definition levels
// come first, uncompressed, then the values, compressed if is_compressed.
func (lc *listChunk) pageV2(pd *plainDecoder, h *pageHeader, body []byte) bool {
	c := &lc.plainChunk
	if h.enc != encodingPlain && h.enc != encodingBSS && !dictEncoded(h.enc) || h.numNulls != 0 && !lc.nullable || h.numNulls < 0 || h.repLen < 0 || h.defLen < 0 || h.numRows < 0 {
		return false
	}
	n, ok := lc.pageEntries(h.numValues)
	if !ok || int64(h.repLen)+int64(h.defLen) > int64(len(body)) || int64(h.repLen)+int64(h.defLen) > int64(h.usize) {
		return false
	}
	rep, def, rest := body[:h.repLen], body[h.repLen:h.repLen+h.defLen], body[h.repLen+h.defLen:]
	before := lc.nrows
	slots, present, ok := lc.pageLevels(rep, def, n)
	if !ok || lc.nrows-before != int64(h.numRows) || n-present != int64(h.numNulls) {
		return false
	}
	vsize := int(h.usize - h.repLen - h.defLen)
	defer c.v2Codec(h)()
	if h.enc == encodingPlain && present == slots {
		// The values go straight into place.
		return c.inflateInPlace(rest, vsize, slots)
	}
	page, ok := c.inflateScratch(pd, rest, vsize)
	if !ok {
		return false
	}
	return lc.values(pd, h, page, slots, present)
}

// values decodes the nn values of a page into its n child slots from
// c.row on (their validity set).
func (lc *listChunk) values(pd *plainDecoder, h *pageHeader, page []byte, n, nn int64) bool {
	c := &lc.plainChunk
	switch {
	case dictEncoded(h.enc):
		return c.dictValues(pd, page, n, nn)
	case h.enc == encodingBSS:
		return c.splitValues(pd, page, n, nn)
	}
	return c.scatter(page, n, nn)
}

// allLevels reports whether the n levels of bit width bw in b (the
// RLE/bit-packed hybrid) are all want.
func allLevels(b []byte, n int64, bw int, want uint64) bool {
	if bw < 1 || bw > 8 {
		return false
	}
	for done := int64(0); done < n; {
		hdr, k := binary.Uvarint(b)
		if k <= 0 || hdr > 1<<31 {
			return false
		}
		b = b[k:]
		if hdr&1 == 1 { // bit-packed groups of 8 values
			groups := int64(hdr >> 1)
			if groups == 0 || groups*int64(bw) > int64(len(b)) {
				return false
			}
			take := min(groups*8, n-done)
			for i := int64(0); i < take; i++ {
				bit := i * int64(bw)
				v := (uint64(b[bit/8]) | uint64(getByte(b, bit/8+1))<<8) >> (bit % 8) & (1<<bw - 1)
				if v != want {
					return false
				}
			}
			b = b[groups*int64(bw):]
			done += take
			continue
		}
		count := int64(hdr >> 1)
		if count == 0 || len(b) < 1 || uint64(b[0]) != want {
			return false
		}
		b = b[1:]
		done += min(count, n-done)
	}
	return true
}

func getByte(b []byte, i int64) byte {
	if i < int64(len(b)) {
		return b[i]
	}
	return 0
}

// rowStarts reads the n repetition levels (bit width 1) of a page in b
// and records a row start at each level 0.
func (lc *listChunk) rowStarts(b []byte, n int64) bool {
	base := lc.row
	for done := int64(0); done < n; {
		hdr, k := binary.Uvarint(b)
		if k <= 0 || hdr > 1<<31 {
			return false
		}
		b = b[k:]
		if hdr&1 == 1 { // bit-packed groups of 8 levels, LSB first
			groups := int64(hdr >> 1)
			if groups == 0 || groups > int64(len(b)) {
				return false
			}
			take := min(groups*8, n-done)
			for i := int64(0); i < take; {
				if i%8 == 0 && take-i >= 8 && b[i/8] == 0xff {
					i += 8
					continue
				}
				if b[i/8]>>(i%8)&1 == 0 && !lc.start(base+done+i) {
					return false
				}
				i++
			}
			b = b[groups:]
			done += take
			continue
		}
		count := int64(hdr >> 1)
		if count == 0 || len(b) < 1 || b[0] > 1 {
			return false
		}
		take := min(count, n-done)
		if b[0] == 0 {
			for i := int64(0); i < take; i++ {
				if !lc.start(base + done + i) {
					return false
				}
			}
		} else if base+done == 0 && !lc.cont {
			return false // the chunk starts inside a row
		}
		b = b[1:]
		done += take
	}
	return true
}

// start records that a row starts at value v.
func (lc *listChunk) start(v int64) bool {
	if lc.nullable {
		// Rows may be empty: their starts only never go back.
		if lc.nrows >= lc.lists || lc.nrows == 0 && v != 0 && !lc.cont || lc.width == 0 && lc.nrows > 0 && v < int64(lc.offsets[lc.nrows-1]) {
			return false
		}
	} else if v == 0 && lc.nrows != 0 || v > 0 && lc.nrows == 0 && !lc.cont || lc.nrows >= lc.lists {
		return false
	}
	if lc.width > 0 {
		if v != lc.nrows*lc.width {
			return false
		}
	} else {
		lc.offsets[lc.nrows] = int32(v)
	}
	lc.nrows++
	return true
}

// wholeList decodes field k of the streamed row group s whole with the
// list fast path, as columnReader would with pqarrow, if the field is a
// list it takes. Its values come from the recycler, as a column-wise row
// group's do: a stream of DuckDB's FLOAT[384] row groups (189 MB of values
// each) otherwise asked the kernel for that many fresh pages per row group,
// a second of page faults over a million rows.
func (p *parallelParquet) wholeList(s *rgStream, k int, pd *plainDecoder) bool {
	dt := p.sc.Field(k).Type
	if !listFast(dt) {
		return false
	}
	col, ok := pd.plainColumn(p.md, s.rg, p.plainLeaves[k], s.rows, dt, p.recycle)
	if !ok {
		return false
	}
	if s.whole == nil {
		s.whole = make([]arrow.Array, len(p.fields))
	}
	s.whole[k] = col
	return true
}

// Tuning.ListWindowBytes bounds the list values of the row groups a reader decodes
// ahead (the window): DuckDB writes FLOAT[384] in row groups of 189 MB of
// values, and four of them in flight were 860 MB of peak RSS and a fifth of
// a labelling run's page faults, for no speed (one row group is decoded
// faster than its rows are labelled). A window of two of them measured
// 2.08 s against 2.30 s a run, peak RSS 690 MB. gen.go's 100 MB row
// groups also get a window of two, at the same speed as three.

// lookAhead returns the bytes of list values the reader may hold decoded
// at once: a list column's values are decoded a whole row group at a time
// (wholeList, or column by column), so its window of row groups, and the
// one whose batches are being read out, each hold their row group's
// values. It is 0 for a file without a list column on the fast path.
func (p *parallelParquet) LookAhead() int64 {
	return int64(p.window+1) * p.listMost
}

// listBytes returns the largest row group's bytes of list values on the
// fast path (a segment's, for a chunk a listCursor may decode), 0 when
// there is none.
func (p *parallelParquet) listBytes() int64 {
	lists := false
	for k, leaf := range p.plainLeaves {
		lists = lists || leaf >= 0 && listFast(p.sc.Field(k).Type)
	}
	if !lists {
		return 0
	}
	var most int64
	// (A footer that does not decode here fails its row group's task.)
	_ = p.footer.each(p.md, func(rg int, g *metadata.RowGroupMetaData) {
		var b int64
		for k, leaf := range p.plainLeaves {
			if leaf < 0 || !listFast(p.sc.Field(k).Type) {
				continue
			}
			cc, err := g.ColumnChunk(leaf)
			if err != nil {
				continue
			}
			w := int64(4)
			if cc.Type() == parquet.Types.Double {
				w = 8
			}
			v := max(cc.NumValues(), 0) * w
			if v > p.tune.ListStreamBytes && p.rows[rg] > p.tune.SegmentRows {
				v = v / p.rows[rg] * p.tune.SegmentRows // decoded a segment at a time
			}
			b += v
		}
		most = max(most, b)
	})
	return most
}
