package pqread

import (
	"context"
	"errors"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/arrowfix"
	"github.com/pate-tool/pate/io/arrowio/internal/ioerr"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// minDecodeBatch is the smallest batch the row-group workers decode; Read
// slices their records down to ReadOptions.BatchSize, so tiny batch sizes
// do not multiply the per-batch decoding overhead.
const minDecodeBatch = 4096

// maxSlotRecords caps the buffer of a row group's slot; a worker whose slot
// is full waits for Read, which drains the slots in order. It bounds memory
// by batches, not by row groups: a file written with pyarrow's defaults has
// row groups of a million rows or more, and (workers+1) whole decoded row
// groups of such a file would take gigabytes.
const maxSlotRecords = 8

// errAborted marks a row group whose worker stopped early (Close, or an
// error in an earlier row group); Read never reaches it.
var errAborted = errors.New("row group decoding aborted")

// parallelParquet decodes the row groups of a Parquet file in worker
// goroutines and hands their records out in file order. Worker w takes the
// next row group index, decodes it with its own file.Reader and
// pqarrow.FileReader (they are not safe for concurrent use; the *os.File's
// ReadAt is) and sends the records into that row group's slot. next drains
// slot 0, then slot 1, .... A worker does not start row group i while
// i >= cur+window (cur: the slot next is draining), so at most window row
// groups are decoded and not yet consumed.
type parallelParquet struct {
	tune   *Tuning
	stats  *Stats
	name   string
	sc     *arrow.Schema // schema of the decoded records
	out    *arrow.Schema // outSchema
	total  int64
	leaves []int   // projected leaf columns, nil = all
	rows   []int64 // rows per row group, from the footer

	// Column-at-a-time decoding (see decodeColumns): the top-level fields
	// of the projection, the leaves they may read, the rows of a row group
	// up to which it is used, and the batch size the row group is cut into.
	fields   []int
	included map[int]bool
	colRows  []bool // colRows[rg]: decode row group rg column by column
	width    int64  // decodedRowWidth
	batch    int64
	mem      memory.Allocator
	recycle  *Recycler              // the fast path's value buffers (see recycler)
	md       *metadata.FileMetaData // the footer, shared by the workers' readers
	footer   *lazyFooter            // decodes md's row groups as they are reached (nil: all are)
	file     *os.File
	// plainLeaves[k]: the leaf column of field k if the fast path for flat
	// fixed-width PLAIN columns (parquet_plain.go) may decode it, else -1;
	// nil when it is off for the whole file.
	plainLeaves []int
	fieldLeaves [][]int // the projected leaf columns of each field of fields
	listMost    int64   // listBytes, computed once (it may decode the footer again)
	// The budget of the streamed columns' state between segments, and
	// the file their decoded pages are spilled to past it
	// (parquet_spill.go).
	budget *stateBudget
	ahead  *stateBudget // the list cursors' read-ahead
	spill  *spillFile

	// tasks are what the workers take, in order: a whole row group, or a
	// segment of a streamed one (read_parquet_stream.go). slots and errs
	// are per task.
	tasks []ptask
	slots []chan arrow.Record
	errs  []error // errs[i] is written before slots[i] is closed

	mu     sync.Mutex
	cond   *sync.Cond
	nextRG int // next task to hand to a worker
	cur    int // slot being drained by next(); guarded by mu for workers
	window int
	stop   bool

	failAt atomic.Int64 // lowest task that failed, or len(tasks)
	start  func()       // starts the workers; nil once they are started
	done   chan struct{}
	wg     sync.WaitGroup
	closed bool
}

// ptask is a worker's unit of work: row group rg whole (s nil), with the
// extra row groups after it (small row groups decoded as one, see
// makeTasks), or segment seg of it, rows off..off+rows, streamed through s.
type ptask struct {
	rg, seg   int
	extra     int
	off, rows int64
	s         *rgStream
}

// last is the task's last row group.
func (t *ptask) last() int { return t.rg + t.extra }

// rowGroups names row groups first..last in messages.
func rowGroups(first, last int) string {
	if last > first {
		return fmt.Sprintf("row groups %d–%d", first, last)
	}
	return fmt.Sprintf("row group %d", first)
}

// workerCount is the number of row-group workers for a file of rowGroups
// row groups: opt if positive, else GOMAXPROCS, at most rowGroups.
func workerCount(opt, rowGroups int) int {
	w := opt
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return max(1, min(w, rowGroups))
}

// newParallelParquet starts workers goroutines (at the first next, with
// opts.SelectLater) decoding the row groups of f (already validated by pf, the single-threaded reader's file.Reader).
func newParallelParquet(f *os.File, name string, pf *file.Reader, lf *lazyFooter, sc, out *arrow.Schema, leaves []int, workers int, opts Options) (*parallelParquet, error) {
	n := pf.NumRowGroups()
	p := &parallelParquet{
		tune: opts.Tuning, stats: opts.Stats,
		name: name, sc: sc, out: out, total: pf.NumRows(), leaves: leaves,
		rows:   make([]int64, n),
		window: workers + 1,
		done:   make(chan struct{}),
	}
	p.cond = sync.NewCond(&p.mu)
	decodeBatch := max(opts.BatchSize, minDecodeBatch)
	p.batch = int64(decodeBatch)
	p.mem = opts.Allocator
	p.colRows = make([]bool, n)
	p.width = decodedRowWidth(pf, leaves)
	for i := range n {
		p.rows[i] = lf.numRows(pf, i)
		p.colRows[i] = p.rows[i] > 0 && p.rows[i] <= p.tune.MaxColumnwiseRows && p.rows[i]*p.width <= p.tune.MaxColumnwiseBytes
	}
	// Each worker has a file.Reader of its own (a file.Reader is not safe
	// for concurrent use) over the footer pf has parsed: the footer of a
	// file of many row groups takes megabytes once decoded, and a copy per
	// worker made the reader's memory grow with the length of the file.
	// FileMetaData is read-only once its writer version, which it computes
	// lazily, is set; that is done here. The readers are made here, in one
	// goroutine, because NewParquetReader seeks f.
	md := pf.MetaData()
	md.WriterVersion()
	p.md = md
	p.footer = lf
	p.file = f
	frs := make([]*pqarrow.FileReader, workers)
	pools := make([]*pagePool, workers)
	scopes := make([]*arrowfix.Scope, workers)
	for w := range frs {
		pools[w] = &pagePool{mem: opts.Allocator}
		props := parquet.NewReaderProperties(pools[w])
		props.BufferedStreamEnabled = true
		props.BufferSize = p.tune.BufferSize
		wpf, err := file.NewParquetReader(f, file.WithReadProps(props), file.WithMetadata(md))
		if err != nil {
			return nil, fmt.Errorf("%s: corrupt parquet file: %w: %w", name, ioerr.ErrFormat, err)
		}
		scopes[w] = arrowfix.NewScope(opts.Allocator)
		frs[w], err = pqarrow.NewFileReader(wpf, pqarrow.ArrowReadProperties{BatchSize: int64(decodeBatch)}, scopes[w])
		if err != nil {
			return nil, fmt.Errorf("%s: corrupt parquet file: %w: %w", name, ioerr.ErrFormat, err)
		}
	}
	colIndices := leaves
	if colIndices == nil {
		colIndices = make([]int, pf.MetaData().Schema.NumColumns())
		for i := range colIndices {
			colIndices[i] = i
		}
	}
	fields, err := frs[0].Manifest.GetFieldIndices(colIndices)
	if err != nil {
		return nil, fmt.Errorf("%s: parquet columns: %w: %w", name, ioerr.ErrFormat, err)
	}
	if len(fields) != sc.NumFields() {
		clear(p.colRows) // a projection pqarrow flattens differently: keep to its record reader
	}
	p.fields = fields
	p.included = make(map[int]bool, len(colIndices))
	for _, c := range colIndices {
		p.included[c] = true
	}
	p.fieldLeaves = make([][]int, len(fields))
	for k, fi := range fields {
		for _, leaf := range appendLeaves(nil, &frs[0].Manifest.Fields[fi]) {
			if p.included[leaf] {
				p.fieldLeaves[k] = append(p.fieldLeaves[k], leaf)
			}
		}
	}
	var size int64 = -1
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	if size >= 0 && len(fields) == sc.NumFields() && p.tune.PlainFast && plainFileOK(md) {
		// Room for the row groups of the window, which are in use while
		// the next ones are decoded: what is freed is soon taken again.
		p.recycle = NewRecycler(opts.Allocator, int(min(int64(p.window)*p.tune.MaxColumnwiseBytes, 1<<30)), p.tune.PoisonRecycled, p.stats)
		p.plainLeaves = make([]int, len(fields))
		for k, fi := range fields {
			p.plainLeaves[k] = plainLeaf(md, frs[0].Manifest, fi, sc.Field(k).Type)
		}
		// A list column is decoded a row group at a time: hold no more
		// than Tuning.ListWindowBytes of them ahead (two at least, one read out
		// while the next is decoded).
		if p.listMost = p.listBytes(); p.listMost > 0 {
			p.window = max(2, min(p.window, int(p.tune.ListWindowBytes/p.listMost)))
		}
	}
	p.makeTasks()
	p.budget = &stateBudget{limit: p.tune.StreamBudget, peak: &p.stats.PeakState}
	p.ahead = &stateBudget{limit: aheadShared}
	p.spill = &spillFile{dir: p.tune.SpillDir, failed: opts.NoSpill, onRead: p.tune.OnSpillRead, stats: p.stats}
	if opts.TempDir != "" {
		p.spill.dir = opts.TempDir
	}
	p.start = func() {
		p.wg.Add(workers)
		for w, fr := range frs {
			var pd *plainDecoder
			if p.plainLeaves != nil {
				pd = &plainDecoder{r: f, size: size, tune: p.tune, stats: p.stats}
			}
			go p.work(fr, pools[w], pd, &headerChecker{r: f, size: size, maxNested: p.tune.MaxNestedValues}, scopes[w])
		}
	}
	if !opts.SelectLater {
		p.Begin()
	}
	return p, nil
}

// begin starts the workers, once.
func (p *parallelParquet) Begin() {
	if p.start != nil {
		p.start()
		p.start = nil
	}
}

// makeTasks cuts the file into tasks: a row group decoded whole (column by
// column, or by pqarrow's record reader) is one task; a larger one whose
// projected columns are all the fast path's is streamed in segments, a
// task each.
func (p *parallelParquet) makeTasks() {
	// Row groups are streamed when the fast path may be used at all
	// (flat projection, regular file), whatever their columns.
	stream := p.plainLeaves != nil
	seg := max(p.tune.SegmentRows, p.batch)
	var segments int64
	for _, rows := range p.rows {
		if rows > 0 {
			segments += min(rows/seg+1, maxStreamTasks+1)
		}
		if segments > maxStreamTasks {
			break // (the footer's counts may be anything: no overflow)
		}
	}
	stream = stream && segments <= maxStreamTasks
	// Row groups are decoded several to a task only column by column, and
	// with no list column (a list column is decoded a row group at a time).
	group := p.tune.GroupRowGroups && p.listMost == 0 && len(p.fields) == p.sc.NumFields()
	for rg, rows := range p.rows {
		// A row group of about a segment is decoded whole, column by
		// column, if it may be (gen.go's and Arrow's 64k-row groups); a
		// larger one is streamed: decoded whole it would take memory in
		// proportion to the writer's row-group size (DuckDB's 122,880
		// rows, Polars' 262,144, pyarrow's million). So is one of more
		// than a segment in a file of fewer row groups than workers,
		// which would otherwise leave workers idle.
		few := len(p.rows) < p.window-1 && rows > seg
		if !stream || rows <= 0 || p.colRows[rg] && rows <= seg+seg/4 && !few {
			// Row groups smaller than a batch (DuckDB's and arrow-rs's
			// 2,048 rows, say) are decoded a batch of them at a time: a
			// task and a record each would cost more than their rows.
			if n := len(p.tasks) - 1; group && n >= 0 && p.tasks[n].s == nil && p.tasks[n].last() == rg-1 &&
				p.colRows[rg] && p.colRows[p.tasks[n].rg] && rows > 0 && p.tasks[n].rows+rows <= min(p.batch, p.tune.MaxColumnwiseRows) &&
				(p.tasks[n].rows+rows)*p.width <= p.tune.MaxGroupBytes {
				p.tasks[n].extra++
				p.tasks[n].rows += rows
				continue
			}
			p.tasks = append(p.tasks, ptask{rg: rg, rows: rows})
			continue
		}
		s := newRgStream(rg, rows, len(p.tasks), len(p.fields))
		for k, off := 0, int64(0); off < rows; k, off = k+1, off+seg {
			p.tasks = append(p.tasks, ptask{rg: rg, seg: k, off: off, rows: min(seg, rows-off), s: s})
		}
	}
	p.slots = make([]chan arrow.Record, len(p.tasks))
	p.errs = make([]error, len(p.tasks))
	for i, t := range p.tasks {
		perSlot := (t.rows + p.batch - 1) / p.batch
		p.slots[i] = make(chan arrow.Record, min(perSlot+1, maxSlotRecords))
	}
	p.failAt.Store(int64(len(p.tasks)))
}

// take returns the next task to decode, waiting while it is outside the
// window; ok is false when there is nothing more to do.
func (p *parallelParquet) take() (rg int, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for !p.stop && p.nextRG < len(p.tasks) && p.nextRG >= p.cur+p.window {
		p.cond.Wait()
	}
	if p.stop || p.nextRG >= len(p.tasks) || int64(p.nextRG) > p.failAt.Load() {
		return 0, false
	}
	rg = p.nextRG
	p.nextRG++
	return rg, true
}

func (p *parallelParquet) work(fr *pqarrow.FileReader, pool *pagePool, pd *plainDecoder, hc *headerChecker, sc *arrowfix.Scope) {
	defer p.wg.Done()
	defer pool.close()
	for {
		t, ok := p.take()
		if !ok {
			return
		}
		task := &p.tasks[t]
		whole := p.colRows[task.rg] && task.s == nil
		pool.setRecycle(whole)
		// pqarrow leaves some buffers unreleased when a column fails to
		// decode. A row group decoded column by column hands nothing out
		// before it has decoded whole, so when it fails, what its
		// allocations left behind is nobody's and goes back (this matters
		// to allocators that count, such as the tests' checked allocator).
		settle := func(err error) {
			if err != nil && whole && !errors.Is(err, errAborted) {
				sc.Rollback()
			} else {
				sc.Commit()
			}
		}
		err := p.decode(fr, t, task.rg, task.last(), pool, pd, hc)
		settle(err)
		if err != nil && task.extra > 0 && !errors.Is(err, errAborted) {
			// Small row groups decoded as one failed: decode them again
			// one at a time, so that the rows before the bad one are
			// read and the error names it.
			err = nil
			for rg := task.rg; rg <= task.last() && err == nil; rg++ {
				err = p.decode(fr, t, rg, rg, pool, pd, hc)
				settle(err)
			}
		}
		if err != nil {
			p.errs[t] = err
			if !errors.Is(err, errAborted) {
				if s := p.tasks[t].s; s != nil {
					s.abort(p.tasks[t].seg) // the later segments may wait for this one
				}
				for {
					old := p.failAt.Load()
					if int64(t) >= old || p.failAt.CompareAndSwap(old, int64(t)) {
						break
					}
				}
			}
		}
		close(p.slots[t])
	}
}

// decode reads task t into its slot. A panic of the decoders becomes an
// error naming the file and the row group.
func (p *parallelParquet) decode(fr *pqarrow.FileReader, t, first, last int, pool *pagePool, pd *plainDecoder, hc *headerChecker) (err error) {
	task := p.tasks[t]
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%s: corrupt parquet file in %s (rows %d..): %v: %w", p.name, rowGroups(first, last), task.off, v, ioerr.ErrFormat)
		}
	}()
	for rg := first; rg <= last; rg++ {
		if p.tune.OnDecode != nil {
			p.tune.OnDecode(rg)
		}
		if err := p.footer.ensure(rg); err != nil {
			return fmt.Errorf("%s: corrupt parquet file: %w: %w", p.name, ioerr.ErrFormat, err)
		}
	}
	if task.s != nil {
		return p.decodeSegment(fr, t, task.s, task.seg, task.off, task.rows, pd, hc)
	}
	if p.colRows[first] {
		return p.decodeColumns(fr, t, first, last, pool, pd, hc)
	}
	return p.decodeLockstep(fr, first, t, hc)
}

