package arrowio

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// writeSpanningList writes rows rows of one list<float32> column l32, row
// i of 1 + 7i mod 5 values, through the low-level column writer in batches
// of 7 levels and pages of 64 bytes, which break pages inside rows (the
// Arrow writer does not).
func writeSpanningList(t testing.TB, path string, rows int, codec compress.Compression) {
	elem, err := schema.NewPrimitiveNode("element", parquet.Repetitions.Required, parquet.Types.Float, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	list, err := schema.ListOfWithName("l32", elem, parquet.Repetitions.Required, -1)
	if err != nil {
		t.Fatal(err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{list}, -1)
	if err != nil {
		t.Fatal(err)
	}
	var vals []float32
	var def, rep []int16
	for i := range rows {
		for j := range 1 + (7*i)%5 {
			vals = append(vals, float32(i)+float32(j)/8)
			def = append(def, 1)
			rep = append(rep, min(int16(j), 1))
		}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithDataPageSize(64), parquet.WithBatchSize(7),
		parquet.WithDictionaryDefault(false), parquet.WithCompression(codec), parquet.WithStats(true))
	w := file.NewParquetWriter(f, root, file.WithWriterProps(props))
	rg := w.AppendRowGroup()
	cw, err := rg.NextColumn()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cw.(*file.Float32ColumnChunkWriter).WriteBatch(vals, def, rep); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestListCursor reads list columns of streamed row groups a segment at a
// time (listCursor) and checks them against pqarrow: fixed-size lists and
// lists of float32 and float64, every codec, both data page versions,
// dictionaries, pages of a few values, rows spanning pages, large PLAIN
// pages streamed, and DuckDB's and Polars' files. A column with a null
// list, a null element or an empty list is not the cursor's (its chunk's
// null count says so) and reads as pqarrow reads it.
func TestListCursor(t *testing.T) {
	dir := t.TempDir()
	writers := "testdata/writers/"
	cases := []struct {
		name   string
		pf     plainFile            // written by pqarrow when rows > 0
		path   string               // else this fixture
		cursor []string             // columns the cursor decodes
		other  []string             // columns it must leave
		huge   bool                 // PLAIN v1 pages over 1 KB are streamed
		spans  bool                 // rows of a variable-size list span pages
		span   compress.Compression // (with spans) the file is writeSpanningList's
	}{
		{name: "spanning/none/v1", cursor: []string{"l32"}, spans: true, span: compress.Codecs.Uncompressed},
		{name: "spanning/snappy/v1", cursor: []string{"l32"}, spans: true, span: compress.Codecs.Snappy},
		{name: "pqarrow/none/v1", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Uncompressed}},
		{name: "pqarrow/snappy/v1/huge-pages", pf: plainFile{rows: 4000, rgRows: 2000, codec: compress.Codecs.Snappy}, huge: true},
		{name: "pqarrow/none/v1/small-pages", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Uncompressed, smallPages: true}},
		{name: "pqarrow/gzip/v1/huge-pages", pf: plainFile{rows: 2500, rgRows: 2500, codec: compress.Codecs.Gzip}, huge: true},
		{name: "pqarrow/zstd/v2", pf: plainFile{rows: 3000, rgRows: 1000, codec: compress.Codecs.Zstd, v2: true}},
		{name: "pqarrow/gzip/v2/small-pages", pf: plainFile{rows: 2000, rgRows: 2000, codec: compress.Codecs.Gzip, v2: true, smallPages: true}},
		{name: "pqarrow/snappy/v1/small-pages", pf: plainFile{rows: 2500, rgRows: 1200, codec: compress.Codecs.Snappy, smallPages: true}},
		{name: "pqarrow/snappy/v1/dictionary", pf: plainFile{rows: 3000, rgRows: 3000, codec: compress.Codecs.Snappy, dictionary: true}},
		{name: "pqarrow/none/v2/dictionary/small-pages", pf: plainFile{rows: 2000, rgRows: 1000, codec: compress.Codecs.Uncompressed, v2: true, dictionary: true, smallPages: true}},
		{name: "duckdb/snappy/v1/dictionary", path: writers + "duckdb_emb.parquet", cursor: []string{"e32", "e64", "l32"}, other: []string{"ne32", "em32"}},
		{name: "duckdb/zstd/v2/dictionary", path: writers + "duckdb_emb_v2.parquet", cursor: []string{"e32", "e64", "l32"}, other: []string{"ne32", "em32"}},
		{name: "polars/none/v1/huge-pages", path: writers + "polars_emb.parquet", cursor: []string{"e32"}, huge: true},
	}
	defer func(b int64) { listStreamBytes = b }(listStreamBytes)
	defer func(r, s int64) { maxColumnwiseRows, segmentRows = r, s }(maxColumnwiseRows, segmentRows)
	defer func(h int32) { hugePageBytes = h }(hugePageBytes)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.pf.rows > 0 {
				path = filepath.Join(dir, "c"+strconv.Itoa(i)+".parquet")
				writeListFile(t, path, tc.pf)
				tc.cursor, tc.other = listFastCols, listSlowCols
			}
			if tc.spans {
				path = filepath.Join(dir, "s"+strconv.Itoa(i)+".parquet")
				writeSpanningList(t, path, 3000, tc.span)
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
				listStreamBytes, maxColumnwiseRows, segmentRows = 0, 400, 400
				if tc.huge {
					hugePageBytes = 1024
				}
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				before, streamed, spans := listCursors.Load(), pageStreams.Load(), listSpans.Load()
				got, err, _ := readParquetWith(t, path, true, mem, []string{c})
				listStreamBytes, maxColumnwiseRows, segmentRows = 256<<20, 1<<18, 64<<10
				hugePageBytes = 8 << 20
				if err != nil {
					t.Fatalf("%s: %v", c, err)
				}
				if used := listCursors.Load() > before; used != cursor {
					t.Errorf("%s: decoded by the cursor %v, want %v", c, used, cursor)
				}
				if cursor && tc.spans && (c == "l32" || c == "l32req") && listSpans.Load() == spans {
					t.Errorf("%s: no row spanned pages", c)
				}
				if cursor && tc.huge && !tc.pf.v2 && pageStreams.Load() == streamed {
					t.Errorf("%s: no page was streamed", c)
				}
				// (pqarrow reads DuckDB's null FLOAT[8] lists with offsets
				// past the end of their values, which array.Equal cannot
				// compare: the columns left to it are compared only when
				// pqarrow wrote them.)
				if cursor || tc.pf.rows > 0 {
					sameRows(t, want[0].Schema(), got, want)
				}
				releaseAll(want)
				releaseAll(got)
				if !tc.pf.v2 && tc.name != "duckdb/zstd/v2/dictionary" {
					mem.AssertSize(t, 0)
				}
			}
		})
	}
}

