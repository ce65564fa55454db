package pqread

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// writeRowGroups writes rows fixture rows in row groups of rgRows to a new
// Parquet file and returns its path.
func writeRowGroups(t testing.TB, rows, rgRows int, codec compress.Compression) string {
	t.Helper()
	recs := pqtest.FixtureRecords(memory.NewGoAllocator(), rows, 4000)
	defer pqtest.ReleaseAll(recs)
	p := filepath.Join(t.TempDir(), "rg.parquet")
	if err := WriteParquet(p, pqtest.FixtureSchema(), recs, ParquetOptions{RowGroupRows: int64(rgRows), Compression: codec}); err != nil {
		t.Fatal(err)
	}
	return p
}

// noGoroutineLeak fails t if, shortly after the test, more goroutines run
// than before it.
func noGoroutineLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		for range 200 {
			if runtime.NumGoroutine() <= before {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Errorf("%d goroutines after the test, %d before", runtime.NumGoroutine(), before)
	})
}

// TestReadParquetParallelOrder checks that the parallel reader returns the
// same rows in the same order as the single-threaded one, for many small
// row groups, several batch sizes, worker counts and projections.
func TestReadParquetParallelOrder(t *testing.T) {
	const rows, rgRows = 37_000, 1000
	path := writeRowGroups(t, rows, rgRows, compress.Codecs.Snappy)
	want := pqtest.FixtureRecords(memory.NewGoAllocator(), rows, rows)
	defer pqtest.ReleaseAll(want)
	batches := []int{1, 333, 4096, 65536}
	if testing.Short() {
		batches = []int{333, 65536}
	}
	for _, batch := range batches {
		for _, cols := range [][]string{nil, {"name", "id"}, {"flag"}} {
			workerCounts := []int{0, 1, 2, 3, 8}
			switch {
			case batch == 1:
				workerCounts = []int{0, 1} // slow: 37,000 batches
			case testing.Short():
				workerCounts = []int{1, 3}
			}
			name := "batch=" + itoa(batch) + "/cols=" + strings.Join(cols, "+")
			t.Run(name, func(t *testing.T) {
				noGoroutineLeak(t)
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				one := DefaultTuning()
				one.OneReader = true
				ss, serial := readAll(t, path, ReadOptions{BatchSize: batch, Columns: cols, Allocator: mem, Tuning: one})
				defer pqtest.ReleaseAll(serial)
				ws, wantRecs := pqtest.FixtureSchema(), want
				if cols != nil {
					ws, wantRecs = pqtest.ProjectRecords(want, cols)
					defer pqtest.ReleaseAll(wantRecs)
				}
				if !pqtest.SameRows(t, ws, serial, wantRecs) {
					t.Fatal("the one-reader reference differs from the fixture")
				}
				for _, mode := range []string{"columnwise", "lockstep"} {
					for _, workers := range workerCounts {
						t.Run(mode+"/workers="+itoa(workers), func(t *testing.T) {
							tune := DefaultTuning()
							if mode == "lockstep" {
								tune.MaxColumnwiseRows = 0
							}
							ps, par := readAll(t, path, ReadOptions{BatchSize: batch, Columns: cols, Allocator: mem, Workers: workers, Tuning: tune})
							defer pqtest.ReleaseAll(par)
							if !ps.Equal(ss) {
								t.Fatalf("parallel schema %v, serial %v", ps, ss)
							}
							pqtest.SameRows(t, ps, par, serial)
						})
					}
				}
			})
		}
	}
}

// TestReadParquetParallelIsParallel checks that the many-row-group file
// really takes the parallel path, and that a forced single worker does not.
func TestReadParquetParallelIsParallel(t *testing.T) {
	path := writeRowGroups(t, 5000, 1000, compress.Codecs.Uncompressed)
	for _, tc := range []struct {
		name     string
		workers  int
		parallel bool
	}{
		{"forced one", 1, true},
		{"two", 2, true},
		{"more than row groups", 64, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noGoroutineLeak(t)
			r, err := openFile(path, ReadOptions{Workers: tc.workers})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			p, ok := r.src.(*parallelParquet)
			if ok != tc.parallel {
				t.Fatalf("source %T, want parallel=%v", r.src, tc.parallel)
			}
			if ok && p.window != min(tc.workers, 5)+1 {
				t.Errorf("window %d, want %d", p.window, min(tc.workers, 5)+1)
			}
		})
	}
	if _, err := openFile(path, ReadOptions{Workers: -1}); err == nil {
		t.Error("negative worker count accepted")
	}
}