// decodeLockstep reads row group rg with pqarrow's record reader into the
// slot of task t.
func (p *parallelParquet) decodeLockstep(fr *pqarrow.FileReader, rg, t int, hc *headerChecker) error {
	var seen int64
	for k := range p.fields {
		if err := p.checkHeaders(hc, rg, k); err != nil {
			return err
		}
	}
	rr, err := fr.GetRecordReader(context.Background(), p.leaves, []int{rg})
	if err != nil {
		return fmt.Errorf("%s: corrupt parquet file in row group %d: %w: %w", p.name, rg, ioerr.ErrFormat, err)
	}
	defer rr.Release()
	for {
		if p.aborted(t) {
			return errAborted
		}
		if !rr.Next() {
			break
		}
		rec, err := arrowfix.RepairRecordLists(rr.Record(), p.mem)
		if err != nil {
			return fmt.Errorf("%s: parquet row group %d (rows %d..), %w", p.name, rg, seen, err)
		}
		seen += rec.NumRows()
		select {
		case p.slots[t] <- rec:
		case <-p.done:
			rec.Release()
			return errAborted
		}
	}
	// pqarrow v15 reports the normal end as io.EOF from Err.
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: corrupt parquet file in row group %d (rows %d..): %w: %w", p.name, rg, seen, ioerr.ErrFormat, err)
	}
	if seen != p.rows[rg] {
		return fmt.Errorf("%s: corrupt parquet file: row group %d has %d rows, footer says %d: %w", p.name, rg, seen, p.rows[rg], ioerr.ErrFormat)
	}
	return nil
}