// TestDuckDBNullArraysRefused: DuckDB writes a NULL FLOAT[8] with child
// level entries, which pqarrow reads with the later rows' values shifted
// (n32 of the fixtures: row 6 would read [0.5 2.625 …] for DuckDB's
// [2.25 2 …]); the column is refused with ErrFormat and its name, read
// column by column, streamed, or by the record reader (the fast path off),
// from DuckDB's v1 and v2 files, while the same files' other list columns
// (null elements, empty lists) read.
func TestDuckDBNullArraysRefused(t *testing.T) {
	defer func(r, s int64) { maxColumnwiseRows, segmentRows = r, s }(maxColumnwiseRows, segmentRows)
	for _, path := range []string{"testdata/writers/duckdb_emb.parquet", "testdata/writers/duckdb_emb_v2.parquet"} {
		for _, streamed := range []bool{false, true} {
			for _, fast := range []bool{true, false} {
				maxColumnwiseRows, segmentRows = 1<<18, 64<<10
				if streamed {
					maxColumnwiseRows, segmentRows = 500, 500
				}
				name := path + "/streamed=" + strconv.FormatBool(streamed) + "/fast=" + strconv.FormatBool(fast)
				recs, err, _ := readParquetWith(t, path, fast, memory.NewGoAllocator(), []string{"n32"})
				releaseAll(recs)
				if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), `column "n32"`) || !strings.Contains(err.Error(), "DuckDB") {
					t.Errorf("%s: n32 read with error %v, want ErrFormat naming the column and the writer", name, err)
				}
				recs, err, _ = readParquetWith(t, path, fast, memory.NewGoAllocator(), []string{"e32", "ne32", "em32"})
				releaseAll(recs)
				if err != nil {
					t.Errorf("%s: the other list columns: %v", name, err)
				}
			}
		}
	}
}