// TestReadParquetParallelBounded checks that workers stop decoding when the
// caller does not read: no more than window tasks are started ahead of the
// slot being read, whether a task is a row group or several small ones.
func TestReadParquetParallelBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		group   bool
		perTask int64 // rows
	}{
		{"a row group a task", false, 1000},
		{"small row groups grouped", true, 4000}, // the least decode batch, 4,096 rows
	} {
		t.Run(tc.name, func(t *testing.T) {
			tune := DefaultTuning()
			tune.GroupRowGroups = tc.group
			noGoroutineLeak(t)
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			path := writeRowGroups(t, 37_000, 1000, compress.Codecs.Snappy)
			r, err := openFile(path, ReadOptions{Workers: 2, BatchSize: 100, Allocator: mem, Tuning: tune})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			p := r.src.(*parallelParquet)
			for i, task := range p.tasks {
				if want := min(tc.perTask, 37_000-int64(i)*tc.perTask); task.rows != want {
					t.Fatalf("task %d has %d rows, want %d", i, task.rows, want)
				}
			}
			check := func(when string, wantCur int) {
				time.Sleep(100 * time.Millisecond) // let the workers run ahead as far as they may
				p.mu.Lock()
				next, cur := p.nextRG, p.cur
				p.mu.Unlock()
				if cur != wantCur || next > cur+3 {
					t.Errorf("%s: draining slot %d, %d tasks started; want slot %d and at most %d started", when, cur, next, wantCur, wantCur+3)
				}
			}
			check("before reading", 0)
			for range 25 + 40 { // 6,500 rows
				rec, err := r.Read()
				if err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			check("after 6,500 rows", int(6500/tc.perTask))
		})
	}
}