// checkHeaders checks the page headers of the chunks of projected field k
// in row group rg before Arrow's reader parses them (parquet_check.go).
func (p *parallelParquet) checkHeaders(hc *headerChecker, rg, k int) error {
	defer hc.trim()
	for _, leaf := range p.fieldLeaves[k] {
		if err := hc.chunk(p.md, rg, leaf); errors.Is(err, errNestedTooLarge) {
			return fmt.Errorf("%s: parquet row group %d, column %q: %w: %w", p.name, rg, p.sc.Field(k).Name, err, ioerr.ErrFormat)
		} else if err != nil {
			return fmt.Errorf("%s: corrupt parquet file in row group %d, column %q: %w: %w", p.name, rg, p.sc.Field(k).Name, ioerr.ErrFormat, err)
		}
	}
	return nil
}

// decodedRowWidth estimates the decoded bytes of one row of the projected
// leaves: the width of fixed-size types, 16 bytes for the others.
func decodedRowWidth(pf *file.Reader, leaves []int) int64 {
	sc := pf.MetaData().Schema
	width := func(i int) int64 {
		switch sc.Column(i).PhysicalType() {
		case parquet.Types.Boolean:
			return 1
		case parquet.Types.Int32, parquet.Types.Float:
			return 4
		case parquet.Types.Int64, parquet.Types.Double:
			return 8
		}
		return 16
	}
	var w int64
	if leaves == nil {
		for i := range sc.NumColumns() {
			w += width(i)
		}
		return w
	}
	for _, i := range leaves {
		w += width(i)
	}
	return w
}

