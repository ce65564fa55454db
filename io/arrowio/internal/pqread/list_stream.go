package pqread

import (
	"io"
	"math"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
)

// A list column chunk of a streamed row group is decoded whole when its
// values fit in Tuning.ListStreamBytes, and a segment at a time otherwise: one row
// group of a million FLOAT[384] rows (pyarrow's default row-group size) is
// 1.5 GB of values, which decoded whole took 1.9 GB of peak RSS and a
// worker's second before the first row was out. A listCursor walks the
// chunk's pages in order, one segment after the other (the stream's
// colStream turns keep them in order), and hands out each segment's rows:
// a large PLAIN data page (DuckDB writes 100 MB ones) is streamed, its
// levels first and its values read straight into the segment's buffer;
// any other page (a dictionary, DATA_PAGE_V2, BYTE_STREAM_SPLIT, a small
// page) is decoded whole, as listColumn does, and its values copied out.
// A row may span pages. The cursor takes the shapes listColumn takes (one
// level of nesting; null and empty lists and null elements of a
// variable-size list, whose segments then carry validity bitmaps; a
// fixed-size list only in a chunk whose statistics say it has no null), in
// a chunk whose pages are all ones it decodes; another chunk is decoded
// whole, as before. A page that does not decode after that is corrupt: the
// read fails.

// maxCursorPage bounds a page's level entries times the value width on
// the cursor, which sizes its page buffer by them before it reads the
// page: a page of a few bytes may declare 2^31 null elements (an RLE
// run). DuckDB's pages are 100 MB; a chunk with a larger one is decoded
// whole, within Tuning.MaxListBytes.
const maxCursorPage = 1 << 30

// listCursor is the position in a list chunk of a streamed row group.
type listCursor struct {
	lc       listChunk // the dictionary, codec and width; per page: row starts
	dt       arrow.DataType
	hc       headerChecker // its buffer reused from page to page
	w        int64         // bytes a value
	pos, end int64         // the chunk's pages not yet opened

	// The open page: its values (n), the next one to hand out (at), the
	// row starts in it (page-relative, from starts[si] on) and where its
	// values are: in vals (decoded in buf, or the decompressed page held),
	// or still in the stream ps.
	n, at  int64
	starts []int32
	si     int
	vals   []byte
	buf    []byte
	ps     *pageStream
	split  *splitStream // a BYTE_STREAM_SPLIT page read by ranges
	held   *aheadPage
	// Pages read ahead (parquet_list_ahead.go): being decompressed, in
	// file order from ahead[0] (at pos, when the cursor gets there) to
	// scan; their decoded bytes; spare buffers, and their bytes.
	ahead      []*aheadPage
	scan       int64
	ahc        headerChecker
	aheadBytes int64
	spare      [][]byte
	spareBytes int64
	budget     *stateBudget // the reader's read-ahead, shared by its cursors
	page       int          // pages opened
	rows       int64        // rows handed out
	total      int64        // rows of the chunk
	width      int64        // of a fixed-size list, 0 for a list
	perRow     int64        // values a row, rounded up: a segment's first guess
	inRow      bool         // the values at at go on the last row handed out
}

