package pqread

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// checkDuckDBRows checks the rows of the DuckDB fixtures (testdata/writers,
// make.mjs): every value is a function of the row number.
func checkDuckDBRows(t *testing.T, recs []arrow.Record, want int) {
	t.Helper()
	i := 0
	for _, rec := range recs {
		cols := map[string]arrow.Array{}
		types := map[string]arrow.DataType{"x0": arrow.PrimitiveTypes.Float64, "x1": arrow.PrimitiveTypes.Float64,
			"x2": arrow.PrimitiveTypes.Float64, "f": arrow.PrimitiveTypes.Float32, "id": arrow.PrimitiveTypes.Int64,
			"k": arrow.PrimitiveTypes.Int32, "s": arrow.BinaryTypes.String}
		for k, f := range rec.Schema().Fields() {
			if !arrow.TypeEqual(f.Type, types[f.Name]) {
				t.Fatalf("column %q is %v, want %v", f.Name, f.Type, types[f.Name])
			}
			cols[f.Name] = rec.Column(k)
		}
		for r := 0; r < int(rec.NumRows()); r, i = r+1, i+1 {
			fi := float64(i)
			if x, ok := cols["x0"].(*array.Float64); ok && (x.IsNull(r) || x.Value(r) != fi*0.5) {
				t.Fatalf("row %d: x0 = %v, want %v", i, x.ValueStr(r), fi*0.5)
			}
			if x, ok := cols["x1"].(*array.Float64); ok {
				if i%7 == 3 {
					if !x.IsNull(r) {
						t.Fatalf("row %d: x1 = %v, want null", i, x.Value(r))
					}
				} else if x.IsNull(r) || x.Value(r) != fi*1.25 {
					t.Fatalf("row %d: x1 = %v, want %v", i, x.ValueStr(r), fi*1.25)
				}
			}
			if x, ok := cols["x2"].(*array.Float64); ok && (x.IsNull(r) || x.Value(r) != float64(i%5)) {
				t.Fatalf("row %d: x2 = %v, want %v", i, x.ValueStr(r), i%5)
			}
			if x, ok := cols["f"].(*array.Float32); ok && (x.IsNull(r) || x.Value(r) != float32(fi*0.25)) {
				t.Fatalf("row %d: f = %v, want %v", i, x.ValueStr(r), fi*0.25)
			}
			if x, ok := cols["id"].(*array.Int64); ok && (x.IsNull(r) || x.Value(r) != int64(i)) {
				t.Fatalf("row %d: id = %v", i, x.ValueStr(r))
			}
			if x, ok := cols["k"].(*array.Int32); ok && (x.IsNull(r) || x.Value(r) != int32(i%3)) {
				t.Fatalf("row %d: k = %v", i, x.ValueStr(r))
			}
			if x, ok := cols["s"].(*array.String); ok && (x.IsNull(r) || x.Value(r) != "v"+strconv.Itoa(i%4)) {
				t.Fatalf("row %d: s = %v", i, x.ValueStr(r))
			}
		}
	}
	if i != want {
		t.Fatalf("read %d rows, want %d", i, want)
	}
}