// decodeColumns reads the row group of task t (or its small row groups,
// as one) one column at a time, each to the end, and sends the rows cut
// into batches. pqarrow's record reader keeps
// a page reader open for every column while it decodes a batch, each
// holding a decompressed page and a read buffer of about a page (1 MB by
// default) or two: over 64 columns that is some 200 MB live per worker.
// Here one column's page buffers are live at a time; the price is that
// the whole row group is decoded before its first batch is sent, which the
// bounds on colRows keep small.
func (p *parallelParquet) decodeColumns(fr *pqarrow.FileReader, t, first, last int, pool *pagePool, pd *plainDecoder, hc *headerChecker) error {
	where := rowGroups(first, last)
	var rows int64
	rgs := make([]int, 0, last-first+1)
	for rg := first; rg <= last; rg++ {
		rgs = append(rgs, rg)
		rows += p.rows[rg]
	}
	cols := make([]arrow.Array, 0, len(p.fields))
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for k, fi := range p.fields {
		if p.aborted(t) {
			return errAborted
		}
		if p.plainLeaves != nil && p.plainLeaves[k] >= 0 {
			if col, ok := pd.plainGroup(p.md, first, p.rows[first:last+1], p.plainLeaves[k], p.sc.Field(k).Type, p.recycle); ok {
				cols = append(cols, col)
				continue
			}
		}
		for _, rg := range rgs {
			if err := p.checkHeaders(hc, rg, k); err != nil {
				return err
			}
		}
		cr, err := fr.GetFieldReader(context.Background(), fi, p.included, rgs)
		if err != nil {
			return fmt.Errorf("%s: corrupt parquet file in %s, column %q: %w: %w", p.name, where, p.sc.Field(k).Name, ioerr.ErrFormat, err)
		}
		if cr == nil {
			return fmt.Errorf("%s: parquet %s: no reader for column %q: %w", p.name, where, p.sc.Field(k).Name, ioerr.ErrFormat)
		}
		ch, err := cr.NextBatch(rows)
		cr.Release()
		pool.columnDone() // the column is read: its pages are no longer read
		if err != nil {
			return fmt.Errorf("%s: corrupt parquet file in %s, column %q: %w: %w", p.name, where, p.sc.Field(k).Name, ioerr.ErrFormat, err)
		}
		col, err := oneChunk(ch, p.mem)
		ch.Release()
		if err != nil {
			return fmt.Errorf("%s: parquet %s, column %q: %w", p.name, where, p.sc.Field(k).Name, err)
		}
		fixed, err := arrowfix.RepairNullLists(col, p.mem)
		col.Release()
		if err != nil {
			return fmt.Errorf("%s: parquet %s, column %q: %w", p.name, where, p.sc.Field(k).Name, err)
		}
		col = fixed
		cols = append(cols, col)
		if int64(col.Len()) != rows {
			for _, rg := range rgs {
				if enc := p.unreadableEncoding(rg, k); enc != "" {
					return fmt.Errorf("%s: parquet row group %d, column %q: a chunk in the %s encoding that does not decode (pate reads that encoding only in flat integer and floating-point columns): %w", p.name, rg, p.sc.Field(k).Name, enc, ioerr.ErrFormat)
				}
			}
			if len(rgs) > 1 {
				return fmt.Errorf("%s: corrupt parquet file: %s have %d rows in column %q, footer says %d: %w", p.name, where, col.Len(), p.sc.Field(k).Name, rows, ioerr.ErrFormat)
			}
			return fmt.Errorf("%s: corrupt parquet file: row group %d has %d rows in column %q, footer says %d: %w", p.name, first, col.Len(), p.sc.Field(k).Name, rows, ioerr.ErrFormat)
		}
		if !arrow.TypeEqual(col.DataType(), p.sc.Field(k).Type) {
			return fmt.Errorf("%s: parquet %s, column %q: decoded as %s, schema says %s: %w", p.name, where, p.sc.Field(k).Name, col.DataType(), p.sc.Field(k).Type, ioerr.ErrFormat)
		}
	}
	return p.sendBatches(t, cols, rows)
}

