package pqread

import (
	"errors"
	"github.com/pate-tool/pate/io/arrowio/internal/arrowfix"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// checkSpanningNullRows checks the list a, rows first… of
// pqtest.WriteSpanningNullList's file, against pqtest.SpanningNullRow and returns the
// row after them.
func checkSpanningNullRows(t *testing.T, name string, a arrow.Array, first int) int {
	t.Helper()
	l := a.(*array.List)
	v := l.ListValues().(*array.Float32)
	row := first
	for i := 0; i < l.Len(); i, row = i+1, row+1 {
		null, want := pqtest.SpanningNullRow(row)
		s, e := l.ValueOffsets(i)
		if l.IsNull(i) != null || !null && int(e-s) != len(want) {
			t.Fatalf("%s: row %d: null %v with %d values, want null %v with %d", name, row, l.IsNull(i), e-s, null, len(want))
		}
		for j, x := range want {
			if math.IsNaN(x) != v.IsNull(int(s)+j) || !math.IsNaN(x) && float64(v.Value(int(s)+j)) != x {
				t.Fatalf("%s: row %d element %d: %v (null %v), want %v", name, row, j, v.Value(int(s)+j), v.IsNull(int(s)+j), x)
			}
		}
	}
	return row
}

// TestListNullsSpanningPages reads pqtest.WriteSpanningNullList's file (rows
// spanning pages, null lists both ways, empty lists, null elements) by the
// cursor (streamed pages and not) and whole, and checks every row against
// pqtest.SpanningNullRow.
func TestListNullsSpanningPages(t *testing.T) {
	const rows = 3000
	for _, codec := range []compress.Compression{compress.Codecs.Uncompressed, compress.Codecs.Snappy} {
		path := filepath.Join(t.TempDir(), "n.parquet")
		pqtest.WriteSpanningNullList(t, path, rows, codec)
		for _, mode := range []string{"whole", "cursor", "cursor, streamed pages"} {
			name := codec.String() + "/" + mode
			tune := DefaultTuning()
			tune.ListStreamBytes, tune.MaxColumnwiseRows, tune.SegmentRows = 0, 400, 400
			if mode == "whole" {
				tune.ListStreamBytes = 1 << 40
			}
			if mode == "cursor, streamed pages" {
				tune.HugePageBytes = 16
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			got, err, st := readParquetStats(t, path, true, mem, []string{"n32"}, tune)
			n := st.PlainColumns.Load()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if cursor := st.ListCursors.Load() > 0; cursor != (mode != "whole") || n == 0 && !cursor {
				t.Errorf("%s: decoded by the cursor %v, by the fast path %d chunks", name, cursor, n)
			}
			if mode != "whole" && st.ListSpans.Load() == 0 {
				t.Errorf("%s: no row spanned pages", name)
			}
			if mode == "cursor" && codec != compress.Codecs.Uncompressed && st.AheadPagesRead.Load() == 0 {
				t.Errorf("%s: no page was decompressed ahead of the cursor", name)
			}
			row := 0
			for _, rec := range got {
				row = checkSpanningNullRows(t, name, rec.Column(0), row)
			}
			pqtest.ReleaseAll(got)
			mem.AssertSize(t, 0)
			if row != rows {
				t.Errorf("%s: %d rows, want %d", name, row, rows)
			}
		}
	}
}

// TestListCursorFewRows takes pqtest.WriteSpanningNullList's rows from a cursor
// 1 to 7 at a time, so that segments end at every kind of row (null ones
// with no slot at a page's end among them), and checks every row: with a
// read-ahead budget of its own, and with the reader's budget spent by
// other cursors (no page is then read ahead). Either way the cursor gives
// back every byte it took from the budget.
func TestListCursorFewRows(t *testing.T) {
	const rows = 3000
	for _, tc := range []struct {
		codec compress.Compression
		spent bool
	}{{compress.Codecs.Uncompressed, false}, {compress.Codecs.Snappy, false}, {compress.Codecs.Snappy, true}} {
		codec := tc.codec
		path := filepath.Join(t.TempDir(), "n.parquet")
		pqtest.WriteSpanningNullList(t, path, rows, codec)
		pf, err := file.OpenParquetFile(path, false)
		if err != nil {
			t.Fatal(err)
		}
		md := pf.MetaData()
		cc, err := md.RowGroup(0).ColumnChunk(0)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := streamCodec(cc)
		shape, nullable := listShapeOf(md.Schema.Column(0))
		if !ok || !nullable {
			t.Fatalf("codec %v, shape %v", ok, nullable)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		pd := &plainDecoder{tune: DefaultTuning(), stats: new(Stats), r: f, size: st.Size()}
		lr := &listCursor{
			lc: listChunk{plainChunk: plainChunk{codec: c, codecID: cc.Compression(), w: 4, dictN: -1},
				maxDef: 3, cont: true, nullable: true, shape: shape},
			dt: arrow.ListOf(arrow.PrimitiveTypes.Float32), w: 4, pos: cc.DataPageOffset(),
			end: cc.DataPageOffset() + cc.TotalCompressedSize(), total: rows, perRow: 2,
			budget: &stateBudget{limit: aheadShared},
		}
		var before int64
		if tc.spent {
			before = aheadShared
			lr.budget.live.Store(before)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		for row, k := 0, int64(1); row < rows; k = k%7 + 1 {
			k = min(k, int64(rows-row))
			a, ok := lr.next(pd, k, mem)
			if !ok {
				t.Fatalf("%s: rows %d..%d do not decode", codec, row, row+int(k))
			}
			row = checkSpanningNullRows(t, codec.String(), a, row)
			a.Release()
		}
		lr.close()
		// Each compressed page is decompressed ahead of the cursor, once,
		// unless the budget is spent.
		want := dataPages(t, pd, lr.end-cc.TotalCompressedSize(), lr.end)
		if c == nil || tc.spent {
			want = 0
		}
		if got := pd.stats.AheadPagesRead.Load(); got != want {
			t.Errorf("%s (budget spent %v): %d pages decompressed ahead, want %d", codec, tc.spent, got, want)
		}
		if held := lr.budget.live.Load(); held != before {
			t.Errorf("%s (budget spent %v): the budget holds %d bytes after close, want %d", codec, tc.spent, held, before)
		}
		f.Close()
		pf.Close()
		mem.AssertSize(t, 0)
	}
}

// dataPages counts the data pages of the chunk at [from, to).
func dataPages(t *testing.T, pd *plainDecoder, from, to int64) int64 {
	hc := headerChecker{r: pd.r, size: pd.size}
	var n int64
	for pos := from; pos < to; {
		h, hl, err := hc.header(pos, to)
		if err != nil {
			t.Fatal(err)
		}
		if h.typ == pageData || h.typ == pageDataV2 {
			n++
		}
		pos += int64(hl) + int64(h.csize)
	}
	return n
}

// TestListCursor reads list columns of streamed row groups a segment at a
// time (listCursor) and checks them against pqarrow: fixed-size lists and
// lists of float32 and float64, every codec, both data page versions,
// dictionaries, pages of a few values, rows spanning pages, large PLAIN
// pages streamed, and DuckDB's and Polars' files, null and empty lists
// and null elements among them. A fixed-size list with nulls is not the
// cursor's (its chunk's null count says so) and is decoded whole.
func TestListCursor(t *testing.T) {
	dir := t.TempDir()
	writers := "../../testdata/writers/"
	cases := []struct {
		name   string
		pf     plainFile            // written by pqarrow when rows > 0
		path   string               // else this fixture
		cursor []string             // columns the cursor decodes
		other  []string             // columns it must leave
		huge   bool                 // PLAIN v1 pages over 1 KB are streamed
		spans  bool                 // rows of a variable-size list span pages
		span   compress.Compression // (with spans) the file is WriteSpanningList's
		ahead  bool                 // the cursor's pages are decompressed ahead of it
	}{
		{name: "spanning/none/v1", cursor: []string{"l32"}, spans: true, span: compress.Codecs.Uncompressed},
		{name: "spanning/snappy/v1", cursor: []string{"l32"}, spans: true, span: compress.Codecs.Snappy, ahead: true},
		{name: "pqarrow/none/v1", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Uncompressed}},
		{name: "pqarrow/snappy/v1/huge-pages", pf: plainFile{rows: 4000, rgRows: 2000, codec: compress.Codecs.Snappy}, huge: true},
		{name: "pqarrow/none/v1/small-pages", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Uncompressed, smallPages: true}},
		{name: "pqarrow/gzip/v1/huge-pages", pf: plainFile{rows: 2500, rgRows: 2500, codec: compress.Codecs.Gzip}, huge: true},
		{name: "pqarrow/zstd/v2", pf: plainFile{rows: 3000, rgRows: 1000, codec: compress.Codecs.Zstd, v2: true}},
		{name: "pqarrow/gzip/v2/small-pages", pf: plainFile{rows: 2000, rgRows: 2000, codec: compress.Codecs.Gzip, v2: true, smallPages: true}},
		{name: "pqarrow/snappy/v1/small-pages", pf: plainFile{rows: 2500, rgRows: 1200, codec: compress.Codecs.Snappy, smallPages: true}, ahead: true},
		{name: "pqarrow/snappy/v1/dictionary", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Snappy, dictionary: true}, ahead: true},
		{name: "pqarrow/none/v2/dictionary/small-pages", pf: plainFile{rows: 2000, rgRows: 1000, codec: compress.Codecs.Uncompressed, v2: true, dictionary: true, smallPages: true}},
		{name: "duckdb/snappy/v1/dictionary", path: writers + "duckdb_emb.parquet", cursor: duckdbListCols, ahead: true},
		{name: "duckdb/zstd/v2/dictionary", path: writers + "duckdb_emb_v2.parquet", cursor: duckdbListCols},
		{name: "polars/none/v1/huge-pages", path: writers + "polars_emb.parquet", cursor: []string{"e32"}, huge: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.pf.rows > 0 {
				path = filepath.Join(dir, "c"+strconv.Itoa(i)+".parquet")
				writeListFile(t, path, tc.pf)
				// (f32req and nullElem: fixed-size lists with nulls.)
				tc.cursor = append(append([]string{}, listTrivialCols...), "nullList", "empty")
				tc.other = []string{"f32req", "nullElem"}
			}
			if tc.spans {
				path = filepath.Join(dir, "s"+strconv.Itoa(i)+".parquet")
				pqtest.WriteSpanningList(t, path, 3000, tc.span)
			}
			for _, c := range append(append([]string{}, tc.cursor...), tc.other...) {
				cursor := false
				for _, f := range tc.cursor {
					cursor = cursor || f == c
				}
				want, err, _ := readParquetWith(t, path, false, memory.NewGoAllocator(), []string{c})
				if err != nil {
					t.Fatalf("%s: pqarrow: %v", c, err)
				}
				tune := DefaultTuning()
				tune.ListStreamBytes, tune.MaxColumnwiseRows, tune.SegmentRows = 0, 400, 400
				if tc.huge {
					tune.HugePageBytes = 1024
				}
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				got, err, st := readParquetStats(t, path, true, mem, []string{c}, tune)
				if err != nil {
					t.Fatalf("%s: %v", c, err)
				}
				if used := st.ListCursors.Load() > 0; used != cursor {
					t.Errorf("%s: decoded by the cursor %v, want %v", c, used, cursor)
				}
				if cursor && tc.spans && (c == "l32" || c == "l32req") && st.ListSpans.Load() == 0 {
					t.Errorf("%s: no row spanned pages", c)
				}
				if cursor && tc.ahead && st.AheadPagesRead.Load() == 0 {
					t.Errorf("%s: no page was decompressed ahead of the cursor", c)
				}
				if cursor && tc.huge && !tc.pf.v2 && st.PageStreams.Load() == 0 {
					t.Errorf("%s: no page was streamed", c)
				}
				pqtest.SameRows(t, want[0].Schema(), got, want)
				pqtest.ReleaseAll(want)
				pqtest.ReleaseAll(got)
				if !tc.pf.v2 && tc.name != "duckdb/zstd/v2/dictionary" {
					mem.AssertSize(t, 0)
				}
			}
		})
	}
}

