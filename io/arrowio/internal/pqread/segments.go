package pqread

import (
	"context"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/arrowfix"
	"github.com/pate-tool/pate/io/arrowio/internal/ioerr"
	"math"
	"slices"
	"sync"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/pate-tool/pate/io/arrowio/internal/pagecodec"
)

// Row groups of more than a segment and a quarter, or too large to decode
// whole (over Tuning.MaxColumnwiseRows rows or MaxColumnwiseBytes decoded:
// pyarrow's, Spark's and DuckDB's 1M-row groups, Polars' and DuckDB's
// default ones), are streamed when the fast path may be used on the file
// (a flat projection of a regular file): the row group is cut
// into segments of Tuning.SegmentRows rows, each a task of its own for the
// workers, and each column keeps a cursor into its chunk (the next page, the
// dictionary, the rows of a page that overhang the previous segment). A
// segment decodes its columns in order, each after the previous segment
// is done with that column: two workers on consecutive segments then
// decode in a pipeline, one column apart, so a single row group is
// decoded in parallel, and memory is a few segments and one page a column,
// whatever the row group's size. A worker whose segment's next columns
// are still an earlier segment's to decode decodes them for it meanwhile
// (see segmentColumns): when a page spans several segments, the first
// segment decompresses it, and without that help a row group of one page
// a chunk would be decompressed by one worker.
//
// Before the first segment is decoded, the page headers of every chunk are
// parsed (with the fast path's bounded parser) and checked to be pages the
// fast path takes. A column the fast path does not take (a string ID, say)
// is read whole by a pqarrow column reader of the row group's own, and cut
// into the segments: Arrow v15's decoders do not all survive a chunk read
// in several batches (DELTA_BINARY_PACKED panics on the second), and such
// a column is one of a few beside the features. A page that fails to
// decode after that is corrupt: the read fails with ErrFormat.

// maxStreamPage bounds a page the stream reads (compressed or not), and
// maxStreamPageRows its rows (a page of nulls is a few bytes whatever its
// rows; its validity bitmap is not); maxStreamPages bounds the pages of a
// chunk and maxStreamTasks the segments of a file, whose footer may claim
// any number of rows. Past them the row group goes to pqarrow.
const (
	maxStreamPage     = 64 << 20
	maxStreamPageRows = 1 << 24
	maxStreamPages    = 1 << 18
	maxStreamTasks    = 1 << 18
)

// rgStream is the shared state of one streamed row group.
type rgStream struct {
	rg    int
	rows  int64
	first int // index of its first task

	once  sync.Once
	ready chan struct{} // closed once the chunks are checked
	err   error         // the check failed

	whole []arrow.Array // by field: the columns the fast path does not take, read whole

	mu      sync.Mutex
	cond    *sync.Cond
	cols    []*colStream
	failSeg int // the first segment that failed: later ones stop waiting
	// The columns decoded for a segment not yet collected by its task
	// (some decoded by the workers of later segments), and the error of
	// a column that failed to decode, by segment.
	done   map[int][]arrow.Array
	segErr map[int]error
}

// colStream is the cursor of one column chunk of a streamed row group.
type colStream struct {
	next  int  // the segment that may decode this column next
	busy  bool // a worker is decoding the column
	bad   bool
	chunk plainChunk // codec, width, dictionary; values/valid set per page
	pages []streamPage
	pi    int
	// dictUntil is the number of pages up to the last dictionary-encoded
	// one: once they are decoded the dictionary goes (a writer falls back
	// to PLAIN when its dictionary is full, after a page or two, and
	// pyarrow's 1 MB dictionaries kept over 64 columns were 64 MB for the
	// rest of a 1M-row group).
	dictUntil int
	// The decoded rows of the last page not yet handed out: left[at:n].
	left      []byte
	leftValid []byte
	leftN     int64
	leftAt    int64
	ps        *pageStream // a page larger than a segment, being streamed
	valid     []byte      // the streamed page's validity bitmap, reused
	// The reader's budget for the column's state between segments, what
	// the column's overhang (left) and stream (ps) take from it, and the
	// spill file (parquet_spill.go): when inFile, left[at:n] is in the
	// file at region, not in memory.
	budget     *stateBudget
	leftCharge int64
	psCharge   int64
	spill      *spillFile
	inFile     bool
	region     spillRegion
	vbuf       []byte      // a spilled page's validity bits, read back
	ioErr      error       // the spill file failed
	list       *listCursor // a list chunk decoded a segment at a time
}

