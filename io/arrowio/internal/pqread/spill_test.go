package pqread

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/klauspost/compress/zstd"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// spillSmall sets tune's knobs of the spill: every
// PLAIN page larger than a segment is streamed (Tuning.HugePageBytes 0), the
// page streams' budget is budget bytes, every decoded overhang is kept
// free of charge up to freeLeft bytes, streamed pages are spilled in
// blocks of 777 rows, and spill files go to a fresh directory, which it
// returns.
func spillSmall(t *testing.T, tune *Tuning, budget, freeLeft int64, streamAll bool) string {
	t.Helper()
	tune.SpillBlockRows = 777 // pages are spilled in several blocks, not on byte boundaries
	if streamAll {
		tune.HugePageBytes = 0
	} else {
		tune.HugePageBytes = 1 << 30 // no page is streamed
	}
	tune.StreamBudget, tune.MaxFreeLeft = budget, freeLeft
	tune.SpillDir = t.TempDir()
	return tune.SpillDir
}

// dirEmpty fails the test if dir holds anything.
func dirEmpty(t *testing.T, dir, when string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > 0 {
		t.Errorf("%s: the spill directory holds %d entries, e.g. %s", when, len(ents), ents[0].Name())
	}
}

// TestParquetSpilledPages checks that one-row-group files whose pages
// overhang the segments and do not fit in the budget (spilled to the
// temporary file, streamed there or decoded whole) read exactly as pqarrow
// reads them: every codec, both page versions, dictionaries, nullable and
// required columns, one worker and several.
func TestParquetSpilledPages(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name      string
		pf        plainFile
		streamAll bool // stream the PLAIN pages into the file; else decode them whole
	}{
		{"none/v1/streamed", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Uncompressed}, true},
		{"snappy/v1/streamed", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Snappy}, true},
		{"zstd/v2/streamed", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Zstd, v2: true}, true},
		{"snappy/v1/streamed", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Snappy}, true},
		{"zstd/v1/streamed/two-row-groups", plainFile{rows: 9000, rgRows: 4500, codec: compress.Codecs.Zstd}, true},
		{"snappy/v2/whole", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Snappy, v2: true}, false},
		{"zstd/v1/whole", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Zstd}, false},
		{"brotli/v1/whole", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Brotli}, false},
		{"snappy/v2/dictionary-fallback/mixed", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Snappy, v2: true, dictionary: true, dictLimit: 2048}, true},
		{"none/v1/dictionary/whole", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Uncompressed, dictionary: true}, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && i%2 == 1 {
				t.Skip("-short: every other case")
			}
			path := filepath.Join(dir, "p"+strconv.Itoa(i)+".parquet")
			writePlainFile(t, path, tc.pf)
			want := pqarrowRows(t, path)
			tune := streamSmall(DefaultTuning(), 1000)
			sdir := spillSmall(t, tune, 0, 0, tc.streamAll)
			for _, workers := range []int{1, 2, 3} {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				st := new(Stats)
				got := readAllOf(t, path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 700, Workers: workers, Stats: st, Tuning: tune}, fmt.Sprintf("workers=%d", workers))
				if st.SpilledPages.Load() == 0 {
					t.Errorf("workers=%d: no page was spilled", workers)
				}
				pqtest.SameRows(t, want[0].Schema(), got, want)
				pqtest.ReleaseAll(got)
				mem.AssertSize(t, 0)
				if n := st.OpenSpills.Load(); n != 0 {
					t.Errorf("workers=%d: %d spill files open after Close", workers, n)
				}
				dirEmpty(t, sdir, "after Close")
			}
		})
	}
}