// newListCursor checks field k's list chunk in s's row group and returns
// a cursor at its start, or nil if the chunk is not one it decodes.
func (p *parallelParquet) newListCursor(s *rgStream, k int, pd *plainDecoder) *listCursor {
	dt := p.sc.Field(k).Type
	leaf := p.plainLeaves[k]
	if !listFast(dt) || leaf < 0 {
		return nil
	}
	md := p.md
	d := md.Schema.Column(leaf)
	w := plainWidth(d.PhysicalType(), listElem(dt))
	if w == 0 || d.MaxRepetitionLevel() != 1 || d.MaxDefinitionLevel() < 1 || d.MaxDefinitionLevel() > 3 {
		return nil
	}
	if leaf >= len(md.RowGroups[s.rg].GetColumns()) || md.RowGroups[s.rg].GetColumns()[leaf].GetMetaData() == nil {
		return nil
	}
	cc, err := md.RowGroup(s.rg).ColumnChunk(leaf)
	if err != nil || cc == nil || cc.CryptoMetadata() != nil || cc.FilePath() != "" || cc.Type() != d.PhysicalType() {
		return nil
	}
	nvals := cc.NumValues()
	if nvals < s.rows || nvals*int64(w) <= p.tune.ListStreamBytes {
		return nil
	}
	// A variable-size list's null and empty lists and null elements are
	// read (parquet_list_nulls.go). A fixed-size list's null row, which
	// takes its width of slots, would be found only on its page, after the
	// segments before it were handed out: the chunk's statistics must say
	// there is none (a leaf's null count counts all three), or it is
	// decoded whole.
	shape, nullable := listShapeOf(d)
	var width int64
	if ft, ok := dt.(*arrow.FixedSizeListType); ok {
		width = int64(ft.Len())
		if s.rows > math.MaxInt64/width || nvals != s.rows*width {
			return nil
		}
		if st, err := cc.Statistics(); err != nil || st == nil || !st.HasNullCount() || st.NullCount() != 0 {
			return nil
		}
		nullable = false
	}
	codec, ok := streamCodec(cc)
	if !ok {
		return nil
	}
	off, n := chunkStart(cc), cc.TotalCompressedSize()
	if off < 4 || n <= 0 || off > pd.size || n > pd.size-off {
		return nil
	}
	// Every page must be one the cursor decodes: streamed, or small
	// enough to decode whole.
	hc := headerChecker{maxNested: pd.tuning().MaxNestedValues, r: pd.r, size: pd.size, buf: pd.chunk}
	defer func() { pd.chunk = hc.buf }()
	var seen int64
	for pos, page := off, 0; pos < off+n; page++ {
		h, hl, err := hc.header(pos, off+n)
		if err != nil || h.csize < 0 || h.usize < 0 || int64(h.csize) > off+n-pos-int64(hl) {
			return nil
		}
		switch {
		case h.typ == pageDictionary && h.dict && !h.v1 && !h.v2 && page == 0:
		case h.typ == pageData && h.v1 && !h.v2, h.typ == pageDataV2 && h.v2 && !h.v1:
			if h.numValues <= 0 || int64(h.numValues) > nvals-seen || int64(h.numValues)*int64(w) > maxCursorPage {
				return nil
			}
			seen += int64(h.numValues)
			if t := pd.tuning(); !(h.v1 && t.streamable(h, cc.Compression())) && !t.splittable(h, cc.Compression()) && (h.usize > maxStreamPage || h.csize > maxStreamPage) {
				return nil
			}
		default:
			return nil
		}
		pos += int64(hl) + int64(h.csize)
	}
	if seen != nvals {
		return nil
	}
	pd.stat().ListCursors.Add(1)
	return &listCursor{
		lc: listChunk{
			plainChunk: plainChunk{codec: codec, codecID: cc.Compression(), w: w, dictN: -1},
			maxDef:     d.MaxDefinitionLevel(),
			cont:       true,
			nullable:   nullable,
			shape:      shape,
		},
		dt: dt, w: int64(w), pos: off, end: off + n, total: s.rows,
		width: width, perRow: (nvals + s.rows - 1) / s.rows, budget: p.ahead,
	}
}

// close gives back the open page's stream and waits for the pages read
// ahead.
func (lr *listCursor) close() {
	if lr.ps != nil {
		lr.ps.close()
		lr.ps = nil
	}
	lr.stopAhead()
}