// unreadableEncoding names an encoding of field k's chunks in row group rg
// that Arrow v15 cannot decode (its reader then reads the chunk as empty,
// without an error), or returns "".
func (p *parallelParquet) unreadableEncoding(rg, k int) string {
	for _, leaf := range p.fieldLeaves[k] {
		cc, err := p.md.RowGroup(rg).ColumnChunk(leaf)
		if err != nil {
			continue
		}
		for _, e := range cc.Encodings() {
			if e == parquet.Encoding(encodingBSS) {
				return "BYTE_STREAM_SPLIT"
			}
		}
	}
	return ""
}

// oneChunk returns the chunks of ch as one array (a new reference).
func oneChunk(ch *arrow.Chunked, mem memory.Allocator) (arrow.Array, error) {
	switch c := ch.Chunks(); len(c) {
	case 0:
		return array.MakeArrayOfNull(mem, ch.DataType(), 0), nil
	case 1:
		c[0].Retain()
		return c[0], nil
	default:
		return array.Concatenate(c, mem)
	}
}

// aborted reports whether the worker on task t should stop: the reader is
// closing, or an earlier task failed.
func (p *parallelParquet) aborted(t int) bool {
	select {
	case <-p.done:
		return true
	default:
	}
	return p.failAt.Load() < int64(t)
}

