package arrowio

import (
	"bytes"
	"errors"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// seedFiles builds small valid inputs of one format and adds them, and
// truncations of them, to the fuzz corpus.
func addSeeds(f *testing.F, format Format) {
	dir := f.TempDir()
	mem := memory.NewGoAllocator()
	recs := pqtest.FixtureRecords(mem, 40, 15)
	defer pqtest.ReleaseAll(recs)
	var seeds [][]byte
	switch format {
	case FormatParquet:
		for i, opts := range []ParquetOptions{
			{RowGroupRows: 25},
			{Dictionary: true, Compression: compress.Codecs.Snappy},
			{Compression: compress.Codecs.Zstd, StoreSchema: true},
		} {
			p := filepath.Join(dir, "seed"+itoa(i)+".parquet")
			if err := WriteParquet(p, pqtest.FixtureSchema(), recs, opts); err != nil {
				f.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	case FormatIPCFile, FormatIPCStream:
		seeds = append(seeds, encodeIPC(f, pqtest.FixtureSchema(), recs, format == FormatIPCFile))
		seeds = append(seeds, encodeIPC(f, pqtest.FixtureSchema(), recs[:1], format == FormatIPCFile))
		// View columns (as Polars writes its strings), read through the
		// conversion to utf8 and binary.
		vs, vrecs := viewRecords(mem)
		seeds = append(seeds, encodeIPC(f, vs, vrecs, format == FormatIPCFile))
		pqtest.ReleaseAll(vrecs)
	case FormatCSV:
		seeds = append(seeds, encodeCSV(f, pqtest.FixtureSchema(), recs), []byte("a,b\n1,x\n,\n2.5,\"q\"\"\"\n"), []byte("t\ntrue\nFALSE\n"))
	}
	for _, b := range seeds {
		f.Add(b)
		for _, n := range []int{len(b) / 2, len(b) - 1, len(b) - 9, 16} {
			if n > 0 && n < len(b) {
				f.Add(b[:n])
			}
		}
	}
}

// fuzzRoundTrip reads data as standard input. Reading must never panic;
// whatever is read successfully, written back with the Writer and read
// again, must be equal.
func fuzzRoundTrip(t *testing.T, data []byte, spool string, tune *pqread.Tuning) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	opts := ReadOptions{BatchSize: 7, Allocator: mem, Stdin: bytes.NewReader(data), TempDir: spool, tune: tune}
	s, recs, err := readAllErr("-", opts)
	defer pqtest.ReleaseAll(recs)
	if err != nil {
		if !errors.Is(err, ErrFormat) {
			t.Logf("non-format error: %v", err)
		}
		return
	}
	var buf bytes.Buffer
	w, err := Create("-", s, WriteOptions{Allocator: mem, Stdout: &buf})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Abort()
			t.Fatalf("write back: %v", err)
		}
	}
	if err := w.Commit(nil); err != nil {
		t.Fatalf("commit: %v", err)
	}
	s2, recs2, err := readAllErr("-", ReadOptions{BatchSize: 5, Allocator: mem, Stdin: &buf})
	defer pqtest.ReleaseAll(recs2)
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	if !s.Equal(s2) {
		t.Fatalf("schema changed: %v then %v", s, s2)
	}
	t1 := array.NewTableFromRecords(s, recs)
	defer t1.Release()
	t2 := array.NewTableFromRecords(s2, recs2)
	defer t2.Release()
	if t1.NumRows() != t2.NumRows() {
		t.Fatalf("%d rows read back, want %d", t2.NumRows(), t1.NumRows())
	}
	for i := 0; i < int(t1.NumCols()); i++ {
		// ChunkedApproxEqual says false for two empty columns (v15).
		if t1.NumRows() > 0 && !array.ChunkedApproxEqual(t1.Column(i).Data(), t2.Column(i).Data(), array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Fatalf("column %d differs after round trip", i)
		}
	}
}

// readAllErr is readAll without test assertions: it returns the first
// error instead.
func readAllErr(path string, opts ReadOptions) (*arrow.Schema, []arrow.Record, error) {
	r, err := Open(path, opts)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	var recs []arrow.Record
	rows := int64(0)
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return r.Schema(), recs, nil
		}
		if err != nil {
			return nil, recs, err
		}
		recs = append(recs, rec)
		if rows += rec.NumRows(); rows > fuzzMaxRows {
			return nil, recs, errTooManyRows
		}
	}
}