// TestDuckDBNullArrays: DuckDB writes a NULL FLOAT[8] with child level
// entries, which pqarrow reads with the later rows' values shifted (n32 of
// the fixtures: row 6 would read [0.5 2.625 …] for DuckDB's [2.25 2 …]).
// Read column by column, streamed, or by the record reader (the fast path
// off), from DuckDB's v1 and v2 files, every row of n32 must be null where
// DuckDB wrote NULL and hold DuckDB's values elsewhere; the same files'
// other list columns (null elements, empty lists) read too.
func TestDuckDBNullArrays(t *testing.T) {
	v := func(i, j int) float32 { return float32(float64((i*(j+3))%97)/8 - float64(j)) }
	for _, path := range []string{"../../testdata/writers/duckdb_emb.parquet", "../../testdata/writers/duckdb_emb_v2.parquet"} {
		for _, streamed := range []bool{false, true} {
			for _, fast := range []bool{true, false} {
				tune := DefaultTuning()
				if streamed {
					tune.MaxColumnwiseRows, tune.SegmentRows = 500, 500
				}
				name := path + "/streamed=" + strconv.FormatBool(streamed) + "/fast=" + strconv.FormatBool(fast)
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				recs, err, _ := readParquetWith(t, path, fast, mem, []string{"n32"}, tune)
				if err != nil {
					t.Fatalf("%s: n32: %v", name, err)
				}
				row, nulls := 0, 0
				for _, rec := range recs {
					l, ok := rec.Column(0).(array.ListLike)
					if !ok {
						t.Fatalf("%s: n32 read as %s", name, rec.Column(0).DataType())
					}
					vals := l.ListValues().(*array.Float32)
					for i := 0; i < l.Len(); i, row = i+1, row+1 {
						s, e := l.ValueOffsets(i)
						if row%11 == 5 {
							if l.IsValid(i) || e != s {
								t.Fatalf("%s: row %d: valid %v with %d values, want a null list", name, row, l.IsValid(i), e-s)
							}
							nulls++
							continue
						}
						if l.IsNull(i) || e-s != 8 {
							t.Fatalf("%s: row %d: null %v with %d values, want 8", name, row, l.IsNull(i), e-s)
						}
						for j := 0; j < 8; j++ {
							if got := vals.Value(int(s) + j); got != v(row, j) {
								t.Fatalf("%s: row %d element %d: %v, want %v", name, row, j, got, v(row, j))
							}
						}
					}
				}
				pqtest.ReleaseAll(recs)
				if row != 1500 || nulls != 136 {
					t.Errorf("%s: read %d rows, %d null, want 1500 and 136", name, row, nulls)
				}
				recs, err, _ = readParquetWith(t, path, fast, mem, []string{"e32", "ne32", "em32"}, tune)
				pqtest.ReleaseAll(recs)
				if err != nil {
					t.Errorf("%s: the other list columns: %v", name, err)
				}
				mem.AssertSize(t, 0)
			}
		}
	}
}