func (p *parallelParquet) Schema() *arrow.Schema    { return p.sc }
func (p *parallelParquet) OutSchema() *arrow.Schema { return p.out }
func (p *parallelParquet) NumRows() int64           { return p.total }

func (p *parallelParquet) Next() (arrow.Record, error) {
	p.Begin()
	for p.cur < len(p.slots) {
		if rec, ok := <-p.slots[p.cur]; ok {
			return rec, nil
		}
		if err := p.errs[p.cur]; err != nil {
			return nil, err
		}
		task := &p.tasks[p.cur]
		for rg := task.rg; rg <= task.last(); rg++ {
			if rg < task.last() || p.cur+1 == len(p.tasks) || p.tasks[p.cur+1].rg != rg {
				p.footer.release(rg) // its rows are all out
			}
		}
		p.mu.Lock()
		p.cur++
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	// Every row group is decoded: nothing will take the kept buffers, and
	// the batches still out (a sensitive file's, say, held for training)
	// should go back to the heap when they are released.
	if p.recycle != nil {
		p.recycle.Close()
	}
	p.spill.close() // the workers are done with it
	return nil, io.EOF
}

// close stops the workers, waits for them and releases every record they
// decoded that was not handed out.
func (p *parallelParquet) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	p.mu.Lock()
	p.stop = true
	p.cond.Broadcast()
	p.mu.Unlock()
	close(p.done)
	for _, t := range p.tasks {
		if t.s != nil && t.seg == 0 {
			t.s.abort(-1)
		}
	}
	p.wg.Wait()
	for _, t := range p.tasks {
		if t.s != nil && t.seg == 0 {
			t.s.release()
		}
	}
	for _, ch := range p.slots {
	drain:
		for {
			select {
			case rec, ok := <-ch:
				if !ok {
					break drain
				}
				rec.Release()
			default:
				break drain
			}
		}
	}
	if p.recycle != nil {
		p.recycle.Close()
	}
	p.spill.close()
	return nil
}