type streamPage struct {
	off  int64 // of the page header
	hlen int
	h    pageHeader
}

func newRgStream(rg int, rows int64, first, fields int) *rgStream {
	s := &rgStream{rg: rg, rows: rows, first: first, ready: make(chan struct{}), cols: make([]*colStream, fields), failSeg: math.MaxInt}
	s.cond = sync.NewCond(&s.mu)
	for k := range s.cols {
		s.cols[k] = &colStream{}
	}
	return s
}

// abort stops the segments after seg from waiting for it (-1: all).
func (s *rgStream) abort(seg int) {
	s.mu.Lock()
	s.failSeg = min(s.failSeg, seg)
	s.cond.Broadcast()
	s.mu.Unlock()
}

// prepare checks the chunks of s once (the first task to get here does
// it; the others wait).
func (p *parallelParquet) prepare(s *rgStream, pd *plainDecoder, hc *headerChecker) {
	s.once.Do(func() {
		defer close(s.ready)
		for k := range p.fields {
			if p.plainLeaves[k] >= 0 {
				ok, err := p.scanChunk(s, k, pd)
				if err != nil {
					s.err = err
					return
				}
				if ok {
					continue
				}
				if lc := p.newListCursor(s, k, pd); lc != nil {
					s.cols[k].list = lc
					continue
				}
				if p.wholeList(s, k, pd) {
					continue
				}
			}
			if err := p.columnReader(s, k, hc); err != nil {
				s.err = err
				return
			}
		}
		p.stats.StreamedRowGroups.Add(1)
	})
}