// TestParquetSpillFileGone checks that the spill file is out of its
// directory while it is used, and closed after Close whether the read
// ended, was abandoned or failed; that a failing read's error names
// neither the temporary file nor its directory; and that a spill
// directory that cannot be written to leaves the pages in memory, with
// the same rows; ReadOptions.TempDir, when set, is the directory.
func TestParquetSpillFileGone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.parquet")
	writePlainFile(t, path, plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Snappy})
	want := pqarrowRows(t, path)
	for _, tc := range []struct {
		name    string
		failSeg int  // segment whose worker panics, or -1
		reads   int  // records read before Close, -1: all
		noDir   bool // the spill directory does not exist
		optDir  bool // ReadOptions.TempDir names it (the default does not exist)
	}{
		{"read-through", -1, -1, false, false},
		{"abandoned", -1, 1, false, false},
		{"error-mid-read", 2, -1, false, false}, // segments of 4096 rows: the last
		{"no-directory", -1, -1, true, false},
		{"options-directory", -1, -1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tune := streamSmall(DefaultTuning(), 1000)
			sdir := spillSmall(t, tune, 0, 0, true)
			var optDir string
			if tc.noDir || tc.optDir {
				tune.SpillDir = filepath.Join(sdir, "missing")
			}
			if tc.optDir {
				optDir = sdir
			}
			if tc.failSeg >= 0 {
				tune.OnSegment = func(rg, seg int) {
					if seg == tc.failSeg {
						panic("injected")
					}
				}
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			st := new(Stats)
			r, err := openFile(path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 500, Workers: 2, TempDir: optDir, Stats: st, Tuning: tune})
			if err != nil {
				t.Fatal(err)
			}
			var got []arrow.Record
			var rerr error
			for tc.reads < 0 || len(got) < tc.reads {
				rec, err := r.Read()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						rerr = err
					}
					break
				}
				got = append(got, rec)
				if len(got) == 1 && !tc.noDir {
					// Segment 0 is decoded: its overhangs are in the file.
					if st.OpenSpills.Load() != 1 {
						t.Errorf("%d spill files open while reading, want 1", st.OpenSpills.Load())
					}
					dirEmpty(t, sdir, "while reading")
				}
			}
			r.Close()
			defer pqtest.ReleaseAll(got)
			if n := st.OpenSpills.Load(); n != 0 {
				t.Errorf("%d spill files open after Close", n)
			}
			dirEmpty(t, sdir, "after Close")
			switch {
			case tc.failSeg >= 0:
				if rerr == nil {
					t.Fatal("the injected failure was not reported")
				}
				if msg := rerr.Error(); strings.Contains(msg, "pate-spill") || strings.Contains(msg, sdir) {
					t.Errorf("error names the temporary file: %s", msg)
				}
			case rerr != nil:
				t.Fatal(rerr)
			case tc.reads < 0:
				pqtest.SameRows(t, want[0].Schema(), got, want)
			}
			if tc.noDir && st.SpilledPages.Load() != 0 {
				t.Error("pages spilled into a missing directory")
			}
			if tc.noDir && st.PageStreams.Load() == 0 {
				t.Error("without a spill file, the pages were not streamed")
			}
			if !tc.noDir && st.SpilledPages.Load() == 0 {
				t.Error("no page was spilled")
			}
			pqtest.ReleaseAll(got)
			got = nil
			mem.AssertSize(t, 0)
		})
	}
}

