package pqread

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/golang/snappy"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// writeWideParquet writes rows × cols float64 values (plain encoding, or
// dictionary encoding if dict: every row group repeats the same 65,536
// rows, so the dictionaries hold 65,536 values and never overflow) to
// path: the input shape of the speed test.
func writeWideParquet(b *testing.B, path string, rows, cols int, codec compress.Compression, rgRows int64, dict ...bool) {
	b.Helper()
	fields := make([]arrow.Field, cols)
	for j := range fields {
		fields[j] = arrow.Field{Name: "f" + strconv.Itoa(j), Type: arrow.PrimitiveTypes.Float64}
	}
	s := arrow.NewSchema(fields, nil)
	const chunk = 1 << 16
	rng := rand.New(rand.NewPCG(1, 2))
	mem := memory.NewGoAllocator()
	arrs := make([]arrow.Array, cols)
	for j := range arrs {
		bld := array.NewFloat64Builder(mem)
		for i := 0; i < chunk; i++ {
			bld.Append(rng.NormFloat64())
		}
		arrs[j] = bld.NewArray()
		bld.Release()
	}
	rec := array.NewRecord(s, arrs, chunk)
	releaseArrays(arrs)
	defer rec.Release()
	var recs []arrow.Record
	for n := 0; n < rows; n += chunk {
		recs = append(recs, rec.NewSlice(0, int64(min(chunk, rows-n))))
	}
	defer pqtest.ReleaseAll(recs)
	if err := WriteParquet(path, s, recs, ParquetOptions{Compression: codec, RowGroupRows: rgRows, Dictionary: len(dict) > 0 && dict[0]}); err != nil {
		b.Fatal(err)
	}
}

func releaseArrays(arrs []arrow.Array) {
	for _, a := range arrs {
		a.Release()
	}
}

// BenchmarkReadParquet reads a 1,000,000 × 64 float64 Parquet file (the
// speed test's input) through Open/Read, for several read settings.
func BenchmarkReadParquet(b *testing.B) {
	const rows, cols = 1_000_000, 64
	dir := b.TempDir()
	files := map[string]string{
		"uncompressed": filepath.Join(dir, "wide.parquet"),
		"snappy":       filepath.Join(dir, "wide_snappy.parquet"),
		"dictionary":   filepath.Join(dir, "wide_dict.parquet"),
	}
	writeWideParquet(b, files["uncompressed"], rows, cols, compress.Codecs.Uncompressed, 1<<18)
	writeWideParquet(b, files["snappy"], rows, cols, compress.Codecs.Snappy, 1<<18)
	writeWideParquet(b, files["dictionary"], rows, cols, compress.Codecs.Snappy, 1<<17, true)
	for _, tc := range []struct {
		file     string
		batch    int
		buf      int64
		parallel bool
		slow     bool // the fast path off: pqarrow decodes every column
	}{
		{"uncompressed", 65536, 64 << 10, false, false},
		{"uncompressed", 65536, 64 << 10, true, false},
		{"uncompressed", 65536, 16 << 10, false, false},
		{"uncompressed", 65536, 256 << 10, false, false},
		{"uncompressed", 65536, 1 << 20, false, false},
		{"uncompressed", 8192, 64 << 10, false, false},
		{"uncompressed", 1 << 18, 64 << 10, false, false},
		{"snappy", 65536, 64 << 10, false, false},
		{"snappy", 65536, 64 << 10, true, false},
		{"dictionary", 65536, 64 << 10, false, false},
		{"dictionary", 65536, 64 << 10, false, true},
	} {
		name := tc.file + "/batch=" + strconv.Itoa(tc.batch) + "/buf=" + strconv.FormatInt(tc.buf>>10, 10) + "KiB/parallel=" + strconv.FormatBool(tc.parallel)
		if tc.slow {
			name += "/fast=false"
		}
		b.Run(name, func(b *testing.B) {
			tune := DefaultTuning()
			tune.BufferSize, tune.Parallel, tune.PlainFast = tc.buf, tc.parallel, !tc.slow
			b.SetBytes(rows * cols * 8)
			b.ReportAllocs()
			for b.Loop() {
				r, err := openFile(files[tc.file], ReadOptions{BatchSize: tc.batch, Tuning: tune})
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for {
					rec, err := r.Read()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n += rec.NumRows()
					rec.Release()
				}
				r.Close()
				if n != rows {
					b.Fatalf("read %d rows, want %d", n, rows)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkReadParquetWorkers reads the speed test's input shape
// (1,000,000 × 64 float64, Snappy, row groups of 131,072 rows) with one
// record reader in the calling goroutine and with 1 and 2 row-group
// workers.
func BenchmarkReadParquetWorkers(b *testing.B) {
	const rows, cols = 1_000_000, 64
	path := filepath.Join(b.TempDir(), "wide_snappy_rg131072.parquet")
	writeWideParquet(b, path, rows, cols, compress.Codecs.Snappy, 131072)
	for _, tc := range []struct {
		name      string
		workers   int
		oneReader bool
	}{
		{"one-reader", 0, true},
		{"W=1", 1, false},
		{"W=2", 2, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tune := DefaultTuning()
			tune.OneReader = tc.oneReader
			b.SetBytes(rows * cols * 8)
			b.ReportAllocs()
			for b.Loop() {
				r, err := openFile(path, ReadOptions{BatchSize: 65536, Workers: tc.workers, Tuning: tune})
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for {
					rec, err := r.Read()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n += rec.NumRows()
					rec.Release()
				}
				r.Close()
				if n != rows {
					b.Fatalf("read %d rows, want %d", n, rows)
				}
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(rows)*float64(b.N)/secs, "rows/s")
			b.ReportMetric(float64(rows*cols*8)*float64(b.N)/secs/1e9, "GB/s")
		})
	}
}

// BenchmarkUnsplit joins a page of BYTE_STREAM_SPLIT values (DuckDB's
// PARQUET_VERSION v2 floating-point encoding) of each width.
func BenchmarkUnsplit(b *testing.B) {
	const n = 1 << 17
	for _, w := range []int{4, 8} {
		b.Run("w="+strconv.Itoa(w), func(b *testing.B) {
			src := make([]byte, n*w)
			for i := range src {
				src[i] = byte(i * 7)
			}
			dst := make([]byte, n*w)
			b.SetBytes(int64(n * w))
			for b.Loop() {
				unsplit(dst, src, w)
			}
		})
	}
}

// BenchmarkSnappyFragments walks the tags of a snappy block of 8 MB of
// bytes drawn from four values (a float's exponent byte, as DuckDB's
// BYTE_STREAM_SPLIT pages hold it: short copies), against decoding it.
func BenchmarkSnappyFragments(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 8<<20)
	for i := range data {
		data[i] = byte(60 + rng.IntN(4))
	}
	block := snappy.Encode(nil, data)
	r := bytes.NewReader(block)
	b.Run("walk", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, ok := snappyFragments(r, 0, int64(len(block)), int64(len(data)), DefaultTuning().SnappyFragment); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		dst := make([]byte, len(data))
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := snappy.Decode(dst, block); err != nil {
				b.Fatal(err)
			}
		}
	})
}