// columnReader reads field k's chunks in s's row group with pqarrow, after
// checking their page headers.
func (p *parallelParquet) columnReader(s *rgStream, k int, hc *headerChecker) error {
	p.stats.StreamFallbacks.Add(1)
	if err := p.checkHeaders(hc, s.rg, k); err != nil {
		return err
	}
	props := parquet.NewReaderProperties(p.mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = p.tune.BufferSize
	pf, err := file.NewParquetReader(p.file, file.WithReadProps(props), file.WithMetadata(p.md))
	if err != nil {
		return fmt.Errorf("%s: corrupt parquet file: %w: %w", p.name, ioerr.ErrFormat, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: p.batch}, p.mem)
	if err != nil {
		return fmt.Errorf("%s: corrupt parquet file: %w: %w", p.name, ioerr.ErrFormat, err)
	}
	cr, err := fr.GetFieldReader(context.Background(), p.fields[k], p.included, []int{s.rg})
	if err != nil || cr == nil {
		return fmt.Errorf("%s: corrupt parquet file in row group %d, column %q: no reader: %w: %v", p.name, s.rg, p.sc.Field(k).Name, ioerr.ErrFormat, err)
	}
	defer cr.Release()
	col, err := p.readerRows(s, k, cr, s.rows)
	if err != nil {
		return fmt.Errorf("%s: corrupt parquet file in row group %d, column %q: %w: %w", p.name, s.rg, p.sc.Field(k).Name, ioerr.ErrFormat, err)
	}
	if s.whole == nil {
		s.whole = make([]arrow.Array, len(p.fields))
	}
	s.whole[k] = col
	return nil
}

// release releases the columns of s read whole, and those decoded for
// segments whose tasks stopped before they collected them (the workers
// are done).
func (s *rgStream) release() {
	for _, cs := range s.cols {
		if cs.list != nil {
			cs.list.close()
		}
		if cs.ps != nil {
			cs.ps.close()
			cs.ps = nil
		}
		cs.budget.release(cs.psCharge)
		cs.psCharge = 0
		cs.dropLeft()
	}
	for k, c := range s.whole {
		if c != nil {
			c.Release()
			s.whole[k] = nil
		}
	}
	for seg, cols := range s.done {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
		delete(s.done, seg)
	}
}

// scanChunk parses the page headers of field k's chunk in s's row group
// and keeps them; ok is false if the chunk is not one the fast path
// streams.
func (p *parallelParquet) scanChunk(s *rgStream, k int, pd *plainDecoder) (bool, error) {
	md, leaf, rg := p.md, p.plainLeaves[k], s.rg
	dt := p.sc.Field(k).Type
	d := md.Schema.Column(leaf)
	w := plainWidth(d.PhysicalType(), dt)
	if w == 0 || d.MaxRepetitionLevel() != 0 || d.MaxDefinitionLevel() > 1 {
		return false, nil
	}
	if leaf >= len(md.RowGroups[rg].GetColumns()) || md.RowGroups[rg].GetColumns()[leaf].GetMetaData() == nil {
		return false, nil
	}
	cc, err := md.RowGroup(rg).ColumnChunk(leaf)
	if err != nil || cc == nil || cc.CryptoMetadata() != nil || cc.FilePath() != "" || cc.NumValues() != s.rows || cc.Type() != d.PhysicalType() {
		return false, nil
	}
	codec, ok := streamCodec(cc)
	if !ok {
		return false, nil
	}
	start, n := chunkStart(cc), cc.TotalCompressedSize()
	if start < 4 || n <= 0 || start > pd.size || n > pd.size-start {
		return false, nil
	}
	end := start + n
	hc := headerChecker{maxNested: pd.tuning().MaxNestedValues, r: pd.r, size: pd.size, buf: pd.chunk}
	defer func() { pd.chunk = hc.buf }()
	cs := s.cols[k]
	var seen int64
	for pos := start; pos < end; {
		h, hl, err := hc.header(pos, end)
		if err != nil {
			return false, fmt.Errorf("%s: corrupt parquet file in row group %d, column %q: %w at byte %d: %w", p.name, rg, p.sc.Field(k).Name, ioerr.ErrFormat, pos, err)
		}
		if h.csize < 0 || h.usize < 0 || h.csize > maxStreamPage || h.usize > maxStreamPage || int64(h.csize) > end-pos-int64(hl) {
			return false, nil
		}
		switch {
		case h.typ == pageDictionary && h.dict && !h.v1 && !h.v2 && len(cs.pages) == 0:
			if !h.hasDictNum || int64(h.dictNum)*int64(w) != int64(h.usize) || int64(h.usize) > maxDictBytes {
				return false, nil
			}
		case h.typ == pageData && h.v1 && !h.v2, h.typ == pageDataV2 && h.v2 && !h.v1:
			if h.enc != encodingPlain && h.enc != encodingBSS && !dictEncoded(h.enc) || h.numValues <= 0 || int64(h.numValues) > s.rows-seen || h.numValues > maxStreamPageRows {
				return false, nil
			}
			seen += int64(h.numValues)
			if dictEncoded(h.enc) {
				cs.dictUntil = len(cs.pages) + 1
			}
		default:
			return false, nil
		}
		if len(cs.pages) >= maxStreamPages {
			return false, nil
		}
		cs.pages = append(cs.pages, streamPage{off: pos, hlen: hl, h: *h})
		pos += int64(hl) + int64(h.csize)
	}
	if seen != s.rows {
		return false, nil
	}
	cs.chunk = plainChunk{codec: codec, codecID: cc.Compression(), w: w, dictN: -1}
	cs.budget, cs.spill = p.budget, p.spill
	if d.MaxDefinitionLevel() == 1 {
		cs.chunk.valid = []byte{} // marks the column nullable
	}
	return true, nil
}

// streamCodec is the codec of chunk cc, if the fast path decodes it.
func streamCodec(cc *metadata.ColumnChunkMetaData) (compress.Codec, bool) {
	for _, e := range cc.Encodings() {
		switch e {
		case parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.BitPacked,
			parquet.Encodings.PlainDict, parquet.Encodings.RLEDict, parquet.Encoding(encodingBSS):
		default:
			return nil, false
		}
	}
	if cc.Compression() == compress.Codecs.Uncompressed {
		return nil, true
	}
	c, err := pagecodec.Codec(cc.Compression())
	return c, err == nil
}

// decodeSegment decodes segment seg (rows off..off+rows) of streamed row
// group s into task t's slot.
func (p *parallelParquet) decodeSegment(fr *pqarrow.FileReader, t int, s *rgStream, seg int, off, rows int64, pd *plainDecoder, hc *headerChecker) error {
	p.prepare(s, pd, hc)
	select {
	case <-s.ready:
	case <-p.done:
		return errAborted
	}
	if s.err != nil {
		if seg == 0 {
			return s.err
		}
		return errAborted
	}
	if p.tune.OnSegment != nil {
		p.tune.OnSegment(s.rg, seg)
	}
	cols, err := p.segmentColumns(s, seg, pd)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	return p.sendBatches(t, cols, rows)
}

// segmentColumns decodes the columns of segment seg and returns them (new
// references). A column's rows are decoded in segment order, each segment
// after the previous one is done with the column, but not necessarily by
// the segment's own worker: a worker whose segment's next columns are
// still the previous segment's to decode decodes those meanwhile, for
// that segment. Otherwise a row group whose pages are larger than a
// segment (DuckDB's one page a chunk) is decoded by the worker of its
// first segment alone, which decompresses every page while the workers of
// the later ones wait for it column by column. Helping is confined to the
// earlier segments of the same row group, whose tasks are taken: memory is
// what those segments take anyway.
func (p *parallelParquet) segmentColumns(s *rgStream, seg int, pd *plainDecoder) ([]arrow.Array, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cols := s.segCols(seg)
	for {
		if err := s.segErr[seg]; err != nil {
			return nil, err
		}
		pending, k, kseg := false, -1, -1
		for j, cs := range s.cols {
			if cols[j] != nil {
				continue
			}
			if cs.bad || s.failSeg < seg {
				return nil, errAborted // an earlier segment failed
			}
			pending = true
			if !cs.busy && cs.next == seg && k < 0 {
				k, kseg = j, seg
			}
		}
		if !pending {
			out := slices.Clone(cols)
			s.dropSegCols(seg)
			return out, nil
		}
		if k < 0 && p.tune.HelpSegments {
			for j, cs := range s.cols {
				if !cs.busy && !cs.bad && cs.next < seg && s.failSeg > cs.next {
					k, kseg = j, cs.next
					break
				}
			}
		}
		if k < 0 {
			s.cond.Wait()
			continue
		}
		s.cols[k].busy = true
		if kseg != seg {
			p.stats.HelpedColumns.Add(1)
		}
		s.mu.Unlock()
		col, err := p.segmentColumnSafe(s, k, kseg, pd)
		s.mu.Lock()
		cs := s.cols[k]
		cs.busy = false
		if err != nil {
			cs.bad = true
			if s.segErr[kseg] == nil {
				s.segErr[kseg] = err
			}
		} else {
			cs.next++
			s.segCols(kseg)[k] = col
		}
		s.cond.Broadcast()
	}
}

// segCols is the columns of segment seg decoded so far (s.mu held).
func (s *rgStream) segCols(seg int) []arrow.Array {
	if s.done == nil {
		s.done = make(map[int][]arrow.Array)
		s.segErr = make(map[int]error)
	}
	cols := s.done[seg]
	if cols == nil {
		cols = make([]arrow.Array, len(s.cols))
		s.done[seg] = cols
	}
	return cols
}

// dropSegCols forgets segment seg's columns, handed to its task (s.mu
// held).
func (s *rgStream) dropSegCols(seg int) {
	delete(s.done, seg)
	delete(s.segErr, seg)
}

// segmentColumnSafe is segmentColumn with a decoder's panic (Arrow's
// snappy decoder panics on a corrupt block) turned into an error: it runs
// with s.mu unlocked, and a panic unwinding through segmentColumns would
// unlock it again, which is fatal, not recoverable.
func (p *parallelParquet) segmentColumnSafe(s *rgStream, k, seg int, pd *plainDecoder) (col arrow.Array, err error) {
	defer func() {
		if v := recover(); v != nil {
			col, err = nil, fmt.Errorf("%s: corrupt parquet file in row group %d, column %q: %v: %w", p.name, s.rg, p.sc.Field(k).Name, v, ioerr.ErrFormat)
		}
	}()
	return p.segmentColumn(s, k, seg, pd)
}

// segmentColumn decodes field k's rows of segment seg; the caller has
// claimed the column (colStream.busy) at its turn for seg.
func (p *parallelParquet) segmentColumn(s *rgStream, k, seg int, pd *plainDecoder) (arrow.Array, error) {
	task := p.tasks[s.first+seg]
	off, rows := task.off, task.rows
	cs := s.cols[k]
	var col arrow.Array
	var ok bool
	if s.whole != nil && s.whole[k] != nil {
		col, ok = array.NewSlice(s.whole[k], off, off+rows), true
		if off+rows == s.rows {
			s.whole[k].Release() // every segment has its slice
			s.whole[k] = nil
		}
	} else if cs.list != nil {
		col, ok = cs.list.next(pd, rows, p.recycle)
	} else {
		col, ok = cs.fill(pd, rows, p.sc.Field(k).Type, p.recycle)
	}
	if !ok && cs.ioErr != nil {
		return nil, fmt.Errorf("%s: row group %d, column %q (rows %d..): reading back a decoded page: %w", p.name, s.rg, p.sc.Field(k).Name, off, spillError(cs.ioErr))
	}
	if !ok {
		return nil, fmt.Errorf("%s: corrupt parquet file in row group %d, column %q (rows %d..): a page does not decode: %w", p.name, s.rg, p.sc.Field(k).Name, off, ioerr.ErrFormat)
	}
	return col, nil
}

// readerRows reads the next rows rows of field k with cr.
func (p *parallelParquet) readerRows(s *rgStream, k int, cr *pqarrow.ColumnReader, rows int64) (arrow.Array, error) {
	ch, err := cr.NextBatch(rows)
	if err != nil {
		return nil, err
	}
	col, err := oneChunk(ch, p.mem)
	ch.Release()
	if err != nil {
		return nil, err
	}
	fixed, err := arrowfix.RepairNullLists(col, p.mem)
	col.Release()
	if err != nil {
		return nil, err
	}
	col = fixed
	switch {
	case int64(col.Len()) != rows:
		col.Release()
		if enc := p.unreadableEncoding(s.rg, k); enc != "" {
			return nil, fmt.Errorf("a chunk in the %s encoding that does not decode (pate reads that encoding only in flat integer and floating-point columns)", enc)
		}
		return nil, fmt.Errorf("read %d rows of %d", col.Len(), rows)
	case !arrow.TypeEqual(col.DataType(), p.sc.Field(k).Type):
		col.Release()
		return nil, fmt.Errorf("decoded as %s, schema says %s", col.DataType(), p.sc.Field(k).Type)
	}
	return col, nil
}

// fill decodes the column's next rows rows into a new array.
func (cs *colStream) fill(pd *plainDecoder, rows int64, dt arrow.DataType, mem memory.Allocator) (arr arrow.Array, ok bool) {
	defer func() {
		if recover() != nil {
			arr, ok = nil, false
		}
	}()
	w := cs.chunk.w
	values := memory.NewResizableBuffer(mem)
	defer values.Release()
	values.Resize(int(rows) * w)
	var valid *memory.Buffer
	fd := &fillDst{dst: values.Bytes(), nullable: cs.chunk.valid != nil, rows: rows, w: w}
	if fd.nullable {
		valid = memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(rows)))
		clear(valid.Bytes())
		fd.valid = valid.Bytes()
	}
	if cs.leftAt < cs.leftN && !cs.take(fd) {
		return nil, false
	}
	for fd.at < rows {
		if cs.ps != nil {
			if !cs.emitStream(pd, fd) {
				return nil, false
			}
			continue
		}
		if cs.pi >= len(cs.pages) {
			return nil, false
		}
		sp := &cs.pages[cs.pi]
		cs.pi++
		if sp.h.typ != pageDictionary && int64(sp.h.numValues) > rows-fd.at && (pd.tuning().streamable(&sp.h, cs.chunk.codecID) || pd.tuning().splittable(&sp.h, cs.chunk.codecID)) {
			handled, ok := cs.streamOrSpill(pd, sp, fd)
			if !ok {
				return nil, false
			}
			if handled {
				continue
			}
		}
		n, over, ok := cs.decodePage(pd, sp, fd.dst, fd.valid, fd.nullable, fd.at, rows-fd.at)
		if !ok {
			return nil, false
		}
		if cs.pi >= cs.dictUntil && sp.h.typ != pageDictionary {
			cs.chunk.dict, cs.chunk.dictN = nil, -1
		}
		if over {
			cs.leftN, cs.leftAt = n, 0
			cs.keepLeft(pd)
			if !cs.take(fd) {
				return nil, false
			}
		} else {
			fd.at += n
		}
	}
	if cs.leftAt == cs.leftN && cs.pi == len(cs.pages) && cs.ps == nil {
		// The chunk is done: drop its buffers.
		cs.dropLeft()
		cs.leftValid, cs.chunk.dict, cs.valid, cs.vbuf = nil, nil, nil, nil
	}
	pd.trim()
	var nulls int
	bufs := []*memory.Buffer{nil, values}
	if fd.nullable {
		nulls = int(rows) - bitutil.CountSetBits(fd.valid, 0, int(rows))
		if nulls > 0 {
			bufs[0] = valid
		}
	}
	data := array.NewData(dt, int(rows), bufs, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), true
}

