package arrowio

import (
	"bytes"
	"errors"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

func TestSniffFormat(t *testing.T) {
	tests := []struct {
		name, file string
		head       []byte
		want       Format
		wantErr    bool
	}{
		{"parquet", "x.bin", []byte("PAR1\x15\x04"), FormatParquet, false},
		{"ipc file", "x", []byte("ARROW1\x00\x00\xff\xff\xff\xff"), FormatIPCFile, false},
		{"ipc stream", "x", []byte{0xff, 0xff, 0xff, 0xff, 0x10, 0x01, 0, 0}, FormatIPCStream, false},
		{"old ipc stream", "x", []byte{0x10, 0x01, 0, 0, 0x10, 0, 0, 0}, FormatIPCStream, false},
		{"csv by text", "data.txt", []byte("a,b\n1,2\n"), FormatCSV, false},
		{"csv by name", "DATA.CSV", []byte{0, 1, 2, 3}, FormatCSV, false},
		{"utf8 text", "-", []byte("näme,ß\n1,2"), FormatCSV, false},
		// Only the header decides: binary bytes in a (sensitive) row must
		// not make the file unreadable.
		{"binary bytes after a text header", "-", []byte("x,y\n\x00\x01,\xff\n"), FormatCSV, false},
		{"empty", "e.parquet", nil, 0, true},
		{"garbage", "g.bin", []byte{0x01, 0x02, 0x00, 0x9f, 0xff, 0x00, 0x13, 0x07}, 0, true},
		{"short stream marker", "s", []byte{0xff, 0xff, 0xff}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SniffFormat(tc.head, tc.file)
			if tc.wantErr {
				if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.file) {
					t.Fatalf("SniffFormat = %v, %v; want an ErrFormat naming %q", got, err, tc.file)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("SniffFormat = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestReadTestdata(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		cols      []string
		batch     int
		wantRows  int64
		wantCols  []string // first columns of the schema, in order
		nullCheck map[string]int
	}{
		{"adult batch 1", "adult_train.parquet", []string{"workclass", "age"}, 1, 32561, []string{"workclass", "age"}, map[string]int{"workclass": 1836}},
		{"adult batch 1000", "adult_train.parquet", nil, 1000, 32561, []string{"age", "workclass", "fnlwgt", "education"}, map[string]int{"workclass": 1836, "age": 0}},
		{"adult default batch", "adult_train.parquet", nil, 0, 32561, []string{"age", "workclass"}, map[string]int{"workclass": 1836}},
		{"adult batch 65536 projected", "adult_train.parquet", []string{"income", "fnlwgt"}, 65536, 32561, []string{"income", "fnlwgt"}, nil},
		{"digits", "digits.parquet", nil, 1000, 1797, []string{"pixel_0_0", "pixel_0_1"}, nil},
		{"digits projected", "digits.parquet", []string{"pixel_7_7"}, 500, 1797, []string{"pixel_7_7"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			path := filepath.Join(testdata, tc.file)
			r, err := Open(path, ReadOptions{BatchSize: tc.batch, Columns: tc.cols, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			if r.NumRows() != tc.wantRows || r.Format() != FormatParquet {
				t.Errorf("NumRows, Format = %d, %v; want %d, parquet", r.NumRows(), r.Format(), tc.wantRows)
			}
			r.Close()
			s, recs, _ := readAll(t, path, ReadOptions{BatchSize: tc.batch, Columns: tc.cols, Allocator: mem})
			defer pqtest.ReleaseAll(recs)
			if tc.cols != nil && s.NumFields() != len(tc.cols) {
				t.Errorf("%d fields, want %d", s.NumFields(), len(tc.cols))
			}
			for i, c := range tc.wantCols {
				if s.Field(i).Name != c {
					t.Errorf("field %d = %q, want %q", i, s.Field(i).Name, c)
				}
			}
			var rows int64
			nulls := map[string]int{}
			for _, rec := range recs {
				rows += rec.NumRows()
				for i, col := range rec.Columns() {
					nulls[s.Field(i).Name] += col.NullN()
				}
			}
			if rows != tc.wantRows {
				t.Errorf("read %d rows, want %d", rows, tc.wantRows)
			}
			for c, n := range tc.nullCheck {
				if nulls[c] != n {
					t.Errorf("column %q: %d nulls, want %d", c, nulls[c], n)
				}
			}
		})
	}
}

func TestReadFormats(t *testing.T) {
	const rows = 2500
	dir := t.TempDir()
	paths := writeFixtures(t, dir, rows, 700)
	want := pqtest.FixtureRecords(memory.NewGoAllocator(), rows, rows)
	defer pqtest.ReleaseAll(want)
	projections := [][]string{nil, {"name", "id"}, {"flag"}}
	for _, format := range []Format{FormatParquet, FormatIPCFile, FormatIPCStream, FormatCSV} {
		for _, batch := range []int{1, 1000, 65536} {
			for _, cols := range projections {
				name := format.String() + "/batch=" + itoa(batch) + "/cols=" + strings.Join(cols, "+")
				t.Run(name, func(t *testing.T) {
					mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
					defer mem.AssertSize(t, 0)
					s, got, f := readAll(t, paths[format], ReadOptions{BatchSize: batch, Columns: cols, Allocator: mem})
					defer pqtest.ReleaseAll(got)
					if f != format {
						t.Errorf("format %v, want %v", f, format)
					}
					ws, wantRecs := pqtest.FixtureSchema(), want
					if cols != nil {
						ws, wantRecs = pqtest.ProjectRecords(want, cols)
						defer pqtest.ReleaseAll(wantRecs)
					}
					if !s.Equal(ws) {
						t.Fatalf("schema %v, want %v", s, ws)
					}
					pqtest.SameRows(t, s, got, wantRecs)
				})
			}
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestReadStdin(t *testing.T) {
	dir := t.TempDir()
	paths := writeFixtures(t, dir, 900, 400)
	want := pqtest.FixtureRecords(memory.NewGoAllocator(), 900, 900)
	defer pqtest.ReleaseAll(want)
	for _, format := range []Format{FormatParquet, FormatIPCFile, FormatIPCStream, FormatCSV} {
		t.Run(format.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			b, err := os.ReadFile(paths[format])
			if err != nil {
				t.Fatal(err)
			}
			spool := t.TempDir()
			s, got, f := readAll(t, "-", ReadOptions{BatchSize: 256, Allocator: mem, Stdin: bytes.NewReader(b), TempDir: spool})
			defer pqtest.ReleaseAll(got)
			if f != format {
				t.Errorf("format %v, want %v", f, format)
			}
			pqtest.SameRows(t, s, got, want)
			if left, _ := os.ReadDir(spool); len(left) != 0 {
				t.Errorf("spool files left after Close: %v", left)
			}
		})
	}
}

// TestReadMetadata checks that schema metadata survives reading (IPC, and
// Parquet written with the Arrow schema stored) and projection.
func TestReadMetadata(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	md := arrow.NewMetadata([]string{"pate.version"}, []string{"1.2.3"})
	s := arrow.NewSchema(pqtest.FixtureSchema().Fields(), &md)
	recs := pqtest.FixtureRecords(mem, 50, 50)
	defer pqtest.ReleaseAll(recs)
	dir := t.TempDir()
	pq := filepath.Join(dir, "m.parquet")
	if err := WriteParquet(pq, s, recs, ParquetOptions{StoreSchema: true, Allocator: mem}); err != nil {
		t.Fatal(err)
	}
	ipcPath := filepath.Join(dir, "m.arrow")
	if err := os.WriteFile(ipcPath, encodeIPC(t, s, recs, true), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{pq, ipcPath} {
		for _, cols := range [][]string{nil, {"x"}} {
			t.Run(filepath.Base(p)+strings.Join(cols, ","), func(t *testing.T) {
				got, recs, _ := readAll(t, p, ReadOptions{Allocator: mem, Columns: cols})
				pqtest.ReleaseAll(recs)
				if v, ok := got.Metadata().GetValue("pate.version"); !ok || v != "1.2.3" {
					t.Errorf("metadata %v, want pate.version=1.2.3", got.Metadata())
				}
			})
		}
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	adult, err := os.ReadFile(filepath.Join(testdata, "adult_train.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fx := writeFixtures(t, t.TempDir(), 300, 100)
	ipcBytes, _ := os.ReadFile(fx[FormatIPCFile])
	streamBytes, _ := os.ReadFile(fx[FormatIPCStream])
	tests := []struct {
		name   string
		path   string
		cols   []string
		target error // errors.Is target, or nil for any error
	}{
		{"missing file", filepath.Join(dir, "nope.parquet"), nil, os.ErrNotExist},
		{"misspelt column", filepath.Join(testdata, "adult_train.parquet"), []string{"agee"}, ErrNoColumn},
		{"misspelt column csv", fx[FormatCSV], []string{"ID"}, ErrNoColumn},
		{"misspelt column ipc", fx[FormatIPCFile], []string{"nam"}, ErrNoColumn},
		{"truncated parquet", write("half.parquet", adult[:len(adult)/2]), nil, ErrFormat},
		{"parquet without footer", write("nofoot.parquet", adult[:len(adult)-4]), nil, ErrFormat},
		{"parquet body cut", write("cut.parquet", append(append([]byte{}, adult[:len(adult)/3]...), adult[len(adult)*2/3:]...)), nil, ErrFormat},
		{"truncated ipc file", write("half.arrow", ipcBytes[:len(ipcBytes)/2]), nil, ErrFormat},
		{"truncated ipc stream", write("half.arrows", streamBytes[:len(streamBytes)/2]), nil, ErrFormat},
		{"garbage", write("garbage.bin", []byte{0x00, 0x9f, 0x13, 0x00, 0xfe, 0x01, 0x02, 0x03, 0x04}), nil, ErrFormat},
		{"empty file", write("empty.parquet", nil), nil, ErrFormat},
		{"csv ragged", write("ragged.csv", []byte("a,b\n1,2\n3\n")), nil, ErrFormat},
		{"csv late type change", write("late.csv", []byte("a\n"+strings.Repeat("1\n", csvInferRows)+"x\n")), nil, ErrFormat},
		{"csv header only is fine but empty is not", write("e.csv", []byte("")), nil, ErrFormat},
		{"directory", dir, nil, nil},
		{"duplicate column", fx[FormatCSV], []string{"id", "id"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			err := readErr(tc.path, ReadOptions{Columns: tc.cols, Allocator: mem})
			if err == nil {
				t.Fatal("no error")
			}
			if tc.target != nil && !errors.Is(err, tc.target) {
				t.Errorf("error %v is not %v", err, tc.target)
			}
			if !strings.Contains(err.Error(), tc.path) {
				t.Errorf("error %q does not name %s", err, tc.path)
			}
			if tc.name == "misspelt column" && !strings.Contains(err.Error(), "agee") {
				t.Errorf("error %q does not name the column", err)
			}
		})
	}
}

// readErr opens and reads path to the end and returns the first error
// (nil at a clean end), releasing everything.
func readErr(path string, opts ReadOptions) error {
	r, err := Open(path, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	for {
		rec, err := r.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		rec.Release()
	}
}

// TestCSVInference checks the inferred types and null handling.
func TestCSVInference(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	in := "\ufeffi,f,b,s,e,big\n1,1.5,true,a,,99999999999999999999\n,2,FALSE,,,1\n-3,1e3,,c,,2\n"
	_, recs, _ := readAll(t, "-", ReadOptions{Allocator: mem, Stdin: strings.NewReader(in)})
	defer pqtest.ReleaseAll(recs)
	s := recs[0].Schema()
	want := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean,
		arrow.BinaryTypes.String, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64}
	names := []string{"i", "f", "b", "s", "e", "big"}
	for i, dt := range want {
		if !arrow.TypeEqual(s.Field(i).Type, dt) || s.Field(i).Name != names[i] || !s.Field(i).Nullable {
			t.Errorf("field %d = %v, want %s %v nullable", i, s.Field(i), names[i], dt)
		}
	}
	rec := recs[0]
	if rec.NumRows() != 3 || rec.Column(0).NullN() != 1 || rec.Column(3).NullN() != 1 || rec.Column(4).NullN() != 3 {
		t.Errorf("rows/nulls wrong: %v", rec)
	}
	if v := rec.Column(1).(*array.Float64).Value(2); v != 1000 {
		t.Errorf("f[2] = %v, want 1000", v)
	}
	if v := rec.Column(2).(*array.Boolean).Value(1); v {
		t.Errorf("b[1] = true, want false")
	}
}

// TestNumRowsKnownUpFront: Parquet and Arrow IPC files say how many rows
// they hold before any batch is read (the engine plans its noise on it);
// streams and CSV do not.
func TestNumRowsKnownUpFront(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	files := writeFixtures(t, t.TempDir(), 1234, 100)
	want := map[Format]int64{FormatParquet: 1234, FormatIPCFile: 1234, FormatIPCStream: -1, FormatCSV: -1}
	for format, path := range files {
		r, err := Open(path, ReadOptions{Allocator: mem})
		if err != nil {
			t.Fatalf("%v: %v", format, err)
		}
		if got := r.NumRows(); got != want[format] {
			t.Errorf("%v: NumRows = %d, want %d", format, got, want[format])
		}
		r.Close()
	}
}

// TestCSVDeclaredTypes: with CSVTypes the schema is the declaration alone,
// whatever the rows hold, and a value that does not fit is a counted null
// (or a counted skipped record), never an error that would quote it.
func TestCSVDeclaredTypes(t *testing.T) {
	types := map[string]arrow.DataType{"x": arrow.PrimitiveTypes.Float64, "y": arrow.PrimitiveTypes.Int64, "b": arrow.FixedWidthTypes.Boolean}
	wantSchema := arrow.NewSchema([]arrow.Field{
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		{Name: "u", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	var late strings.Builder
	late.WriteString("x,y,b,u\n")
	for i := 0; i < 10005; i++ {
		late.WriteString("1,0,true,a\n")
	}
	late.WriteString("0.5,SECRET,maybe,b\n")
	tests := []struct {
		name          string
		in            string
		rows          int64
		nulls         [4]int // per column
		records, cell int64  // Skipped()
	}{
		{name: "values that fit", in: "x,y,b,u\n1,0,true,a\n2.5,1,0,b\n", rows: 2},
		{name: "a cell of the wrong type is null", in: "x,y,b,u\n1,0,true,a\n0.5,x,T,b\n", rows: 2, nulls: [4]int{0, 1, 0, 0}, cell: 1},
		{name: "all strings", in: "x,y,b,u\nfoo,bar,baz,qux\n", rows: 1, nulls: [4]int{1, 1, 1, 0}, cell: 3},
		{name: "a wrong-width record is skipped", in: "x,y,b,u\n1,0,true,a\n3,4\n5,6,true,a,9\n", rows: 1, records: 2},
		{name: "a stray quote is data", in: "x,y,b,u\n1,0,true,a\"b\n", rows: 1},
		{name: "a mismatch after the first 10,000 rows", in: late.String(), rows: 10006, nulls: [4]int{0, 1, 1, 0}, cell: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			r, err := Open("-", ReadOptions{Allocator: mem, Stdin: strings.NewReader(tc.in), CSVTypes: types})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.Schema().Equal(wantSchema) {
				t.Errorf("schema %v, want %v", r.Schema(), wantSchema)
			}
			var rows int64
			var nulls [4]int
			for {
				rec, err := r.Read()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				rows += rec.NumRows()
				for j := range nulls {
					nulls[j] += rec.Column(j).NullN()
				}
				rec.Release()
			}
			records, cells := r.Skipped()
			if rows != tc.rows || nulls != tc.nulls || records != tc.records || cells != tc.cell {
				t.Errorf("rows %d, nulls %v, skipped %d records and %d cells; want %d, %v, %d, %d",
					rows, nulls, records, cells, tc.rows, tc.nulls, tc.records, tc.cell)
			}
		})
	}
}

// TestCSVDeclaredTypeUnsupported: a declaration the CSV reader cannot
// honour is refused when the file is opened, before any row is read.
func TestCSVDeclaredTypeUnsupported(t *testing.T) {
	_, err := Open("-", ReadOptions{Stdin: strings.NewReader("d\n1\n"), CSVTypes: map[string]arrow.DataType{"d": arrow.FixedWidthTypes.Date32}})
	if err == nil || !strings.Contains(err.Error(), `"d"`) {
		t.Errorf("err = %v, want a refusal naming the column", err)
	}
}

// FuzzReadDeclaredCSV: under a fixed header, a CSV read with declared
// types has exactly the declared schema and never fails on its rows,
// whatever they hold: a misfit is a counted null or a skipped record.
func FuzzReadDeclaredCSV(f *testing.F) {
	for _, s := range []string{"1,2,true,a\n", "0.5,x,maybe,\"b\n", "1,2\n3,4,5,6,7\n", "\"\"\"\n,,,\n", "\xff\xfe,\x00,,\n"} {
		f.Add([]byte(s))
	}
	types := map[string]arrow.DataType{"x": arrow.PrimitiveTypes.Float64, "y": arrow.PrimitiveTypes.Int64, "b": arrow.FixedWidthTypes.Boolean}
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
		defer mem.AssertSize(t, 0)
		in := io.MultiReader(strings.NewReader("x,y,b,u\n"), bytes.NewReader(data))
		s, recs, err := readAllErr("-", ReadOptions{BatchSize: 3, Allocator: mem, Stdin: in, CSVTypes: types})
		defer pqtest.ReleaseAll(recs)
		if err != nil {
			t.Fatalf("a declared csv failed on its rows: %v", err)
		}
		for i, want := range []arrow.DataType{types["x"], types["y"], types["b"], arrow.BinaryTypes.String} {
			if !arrow.TypeEqual(s.Field(i).Type, want) {
				t.Fatalf("field %d is %s, want %s", i, s.Field(i).Type, want)
			}
		}
	})
}

// TestSelect: a Reader opened with SelectLater and narrowed by Select
// reads the selected columns, in Select's order, in every format and
// from a directory of shards; a Parquet file then decodes only those
// columns. Select after a Read, or of a column the input lacks, fails,
// and a Reader closed before any Read leaks nothing.
func TestSelect(t *testing.T) {
	const rows = 2500
	dir := t.TempDir()
	paths := writeFixtures(t, dir, rows, 700)
	recs := pqtest.FixtureRecords(memory.NewGoAllocator(), rows, 700)
	for i := 0; i < len(recs); i++ {
		writeShard(t, filepath.Join(dir, "shards", "s"+itoa(i)+".parquet"), FormatParquet, pqtest.FixtureSchema(), recs[i:i+1], false)
	}
	pqtest.ReleaseAll(recs)
	want := pqtest.FixtureRecords(memory.NewGoAllocator(), rows, rows)
	defer pqtest.ReleaseAll(want)
	inputs := map[string]string{"shards": filepath.Join(dir, "shards")}
	for f, p := range paths {
		inputs[f.String()] = p
	}
	for name, path := range inputs {
		for _, cols := range [][]string{nil, {"x"}, {"flag", "id"}} {
			t.Run(name+"/cols="+strings.Join(cols, "+"), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
				defer mem.AssertSize(t, 0)
				st := new(pqread.Stats)
				r, err := Open(path, ReadOptions{Allocator: mem, SelectLater: true, BatchSize: 1000, stats: st})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if err := r.Select(cols); err != nil {
					t.Fatal(err)
				}
				got, err := readRest(r)
				if err != nil {
					t.Fatal(err)
				}
				defer pqtest.ReleaseAll(got)
				ws, wantRecs := pqtest.FixtureSchema(), want
				if cols != nil {
					ws, wantRecs = pqtest.ProjectRecords(want, cols)
					defer pqtest.ReleaseAll(wantRecs)
				}
				if !r.Schema().Equal(ws) {
					t.Fatalf("schema %v, want %v", r.Schema(), ws)
				}
				pqtest.SameRows(t, ws, got, wantRecs)
				if name == FormatParquet.String() {
					// id and x are on the fast path, a chunk per row group.
					pf, err := file.OpenParquetFile(path, false)
					if err != nil {
						t.Fatal(err)
					}
					perColumn := int64(pf.NumRowGroups())
					pf.Close()
					wantPlain := 2 * perColumn
					switch strings.Join(cols, "+") {
					case "x", "flag+id":
						wantPlain = perColumn
					}
					if n := st.PlainColumns.Load(); n != wantPlain {
						t.Errorf("the fast path decoded %d column chunks, want %d", n, wantPlain)
					}
				}
				if err := r.Select(nil); err == nil {
					t.Errorf("Select after a Read: no error")
				}
			})
		}
		t.Run(name+"/errors", func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			r, err := Open(path, ReadOptions{Allocator: mem, SelectLater: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Select([]string{"id", "nope"}); !errors.Is(err, ErrNoColumn) {
				t.Errorf("Select of a missing column: %v, want ErrNoColumn", err)
			}
			r.Close()
			r, err = Open(path, ReadOptions{Allocator: mem, SelectLater: true})
			if err != nil {
				t.Fatal(err)
			}
			r.Close() // never read, never selected
		})
	}
}
