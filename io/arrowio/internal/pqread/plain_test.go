package pqread

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

type plainFile struct {
	rows, rgRows int
	codec        compress.Compression
	v2           bool
	smallPages   bool
	dictionary   bool
	dictLimit    int64 // the writer's dictionary page size limit, if not 0
	legacy       bool  // format version 1.0: PLAIN_DICTIONARY pages
}

// writePlainFile writes pf's rows of pqtest.PlainSchema with pqarrow.
// plainFastFields is the number of pqtest.PlainSchema's columns the fast path
// decodes when nothing else stands in its way.
const plainFastFields = 10

// plainFastCols are the names of pqtest.PlainSchema's columns the fast path takes.
var plainFastCols = []string{"i32", "i32n", "i64n", "f32", "f64", "f64n", "f64full", "f32null", "i32low", "i64low"}

func writePlainFile(t testing.TB, path string, pf plainFile) {
	t.Helper()
	mem := memory.NewGoAllocator()
	var recs []arrow.Record
	for i := 0; i < pf.rows; i += 3000 {
		recs = append(recs, pqtest.PlainRecord(mem, i, min(3000, pf.rows-i)))
	}
	defer pqtest.ReleaseAll(recs)
	opts := []parquet.WriterProperty{
		parquet.WithCompression(pf.codec),
		parquet.WithDictionaryDefault(pf.dictionary),
		parquet.WithMaxRowGroupLength(int64(pf.rgRows)),
		parquet.WithRootRepetition(parquet.Repetitions.Required),
	}
	if pf.v2 {
		opts = append(opts, parquet.WithDataPageVersion(parquet.DataPageV2))
	}
	if pf.smallPages {
		opts = append(opts, parquet.WithDataPageSize(512), parquet.WithBatchSize(50))
	}
	if pf.legacy {
		opts = append(opts, parquet.WithVersion(parquet.V1_0))
	}
	if pf.dictLimit > 0 {
		// The writer falls back to PLAIN pages for the rest of a chunk
		// once its dictionary outgrows this.
		opts = append(opts, parquet.WithDictionaryPageSizeLimit(pf.dictLimit))
	}
	tbl := array.NewTableFromRecords(pqtest.PlainSchema, recs)
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pqarrow.WriteTable(tbl, f, int64(pf.rgRows), parquet.NewWriterProperties(opts...), pqarrow.DefaultWriterProps()); err != nil {
		t.Fatal(err)
	}
}

// readParquetBoth reads path with the fast path on and off; it returns
// the records, the error and the number of columns the fast path decoded.
// readAllOf opens path with opts, reads all its batches and closes the
// reader; an error fails the test, named by what.
func readAllOf(t *testing.T, path string, opts ReadOptions, what string) []arrow.Record {
	t.Helper()
	r, err := openFile(path, opts)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got, err := readRest(r)
	r.Close()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return got
}

// pqarrowRows reads the plain-layout test file at path with pqarrow (the
// reference every fast path is held to), released when the test ends.
func pqarrowRows(t *testing.T, path string) []arrow.Record {
	t.Helper()
	want, err, _ := readParquetWith(t, path, false, memory.NewGoAllocator(), plainFastCols)
	if err != nil {
		t.Fatalf("pqarrow: %v", err)
	}
	t.Cleanup(func() { pqtest.ReleaseAll(want) })
	return want
}

// readParquetWith reads the columns cols of path (nil: all) with the fast
// path on or off, and returns the records and the column chunks the fast
// path decoded. The reader takes the tuning tune, if given (the test's
// own: it is not changed), else the defaults.
func readParquetWith(t testing.TB, path string, fast bool, mem memory.Allocator, cols []string, tune ...*Tuning) ([]arrow.Record, error, int64) {
	t.Helper()
	recs, err, st := readParquetStats(t, path, fast, mem, cols, tune...)
	return recs, err, st.PlainColumns.Load()
}