// fillDst is where a colStream's fill writes: rows values of w bytes into
// dst, and their validity into valid when the column is nullable; at of
// them are written.
type fillDst struct {
	dst, valid []byte
	nullable   bool
	at, rows   int64
	w          int
}

// take hands out into fd what is left of the last page decoded (in memory
// or in the spill file), up to fd's rows.
func (cs *colStream) take(fd *fillDst) bool {
	n := min(cs.leftN-cs.leftAt, fd.rows-fd.at)
	w := int64(fd.w)
	if cs.inFile {
		if err := cs.takeFile(fd.dst, fd.valid, fd.at, n); err != nil {
			cs.ioErr = err
			return false
		}
	} else {
		copy(fd.dst[fd.at*w:], cs.left[cs.leftAt*w:(cs.leftAt+n)*w])
		if fd.nullable {
			bitutil.CopyBitmap(cs.leftValid, int(cs.leftAt), int(n), fd.valid, int(fd.at))
		}
	}
	cs.leftAt += n
	fd.at += n
	if cs.leftAt == cs.leftN && (cs.pi < len(cs.pages) || cs.inFile || cs.leftCharge > 0) {
		// Handed out, and more pages to come: a column whose next
		// pages are streamed would keep a page's worth for nothing.
		// (A spilled or charged page goes back at once.)
		cs.dropLeft()
	}
	return true
}

