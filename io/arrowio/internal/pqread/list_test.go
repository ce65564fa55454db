package pqread

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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

// listSchema has the list columns of the list fast path's tests: the
// trivial shape, and a null list, a null element or an empty list
// somewhere (listNullCols).
var listSchema = arrow.NewSchema([]arrow.Field{
	{Name: "f32", Type: arrow.FixedSizeListOf(5, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "l32req", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32)}, // a REQUIRED list
	// Arrow v15's writer writes the elements of a REQUIRED fixed-size
	// list as nulls (definition level 1 of 2): pqarrow and the fast path
	// read them so.
	{Name: "f32req", Type: arrow.FixedSizeListOf(5, arrow.PrimitiveTypes.Float32)},
	{Name: "f64", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float64), Nullable: true},
	{Name: "l32", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "nullList", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true}, // (pqarrow writes no null fixed-size list)
	{Name: "nullElem", Type: arrow.FixedSizeListOf(5, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "empty", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64), Nullable: true},
}, nil)

var (
	listTrivialCols = []string{"f32", "l32req", "f64", "l32"}
	listNullCols    = []string{"f32req", "nullList", "nullElem", "empty"}
	listFastCols    = append(append([]string{}, listTrivialCols...), listNullCols...)
	// The DuckDB fixtures' list columns: n32 has DuckDB's null lists.
	duckdbListCols = []string{"e32", "e64", "l32", "n32", "ne32", "em32"}
)

// listRecord returns rows start… of listSchema; element j of row i is
// (i·(j+3) mod 97)/8 − j, repeated enough for dictionaries to be kept.
func listRecord(mem memory.Allocator, start, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, listSchema)
	defer b.Release()
	v := func(i, j int) float64 { return float64((i*(j+3))%97)/8 - float64(j) }
	for i := start; i < start+n; i++ {
		for k := range listSchema.Fields() {
			name := listSchema.Field(k).Name
			lb := b.Field(k).(array.ListLikeBuilder)
			width := 5
			switch name {
			case "f64":
				width = 3
			case "l32", "l32req":
				width = 1 + i%4
			case "empty":
				width = i % 3 // an empty list every third row
			}
			if name == "nullList" && i%9 == 4 {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			for j := 0; j < width; j++ {
				switch vb := lb.ValueBuilder().(type) {
				case *array.Float32Builder:
					if name == "nullElem" && i%7 == 2 && j == 1 {
						vb.AppendNull()
					} else {
						vb.Append(float32(v(i, j)))
					}
				case *array.Float64Builder:
					vb.Append(v(i, j))
				}
			}
		}
	}
	return b.NewRecord()
}

// writeListFile writes pf's rows of listSchema with pqarrow.
func writeListFile(t testing.TB, path string, pf plainFile) {
	t.Helper()
	mem := memory.NewGoAllocator()
	var recs []arrow.Record
	for i := 0; i < pf.rows; i += 1000 {
		recs = append(recs, listRecord(mem, i, min(1000, pf.rows-i)))
	}
	defer pqtest.ReleaseAll(recs)
	opts := []parquet.WriterProperty{
		parquet.WithCompression(pf.codec),
		parquet.WithDictionaryDefault(pf.dictionary),
		parquet.WithMaxRowGroupLength(int64(pf.rgRows)),
	}
	if pf.v2 {
		opts = append(opts, parquet.WithDataPageVersion(parquet.DataPageV2))
	}
	if pf.smallPages {
		opts = append(opts, parquet.WithDataPageSize(512), parquet.WithBatchSize(50))
	}
	tbl := array.NewTableFromRecords(listSchema, recs)
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// With the Arrow schema stored the fixed-size lists read back as
	// fixed-size lists (as from pyarrow and Polars), not as lists.
	aprops := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema())
	if err := pqarrow.WriteTable(tbl, f, int64(pf.rgRows), parquet.NewWriterProperties(opts...), aprops); err != nil {
		t.Fatal(err)
	}
}