// readParquetStats is readParquetWith returning the reader's Stats.
func readParquetStats(t testing.TB, path string, fast bool, mem memory.Allocator, cols []string, tune ...*Tuning) ([]arrow.Record, error, *Stats) {
	t.Helper()
	tn := DefaultTuning()
	if len(tune) > 0 {
		c := *tune[0]
		tn = &c
	}
	tn.PlainFast = fast
	st := new(Stats)
	r, err := openFile(path, ReadOptions{Allocator: mem, Columns: cols, BatchSize: 5000, Stats: st, Tuning: tn})
	if err != nil {
		return nil, err, st
	}
	defer r.Close()
	recs, err := readRest(r)
	return recs, err, st
}

// readRest reads r to its end; on an error it releases what it read.
func readRest(r *Reader) ([]arrow.Record, error) {
	var recs []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			pqtest.ReleaseAll(recs)
			return nil, err
		}
		recs = append(recs, rec)
	}
}

// TestParquetPlainFastPath checks that the fast path decodes what pqarrow
// decodes, for every codec, both data page versions, small and large
// pages, varied row groups, projections and nulls, and that it is taken
// exactly for the columns it should take.
func TestParquetPlainFastPath(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		pf   plainFile
		cols []string
		fast int // fast-path columns per row group
	}{
		{"none/v1", plainFile{rows: 7000, rgRows: 7000, codec: compress.Codecs.Uncompressed}, nil, plainFastFields},
		{"snappy/v1", plainFile{rows: 9000, rgRows: 4000, codec: compress.Codecs.Snappy}, nil, plainFastFields},
		{"zstd/v1", plainFile{rows: 5000, rgRows: 2048, codec: compress.Codecs.Zstd}, nil, plainFastFields},
		{"gzip/v1", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Gzip}, nil, plainFastFields},
		{"none/v2", plainFile{rows: 7000, rgRows: 3000, codec: compress.Codecs.Uncompressed, v2: true}, nil, plainFastFields},
		{"snappy/v2", plainFile{rows: 9000, rgRows: 9000, codec: compress.Codecs.Snappy, v2: true}, nil, plainFastFields},
		{"zstd/v2", plainFile{rows: 5000, rgRows: 1000, codec: compress.Codecs.Zstd, v2: true}, nil, plainFastFields},
		{"gzip/v2", plainFile{rows: 5000, rgRows: 2500, codec: compress.Codecs.Gzip, v2: true}, nil, plainFastFields},
		{"snappy/v1/small-pages", plainFile{rows: 6000, rgRows: 2500, codec: compress.Codecs.Snappy, smallPages: true}, nil, plainFastFields},
		{"none/v2/small-pages", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Uncompressed, v2: true, smallPages: true}, nil, plainFastFields},
		{"zstd/v2/small-pages", plainFile{rows: 6000, rgRows: 1700, codec: compress.Codecs.Zstd, v2: true, smallPages: true}, nil, plainFastFields},
		{"snappy/v1/projection", plainFile{rows: 4000, rgRows: 1500, codec: compress.Codecs.Snappy}, []string{"s", "f64n", "date", "i32"}, 2},
		{"snappy/v1/dictionary", plainFile{rows: 4000, rgRows: 1500, codec: compress.Codecs.Snappy, dictionary: true}, nil, plainFastFields},
		{"none/v2/dictionary", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Uncompressed, v2: true, dictionary: true}, nil, plainFastFields},
		{"none/v1/dictionary", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Uncompressed, dictionary: true}, nil, plainFastFields},
		{"zstd/v1/dictionary/small-pages", plainFile{rows: 5000, rgRows: 2000, codec: compress.Codecs.Zstd, dictionary: true, smallPages: true}, nil, plainFastFields},
		{"gzip/v2/dictionary", plainFile{rows: 5000, rgRows: 2500, codec: compress.Codecs.Gzip, v2: true, dictionary: true}, nil, plainFastFields},
		{"snappy/v2/dictionary/small-pages", plainFile{rows: 5000, rgRows: 5000, codec: compress.Codecs.Snappy, v2: true, dictionary: true, smallPages: true}, nil, plainFastFields},
		// Dictionaries of 2 KB: the high-cardinality columns fall back to
		// PLAIN pages after their first ~256 to ~512 values, in the same
		// chunk as their dictionary pages; the low-cardinality ones stay
		// dictionary-encoded.
		{"none/v1/dictionary-fallback", plainFile{rows: 6000, rgRows: 3000, codec: compress.Codecs.Uncompressed, dictionary: true, dictLimit: 2048}, nil, plainFastFields},
		{"snappy/v1/dictionary-fallback/small-pages", plainFile{rows: 6000, rgRows: 6000, codec: compress.Codecs.Snappy, dictionary: true, dictLimit: 2048, smallPages: true}, nil, plainFastFields},
		{"zstd/v2/dictionary-fallback", plainFile{rows: 6000, rgRows: 2500, codec: compress.Codecs.Zstd, v2: true, dictionary: true, dictLimit: 2048}, nil, plainFastFields},
		{"gzip/v1/dictionary-fallback", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Gzip, dictionary: true, dictLimit: 2048}, nil, plainFastFields},
		{"none/v2/dictionary-fallback/small-pages", plainFile{rows: 6000, rgRows: 3000, codec: compress.Codecs.Uncompressed, v2: true, dictionary: true, dictLimit: 2048, smallPages: true}, nil, plainFastFields},
		{"snappy/v1/dictionary/legacy", plainFile{rows: 4000, rgRows: 2000, codec: compress.Codecs.Snappy, dictionary: true, legacy: true}, nil, plainFastFields},
		{"none/v1/dictionary-fallback/legacy", plainFile{rows: 4000, rgRows: 4000, codec: compress.Codecs.Uncompressed, dictionary: true, dictLimit: 2048, legacy: true}, nil, plainFastFields},
		{"snappy/v1/dictionary/projection", plainFile{rows: 4000, rgRows: 1500, codec: compress.Codecs.Snappy, dictionary: true, dictLimit: 2048}, []string{"s", "i32low", "f64n", "date"}, 2},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && i%3 != 1 {
				t.Skip("-short: every third case")
			}
			path := filepath.Join(dir, "p"+strconv.Itoa(i)+".parquet")
			writePlainFile(t, path, tc.pf)
			if tc.pf.dictionary {
				// The file has the pages the case is about: a
				// dictionary page first in every chunk, then data pages
				// of indices, and PLAIN ones after the writer's
				// fallback (only with the small limit, and never for the
				// low-cardinality columns).
				for _, c := range []string{"f64", "i32n", "i64low", "i32low"} {
					k := chunkPages(t, path, c)
					fallback := tc.pf.dictLimit > 0 && c != "i64low" && c != "i32low"
					if !k.dictFirst || k.dict != 1 || k.indices == 0 || (k.plain > 0) != fallback || k.legacy != tc.pf.legacy {
						t.Fatalf("column %s: pages %+v, fallback to PLAIN %v", c, k, fallback)
					}
				}
			}
			// pqarrow's column readers (the fallback) leak allocations on
			// data page v2 files (see the report of the fast path's
			// commit): the leak check of reads that use them is for v1
			// files; fastOnly below checks the fast path's own accounting.
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			if !tc.pf.v2 {
				defer mem.AssertSize(t, 0)
			}
			want, err, n := readParquetWith(t, path, false, mem, tc.cols)
			if err != nil {
				t.Fatalf("pqarrow: %v", err)
			}
			defer pqtest.ReleaseAll(want)
			if n != 0 {
				t.Errorf("fast path off, yet it decoded %d columns", n)
			}
			got, err, n := readParquetWith(t, path, true, mem, tc.cols)
			if err != nil {
				t.Fatalf("fast path: %v", err)
			}
			defer pqtest.ReleaseAll(got)
			rgs := (tc.pf.rows + tc.pf.rgRows - 1) / tc.pf.rgRows
			if want := int64(tc.fast * rgs); n != want {
				t.Errorf("fast path decoded %d column chunks, want %d", n, want)
			}
			if len(want) == 0 || len(got) == 0 {
				t.Fatal("no records")
			}
			pqtest.SameRows(t, want[0].Schema(), got, want)
			if tc.cols == nil {
				ref := pqtest.PlainRecord(memory.NewGoAllocator(), 0, tc.pf.rows)
				defer ref.Release()
				pqtest.SameRows(t, pqtest.PlainSchema, got, []arrow.Record{ref})
			}
			// Only the fast path's columns: no pqarrow column reader runs.
			fastOnly := plainFastCols
			fmem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			fast, err, n := readParquetWith(t, path, true, fmem, fastOnly)
			if err != nil {
				t.Fatalf("fast path, fast columns: %v", err)
			}
			if want := int64(len(fastOnly) * rgs); tc.fast > 0 && n != want {
				t.Errorf("fast path decoded %d column chunks of the fast columns, want %d", n, want)
			}
			pqtest.ReleaseAll(fast)
			if !tc.pf.v2 || tc.fast > 0 {
				fmem.AssertSize(t, 0)
			}
		})
	}
}