// corruptRowGroup overwrites the column chunks of row group rg of the
// Parquet file at path with garbage.
func corruptRowGroup(t *testing.T, path string, rg int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	md := pf.MetaData().RowGroup(rg)
	for j := range md.NumColumns() {
		cc, err := md.ColumnChunk(j)
		if err != nil {
			t.Fatal(err)
		}
		start := cc.DataPageOffset()
		if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
			start = min(start, cc.DictionaryPageOffset())
		}
		junk := make([]byte, cc.TotalCompressedSize())
		for i := range junk {
			junk[i] = byte(0xa5 ^ i*31)
		}
		if _, err := f.WriteAt(junk, start); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadParquetParallelErrors checks that a corrupt row group, or a
// decoder panic in one, surfaces as an ErrFormat naming the file and the
// row group after the rows before it were read in order (also when it is
// decoded with the small row groups around it), with no panic, no leaked
// memory and no leaked goroutine.
func TestReadParquetParallelErrors(t *testing.T) {
	const rows, rgRows, bad = 9000, 1000, 5
	corrupt := writeRowGroups(t, rows, rgRows, compress.Codecs.Snappy)
	corruptRowGroup(t, corrupt, bad)
	clean := writeRowGroups(t, rows, rgRows, compress.Codecs.Snappy)
	for _, tc := range []struct {
		name    string
		path    string
		workers int
		batch   int
		panicAt int // row group whose decoding panics, or -1
		wantIn  []string
	}{
		{"corrupt pages w2", corrupt, 2, 333, -1, []string{"row group 5"}},
		{"corrupt pages w4", corrupt, 4, 4096, -1, []string{"row group 5"}},
		{"corrupt pages w1", corrupt, 1, 333, -1, []string{"row group 5"}},
		{"panic w1", clean, 1, 333, bad, []string{"row group 5", "injected"}},
		{"panic w2", clean, 2, 1000, bad, []string{"row group 5", "injected"}},
		{"panic w3 batch 1", clean, 3, 1, bad, []string{"row group 5", "injected"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noGoroutineLeak(t)
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			tune := DefaultTuning()
			if tc.panicAt >= 0 {
				tune.OnDecode = func(rg int) {
					if rg == tc.panicAt {
						panic("injected decoder panic")
					}
				}
			}
			r, err := openFile(tc.path, ReadOptions{Workers: tc.workers, BatchSize: tc.batch, Allocator: mem, Tuning: tune})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if p := r.src.(*parallelParquet); len(p.tasks) >= rows/rgRows {
				// The row groups are smaller than the least decode batch:
				// several make a task, and the bad one is found in a
				// second pass over the group it is in.
				t.Fatalf("%d tasks for %d row groups of %d rows", len(p.tasks), rows/rgRows, rgRows)
			}
			var n int64
			for {
				rec, err := r.Read()
				if err == nil {
					if got, want := rec.Column(0).(interface{ Value(int) int64 }).Value(0), int64(n*7-1000); got != want {
						t.Fatalf("row %d: id %d, want %d (out of order), batch of %d", n, got, want, rec.NumRows())
					}
					n += rec.NumRows()
					rec.Release()
					continue
				}
				if errors.Is(err, io.EOF) {
					t.Fatal("no error")
				}
				if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.path) {
					t.Errorf("error %q: want an ErrFormat naming %s", err, tc.path)
				}
				for _, s := range tc.wantIn {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if _, again := r.Read(); again == nil || again.Error() != err.Error() {
					t.Errorf("read after error: %v, want the same error", again)
				}
				break
			}
			if n != bad*rgRows {
				t.Errorf("read %d rows before the error, want %d", n, bad*rgRows)
			}
		})
	}
}

// TestReadParquetParallelClose checks that closing the reader at any point
// (before reading, in the middle, after the end, twice) leaks neither
// memory nor goroutines.
func TestReadParquetParallelClose(t *testing.T) {
	path := writeRowGroups(t, 37_000, 1000, compress.Codecs.Snappy)
	for _, tc := range []struct {
		name  string
		reads int // batches read before Close; -1 = all
		batch int
	}{
		{"before reading", 0, 1000},
		{"after one batch", 1, 1000},
		{"mid row group", 7, 100},
		{"half way", 18, 1000},
		{"after the end", -1, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			noGoroutineLeak(t)
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			r, err := openFile(path, ReadOptions{Workers: 2, BatchSize: tc.batch, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; tc.reads < 0 || i < tc.reads; i++ {
				rec, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}
			if err := r.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if err := r.Close(); err != nil {
				t.Errorf("second close: %v", err)
			}
			if _, err := r.Read(); err == nil || errors.Is(err, io.EOF) && tc.reads >= 0 {
				t.Errorf("read after close: %v, want an error", err)
			}
		})
	}
}

// keep arrow imported for the interface assertion helpers above.
var _ arrow.Record

// TestParquetFooterStatisticsDropped checks that an open Parquet reader
// keeps no column statistics (they grow with the number of row groups and
// reading does not need them) and that the rows still read back whole.
func TestParquetFooterStatisticsDropped(t *testing.T) {
	path := writeRowGroups(t, 5000, 1000, compress.Codecs.Snappy)
	cc0, err := arrowFooter(t, path).RowGroup(0).ColumnChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	if set, _ := cc0.StatsSet(); !set {
		t.Fatal("the fixture should carry statistics")
	}
	r, err := openFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := r.src.(*parallelParquet)
	err = p.footer.each(p.md, func(i int, g *metadata.RowGroupMetaData) {
		for j := range p.md.Schema.NumColumns() {
			cc, err := g.ColumnChunk(j)
			if err != nil {
				t.Fatal(err)
			}
			if set, _ := cc.StatsSet(); set {
				t.Fatalf("row group %d, column %d: statistics kept", i, j)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		rec, err := r.Read()
		if err != nil {
			break
		}
		n += int(rec.NumRows())
		rec.Release()
	}
	if n != 5000 {
		t.Fatalf("read %d rows, want 5000", n)
	}
}

// TestPagePool checks the page-buffer pool's one rule: a buffer the page
// reader frees is not handed out again before the column is done (the page
// may still be read), and is after; with recycling off, or at close,
// everything goes back to the underlying allocator.
func TestPagePool(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	pp := &pagePool{mem: mem}
	pp.setRecycle(true)
	a := pp.Allocate(1000)
	a[0] = 7
	pp.Free(a)
	b := pp.Allocate(1000)
	if &b[0] == &a[0] {
		t.Fatal("a freed page buffer was reused before its column was done")
	}
	pp.columnDone()
	c := pp.Allocate(900)
	if &c[0] != &a[0] {
		t.Fatal("a buffer freed before columnDone was not reused")
	}
	if c[0] != 0 {
		t.Fatal("a reused buffer must come back zeroed")
	}
	if d := pp.Allocate(100); &d[0] == &b[0] {
		t.Fatal("b was never freed, it must not be handed out")
	} else {
		pp.Free(d)
	}
	pp.Free(b)
	pp.Free(c)
	pp.setRecycle(false) // kept buffers go back to mem
	e := pp.Allocate(1000)
	pp.Free(e)
	pp.close()
}

// TestGroupedRowGroups checks that small row groups decoded several to a
// task read the same rows as decoded one to a task: every column kind of
// pqtest.PlainSchema (the fast path's, and pqarrow's over several row groups),
// PLAIN and dictionary pages, v1 and v2, batch sizes that cut the groups
// differently (with a last row group shorter than the others), with no
// leaked memory; and that the groups hold about a batch of rows.
func TestGroupedRowGroups(t *testing.T) {
	dir := t.TempDir()
	files := []struct {
		name string
		pf   plainFile
	}{
		{"snappy/v1", plainFile{rows: 10_001, rgRows: 700, codec: compress.Codecs.Snappy}},
		{"zstd/v2/dictionary", plainFile{rows: 10_001, rgRows: 700, codec: compress.Codecs.Zstd, v2: true, dictionary: true}},
		{"none/v1/dictionary-fallback", plainFile{rows: 9_000, rgRows: 1_000, codec: compress.Codecs.Uncompressed, dictionary: true, dictLimit: 2048}},
	}
	for i, f := range files {
		path := filepath.Join(dir, strconv.Itoa(i)+".parquet")
		writePlainFile(t, path, f.pf)
		for _, tc := range []struct {
			batch, workers int
			groupRows      int64 // Tuning.MaxGroupBytes in rows of decoded values, 0: as is
			perTask        int64 // the rows of a full task: whole row groups up to the batch
		}{
			{100, 2, 0, int64(4096 / f.pf.rgRows * f.pf.rgRows)}, // batches of at least 4,096 rows are decoded
			{5000, 1, 0, int64(5000 / f.pf.rgRows * f.pf.rgRows)},
			{1 << 20, 3, 0, int64(f.pf.rows)}, // the whole file is less than Tuning.MaxColumnwiseRows
			{1 << 20, 2, 2500, int64(2500 / f.pf.rgRows * f.pf.rgRows)},
		} {
			t.Run(fmt.Sprintf("%s/batch=%d/group=%d", f.name, tc.batch, tc.groupRows), func(t *testing.T) {
				maxGroup := DefaultTuning().MaxGroupBytes
				if tc.groupRows > 0 {
					pf, err := file.OpenParquetFile(path, false)
					if err != nil {
						t.Fatal(err)
					}
					width := decodedRowWidth(pf, nil)
					pf.Close()
					maxGroup = tc.groupRows * width
				}
				noGoroutineLeak(t)
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				if !f.pf.v2 { // pqarrow's v2 readers leak (see TestParquetPlainFastPath)
					defer mem.AssertSize(t, 0)
				}
				read := func(group bool) ([]arrow.Record, *parallelParquet) {
					tune := DefaultTuning()
					tune.MaxGroupBytes, tune.GroupRowGroups = maxGroup, group
					r, err := openFile(path, ReadOptions{Allocator: mem, BatchSize: tc.batch, Workers: tc.workers, Tuning: tune})
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					p := r.src.(*parallelParquet)
					recs, err := readRest(r)
					if err != nil {
						t.Fatal(err)
					}
					return recs, p
				}
				want, _ := read(false)
				defer pqtest.ReleaseAll(want)
				got, p := read(true)
				defer pqtest.ReleaseAll(got)
				pqtest.SameRows(t, want[0].Schema(), got, want)
				var rows int64
				for k, task := range p.tasks {
					if task.rg != int(rows)/f.pf.rgRows || task.s != nil {
						t.Fatalf("task %d: row group %d (streamed %v), want %d", k, task.rg, task.s != nil, rows/int64(f.pf.rgRows))
					}
					if task.rows != min(tc.perTask, int64(f.pf.rows)-rows) {
						t.Fatalf("task %d: %d rows in %d row groups, want %d", k, task.rows, task.extra+1, min(tc.perTask, int64(f.pf.rows)-rows))
					}
					rows += task.rows
				}
				for _, rec := range got {
					if rec.NumRows() > int64(max(tc.batch, minDecodeBatch)) {
						t.Fatalf("a batch of %d rows, batch size %d", rec.NumRows(), tc.batch)
					}
				}
			})
		}
	}
}