// listFastCase is a case of TestParquetListFastPath.
type listFastCase struct {
	name   string
	pf     plainFile // written by pqarrow when rows > 0
	path   string    // else this fixture
	fast   []string  // columns the fast path decodes
	slow   []string  // columns it leaves to pqarrow
	stream bool      // row groups streamed in segments
	byPage bool      // chunks read a page at a time, large pages streamed
	// Pages over 1024 bytes are streamed, chunks are not forced to be
	// read by page: a snappy or stored one whose first page streams is.
	firstPage bool
	// Pages after a chunk's first are decompressed straight into
	// place (columns without nulls).
	inPlace bool
	// (with byPage) pages over 16 × this are streamed, if not 1024;
	// zstd pages are then decoded into place.
	huge int32
}

// TestParquetListFastPath checks that the list fast path decodes what
// pqarrow decodes, for files written by pqarrow (fixed-size lists and
// lists of float32 and float64, OPTIONAL and REQUIRED, every codec, both
// data page versions, dictionaries, small pages, row groups streamed in
// segments), DuckDB (FLOAT[8], DOUBLE[8], FLOAT[]: Parquet LISTs, read as
// lists, with null lists, null elements and empty lists) and Polars
// (Array(Float32, 8)), and that it takes every one of those columns.
func TestParquetListFastPath(t *testing.T) {
	dir := t.TempDir()
	writers := "../../testdata/writers/"
	cases := []listFastCase{
		{name: "pqarrow/none/v1", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Uncompressed}},
		{name: "pqarrow/snappy/v1", pf: plainFile{rows: 4000, rgRows: 1500, codec: compress.Codecs.Snappy}},
		{name: "pqarrow/zstd/v2", pf: plainFile{rows: 3000, rgRows: 1000, codec: compress.Codecs.Zstd, v2: true}},
		{name: "pqarrow/gzip/v2/small-pages", pf: plainFile{rows: 2000, rgRows: 2000, codec: compress.Codecs.Gzip, v2: true, smallPages: true}},
		{name: "pqarrow/snappy/v1/small-pages", pf: plainFile{rows: 2500, rgRows: 1200, codec: compress.Codecs.Snappy, smallPages: true}, inPlace: true},
		{name: "pqarrow/snappy/v1/dictionary", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Snappy, dictionary: true}},
		{name: "pqarrow/none/v2/dictionary/small-pages", pf: plainFile{rows: 2000, rgRows: 1000, codec: compress.Codecs.Uncompressed, v2: true, dictionary: true, smallPages: true}},
		{name: "pqarrow/snappy/v1/streamed", pf: plainFile{rows: 6000, rgRows: 3000, codec: compress.Codecs.Snappy}, stream: true},
		{name: "duckdb/snappy/v1/dictionary", path: writers + "duckdb_emb.parquet", fast: duckdbListCols},
		{name: "duckdb/zstd/v2/dictionary", path: writers + "duckdb_emb_v2.parquet", fast: duckdbListCols},
		{name: "duckdb/streamed", path: writers + "duckdb_emb.parquet", fast: duckdbListCols, stream: true},
		{name: "pqarrow/snappy/v1/by-page", pf: plainFile{rows: 4000, rgRows: 2000, codec: compress.Codecs.Snappy}, byPage: true},
		{name: "pqarrow/none/v1/small-pages/by-page", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Uncompressed, smallPages: true}, byPage: true},
		{name: "pqarrow/zstd/v1/small-pages/by-page", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Zstd, smallPages: true}, byPage: true, huge: 16, inPlace: true},
		{name: "pqarrow/gzip/v1/by-page", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Gzip}, byPage: true},
		{name: "pqarrow/zstd/v2/dictionary/by-page", pf: plainFile{rows: 3000, rgRows: 1000, codec: compress.Codecs.Zstd, v2: true, dictionary: true}, byPage: true},
		{name: "pqarrow/snappy/v1/first-page-streams", pf: plainFile{rows: 4000, rgRows: 2000, codec: compress.Codecs.Snappy}, firstPage: true},
		{name: "pqarrow/none/v1/first-page-streams", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Uncompressed}, firstPage: true},
		{name: "pqarrow/zstd/v1/first-page-whole", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Zstd}, firstPage: true},
		{name: "pqarrow/snappy/v1/streamed/by-page", pf: plainFile{rows: 6000, rgRows: 3000, codec: compress.Codecs.Snappy}, stream: true, byPage: true},
		{name: "duckdb/snappy/v1/by-page", path: writers + "duckdb_emb.parquet", fast: duckdbListCols, byPage: true},
		{name: "polars/none/v1/by-page", path: writers + "polars_emb.parquet", fast: []string{"e32"}, byPage: true},
		{name: "polars/none/v1", path: writers + "polars_emb.parquet", fast: []string{"e32"}},
		{name: "duckdb/null element", path: writers + "duckdb_types.parquet", fast: []string{"emb"}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.pf.rows > 0 {
				path = filepath.Join(dir, "l"+strconv.Itoa(i)+".parquet")
				writeListFile(t, path, tc.pf)
				tc.fast = listFastCols
			}
			tune := DefaultTuning()
			if tc.byPage {
				tune.ListWholeBytes, tune.HugePageBytes = 0, 1024
				if tc.huge > 0 {
					tune.HugePageBytes = tc.huge
				}
			}
			if tc.firstPage {
				tune.HugePageBytes = 1024
			}
			if tc.stream {
				tune.MaxColumnwiseRows, tune.SegmentRows = 500, 500
			}
			pf, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			rgs := int64(pf.NumRowGroups())
			pf.Close()
			var streamed int64 // pages streamed
			for _, c := range append(append([]string{}, tc.fast...), tc.slow...) {
				streamed += checkListColumn(t, tc, path, c, rgs, tune).PageStreams.Load()
			}
			// Read by pages, the large PLAIN v1 pages (not DuckDB's, which
			// are dictionary-encoded here) were streamed.
			if tc.byPage && !tc.pf.v2 && !tc.pf.dictionary && tc.path != writers+"duckdb_emb.parquet" && streamed == 0 {
				t.Error("no page was streamed")
			}
			// Chunks read whole by their size: only snappy and stored ones
			// whose first page streams are read by page instead.
			if tc.firstPage {
				want := tc.pf.codec != compress.Codecs.Zstd
				if got := streamed != 0; got != want {
					t.Errorf("pages streamed: %v, want %v", got, want)
				}
			}
		})
	}
}