// TestParquetPlainCorrupt garbles bytes in the column chunks of fast-path
// columns (page headers, levels, values; dictionary pages and runs of
// indices) and checks that reading with the fast path gives what pqarrow
// alone gives: the same rows, or an error wrapping ErrFormat with the same
// message; never a panic or a leak. It garbles the first row group's
// chunks, one way per byte (10 s); PATE_PLAIN_FULL=1 garbles every row
// group's, three ways (60 s).
func TestParquetPlainCorrupt(t *testing.T) {
	dir := t.TempDir()
	files := []plainFile{
		{rows: 3000, rgRows: 1000, codec: compress.Codecs.Uncompressed, smallPages: true},
		{rows: 3000, rgRows: 3000, codec: compress.Codecs.Snappy},
		{rows: 3000, rgRows: 1500, codec: compress.Codecs.Zstd, v2: true},
		{rows: 3000, rgRows: 3000, codec: compress.Codecs.Gzip, v2: true, smallPages: true},
		{rows: 3000, rgRows: 1500, codec: compress.Codecs.Uncompressed, dictionary: true, dictLimit: 1024, smallPages: true},
		{rows: 3000, rgRows: 3000, codec: compress.Codecs.Snappy, v2: true, dictionary: true, dictLimit: 1024},
		{rows: 2000, rgRows: 2000, codec: compress.Codecs.Uncompressed, v2: true, dictionary: true},
	}
	var agreeErr, agreeOK int
	for i, pf := range files {
		cols := []string{"i32", "f64n", "i64n", "f32null"}
		if pf.dictionary {
			cols = []string{"f64n", "i32low", "i64low", "f32null"}
		}
		clean := filepath.Join(dir, "clean"+strconv.Itoa(i)+".parquet")
		writePlainFile(t, clean, pf)
		orig, err := os.ReadFile(clean)
		if err != nil {
			t.Fatal(err)
		}
		ranges := plainChunkRanges(t, clean, cols)
		full := os.Getenv("PATE_PLAIN_FULL") != ""
		if !full {
			ranges = ranges[:len(cols)] // the first row group's
		}
		if testing.Short() {
			ranges = ranges[i%len(cols) : i%len(cols)+1] // one chunk a file
		}
		for _, rgn := range ranges {
			// The first 40 bytes (page header and levels) byte by byte,
			// and those of the second page (after a dictionary page: the
			// header, levels, bit width and first runs of indices), then
			// points through the chunk, and its last byte.
			var offs []int64
			for o := int64(0); o < min(40, rgn[1]); o++ {
				offs = append(offs, rgn[0]+o)
			}
			if pf.dictionary {
				var h pageHeader
				n, ok := h.parse(orig[rgn[0] : rgn[0]+rgn[1]])
				if !ok || h.typ != pageDictionary {
					t.Fatalf("file %d: a chunk without a dictionary page", i)
				}
				second := int64(n) + int64(h.csize)
				for o := second; o < min(second+40, rgn[1]); o++ {
					offs = append(offs, rgn[0]+o)
				}
			}
			for o := int64(40); o < rgn[1]; o += max(1, rgn[1]/9) {
				offs = append(offs, rgn[0]+o)
			}
			offs = append(offs, rgn[0]+rgn[1]-1)
			for k, off := range offs {
				if testing.Short() && (k/3)%3 != i%3 { // a third of the offsets, every garble
					continue
				}
				garbles := []func(byte) byte{
					func(b byte) byte { return b ^ 0xff },
					func(b byte) byte { return b + 1 },
					func(byte) byte { return 0 },
				}
				if !full {
					garbles = garbles[k%3 : k%3+1]
				}
				for _, garble := range garbles {
					data := append([]byte(nil), orig...)
					data[off] = garble(data[off])
					path := filepath.Join(dir, "bad.parquet")
					if err := os.WriteFile(path, data, 0o644); err != nil {
						t.Fatal(err)
					}
					// pqarrow leaks on some corrupt pages and on v2 pages
					// (the fallback's own behaviour): the fast path's
					// accounting is checked by plainChunksLeakFree.
					mem := memory.NewGoAllocator()
					want, werr, _ := readParquetWith(t, path, false, mem, cols)
					got, gerr, _ := readParquetWith(t, path, true, mem, cols)
					switch {
					case werr != nil || gerr != nil:
						if werr == nil || gerr == nil || maskBytes(werr.Error()) != maskBytes(gerr.Error()) || !errors.Is(gerr, ErrFormat) || !errors.Is(werr, ErrFormat) {
							t.Errorf("file %d, byte %d: fast path error %v, pqarrow error %v", i, off, gerr, werr)
						}
						agreeErr++
					default:
						if !pqtest.SameRows(t, want[0].Schema(), got, want) {
							t.Errorf("file %d, byte %d: the fast path reads other rows than pqarrow", i, off)
						}
						agreeOK++
					}
					pqtest.ReleaseAll(want)
					pqtest.ReleaseAll(got)
					plainChunksLeakFree(t, path, cols)
				}
			}
		}
	}
	if agreeErr == 0 || agreeOK == 0 {
		t.Errorf("%d corruptions both read, %d both rejected: want some of each", agreeOK, agreeErr)
	}
}