// fuzzMaxRows bounds what a fuzz input may make the harness hold in memory:
// a few bytes of Parquet can declare billions of null rows, legitimately,
// and reading them all into memory (not the reader: the harness) would
// exhaust it. Past the bound the round trip is skipped.
const fuzzMaxRows = 1 << 17

var errTooManyRows = errors.New("fuzz harness: more rows than it keeps in memory")

func FuzzReadParquet(f *testing.F) {
	addSeeds(f, FormatParquet)
	spool := f.TempDir()
	tune := fuzzTuning()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip(t, data, spool, tune) })
}

// fuzzTuning is the default tuning with lower bounds on what one column
// chunk or IPC buffer may decode to: a few bytes of Parquet may
// legitimately declare a chunk of gigabytes (a run of a billion levels),
// which the readers then allocate, and fuzzing spent its time zeroing
// them.
func fuzzTuning() *pqread.Tuning {
	tune := pqread.DefaultTuning()
	tune.MaxListBytes = 1 << 24
	tune.MaxDecompressed = 1 << 24
	return tune
}

// FuzzReadParquetStreamed is FuzzReadParquet with row groups of more than
// 64 rows streamed in segments of 64, list chunks of any size decoded a
// segment at a time (listCursor), and the footer scanned and decoded a
// row group at a time (lazyFooter); its seeds add Polars' list file and one
// whose rows span pages (one with null and empty lists and null
// elements), and DuckDB's (null lists written its way, null elements,
// empty lists; byte-stream-split pages, of lists and of doubles, read by
// ranges).
func FuzzReadParquetStreamed(f *testing.F) {
	addSeeds(f, FormatParquet)
	for _, p := range []string{"testdata/writers/polars_emb.parquet", "testdata/writers/duckdb_emb.parquet",
		"testdata/writers/duckdb_emb_bss.parquet", "testdata/writers/duckdb_v2_one_group.parquet"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	spanning := filepath.Join(f.TempDir(), "spanning.parquet")
	pqtest.WriteSpanningList(f, spanning, 300, compress.Codecs.Snappy)
	b, err := os.ReadFile(spanning)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	pqtest.WriteSpanningNullList(f, spanning, 300, compress.Codecs.Snappy)
	if b, err = os.ReadFile(spanning); err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	spool := f.TempDir()
	// Row groups over 64 rows streamed in segments of 64, list chunks by
	// cursors, every footer a window of one row group at a time, and (a
	// free-left bound of 0) byte-stream-split pages read by ranges.
	tune := fuzzTuning()
	tune.MaxColumnwiseRows, tune.SegmentRows, tune.ListStreamBytes = 64, 64, 0
	tune.LazyFooterMin, tune.FooterWindowBytes = 0, 1
	tune.MaxFreeLeft = 0
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip(t, data, spool, tune) })
}

func FuzzReadIPCFile(f *testing.F) {
	addSeeds(f, FormatIPCFile)
	spool := f.TempDir()
	tune := fuzzTuning()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip(t, data, spool, tune) })
}

func FuzzReadIPCStream(f *testing.F) {
	addSeeds(f, FormatIPCStream)
	spool := f.TempDir()
	tune := fuzzTuning()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip(t, data, spool, tune) })
}

func FuzzReadCSV(f *testing.F) {
	addSeeds(f, FormatCSV)
	spool := f.TempDir()
	tune := fuzzTuning()
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip(t, data, spool, tune) })
}

// viewRecords is two batches of string_view and binary_view columns, with
// nulls, inline and out-of-line values.
func viewRecords(mem memory.Allocator) (*arrow.Schema, []arrow.Record) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: arrow.BinaryTypes.StringView, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.BinaryView, Nullable: true},
	}, nil)
	var recs []arrow.Record
	for k := 0; k < 2; k++ {
		rb := array.NewRecordBuilder(mem, s)
		for i := 0; i < 20; i++ {
			if i%7 == 3 {
				rb.Field(0).AppendNull()
				rb.Field(1).AppendNull()
				continue
			}
			v := strings.Repeat("ab", i) + itoa(k)
			rb.Field(0).(*array.StringViewBuilder).Append(v)
			rb.Field(1).(*array.BinaryViewBuilder).Append([]byte(v))
		}
		recs = append(recs, rb.NewRecord())
		rb.Release()
	}
	return s, recs
}