// pagePool allocates one worker's Parquet page buffers. Arrow v15's page
// reader frees a page's buffer when it hands the page out, while the page is
// still being decoded, so a freed buffer cannot be reused at once. When the
// worker decodes a row group column by column (setRecycle(true)), a column's
// pages are all done with once its reader is released: reuse then makes the
// buffers it freed available again, and the next column's pages are decoded
// into memory already in use (otherwise every page is a fresh megabyte that
// the kernel must fault in and the collector must sweep). Otherwise buffers
// go straight back to mem. One worker uses a pagePool; the lock is for the
// finalizers that release the file reader's pooled scratch buffers.
type pagePool struct {
	mu      sync.Mutex
	mem     memory.Allocator
	recycle bool
	pending [][]byte // freed by the page reader, perhaps still being read
	free    [][]byte // safe to hand out again
	held    int
}

// maxPagePool bounds the bytes a pagePool keeps.
const maxPagePool = 16 << 20

func (pp *pagePool) setRecycle(on bool) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if !on {
		pp.reuse()
		pp.drop()
	}
	pp.recycle = on
}

func (pp *pagePool) Allocate(size int) []byte {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.recycle {
		for i, b := range pp.free {
			if cap(b) >= size && cap(b) <= 2*size+4096 {
				pp.free[i] = pp.free[len(pp.free)-1]
				pp.free = pp.free[:len(pp.free)-1]
				pp.held -= cap(b)
				b = b[:size]
				clear(b)
				return b
			}
		}
	}
	return pp.mem.Allocate(size)
}