// checkListColumn reads column c of path with and without the fast path
// and checks what TestParquetListFastPath expects of case tc (rgs row
// groups) with the tuning tune; it returns the Stats of the read with the
// fast path.
func checkListColumn(t *testing.T, tc listFastCase, path, c string, rgs int64, tune *Tuning) *Stats {
	t.Helper()
	fast := false
	for _, f := range tc.fast {
		fast = fast || f == c
	}
	// pqarrow's column readers leak allocations on data page
	// v2 files (see TestParquetPlainFastPath): the leak check
	// is for v1 files and for the fast path alone.
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	want, err, n := readParquetWith(t, path, false, mem, []string{c}, tune)
	if err != nil {
		t.Fatalf("%s: pqarrow: %v", c, err)
	}
	if n != 0 {
		t.Errorf("%s: fast path off, yet it decoded %d columns", c, n)
	}
	got, err, st := readParquetStats(t, path, true, mem, []string{c}, tune)
	n = st.PlainColumns.Load()
	if err != nil {
		t.Fatalf("%s: fast path: %v", c, err)
	}
	if len(want) == 0 || len(got) == 0 {
		t.Fatalf("%s: no records", c)
	}
	// (A column the fast path leaves is pqarrow's both times;
	// pqarrow reads DuckDB's null FLOAT[8] lists with offsets
	// past the end of their values, which array.Equal cannot
	// compare.)
	if fast {
		pqtest.SameRows(t, want[0].Schema(), got, want)
	}
	// Against the rows written, where the row groups start at
	// a record of the table: Arrow v15's writer writes a
	// fixed-size list sliced mid-record with the wrong values
	// (both readers then read them alike).
	if fast && tc.pf.rows > 0 && tc.pf.rgRows%1000 == 0 && c != "f32req" {
		ref := listRecord(memory.NewGoAllocator(), 0, tc.pf.rows)
		col := ref.Column(listSchema.FieldIndices(c)[0])
		refRec := array.NewRecord(got[0].Schema(), []arrow.Array{col}, ref.NumRows())
		pqtest.SameRows(t, got[0].Schema(), got, []arrow.Record{refRec})
		refRec.Release()
		ref.Release()
	}
	if fast && (n == 0 || tc.pf.rows > 0 && n != rgs) {
		t.Errorf("%s: fast path decoded %d column chunks, want %d", c, n, rgs)
	}
	if !fast && n != 0 {
		t.Errorf("%s: fast path decoded %d chunks of a column it must leave to pqarrow", c, n)
	}
	if tc.inPlace && (c == "l32req" || c == "f32") && st.ListPagesInPlace.Load() == 0 {
		t.Errorf("%s: no page was decompressed in place", c)
	}
	if tc.huge > 0 && (c == "l32req" || c == "f32") && tc.pf.codec == compress.Codecs.Zstd && st.ZstdPagesPlaced.Load() == 0 {
		t.Errorf("%s: no zstd page was decoded into place", c)
	}
	if tc.stream && fast && st.StreamFallbacks.Load() != 0 {
		t.Errorf("%s: a streamed row group's list went to pqarrow", c)
	}
	pqtest.ReleaseAll(want)
	pqtest.ReleaseAll(got)
	if fast && !tc.pf.v2 && (tc.path == "" || tc.name != "duckdb/zstd/v2/dictionary") {
		mem.AssertSize(t, 0)
	}
	return st
}