// plainChunkRanges returns the byte ranges (offset, length) of the column
// chunks of the named columns in every row group of path.
func plainChunkRanges(t testing.TB, path string, cols []string) [][2]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	var out [][2]int64
	for rg := range pf.NumRowGroups() {
		md := pf.MetaData().RowGroup(rg)
		for _, c := range cols {
			cc, err := md.ColumnChunk(pf.MetaData().Schema.ColumnIndexByName(c))
			if err != nil {
				t.Fatal(err)
			}
			start := chunkStart(cc)
			out = append(out, [2]int64{start, cc.TotalCompressedSize()})
		}
	}
	return out
}

// pageKinds counts the pages of a column chunk.
type pageKinds struct {
	dict, indices, plain int  // dictionary pages, data pages of indices, PLAIN data pages
	dictFirst            bool // the first page is a dictionary page
	legacy               bool // the data pages of indices say PLAIN_DICTIONARY
}

// chunkPages walks the page headers of column c's chunk in the first row
// group of path.
func chunkPages(t testing.TB, path, c string) pageKinds {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rgn := plainChunkRanges(t, path, []string{c})[0]
	chunk := data[rgn[0] : rgn[0]+rgn[1]]
	var k pageKinds
	for pos, i := 0, 0; pos < len(chunk); i++ {
		var h pageHeader
		n, ok := h.parse(chunk[pos:])
		if !ok {
			t.Fatalf("column %s: page header at %d does not parse", c, pos)
		}
		switch {
		case h.typ == pageDictionary:
			k.dict++
			k.dictFirst = k.dictFirst || i == 0
		case dictEncoded(h.enc):
			k.indices++
			k.legacy = h.enc == encodingPlainDict
		case h.enc == encodingPlain:
			k.plain++
		}
		pos += n + int(h.csize)
	}
	return k
}