// next decodes the next rows rows into a new array (buffers from mem).
func (lr *listCursor) next(pd *plainDecoder, rows int64, mem memory.Allocator) (arrow.Array, bool) {
	if rows <= 0 || rows > lr.total-lr.rows || rows > math.MaxInt32 {
		return nil, false
	}
	defer pd.trim() // pages read whole went through the worker's chunk buffer
	sg := &listSeg{rows: rows}
	sg.values = memory.NewResizableBuffer(mem)
	defer sg.values.Release()
	sg.values.Resize(int(rows * lr.perRow * lr.w))
	if lr.width == 0 {
		sg.offsets = memory.NewResizableBuffer(mem)
		defer sg.offsets.Release()
		sg.offsets.Resize(int(rows+1) * 4)
		sg.offs = arrow.Int32Traits.CastFromBytes(sg.offsets.Bytes())
	}
	for sg.done < rows || lr.inRow {
		if lr.at == lr.n && lr.si == len(lr.starts) { // the page is done: open the next one
			if !lr.finishPage() {
				return nil, false
			}
			if lr.pos >= lr.end {
				lr.inRow = false // the chunk's last row ends with it
				if sg.done < rows {
					return nil, false
				}
				break
			}
			if !lr.openPage(pd) {
				return nil, false
			}
			continue
		}
		end := lr.n // where the page's next row starts
		if lr.si < len(lr.starts) {
			end = int64(lr.starts[lr.si])
		}
		if lr.inRow { // the values up to there go on the last row taken
			if !lr.put(pd, sg, end) {
				return nil, false
			}
			lr.inRow = lr.at == lr.n && lr.si == len(lr.starts)
			continue
		}
		if !lr.takeRows(pd, sg) {
			return nil, false
		}
	}
	return lr.segArray(sg)
}

// listSeg is the segment of rows a listCursor's next builds: its values,
// offsets (of a variable-size list) and validity bitmaps, made at the
// first null.
type listSeg struct {
	rows               int64 // rows asked for
	done               int64 // rows started
	values, offsets    *memory.Buffer
	offs               []int32
	nv                 int64 // values written
	rowValid, valValid []byte
	rowNulls, valNulls int
}

// put appends the page's values [lr.at, to) to sg's values.
func (lr *listCursor) put(pd *plainDecoder, sg *listSeg, to int64) bool {
	k := to - lr.at
	if k <= 0 {
		return k == 0
	}
	nv := sg.nv
	if nv+k > math.MaxInt32 {
		return false
	}
	if need := (nv + k) * lr.w; need > int64(sg.values.Len()) {
		sg.values.ResizeNoShrink(int(max(need, int64(sg.values.Len())*2)))
	}
	if pv := lr.lc.plainChunk.valid; pv != nil || sg.valValid != nil {
		if need := int(bitutil.BytesForBits(nv + k)); need > len(sg.valValid) {
			grown := make([]byte, max(need, 2*len(sg.valValid)))
			copy(grown, sg.valValid)
			if sg.valValid == nil {
				bitutil.SetBitsTo(grown, 0, nv, true)
			}
			sg.valValid = grown
		}
		if pv != nil {
			bitutil.CopyBitmap(pv, int(lr.at), int(k), sg.valValid, int(nv))
			sg.valNulls += int(k) - bitutil.CountSetBits(pv, int(lr.at), int(k))
		} else {
			bitutil.SetBitsTo(sg.valValid, nv, k, true)
		}
	}
	dst := sg.values.Bytes()[nv*lr.w : (nv+k)*lr.w]
	if lr.ps != nil {
		if _, err := io.ReadFull(lr.ps.dec, dst); err != nil {
			return false
		}
	} else if lr.split != nil {
		if !lr.split.values(pd, dst, lr.at, k, int(lr.w)) {
			return false
		}
	} else {
		copy(dst, lr.vals[lr.at*lr.w:to*lr.w])
	}
	sg.nv += k
	lr.at = to
	return true
}