// listChunk0 returns the bytes of the first row group's chunk of the list
// column c in path, its rows and its leaf's maximum definition level.
func listChunk0(t testing.TB, path, c string) ([]byte, int64, int16) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md := arrowFooter(t, path)
	sc := md.Schema
	for i := range sc.NumColumns() {
		if sc.Column(i).ColumnPath()[0] != c {
			continue
		}
		cc, err := md.RowGroup(0).ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		start := chunkStart(cc)
		return data[start : start+cc.TotalCompressedSize()], md.RowGroup(0).NumRows(), sc.Column(i).MaxDefinitionLevel()
	}
	t.Fatalf("%s: no column %s", path, c)
	return nil, 0, 0
}

// decodeListChunk decodes chunk as an uncompressed chunk of lists rows
// and nvals values of w bytes (fixed-size lists of width, or lists when
// 0); byPage reads it as a file, a page at a time (decodeAt). With shape
// given, null and empty lists and null elements are read (as listColumn
// reads them).
func decodeListChunk(chunk []byte, lists, nvals int64, width, w int, maxDef int16, byPage bool, shape *listShape) (*listChunk, bool) {
	slots := nvals
	if shape != nil && width > 0 {
		slots = lists * int64(width)
	}
	lc := &listChunk{
		plainChunk: plainChunk{buf: chunk, w: w, rows: slots, values: make([]byte, slots*int64(w))},
		maxDef:     maxDef,
		width:      int64(width),
		lists:      lists,
		nvals:      nvals,
	}
	if shape != nil {
		lc.nullable, lc.shape = true, *shape
	}
	if width == 0 {
		lc.offsets = make([]int32, lists+1)
	}
	tune := DefaultTuning()
	tune.HugePageBytes = 512 // pages read by pages are streamed
	if byPage {
		lc.buf = nil
		return lc, lc.decodeAt(&plainDecoder{tune: tune, r: bytes.NewReader(chunk), size: int64(len(chunk))}, 0, int64(len(chunk)))
	}
	return lc, lc.decode(&plainDecoder{tune: tune})
}