// TestStreamBudgetBounded checks that the page streams live at once in a
// reader stay within its budget, whatever the columns and row groups in
// flight (before the budget every column of a one-row-group file kept a
// stream, 64 zstd windows of 2 MB for DuckDB's files), and that the pages
// past it are spilled rather than kept.
func TestStreamBudgetBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.parquet")
	rows := 12000 // two row groups of two segments (4096 rows at least)
	writePlainFile(t, path, plainFile{rows: rows, rgRows: rows / 2, codec: compress.Codecs.Zstd})
	want := pqarrowRows(t, path)
	for _, budget := range []int64{0, 200 << 10, 600 << 10, 64 << 20} {
		t.Run(strconv.FormatInt(budget>>10, 10)+"KB", func(t *testing.T) {
			tune := streamSmall(DefaultTuning(), 1000)
			spillSmall(t, tune, budget, 0, true)
			st := new(Stats)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			got := readAllOf(t, path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 500, Workers: 3, Stats: st, Tuning: tune}, "read")
			pqtest.SameRows(t, want[0].Schema(), got, want)
			pqtest.ReleaseAll(got)
			mem.AssertSize(t, 0)
			if p := st.PeakState.Load(); p > budget {
				t.Errorf("the streams' state peaked at %d bytes, budget %d", p, budget)
			}
			// A stream takes at least its read buffer from the budget;
			// the workers each stream one more page into the file.
			if most := budget/pageStreamBuffer + 3; st.PeakStreams.Load() > most {
				t.Errorf("%d page streams live at once, at most %d fit", st.PeakStreams.Load(), most)
			}
			if st.LiveStreams.Load() != 0 {
				t.Errorf("%d page streams live after Close", st.LiveStreams.Load())
			}
			if st.PageStreams.Load() == 0 {
				t.Error("no page was streamed")
			}
			// Some of the 20 overhanging pages fit only in the largest budget.
			if budget < 64<<20 && st.SpilledPages.Load() == 0 {
				t.Error("no page was spilled")
			}
			if budget == 64<<20 && st.SpilledPages.Load() != 0 {
				t.Error("pages were spilled within the budget")
			}
		})
	}
}

// TestParquetSpilledByteStreamSplit reads DuckDB's one-row-group v2 file
// (BYTE_STREAM_SPLIT doubles and floats, zstd, nullable), whose pages
// cannot be streamed and are decoded whole into the spill file: the shape
// of DuckDB's 1M-row v2 files, 8 MB a page.
func TestParquetSpilledByteStreamSplit(t *testing.T) {
	tune := streamSmall(DefaultTuning(), 300)
	sdir := spillSmall(t, tune, 0, 0, false)
	for _, workers := range []int{1, 2} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		st := new(Stats)
		recs := readAllOf(t, filepath.Join("../../testdata", "writers", "duckdb_v2_zstd.parquet"),
			ReadOptions{Allocator: mem, BatchSize: 700, Columns: []string{"x0", "x1", "x2", "f"}, Workers: workers, Stats: st, Tuning: tune}, "duckdb_v2_zstd.parquet")
		checkDuckDBRows(t, recs, 5000)
		pqtest.ReleaseAll(recs)
		mem.AssertSize(t, 0)
		if st.SpilledPages.Load() == 0 {
			t.Errorf("workers=%d: no page was spilled", workers)
		}
		dirEmpty(t, sdir, "after Close")
	}
}

// TestParquetSpillReadError fails the reads of the spill file: the read
// fails with an error that names the input file, the row group and the
// column, and neither the temporary file nor its directory.
func TestParquetSpillReadError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.parquet")
	writePlainFile(t, path, plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Zstd})
	tune := streamSmall(DefaultTuning(), 1000)
	sdir := spillSmall(t, tune, 0, 0, true)
	var spillName atomic.Value // the workers read the spill file at once
	tune.OnSpillRead = func(name string) error {
		spillName.Store(name)
		return &os.PathError{Op: "read", Path: name, Err: syscall.EIO}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	st := new(Stats)
	r, err := openFile(path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 500, Workers: 2, Stats: st, Tuning: tune})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readRest(r)
	r.Close()
	pqtest.ReleaseAll(got)
	mem.AssertSize(t, 0)
	if err == nil {
		t.Fatal("the failed reads of the spill file were not reported")
	}
	msg := err.Error()
	spill, _ := spillName.Load().(string)
	if spill == "" || strings.Contains(msg, filepath.Base(spill)) || strings.Contains(msg, sdir) || strings.Contains(msg, "pate-spill") {
		t.Errorf("error names the temporary file (%q): %s", spill, msg)
	}
	if !strings.Contains(msg, path) || !strings.Contains(msg, "row group 0") || !strings.Contains(msg, "column \"") || !errors.Is(err, syscall.EIO) {
		t.Errorf("error does not say where, or loses its cause: %s", msg)
	}
	if st.OpenSpills.Load() != 0 {
		t.Error("spill file open after Close")
	}
	dirEmpty(t, sdir, "after Close")
}