// takeRows, at a row start, takes as many of the page's rows as the
// segment needs into sg; the last one may go on in the next page.
func (lr *listCursor) takeRows(pd *plainDecoder, sg *listSeg) bool {
	rows, done := sg.rows, sg.done
	k := min(rows-done, int64(len(lr.starts)-lr.si))
	first := int64(lr.starts[lr.si])
	if k <= 0 || lr.at != first {
		return false
	}
	if sg.offs != nil {
		for j := int64(0); j < k; j++ {
			sg.offs[done+j] = int32(sg.nv + int64(lr.starts[lr.si+int(j)]) - first)
		}
	}
	if pv := lr.lc.rowValid; pv != nil || sg.rowValid != nil {
		if sg.rowValid == nil {
			sg.rowValid = make([]byte, bitutil.BytesForBits(rows))
			bitutil.SetBitsTo(sg.rowValid, 0, done, true)
		}
		if pv != nil {
			bitutil.CopyBitmap(pv, lr.si, int(k), sg.rowValid, int(done))
			sg.rowNulls += int(k) - bitutil.CountSetBits(pv, lr.si, int(k))
		} else {
			bitutil.SetBitsTo(sg.rowValid, done, k, true)
		}
	}
	to := lr.n
	if lr.si+int(k) < len(lr.starts) {
		to = int64(lr.starts[lr.si+int(k)])
	}
	if !lr.put(pd, sg, to) {
		return false
	}
	lr.si += int(k)
	sg.done += k
	lr.inRow = lr.at == lr.n && lr.si == len(lr.starts)
	return true
}

// segArray checks the segment sg built and makes its array.
func (lr *listCursor) segArray(sg *listSeg) (arrow.Array, bool) {
	rows, nv := sg.rows, sg.nv
	if lr.width > 0 && nv != rows*lr.width {
		return nil, false
	}
	if offs := sg.offs; offs != nil {
		offs[rows] = int32(nv)
		for i := range rows {
			// (An empty list, or a null one, takes no slot.)
			if offs[i+1] < offs[i] || offs[i+1] == offs[i] && !lr.lc.nullable {
				return nil, false
			}
		}
	}
	sg.values.ResizeNoShrink(int(nv * lr.w))
	lr.rows += rows
	var vb, rb *memory.Buffer
	if sg.valNulls > 0 {
		vb = memory.NewBufferBytes(sg.valValid)
	}
	if sg.rowNulls > 0 {
		rb = memory.NewBufferBytes(sg.rowValid)
	}
	child := array.NewData(listElem(lr.dt), int(nv), []*memory.Buffer{vb, sg.values}, nil, sg.valNulls, 0)
	defer child.Release()
	var data *array.Data
	if lr.width > 0 {
		data = array.NewData(lr.dt, int(rows), []*memory.Buffer{rb}, []arrow.ArrayData{child}, sg.rowNulls, 0)
	} else {
		data = array.NewData(lr.dt, int(rows), []*memory.Buffer{rb, sg.offsets}, []arrow.ArrayData{child}, sg.rowNulls, 0)
	}
	defer data.Release()
	return array.MakeFromData(data), true
}

// finishPage checks that a streamed page's values ended with it and closes
// its stream, or gives back the buffers of a page read ahead.
func (lr *listCursor) finishPage() bool {
	if lr.held != nil {
		lr.recycle(lr.held)
		lr.held = nil
	}
	lr.vals, lr.split = nil, nil
	if lr.ps == nil {
		return true
	}
	ok := lr.ps.finish()
	lr.ps.close()
	lr.ps = nil
	return ok
}