// FuzzListChunk feeds arbitrary bytes to the list fast path's page decoder
// (levels and values) as an uncompressed column chunk: it must not panic,
// and what it accepts must be well-formed: every value decoded, exactly
// the rows asked for, each starting after the previous one (a fixed-size
// list's at multiples of its width). The seeds are real chunks, which it
// accepts: pqarrow's (v1 and v2, PLAIN and dictionary, fixed-size and
// variable lists) and Polars'; and ones with null lists, null elements
// and empty lists, which it refuses unless it reads nulls (half the
// inputs, as an optional list of optional elements): then every level
// entry is read, rows start in order and never inside another's slots,
// and the validity bitmaps count the nulls. Half the inputs are read as
// a file, a page at a time, large pages streamed (decodeAt).
func FuzzListChunk(f *testing.F) {
	dir := f.TempDir()
	add := func(path, c string, width int, w8, accept bool) {
		chunk, rows, def := listChunk0(f, path, c)
		w := 4
		if w8 {
			w = 8
		}
		nvals := listValues(f, path, c)
		for _, byPage := range []bool{false, true} {
			if _, ok := decodeListChunk(chunk, rows, nvals, width, w, def, byPage, nil); ok != accept {
				f.Fatalf("%s, column %s, by page %v: seed accepted %v, want %v", path, c, byPage, ok, accept)
			}
			if def == 3 {
				if _, ok := decodeListChunk(chunk, rows, nvals, width, w, def, byPage, &fuzzShape); !ok {
					f.Fatalf("%s, column %s, by page %v: seed refused reading nulls", path, c, byPage)
				}
			}
		}
		for _, nulls := range []uint8{0, 0x80} {
			f.Add(chunk, uint16(rows), uint32(nvals), uint8(width), w8, uint8(def)|nulls)
			f.Add(chunk, uint16(rows)|0x8000, uint32(nvals), uint8(width), w8, uint8(def)|nulls)
		}
	}
	for i, pf := range []plainFile{{}, {v2: true}, {dictionary: true}, {v2: true, dictionary: true}} {
		pf.rows, pf.rgRows, pf.codec, pf.smallPages = 200, 200, compress.Codecs.Uncompressed, true
		path := filepath.Join(dir, "seed"+strconv.Itoa(i)+".parquet")
		writeListFile(f, path, pf)
		add(path, "f32", 5, false, true)
		add(path, "f64", 3, true, true)
		add(path, "l32", 0, false, true)
		add(path, "nullList", 0, false, false)
		add(path, "empty", 0, true, false)
		add(path, "nullElem", 5, false, false)
	}
	add("../../testdata/writers/polars_emb.parquet", "e32", 8, false, true)
	f.Fuzz(func(t *testing.T, chunk []byte, rows uint16, values uint32, width uint8, w8 bool, maxDef uint8) {
		nulls := maxDef&0x80 != 0
		maxDef &^= 0x80
		lists, nvals := int64(rows%2048), int64(values%(1<<16))
		if lists == 0 || maxDef < 1 || maxDef > 3 || width > 0 && nvals != lists*int64(width) && !nulls || nvals < lists {
			return
		}
		if nulls && (maxDef != 3 || width > 0 && nvals > lists*int64(width)) {
			return
		}
		w := 4
		if w8 {
			w = 8
		}
		byPage := rows&0x8000 != 0 // (rows are below 2,048)
		var shape *listShape
		if nulls {
			shape = &fuzzShape
		}
		lc, ok := decodeListChunk(chunk, lists, nvals, int(width), w, int16(maxDef), byPage, shape)
		if !ok {
			return
		}
		if nulls {
			checkNullableChunk(t, lc)
			return
		}
		if lc.row != nvals || lc.nrows != lists {
			t.Fatalf("accepted: %d values of %d, %d rows of %d", lc.row, nvals, lc.nrows, lists)
		}
		if lc.offsets != nil {
			lc.offsets[lists] = int32(nvals)
			for i := range lists {
				if lc.offsets[i] >= lc.offsets[i+1] || i == 0 && lc.offsets[0] != 0 {
					t.Fatalf("row %d starts at %d, the next at %d", i, lc.offsets[i], lc.offsets[i+1])
				}
			}
		}
	})
}

// fuzzShape is an optional list of optional elements, as Arrow, DuckDB
// and Polars write a nullable list column.
var fuzzShape = listShape{defList: 1, defSlot: 2, maxDef: 3}