// TestParquetSpilledCorrupt garbles bytes of the chunks of a row group
// whose pages are spilled: the read returns pqarrow's rows or fails with
// ErrFormat, never panics, hangs or leaks.
func TestParquetSpilledCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pf        plainFile
		streamAll bool
	}{
		// (6000 rows: the reads' batches of 5000 rows make segments of
		// 5000, and the pages overhang the first.)
		{"snappy/v1/streamed", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Snappy}, true},
		{"snappy/v2/dictionary/whole", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Snappy, v2: true, dictionary: true, dictLimit: 2048}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tune := DefaultTuning()
			sdir := spillSmall(t, tune, 0, 0, tc.streamAll)
			if streamedCorrupt(t, tc.pf, tune) == 0 {
				t.Error("no page was spilled")
			}
			dirEmpty(t, sdir, "after the reads")
		})
	}
}

// TestZstdWindow checks the window read from a zstd frame header, which
// is what a zstd page stream is charged: the window descriptor of a
// streamed frame, the content size of a single-segment one (the
// encoder's whole-buffer frames).
func TestZstdWindow(t *testing.T) {
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7 % 251)
	}
	for _, tc := range []struct {
		name   string
		window int
		single int // EncodeAll this many bytes (a single-segment frame)
		want   int64
	}{
		{"stream/1MB", 1 << 20, 0, 1 << 20},
		{"stream/2MB", 2 << 20, 0, 2 << 20},
		{"single/100KB", 1 << 20, 100000, 100000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			enc, err := zstd.NewWriter(&buf, zstd.WithWindowSize(tc.window))
			if err != nil {
				t.Fatal(err)
			}
			frame := enc.EncodeAll(data[:tc.single], nil)
			if tc.single == 0 {
				if _, err := enc.Write(data); err != nil {
					t.Fatal(err)
				}
				if err := enc.Close(); err != nil {
					t.Fatal(err)
				}
				frame = buf.Bytes()
			}
			got, ok := zstdWindow(frame)
			if !ok || got != tc.want {
				t.Errorf("window %d, %v; want %d", got, ok, tc.want)
			}
		})
	}
	if _, ok := zstdWindow([]byte("not a zstd frame")); ok {
		t.Error("a window read from bytes that are not a frame")
	}
}

// TestParquetNoSpill checks that ReadOptions.NoSpill (set for sensitive
// data) keeps every page in memory or streamed, however small the budget:
// no page reaches a temporary file, and the rows are pqarrow's.
func TestParquetNoSpill(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name      string
		pf        plainFile
		streamAll bool
	}{
		{"zstd/v1/streamed", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Zstd}, true},
		{"snappy/v2/whole", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Snappy, v2: true}, false},
		{"brotli/v1/whole", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Brotli}, false},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "p"+strconv.Itoa(i)+".parquet")
			writePlainFile(t, path, tc.pf)
			want := pqarrowRows(t, path)
			tune := streamSmall(DefaultTuning(), 1000)
			sdir := spillSmall(t, tune, 0, 0, tc.streamAll)
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			st := new(Stats)
			got := readAllOf(t, path, ReadOptions{Allocator: mem, Columns: plainFastCols, BatchSize: 700, Workers: 2, NoSpill: true, Stats: st, Tuning: tune}, "NoSpill")
			if n := st.SpilledPages.Load(); n != 0 {
				t.Errorf("%d pages were spilled", n)
			}
			dirEmpty(t, sdir, "during and after the read")
			pqtest.SameRows(t, want[0].Schema(), got, want)
			pqtest.ReleaseAll(got)
		})
	}
}