// openPage reads the next page's header and opens it: a dictionary page
// is kept and the page after it opened; a data page's levels are checked
// and its row starts recorded, and its values decoded into buf, or left
// in its stream.
func (lr *listCursor) openPage(pd *plainDecoder) bool {
	c := &lr.lc.plainChunk
	for lr.pos < lr.end {
		var h *pageHeader
		var at int64
		a := lr.takeAhead(pd)
		if a != nil {
			h, at = &a.h, a.at
			lr.held = a
		} else {
			lr.hc.r, lr.hc.size = pd.r, pd.size
			var hl int
			var err error
			h, hl, err = lr.hc.header(lr.pos, lr.end)
			if err != nil || h.csize < 0 || h.usize < 0 || int64(h.csize) > lr.end-lr.pos-int64(hl) {
				return false
			}
			at = lr.pos + int64(hl)
			lr.pos = at + int64(h.csize)
		}
		page := lr.page
		lr.page++
		n := int64(h.numValues)
		// A page's row starts are page-relative: the levels are read as
		// if the page were a chunk of its own (that may start in a row).
		lr.lc.row, lr.lc.nrows = 0, 0
		if h.typ == pageData || h.typ == pageDataV2 {
			if n <= 0 || n > math.MaxInt32 || n*lr.w > maxCursorPage {
				return false
			}
			if int64(cap(lr.starts)) < n+1 {
				lr.starts = make([]int32, n+1)
			}
			lr.lc.offsets, lr.lc.lists, lr.lc.width = lr.starts[:n+1], n+1, 0
			c.rows = n
			// The page's nulls (a variable-size list's: slots never
			// outnumber entries).
			lr.lc.entries, lr.lc.nvals, lr.lc.rowValid, lr.lc.nullRows = 0, n, nil, 0
			c.valid, c.nulls = nil, 0
		}
		switch {
		case a != nil:
			if !a.ok || !lr.decodeAhead(pd, h, a.page) {
				return false
			}
			if c.row != n && !(lr.lc.nullable && lr.lc.entries == n) {
				return false
			}
		case h.typ == pageData && h.v1 && !h.v2 && pd.tuning().streamable(h, c.codecID):
			if !lr.openStream(pd, h, at, n) {
				return false
			}
		case (h.typ == pageData && h.v1 && !h.v2 || h.typ == pageDataV2 && h.v2 && !h.v1) && pd.tuning().splittable(h, c.codecID):
			if !lr.openSplit(pd, h, at, n) {
				return false
			}
		default:
			body, ok := pd.readPage(at, int(h.csize))
			if !ok {
				return false
			}
			if h.typ == pageData || h.typ == pageDataV2 {
				if int64(cap(lr.buf)) < n*lr.w {
					lr.buf = make([]byte, n*lr.w)
				}
				c.values = lr.buf[:n*lr.w]
			}
			if !c.decodePage(pd, h, body, page, lr.lc.pageV1, lr.lc.pageV2) {
				return false
			}
			if h.typ == pageDictionary {
				// The dictionary is decoded into the worker's buffer;
				// the later pages may be another worker's.
				c.dict = append([]byte(nil), c.dict...)
				continue
			}
			if c.row != n && !(lr.lc.nullable && lr.lc.entries == n) {
				return false
			}
			lr.vals = c.values
		}
		lr.n, lr.at = c.row, 0 // the page's slots
		lr.starts, lr.si = lr.starts[:lr.lc.nrows], 0
		if !lr.inRow && (lr.lc.nrows == 0 || lr.starts[0] != 0) {
			return false // the page goes on a row that ended
		}
		if lr.inRow && lr.lc.nrows > 0 && lr.starts[0] == 0 {
			lr.inRow = false // the last row ended with the page before
		}
		if lr.inRow {
			pd.stat().ListSpans.Add(1)
		}
		return true
	}
	return false
}

// openStream opens the PLAIN DATA_PAGE h (n values, body at byte at) as a
// stream, reads and checks its levels and leaves its values in the stream.
func (lr *listCursor) openStream(pd *plainDecoder, h *pageHeader, at, n int64) bool {
	c := &lr.lc.plainChunk
	if h.defEnc != encodingRLE || h.repEnc != encodingRLE {
		return false
	}
	ps := &pageStream{}
	if !ps.open(pd, c.codecID, io.NewSectionReader(pd.r, at, int64(h.csize)), int64(h.usize)) {
		ps.close()
		return false
	}
	pd.stat().PageStreams.Add(1)
	rep, def, left, ok := streamLevels(ps.dec, n, int64(h.usize))
	if !ok {
		ps.close()
		return false
	}
	if lr.lc.nullable {
		lr.lc.entries = n
	}
	slots, present, ok := lr.lc.pageLevels(rep, def, n)
	if !ok || left != present*lr.w {
		ps.close()
		return false
	}
	if present != slots {
		// Values to scatter among null slots: read out into buf.
		defer ps.close()
		return lr.scatterOut(pd, slots, present, func(vals []byte) bool {
			_, err := io.ReadFull(ps.dec, vals)
			return err == nil && ps.finish()
		})
	}
	c.row = slots // the values stay in the stream
	lr.ps = ps
	return true
}