// checkNullableChunk checks a chunk read with nulls: every level entry
// read, every row started, in order, the null rows and slots counted by
// the validity bitmaps, a fixed-size list's rows each its width of slots.
func checkNullableChunk(t *testing.T, lc *listChunk) {
	t.Helper()
	if lc.entries != lc.nvals || lc.nrows != lc.lists || lc.row > lc.rows {
		t.Fatalf("accepted: %d entries of %d, %d rows of %d, %d slots of at most %d", lc.entries, lc.nvals, lc.nrows, lc.lists, lc.row, lc.rows)
	}
	if lc.width > 0 && lc.row != lc.lists*lc.width {
		t.Fatalf("accepted: %d slots for %d rows of %d", lc.row, lc.lists, lc.width)
	}
	if lc.offsets != nil {
		lc.offsets[lc.lists] = int32(lc.row)
		for i := range lc.lists {
			if lc.offsets[i] > lc.offsets[i+1] || i == 0 && lc.offsets[0] != 0 {
				t.Fatalf("row %d starts at %d, the next at %d", i, lc.offsets[i], lc.offsets[i+1])
			}
		}
	}
	nullRows := int64(0)
	if lc.rowValid != nil {
		nullRows = lc.lists - int64(bitutil.CountSetBits(lc.rowValid, 0, int(lc.lists)))
	}
	if nullRows != lc.nullRows {
		t.Fatalf("%d null rows counted, %d in the bitmap", lc.nullRows, nullRows)
	}
	nullSlots := int64(0)
	if lc.valid != nil {
		nullSlots = lc.row - int64(bitutil.CountSetBits(lc.valid, 0, int(lc.row)))
	}
	if nullSlots != lc.plainChunk.nulls {
		t.Fatalf("%d null slots counted, %d in the bitmap", lc.plainChunk.nulls, nullSlots)
	}
}

// listValues is the number of values (levels) of list column c's chunk in
// the first row group of path.
func listValues(t testing.TB, path, c string) int64 {
	t.Helper()
	md := arrowFooter(t, path)
	sc := md.Schema
	for i := range sc.NumColumns() {
		if sc.Column(i).ColumnPath()[0] == c {
			cc, err := md.RowGroup(0).ColumnChunk(i)
			if err != nil {
				t.Fatal(err)
			}
			return cc.NumValues()
		}
	}
	t.Fatalf("%s: no column %s", path, c)
	return 0
}