// emitStream writes into fd the rows of the open page stream it needs,
// and closes the stream at its page's end.
func (cs *colStream) emitStream(pd *plainDecoder, fd *fillDst) bool {
	k := min(cs.ps.n-cs.ps.row, fd.rows-fd.at)
	if !cs.ps.emit(pd, fd.dst, fd.valid, fd.at, k, fd.w) {
		return false
	}
	fd.at += k
	if cs.ps.row == cs.ps.n {
		ok := cs.ps.finish()
		cs.ps.close()
		cs.ps = nil
		cs.budget.release(cs.psCharge)
		cs.psCharge = 0
		if !ok {
			return false
		}
	}
	return true
}

// streamOrSpill opens page sp, which runs past the segment, as a stream
// if its state fits in the budget (or if there is no spill file to use: a
// stream keeps less than the page), else streams it into the spill file at
// once and hands out its first rows. handled says the page is taken care
// of; if not (and ok), fill decodes it whole.
func (cs *colStream) streamOrSpill(pd *plainDecoder, sp *streamPage, fd *fillDst) (handled, ok bool) {
	cost := cs.streamCost(pd, sp)
	fits := cs.budget.reserve(cost)
	if !fits && !cs.spill.usable() {
		cs.budget.force(cost)
		fits = true
	}
	if fits {
		ps, ok := cs.openStream(pd, sp)
		if ok {
			cs.ps, cs.psCharge = ps, cost
			return true, true
		}
		cs.budget.release(cost)
		// A BYTE_STREAM_SPLIT page not to be read by ranges (a snappy
		// block whose copies cross its fragments) is decoded whole; if it
		// is corrupt, that fails.
		return false, sp.h.enc == encodingBSS
	}
	handled, ok = cs.spillStream(pd, sp)
	if !ok {
		return false, false
	}
	if handled && !cs.take(fd) {
		return false, false
	}
	return handled, true
}