// scatterOut reads a page's present values with read (into the worker's
// scratch) and scatters them among its slots, in buf: a page with null
// elements, handed out from there.
func (lr *listCursor) scatterOut(pd *plainDecoder, slots, present int64, read func([]byte) bool) bool {
	c := &lr.lc.plainChunk
	left := present * lr.w
	if int64(cap(pd.scratch)) < left {
		pd.scratch = make([]byte, left)
	}
	vals := pd.scratch[:left]
	if !read(vals) {
		return false
	}
	if int64(cap(lr.buf)) < slots*lr.w {
		lr.buf = make([]byte, slots*lr.w)
	}
	c.values, c.row = lr.buf[:slots*lr.w], 0
	if !c.scatter(vals, slots, present) {
		return false
	}
	lr.vals = c.values
	return true
}

// openSplit opens the BYTE_STREAM_SPLIT data page h (n level entries,
// body at byte at), stored or snappy, to be read by ranges
// (parquet_splitstream.go): reads and checks its levels and leaves its
// values in the file. DuckDB's v2 pages of FLOAT[384] are 100 MB each.
func (lr *listCursor) openSplit(pd *plainDecoder, h *pageHeader, at, n int64) bool {
	c := &lr.lc.plainChunk
	var rep, def []byte
	var page *rangePage
	var vstart int64
	before := lr.lc.nrows
	switch {
	case h.v1:
		if h.defEnc != encodingRLE || h.repEnc != encodingRLE {
			return false
		}
		var ok bool
		if page, ok = openRangePage(pd, c.codecID, at, int64(h.csize), int64(h.usize)); !ok {
			return false
		}
		var left int64
		if rep, def, left, ok = streamLevels(&rangeReader{p: page, pd: pd}, n, int64(h.usize)); !ok {
			return false
		}
		vstart = page.size - left
	default:
		if h.repLen < 0 || h.defLen < 0 || h.numNulls < 0 || h.numRows < 0 || h.numNulls != 0 && !lr.lc.nullable ||
			int64(h.repLen)+int64(h.defLen) > int64(h.csize) || int64(h.repLen)+int64(h.defLen) > int64(h.usize) {
			return false
		}
		lv := make([]byte, int64(h.repLen)+int64(h.defLen))
		if m, err := pd.r.ReadAt(lv, at); m != len(lv) || err != nil && err != io.EOF {
			return false
		}
		rep, def = lv[:h.repLen], lv[h.repLen:]
		codec := c.codecID
		if !h.compressed {
			codec = compress.Codecs.Uncompressed
		}
		lead := int64(len(lv))
		var ok bool
		if page, ok = openRangePage(pd, codec, at+lead, int64(h.csize)-lead, int64(h.usize)-lead); !ok {
			return false
		}
	}
	if lr.lc.nullable {
		lr.lc.entries = n
	}
	slots, present, ok := lr.lc.pageLevels(rep, def, n)
	if !ok || page.size-vstart != present*lr.w || h.v2 && (lr.lc.nrows-before != int64(h.numRows) || n-present != int64(h.numNulls)) {
		return false
	}
	ss := &splitStream{page: page, vstart: vstart, nn: present}
	pd.stat().PageStreams.Add(1)
	if present != slots {
		// Values to scatter among null slots: read out into buf.
		return lr.scatterOut(pd, slots, present, func(vals []byte) bool {
			return ss.values(pd, vals, 0, present, int(lr.w))
		})
	}
	c.row = slots // the values stay in the file
	lr.split = ss
	return true
}