// TestRepairNullLists: a null list's child slots are taken out only when
// the other rows' slots then add up to the values; otherwise, or below
// the top level, the column is refused.
func TestRepairNullLists(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f32 := arrow.PrimitiveTypes.Float32
	// list builds a list<float32> of the values 0, 1, … with the given
	// offsets and null rows.
	list := func(dt arrow.DataType, offs []int64, null []bool, values int) arrow.Array {
		fb := array.NewFloat32Builder(mem)
		defer fb.Release()
		for i := 0; i < values; i++ {
			fb.Append(float32(i))
		}
		child := fb.NewArray()
		defer child.Release()
		valid := memory.NewResizableBuffer(mem)
		defer valid.Release()
		valid.Resize(int(bitutil.BytesForBits(int64(len(null)))))
		nn := 0
		for i, isNull := range null {
			bitutil.SetBitTo(valid.Bytes(), i, !isNull)
			if isNull {
				nn++
			}
		}
		ob := memory.NewResizableBuffer(mem)
		defer ob.Release()
		if dt.ID() == arrow.LARGE_LIST {
			ob.Resize(8 * len(offs))
			copy(arrow.Int64Traits.CastFromBytes(ob.Bytes()), offs)
		} else {
			ob.Resize(4 * len(offs))
			o := arrow.Int32Traits.CastFromBytes(ob.Bytes())
			for i, x := range offs {
				o[i] = int32(x)
			}
		}
		d := array.NewData(dt, len(null), []*memory.Buffer{valid, ob}, []arrow.ArrayData{child.Data()}, nn, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	for _, tc := range []struct {
		name    string
		dt      arrow.DataType
		offs    []int64
		null    []bool
		values  int
		want    []int64 // repaired offsets; nil: refused
		changed bool
	}{
		{"duckdb null row", arrow.ListOf(f32), []int64{0, 2, 3, 5}, []bool{false, true, false}, 4, []int64{0, 2, 2, 4}, true},
		{"duckdb large list", arrow.LargeListOf(f32), []int64{0, 2, 3, 5}, []bool{false, true, false}, 4, []int64{0, 2, 2, 4}, true},
		{"leading and trailing nulls", arrow.ListOf(f32), []int64{0, 3, 5, 8, 11}, []bool{true, false, false, true}, 5, []int64{0, 0, 2, 5, 5}, true},
		{"format's null rows", arrow.ListOf(f32), []int64{0, 2, 2, 4}, []bool{false, true, false}, 4, []int64{0, 2, 2, 4}, false},
		{"no nulls", arrow.ListOf(f32), []int64{0, 1, 4}, []bool{false, false}, 4, []int64{0, 1, 4}, false},
		{"slots that do not add up", arrow.ListOf(f32), []int64{0, 2, 3, 5}, []bool{false, true, false}, 5, nil, false},
		{"too few values", arrow.ListOf(f32), []int64{0, 2, 3, 5}, []bool{false, true, false}, 3, nil, false},
	} {
		a := list(tc.dt, tc.offs, tc.null, max(tc.values, int(tc.offs[len(tc.offs)-1])))
		if tc.values < int(tc.offs[len(tc.offs)-1]) {
			// pqarrow's misread: fewer values than the offsets claim.
			a.Release()
			a = sliceValues(t, mem, list(tc.dt, tc.offs, tc.null, int(tc.offs[len(tc.offs)-1])), tc.values)
		}
		got, err := arrowfix.RepairNullLists(a, mem)
		switch {
		case tc.want == nil:
			if !errors.Is(err, arrowfix.ErrNullListSlots) {
				t.Errorf("%s: error %v, want the refusal", tc.name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		default:
			if (got != a) != tc.changed {
				t.Errorf("%s: a new array %v, want %v", tc.name, got != a, tc.changed)
			}
			l := got.(array.ListLike)
			for i := range tc.null {
				s, e := l.ValueOffsets(i)
				if s != tc.want[i] || e != tc.want[i+1] || l.IsNull(i) != tc.null[i] {
					t.Errorf("%s: row %d: [%d, %d) null %v, want [%d, %d) null %v", tc.name, i, s, e, l.IsNull(i), tc.want[i], tc.want[i+1], tc.null[i])
				}
			}
			got.Release()
		}
		a.Release()
	}
	// A null inner list with slots, inside a list, is refused.
	inner := list(arrow.ListOf(f32), []int64{0, 2, 3, 5}, []bool{false, true, false}, 4)
	defer inner.Release()
	ob := memory.NewResizableBuffer(mem)
	defer ob.Release()
	ob.Resize(8)
	copy(arrow.Int32Traits.CastFromBytes(ob.Bytes()), []int32{0, 3})
	d := array.NewData(arrow.ListOf(inner.DataType()), 1, []*memory.Buffer{nil, ob}, []arrow.ArrayData{inner.Data()}, 0, 0)
	outer := array.MakeFromData(d)
	d.Release()
	defer outer.Release()
	if _, err := arrowfix.RepairNullLists(outer, mem); !errors.Is(err, arrowfix.ErrNullListSlots) {
		t.Errorf("nested null list with slots: error %v, want the refusal", err)
	}
}

// sliceValues returns l with its values cut to the first n (l released).
func sliceValues(t *testing.T, mem memory.Allocator, l arrow.Array, n int) arrow.Array {
	defer l.Release()
	child := array.NewSlice(l.(array.ListLike).ListValues(), 0, int64(n))
	defer child.Release()
	d := array.NewData(l.DataType(), l.Len(), l.Data().Buffers(), []arrow.ArrayData{child.Data()}, l.NullN(), 0)
	defer d.Release()
	return array.MakeFromData(d)
}