// The decoded pages that overhang a segment (a megabyte a column, at 64
// columns a row group) are pooled: left to the collector, the churn of a
// file of many row groups showed in the peak RSS. The pool is bounded: a
// sync.Pool keeps what is put in it until the collector has run twice,
// and on a long file of DuckDB's row groups it held a few row groups'
// worth (the peak RSS at 4M rows went from 1.0x to 1.4x-2.8x that at 1M,
// from run to run).
var leftPool struct {
	mu   sync.Mutex
	free [][]byte
	held int
}

// maxLeftPool bounds the bytes leftPool keeps: a row group's overhang at
// 64 columns of 1 MB pages.
const maxLeftPool = 64 << 20

// decodePage reads and decodes the page sp of the column. A dictionary page
// stays with the column (n = 0). A data page of n values decodes in place
// into dst (and dvalid) at row at when it fits in the room left there;
// otherwise it decodes into cs.left and over is true (nullable: the
// column has a validity bitmap). ok is false when
// the page cannot be read or decoded.
func (cs *colStream) decodePage(pd *plainDecoder, sp *streamPage, dst, dvalid []byte, nullable bool, at, room int64) (n int64, over, ok bool) {
	w := cs.chunk.w
	buf, ok := pd.readPage(sp.off, sp.hlen+int(sp.h.csize))
	if !ok {
		return 0, false, false
	}
	body := buf[sp.hlen:]
	h := sp.h
	c := &cs.chunk
	if h.typ == pageDictionary {
		dpd := plainDecoder{dict: c.dict}
		if !c.dictPage(&dpd, &h, body) {
			return 0, false, false
		}
		// The dictionary stays with the column (dictPage left it in
		// dpd.dict, which c.dict now is).
		return 0, false, true
	}
	n = int64(h.numValues)
	if n <= room {
		// The page fits: decode it in place.
		c.values, c.row, c.rows = dst, at, at+n
		if nullable {
			c.valid = dvalid
		}
	} else {
		if int64(cap(cs.left)) < n*int64(w) {
			putLeft(cs.left)
			cs.left = getLeft(int(n) * w)
		}
		cs.left = cs.left[:n*int64(w)]
		c.values, c.row, c.rows = cs.left, 0, n
		if nullable {
			if int64(cap(cs.leftValid)) < bitutil.BytesForBits(n) {
				cs.leftValid = make([]byte, bitutil.BytesForBits(n))
			}
			cs.leftValid = cs.leftValid[:bitutil.BytesForBits(n)]
			c.valid = cs.leftValid
		}
	}
	var page bool
	if h.v1 {
		page = c.pageV1(pd, &h, body)
	} else {
		page = c.pageV2(pd, &h, body)
	}
	if !page || c.row != c.rows {
		return 0, false, false
	}
	return n, n > room, true
}

func getLeft(n int) []byte {
	leftPool.mu.Lock()
	defer leftPool.mu.Unlock()
	for i := len(leftPool.free) - 1; i >= 0; i-- {
		if b := leftPool.free[i]; cap(b) >= n && cap(b) <= 2*n+4096 {
			last := len(leftPool.free) - 1
			leftPool.free[i] = leftPool.free[last]
			leftPool.free[last] = nil
			leftPool.free = leftPool.free[:last]
			leftPool.held -= cap(b)
			return b[:n]
		}
	}
	return make([]byte, n)
}

func putLeft(b []byte) {
	if cap(b) == 0 || cap(b) > maxStreamPage {
		return
	}
	leftPool.mu.Lock()
	defer leftPool.mu.Unlock()
	if leftPool.held+cap(b) <= maxLeftPool {
		leftPool.free = append(leftPool.free, b[:0])
		leftPool.held += cap(b)
	}
}