// TestLookAhead: a Parquet file with embeddings says how much list data
// its reader may hold decoded, at least two of its largest row group's
// list values (counted here from the decoded batches, row group by row
// group) and a bounded number of them whatever the row count; a file
// without list columns says 0.
func TestLookAhead(t *testing.T) {
	const dir = "../../testdata/writers"
	flat, err := openFile(filepath.Join(dir, "duckdb_v2.parquet"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer flat.Close()
	if got := flat.LookAhead(); got != 0 {
		t.Errorf("a file without lists: look-ahead %d, want 0", got)
	}

	path := filepath.Join(dir, "duckdb_emb.parquet")
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 20}, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	leaves := make([]int, pf.MetaData().Schema.NumColumns())
	for i := range leaves {
		leaves[i] = i
	}
	var largest int64 // the list values of the largest row group, decoded
	for rg := range pf.NumRowGroups() {
		tbl, err := fr.ReadRowGroups(t.Context(), leaves, []int{rg})
		if err != nil {
			t.Fatal(err)
		}
		var b int64
		for c := range int(tbl.NumCols()) {
			for _, ch := range tbl.Column(c).Data().Chunks() {
				if l, ok := ch.(array.ListLike); ok {
					v := l.ListValues()
					b += int64(v.Len()) * int64(v.DataType().(arrow.FixedWidthDataType).Bytes())
				}
			}
		}
		tbl.Release()
		largest = max(largest, b)
	}
	r, err := openFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := r.LookAhead()
	if got < 2*largest || got > 64*largest {
		t.Errorf("look-ahead %d bytes, want between 2 and 64 times the largest row group's %d", got, largest)
	}
}

// TestListWholeBound: a list chunk is decoded whole by the fast path up to
// Tuning.MaxListBytes of values and by pqarrow past it, both times with the rows
// pqarrow reads, in a row group read column by column and in one streamed
// in segments (one row group of a million 384-float32 rows is 1.5 GB).
func TestListWholeBound(t *testing.T) {
	const rows = 3000
	path := filepath.Join(t.TempDir(), "bound.parquet")
	writeListFile(t, path, plainFile{rows: rows, rgRows: rows, codec: compress.Codecs.Snappy})
	want, err, _ := readParquetWith(t, path, false, memory.NewGoAllocator(), []string{"f32"})
	if err != nil {
		t.Fatal(err)
	}
	defer pqtest.ReleaseAll(want)
	const chunk = rows * 5 * 4 // f32 is FixedSizeListOf(5, float32)
	for _, streamed := range []bool{false, true} {
		tune := DefaultTuning()
		if streamed {
			tune.MaxColumnwiseRows, tune.SegmentRows = 500, 500
		}
		for _, tc := range []struct {
			bound int64
			fast  bool
		}{{chunk, true}, {chunk - 1, false}} {
			tune.MaxListBytes = tc.bound
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			got, err, n := readParquetWith(t, path, true, mem, []string{"f32"}, tune)
			if err != nil {
				t.Fatalf("streamed %v, bound %d: %v", streamed, tc.bound, err)
			}
			if (n > 0) != tc.fast {
				t.Errorf("streamed %v, bound %d: the fast path decoded %d chunks, want fast %v", streamed, tc.bound, n, tc.fast)
			}
			pqtest.SameRows(t, want[0].Schema(), got, want)
			pqtest.ReleaseAll(got)
			mem.AssertSize(t, 0)
		}
	}
}

// TestListWindow: a reader holds at most Tuning.ListWindowBytes of list values in
// the row groups it decodes ahead, and two row groups whatever their size:
// with the bound below one row group its window is two, and its look-ahead
// three row groups (the window and the one read out); the rows read are
// the same.
func TestListWindow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "window.parquet")
	writeListFile(t, path, plainFile{rows: 6000, rgRows: 1000, codec: compress.Codecs.Snappy})
	tune := DefaultTuning()
	open := func() (*Reader, *parallelParquet) {
		r, err := openFile(path, ReadOptions{Workers: 4, Columns: listFastCols, Tuning: tune})
		if err != nil {
			t.Fatal(err)
		}
		p, ok := r.src.(*parallelParquet)
		if !ok {
			t.Fatalf("%s is read by a %T, not the parallel reader", path, r.src)
		}
		return r, p
	}
	r, p := open()
	most := p.listBytes()
	if most <= 0 {
		t.Fatalf("list bytes %d", most)
	}
	wide := p.window
	want, err := readRest(r)
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer pqtest.ReleaseAll(want)

	tune.ListWindowBytes = most - 1
	r, p = open()
	defer r.Close()
	if p.window != 2 || wide <= 2 {
		t.Errorf("window %d with room for less than a row group of lists, %d with room for all; want 2 and more", p.window, wide)
	}
	if got := r.LookAhead(); got != 3*most {
		t.Errorf("look-ahead %d bytes, want 3 row groups of %d", got, most)
	}
	got, err := readRest(r)
	if err != nil {
		t.Fatal(err)
	}
	defer pqtest.ReleaseAll(got)
	pqtest.SameRows(t, want[0].Schema(), got, want)
}

// TestParquetListRecycledStreamed streams row groups too large for the
// column-wise path (a DuckDB FLOAT[384] row group holds 189 MB of values)
// whose list columns are decoded whole, releasing each batch before the
// next, with the recycler's poisoning on: the values buffers are reused
// from row group to row group, every value read is right, nothing is
// written to a buffer after its release and nothing leaks.
func TestParquetListRecycledStreamed(t *testing.T) {
	tune := DefaultTuning()
	tune.PoisonRecycled = true
	tune.MaxColumnwiseRows, tune.SegmentRows = 500, 500
	const rows = 12000
	path := filepath.Join(t.TempDir(), "streamed.parquet")
	writeListFile(t, path, plainFile{rows: rows, rgRows: 2000, codec: compress.Codecs.Snappy})
	ref := listRecord(memory.NewGoAllocator(), 0, rows)
	defer ref.Release()
	// (f32req: Arrow's writer writes its elements as nulls.)
	cols := slices.DeleteFunc(slices.Clone(listFastCols), func(c string) bool { return c == "f32req" })
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
	if at != rows {
		t.Fatalf("read %d rows, want %d", at, rows)
	}
	if st.StreamFallbacks.Load() != 0 {
		t.Error("a streamed row group's list went to pqarrow")
	}
	if st.RecycledBuffers.Load() == 0 {
		t.Error("no list buffer was recycled")
	}
}