// TestReadDuckDBPageV2 reads DuckDB's PARQUET_VERSION v2 files: data page
// v2, BYTE_STREAM_SPLIT doubles and floats (which Arrow v15 cannot decode:
// its reader used to read them as empty and the file was refused as
// corrupt), DELTA_BINARY_PACKED integers, dictionaries, nulls, snappy and
// zstd, on both sides of the row-group size the column-wise path takes.
// The same rows as the Rust writer (arrow-rs) writes them are read too: in
// data page v2 with 1 KB pages and dictionaries that fall back to PLAIN
// within a chunk, and in its defaults with Hadoop-framed LZ4.
func TestReadDuckDBPageV2(t *testing.T) {
	for _, file := range []string{"duckdb_v2.parquet", "duckdb_v2_zstd.parquet", "arrowrs_v2.parquet", "arrowrs_lz4.parquet"} {
		for _, small := range []bool{false, true} {
			name := file
			if small {
				name += "/streamed"
			}
			t.Run(name, func(t *testing.T) {
				tune := DefaultTuning()
				if small {
					tune.MaxColumnwiseRows = 1000 // every row group is over it
					tune.SegmentRows = 300        // segments of 700 rows (the batch size), pages overhang them
				}
				// Arrow v15's DELTA_BINARY_PACKED decoder never frees
				// a 64-byte buffer per column chunk, nor its page reader
				// the last page of a string chunk of v2 pages that falls
				// back from its dictionary to PLAIN (the Go allocator
				// collects both): the checked allocator reads the other
				// columns, and those are read on their own.
				colSets := [][]string{{"x0", "x1", "x2", "f", "k", "s"}, {"id"}}
				if file == "arrowrs_v2.parquet" {
					colSets = [][]string{{"x0", "x1", "x2", "f", "k"}, {"id"}, {"s"}}
				}
				var streamed int64 // row groups streamed
				for _, cols := range colSets {
					var mem memory.Allocator = memory.NewGoAllocator()
					if cols[0] != "id" && cols[0] != "s" {
						checked := memory.NewCheckedAllocator(mem)
						defer checked.AssertSize(t, 0)
						mem = checked
					}
					st := new(Stats)
					recs := readAllOf(t, filepath.Join("../../testdata", "writers", file), ReadOptions{Allocator: mem, BatchSize: 700, Columns: cols, Stats: st, Tuning: tune}, file)
					streamed += st.StreamedRowGroups.Load()
					defer pqtest.ReleaseAll(recs)
					if got := recs[0].NumCols(); got != int64(len(cols)) {
						t.Fatalf("read %d columns, want %d", got, len(cols))
					}
					checkDuckDBRows(t, recs, 5000)
					if cols[0] == "x0" && !small && st.PlainColumns.Load() == 0 {
						t.Error("the fast path decoded no column")
					}
				}
				if small && streamed == 0 {
					t.Error("no row group was streamed")
				}
			})
		}
	}
}

// TestReadDuckDBPageV2Corrupt garbles bytes of the BYTE_STREAM_SPLIT
// chunks of the DuckDB v2 fixture (headers, levels, values): a read either
// fails with ErrFormat or returns every row, and leaks nothing.
func TestReadDuckDBPageV2Corrupt(t *testing.T) {
	garbleChunks(t, filepath.Join("../../testdata", "writers", "duckdb_v2.parquet"), 5000, 60, 97,
		ReadOptions{BatchSize: 700, Columns: []string{"x0", "x1", "f"}})
}

// garbleChunks flips each byte of the first head bytes of the chunks of
// opts.Columns in the first row group of src (every 7th with -short), and
// every every-th byte after them, one at a time: each read fails with
// ErrFormat or returns all rows rows, leaks nothing, and some of each
// happen.
func garbleChunks(t *testing.T, src string, rows int, head, every int64, opts ReadOptions) {
	t.Helper()
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bad.parquet")
	var failed, read int
	for _, rgn := range plainChunkRanges(t, src, opts.Columns)[:len(opts.Columns)] {
		step := int64(3)
		switch {
		case testing.Short():
			step = 7
		case exhaustive():
			step = 1
		}
		for o := int64(0); o < rgn[1]; o += step {
			if o >= head && o%every != 0 {
				continue
			}
			data := append([]byte(nil), orig...)
			data[rgn[0]+o] ^= 0xff
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			o2 := opts
			o2.Allocator = mem
			r, err := openFile(path, o2)
			if err == nil {
				var recs []arrow.Record
				recs, err = readRest(r)
				r.Close()
				n := 0
				for _, rec := range recs {
					n += int(rec.NumRows())
				}
				pqtest.ReleaseAll(recs)
				if err == nil && n != rows {
					t.Errorf("byte %d: read %d rows without an error", rgn[0]+o, n)
				}
			}
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Errorf("byte %d: %v, not ErrFormat", rgn[0]+o, err)
				}
				failed++
			} else {
				read++
			}
			mem.AssertSize(t, 0)
		}
	}
	if failed == 0 || read == 0 {
		t.Errorf("%d corruptions read, %d rejected: want some of each", read, failed)
	}
}

// TestUnsplit checks the joining of BYTE_STREAM_SPLIT streams against the
// definition (byte b of value i at src[b*n+i]) for every width and
// lengths around the 8-value blocks.
func TestUnsplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, w := range []int{4, 8, 2} {
		for n := range 70 {
			src := make([]byte, n*w)
			for i := range src {
				src[i] = byte(rng.Uint32())
			}
			got := make([]byte, n*w)
			unsplit(got, src, w)
			for i := range n {
				for b := range w {
					if got[i*w+b] != src[b*n+i] {
						t.Fatalf("w=%d n=%d: value %d byte %d is %#x, want %#x", w, n, i, b, got[i*w+b], src[b*n+i])
					}
				}
			}
		}
	}
}