// maskBytes hides the byte count in pqarrow's PLAIN decoder errors: it is
// the capacity of a buffer from the worker's page pool, which depends on
// the buffers earlier columns returned to it (with the fast path, fewer).
func maskBytes(msg string) string {
	return nbytesRE.ReplaceAllString(msg, "nbytes: N")
}

var nbytesRE = regexp.MustCompile(`nbytes: [0-9]+`)

// plainChunksLeakFree decodes every chunk of cols in path with the fast
// path directly and checks that what it allocates is either handed out in
// its array (then released here) or freed when it falls back.
func plainChunksLeakFree(t *testing.T, path string, cols []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := file.NewParquetReader(f)
	if err != nil {
		return // a corrupt footer: the fast path is never asked
	}
	md := pf.MetaData()
	pd := &plainDecoder{tune: DefaultTuning(), r: f, size: st.Size()}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	for rg := range pf.NumRowGroups() {
		for _, c := range cols {
			i := pqtest.PlainSchema.FieldIndices(c)[0]
			leaf := md.Schema.ColumnIndexByName(c)
			if leaf < 0 {
				t.Fatalf("no column %q", c)
			}
			arr, ok := pd.plainColumn(md, rg, leaf, md.RowGroup(rg).NumRows(), pqtest.PlainSchema.Field(i).Type, mem)
			if ok {
				if int64(arr.Len()) != md.RowGroup(rg).NumRows() {
					t.Errorf("row group %d, column %q: %d rows, want %d", rg, c, arr.Len(), md.RowGroup(rg).NumRows())
				}
				arr.Release()
			}
		}
	}
	mem.AssertSize(t, 0)
}

