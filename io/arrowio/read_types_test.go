package arrowio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// TestReadOtherWritersTypes reads the column types DuckDB and Polars write
// (testdata/writers, make.mjs): Polars' string_view and dictionaries of
// string_view come out as utf8 and dictionaries of utf8, with their values;
// embeddings, dates, timestamps and decimals keep their types.
func TestReadOtherWritersTypes(t *testing.T) {
	tests := []struct {
		file  string
		types map[string]string // column → type read
		check func(t *testing.T, rec arrow.Record, row0 int)
	}{
		{"duckdb_types.parquet", map[string]string{
			"emb": "list<list: float32, nullable>", "d": "date32", "ts": "timestamp[us, tz=UTC]",
			"amount": "decimal(10, 2)", "y": "utf8",
		}, func(t *testing.T, rec arrow.Record, row0 int) {
			emb := col(rec, "emb").(*array.List)
			vals := emb.ListValues().(*array.Float32)
			for r := 0; r < int(rec.NumRows()); r++ {
				i := row0 + r
				s, e := emb.ValueOffsets(r)
				if e-s != 4 || vals.Value(int(s)) != float32(i%2) || vals.IsNull(int(s)+3) != (i%13 == 0) {
					t.Fatalf("row %d: emb %s", i, emb.ValueStr(r))
				}
				if d := col(rec, "d").(*array.Date32).Value(r); d != arrow.Date32(19723+i%30) {
					t.Fatalf("row %d: d = %d", i, d)
				}
				if a := col(rec, "amount").(*array.Decimal128).Value(r); a.LowBits() != uint64(i*125) {
					t.Fatalf("row %d: amount = %v", i, a)
				}
			}
		}},
		{"polars_types.arrow", polarsTypes, checkPolarsTypes},
		// Polars' LZ4 frames carry block checksums, which pierrec/lz4
		// before v4.1.22 computed over the wrong bytes: the file was
		// refused as corrupt.
		{"polars_types_lz4.arrow", polarsTypes, checkPolarsTypes},
		{"polars_types_zstd.arrow", polarsTypes, checkPolarsTypes},
		{"polars_categorical_label.arrow", map[string]string{
			"y": "dictionary<values=utf8, indices=uint32, ordered=false>",
		}, func(t *testing.T, rec arrow.Record, row0 int) {
			y := col(rec, "y").(*array.Dictionary)
			for r := 0; r < int(rec.NumRows()); r++ {
				if w := map[bool]string{true: "no", false: "yes"}[(row0+r)%2 == 1]; y.ValueStr(r) != w {
					t.Fatalf("row %d: y = %q, want %q", row0+r, y.ValueStr(r), w)
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			if strings.HasSuffix(tc.file, ".arrow") {
				// Arrow v15's ipc.FileReader never releases the
				// dictionaries it reads with the schema (Close leaves its
				// memo), whoever reads the file: bound what stays to them,
				// so that a leak per batch or per conversion still fails.
				defer func() {
					if n := mem.CurrentAlloc(); n > 2048 {
						t.Errorf("%d bytes still allocated, more than the file's dictionaries", n)
					}
				}()
			} else {
				defer mem.AssertSize(t, 0)
			}
			s, recs, _ := readAll(t, filepath.Join("testdata", "writers", tc.file), ReadOptions{Allocator: mem, BatchSize: 64})
			defer pqtest.ReleaseAll(recs)
			for name, want := range tc.types {
				idx := s.FieldIndices(name)
				if len(idx) != 1 {
					t.Fatalf("no column %q in %v", name, s)
				}
				if got := s.Field(idx[0]).Type.String(); got != want {
					t.Errorf("column %q has type %s, want %s", name, got, want)
				}
			}
			rows := 0
			for _, rec := range recs {
				tc.check(t, rec, rows)
				rows += int(rec.NumRows())
			}
			if rows != 400 {
				t.Fatalf("%d rows, want 400", rows)
			}
		})
	}
}

// polarsTypes are the column types of the Polars IPC fixtures as read.
var polarsTypes = map[string]string{
	"s": "utf8", "cat": "dictionary<values=utf8, indices=uint32, ordered=false>",
	"emb": "fixed_size_list<item: float32, nullable>[4]", "d": "date32", "y": "utf8",
}

// checkPolarsTypes checks the values of the Polars IPC fixtures' rows.
func checkPolarsTypes(t *testing.T, rec arrow.Record, row0 int) {

	s := col(rec, "s").(*array.String)
	cat := col(rec, "cat").(*array.Dictionary)
	y := col(rec, "y").(*array.String)
	for r := 0; r < int(rec.NumRows()); r++ {
		i := row0 + r
		want := "v" + string(rune('0'+i%4))
		if i%5 == 0 {
			if s.IsValid(r) || cat.IsValid(r) {
				t.Fatalf("row %d: s %q, cat valid %v; want nulls", i, s.ValueStr(r), cat.IsValid(r))
			}
		} else if s.Value(r) != want || cat.Dictionary().(*array.String).Value(cat.GetValueIndex(r)) != want {
			t.Fatalf("row %d: s %q, cat %s; want %q", i, s.Value(r), cat.ValueStr(r), want)
		}
		if w := map[bool]string{true: "no", false: "yes"}[i%2 == 1]; y.Value(r) != w {
			t.Fatalf("row %d: y = %q, want %q", i, y.Value(r), w)
		}
	}
}

func col(rec arrow.Record, name string) arrow.Array {
	return rec.Column(rec.Schema().FieldIndices(name)[0])
}

// TestUnviewCorrupt: a view that points outside its buffers is an error,
// not a panic or a read out of bounds.
func TestUnviewCorrupt(t *testing.T) {
	view := func(size, buf, off int32) []byte {
		b := make([]byte, 16)
		put := func(at int, v int32) {
			for k := 0; k < 4; k++ {
				b[at+k] = byte(uint32(v) >> (8 * k))
			}
		}
		put(0, size)
		put(8, buf)
		put(12, off)
		return b
	}
	data := memory.NewBufferBytes([]byte(strings.Repeat("x", 40)))
	tests := []struct {
		name  string
		views []byte
		bufs  []*memory.Buffer
		want  string
	}{
		{"buffer index out of range", view(20, 3, 0), []*memory.Buffer{data}, "data buffer 3"},
		{"offset past the end", view(20, 0, 30), []*memory.Buffer{data}, "outside"},
		{"negative length", view(-5, 0, 0), []*memory.Buffer{data}, "negative"},
		{"short views buffer", view(20, 0, 0)[:8], []*memory.Buffer{data}, "views of 8 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			bufs := append([]*memory.Buffer{nil, memory.NewBufferBytes(tc.views)}, tc.bufs...)
			d := array.NewData(arrow.BinaryTypes.StringView, 1, bufs, nil, 0, 0)
			defer d.Release()
			out, err := unviewData(d, mem)
			if err == nil {
				out.Release()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

// TestReadPolarsShards: a directory of Polars IPC files reads as one input
// with the view columns converted, the shards' schemas probed the same way.
func TestReadPolarsShards(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer func() {
		// What stays is Arrow v15's ipc.FileReader dictionaries (see
		// TestReadOtherWritersTypes), a few per file opened.
		if n := mem.CurrentAlloc(); n > 8192 {
			t.Errorf("%d bytes still allocated", n)
		}
	}()
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "writers", "polars_types.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"part-0.arrow", "part-1.arrow"} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, recs, _ := readAll(t, dir, ReadOptions{Allocator: mem, BatchSize: 128})
	defer pqtest.ReleaseAll(recs)
	rows := 0
	for _, r := range recs {
		rows += int(r.NumRows())
	}
	if rows != 800 {
		t.Fatalf("%d rows, want 800", rows)
	}
	if got := s.Field(s.FieldIndices("s")[0]).Type; got.ID() != arrow.STRING {
		t.Fatalf("column s read as %s, want utf8", got)
	}
}