func (pp *pagePool) Reallocate(size int, b []byte) []byte {
	if size <= cap(b) {
		n := len(b)
		b = b[:size]
		if size > n {
			clear(b[n:])
		}
		return b
	}
	nb := pp.Allocate(size)
	copy(nb, b)
	pp.Free(b)
	return nb
}

func (pp *pagePool) Free(b []byte) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.recycle && cap(b) > 0 {
		pp.pending = append(pp.pending, b)
		return
	}
	pp.mem.Free(b[:cap(b)])
}

// columnDone makes the buffers freed so far available again.
func (pp *pagePool) columnDone() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.reuse()
}

// reuse makes the buffers freed so far available again, keeping at most
// maxPagePool bytes.
func (pp *pagePool) reuse() {
	for _, b := range pp.pending {
		if pp.held+cap(b) <= maxPagePool {
			pp.free = append(pp.free, b)
			pp.held += cap(b)
		} else {
			pp.mem.Free(b[:cap(b)])
		}
	}
	clear(pp.pending)
	pp.pending = pp.pending[:0]
}

// drop hands every kept buffer back to mem.
func (pp *pagePool) drop() {
	for _, b := range pp.free {
		pp.mem.Free(b[:cap(b)]) // as allocated: a reused buffer may have been resliced
	}
	clear(pp.free)
	pp.free, pp.held = pp.free[:0], 0
}

// close hands everything back to mem (the worker is done).
func (pp *pagePool) close() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.reuse()
	pp.drop()
	for _, b := range pp.pending {
		pp.mem.Free(b[:cap(b)])
	}
	pp.pending = nil
}

// sendBatches makes one record of the decoded columns and hands it to task
// t's slot in batches of at most p.batch rows.
func (p *parallelParquet) sendBatches(t int, cols []arrow.Array, rows int64) error {
	rec := array.NewRecord(p.sc, cols, rows)
	defer rec.Release()
	for off := int64(0); off < rows; off += p.batch {
		b := rec.NewSlice(off, min(off+p.batch, rows))
		select {
		case p.slots[t] <- b:
		case <-p.done:
			b.Release()
			return errAborted
		}
	}
	return nil
}