// TestPageHeaderParse checks the Thrift page header reader on a header
// pqarrow writes, its truncations, and nesting and lengths meant to
// exhaust it.
func TestPageHeaderParse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.parquet")
	writePlainFile(t, path, plainFile{rows: 100, rgRows: 100, codec: compress.Codecs.Snappy, v2: true})
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rgn := plainChunkRanges(t, path, []string{"f64n"})[0]
	chunk := data[rgn[0] : rgn[0]+rgn[1]]
	var h pageHeader
	n, ok := h.parse(chunk)
	if !ok || h.typ != pageDataV2 || !h.v2 || h.numValues != 100 || h.numRows != 100 || h.enc != encodingPlain || int(h.csize) != len(chunk)-n {
		t.Fatalf("parsed %+v (%d bytes, ok %v) from a chunk of %d bytes", h, n, ok, len(chunk))
	}
	for cut := range n {
		var h pageHeader
		if _, ok := h.parse(chunk[:cut]); ok {
			t.Errorf("a header cut to %d of %d bytes parsed", cut, n)
		}
	}
	// Field 9 (unknown), a struct holding a struct ... 100 deep.
	deep := []byte{0x9c}
	for range 100 {
		deep = append(deep, 0x1c)
	}
	bad := map[string][]byte{
		"deep":      deep,
		"long list": {0x99, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"long map":  {0x9b, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x55},
		"long bin":  {0x98, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"big i32":   {0x15, 0xff, 0xff, 0xff, 0xff, 0x7f},
		"bad type":  {0x1d},
		"no fields": {0x00},
	}
	for name, b := range bad {
		var h pageHeader
		if _, ok := h.parse(b); ok {
			t.Errorf("%s: parsed", name)
		}
	}
}

// FuzzPlainChunk feeds arbitrary bytes to the fast path's page decoder as
// an uncompressed column chunk (the codecs have fuzzers of their own, and
// their panics make the fast path fall back): it must not panic, and
// what it accepts must fill exactly the rows asked for. The seeds are
// real chunks, v1 and v2, required and optional, PLAIN and dictionary
// encoded (with and without the writer's fallback to PLAIN pages).
func FuzzPlainChunk(f *testing.F) {
	for _, pf := range []plainFile{
		{v2: false},
		{v2: true},
		{v2: false, dictionary: true, dictLimit: 1024},
		{v2: true, dictionary: true},
	} {
		pf.rows, pf.rgRows, pf.codec, pf.smallPages = 300, 300, compress.Codecs.Uncompressed, true
		path := filepath.Join(f.TempDir(), "seed.parquet")
		writePlainFile(f, path, pf)
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		cols := []string{"i32", "i32n", "f64n", "f32null"}
		if pf.dictionary {
			cols = []string{"i64low", "i32low", "f64n", "f32null"}
		}
		for _, c := range cols {
			rgn := plainChunkRanges(f, path, []string{c})[0]
			w8 := c == "f64n" || c == "i64low"
			f.Add(data[rgn[0]:rgn[0]+rgn[1]], c != "i32" && c != "i64low", w8, uint16(300))
		}
	}
	f.Fuzz(func(t *testing.T, chunk []byte, optional, w8 bool, rows uint16) {
		w := 4
		if w8 {
			w = 8
		}
		n := int64(rows % 4096)
		if n == 0 {
			return
		}
		c := plainChunk{buf: chunk, w: w, rows: n, values: make([]byte, n*int64(w))}
		if optional {
			c.valid = make([]byte, bitutil.BytesForBits(n))
		}
		nulls, ok := c.decode(&plainDecoder{tune: DefaultTuning()})
		if !ok {
			return
		}
		if c.row != n || nulls < 0 || nulls > n || !optional && nulls != 0 {
			t.Fatalf("accepted: %d rows of %d, %d nulls", c.row, n, nulls)
		}
		if optional && int64(bitutil.CountSetBits(c.valid, 0, int(n))) != n-nulls {
			t.Fatalf("%d valid bits, %d rows, %d nulls", bitutil.CountSetBits(c.valid, 0, int(n)), n, nulls)
		}
	})
}

// TestParquetRecycledBuffers streams a file of many row groups through the
// fast path, releasing each batch before reading the next, with the
// recycler's poisoning on: buffers are reused, every value read is right
// (a buffer reused while still in use would show), nothing is written to
// a buffer after its release (checkPoison panics) and nothing leaks.
func TestParquetRecycledBuffers(t *testing.T) {
	tune := DefaultTuning()
	tune.PoisonRecycled = true
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		pf   plainFile
	}{
		{"snappy", plainFile{rows: 12000, rgRows: 1000, codec: compress.Codecs.Snappy}},
		{"none/ragged", plainFile{rows: 10500, rgRows: 1500, codec: compress.Codecs.Uncompressed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name[:4]+".parquet")
			writePlainFile(t, path, tc.pf)
			ref := pqtest.PlainRecord(memory.NewGoAllocator(), 0, tc.pf.rows)
			defer ref.Release()
			cols := plainFastCols
			refSchema, refRecs := pqtest.ProjectRecords([]arrow.Record{ref}, cols)
			defer pqtest.ReleaseAll(refRecs)
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			st := new(Stats)
			r, err := openFile(path, ReadOptions{Allocator: mem, Columns: cols, BatchSize: 700, Tuning: tune, Stats: st})
			if err != nil {
				t.Fatal(err)
			}
			at := readReleasing(t, r, refSchema, refRecs[0])
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if at != int64(tc.pf.rows) {
				t.Fatalf("read %d rows, want %d", at, tc.pf.rows)
			}
			if st.RecycledBuffers.Load() == 0 {
				t.Error("no buffer was recycled")
			}
		})
	}
}

// TestRecyclerClosed: after the end of the file the reader keeps no buffer:
// batches released later go back to the allocator at once.
func TestRecyclerClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.parquet")
	writePlainFile(t, path, plainFile{rows: 6000, rgRows: 1000, codec: compress.Codecs.Snappy})
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	r, err := openFile(path, ReadOptions{Allocator: mem, Columns: []string{"f64", "i32"}, BatchSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := readRest(r)
	if err != nil {
		t.Fatal(err)
	}
	pqtest.ReleaseAll(recs)
	if n := mem.CurrentAlloc(); n != 0 {
		t.Fatalf("%d bytes still allocated after every batch was released, with the reader open", n)
	}
}
