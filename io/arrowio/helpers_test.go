package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

const testdata = "../../testdata"

// fixtureSchema is the schema of the generated fixtures: every type the
// CSV reader infers, all nullable.
var fixtureSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
}, nil)

// fixtureRecord builds n deterministic rows with some nulls, starting at
// row offset start.
func fixtureRecord(mem memory.Allocator, start, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, fixtureSchema)
	defer b.Release()
	for i := start; i < start+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i*7 - 1000))
		if i%11 == 3 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Float64Builder).Append(float64(i)/8 - 3.25)
		}
		if i%13 == 5 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("n%d, \"q\"", i%97))
		}
		if i%17 == 9 {
			b.Field(3).AppendNull()
		} else {
			b.Field(3).(*array.BooleanBuilder).Append(i%3 == 0)
		}
	}
	return b.NewRecord()
}

// fixtureRecords splits rows into records of chunk rows.
func fixtureRecords(mem memory.Allocator, rows, chunk int) []arrow.Record {
	var recs []arrow.Record
	for i := 0; i < rows; i += chunk {
		recs = append(recs, fixtureRecord(mem, i, min(chunk, rows-i)))
	}
	return recs
}

func releaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// encodeIPC encodes recs as an Arrow IPC file or stream.
func encodeIPC(t testing.TB, s *arrow.Schema, recs []arrow.Record, file bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	if file {
		f, err := os.CreateTemp(t.TempDir(), "enc")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fw, err := ipc.NewFileWriter(f, ipc.WithSchema(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := fw.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := fw.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	w := ipc.NewWriter(&buf, ipc.WithSchema(s))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// encodeCSV encodes recs (of fixtureSchema-like flat types) as CSV with a
// header; nulls are empty fields.
func encodeCSV(t testing.TB, s *arrow.Schema, recs []arrow.Record) []byte {
	t.Helper()
	var sb strings.Builder
	for i, f := range s.Fields() {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(f.Name)
	}
	sb.WriteByte('\n')
	for _, r := range recs {
		for row := 0; row < int(r.NumRows()); row++ {
			for j, col := range r.Columns() {
				if j > 0 {
					sb.WriteByte(',')
				}
				if col.IsNull(row) {
					continue
				}
				switch c := col.(type) {
				case *array.Int64:
					sb.WriteString(strconv.FormatInt(c.Value(row), 10))
				case *array.Float64:
					sb.WriteString(strconv.FormatFloat(c.Value(row), 'g', -1, 64))
				case *array.Boolean:
					sb.WriteString(strconv.FormatBool(c.Value(row)))
				case *array.String:
					sb.WriteString(`"` + strings.ReplaceAll(c.Value(row), `"`, `""`) + `"`)
				default:
					t.Fatalf("encodeCSV: unsupported %T", col)
				}
			}
			sb.WriteByte('\n')
		}
	}
	return []byte(sb.String())
}

// writeFixtures writes the same rows as Parquet, IPC file, IPC stream and
// CSV into dir and returns the paths by format.
func writeFixtures(t testing.TB, dir string, rows, chunk int) map[Format]string {
	t.Helper()
	mem := memory.NewGoAllocator()
	recs := fixtureRecords(mem, rows, chunk)
	defer releaseAll(recs)
	paths := map[Format]string{
		FormatParquet:   filepath.Join(dir, "fx.parquet"),
		FormatIPCFile:   filepath.Join(dir, "fx.arrow"),
		FormatIPCStream: filepath.Join(dir, "fx.arrows"),
		FormatCSV:       filepath.Join(dir, "fx.csv"),
	}
	if err := WriteParquet(paths[FormatParquet], fixtureSchema, recs, ParquetOptions{RowGroupRows: 1500}); err != nil {
		t.Fatal(err)
	}
	for f, b := range map[Format][]byte{
		FormatIPCFile:   encodeIPC(t, fixtureSchema, recs, true),
		FormatIPCStream: encodeIPC(t, fixtureSchema, recs, false),
		FormatCSV:       encodeCSV(t, fixtureSchema, recs),
	} {
		if err := os.WriteFile(paths[f], b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// readAll reads every batch of path, checking the batch-size contract, and
// returns the batches (caller releases) and the Reader's schema.
func readAll(t testing.TB, path string, opts ReadOptions) (*arrow.Schema, []arrow.Record, Format) {
	t.Helper()
	r, err := Open(path, opts)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	batch := opts.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	var recs []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			releaseAll(recs)
			t.Fatalf("read %s: %v", path, err)
		}
		if rec.NumRows() < 1 || rec.NumRows() > int64(batch) {
			t.Errorf("batch of %d rows, want 1..%d", rec.NumRows(), batch)
		}
		if !rec.Schema().Equal(r.Schema()) {
			t.Errorf("batch schema %v differs from reader schema %v", rec.Schema(), r.Schema())
		}
		recs = append(recs, rec)
	}
	if _, err := r.Read(); !errors.Is(err, io.EOF) {
		t.Errorf("read after EOF: %v, want io.EOF", err)
	}
	return r.Schema(), recs, r.Format()
}

// sameRows reports whether two record lists hold the same rows and fields
// (batch boundaries may differ).
func sameRows(t testing.TB, s *arrow.Schema, got, want []arrow.Record) bool {
	t.Helper()
	gt := array.NewTableFromRecords(s, got)
	defer gt.Release()
	wt := array.NewTableFromRecords(s, want)
	defer wt.Release()
	if gt.NumRows() != wt.NumRows() || gt.NumCols() != wt.NumCols() {
		t.Errorf("got %d rows × %d cols, want %d × %d", gt.NumRows(), gt.NumCols(), wt.NumRows(), wt.NumCols())
		return false
	}
	ok := true
	for i := 0; i < int(gt.NumCols()); i++ {
		// NaNs are equal here (ChunkedEqual says NaN != NaN): a garbled
		// float can be one, read alike by both readers.
		if !array.ChunkedEqual(gt.Column(i).Data(), wt.Column(i).Data()) &&
			!array.ChunkedApproxEqual(gt.Column(i).Data(), wt.Column(i).Data(), array.WithNaNsEqual(true), array.WithAbsTolerance(0)) {
			t.Errorf("column %q differs", s.Field(i).Name)
			ok = false
		}
	}
	return ok
}

// projectRecords returns new records holding only the named columns.
func projectRecords(recs []arrow.Record, cols []string) (*arrow.Schema, []arrow.Record) {
	s := recs[0].Schema()
	fields := make([]arrow.Field, len(cols))
	idx := make([]int, len(cols))
	for i, c := range cols {
		idx[i] = s.FieldIndices(c)[0]
		fields[i] = s.Field(idx[i])
	}
	ps := arrow.NewSchema(fields, nil)
	out := make([]arrow.Record, len(recs))
	for k, r := range recs {
		arrs := make([]arrow.Array, len(idx))
		for i, j := range idx {
			arrs[i] = r.Column(j)
		}
		out[k] = array.NewRecord(ps, arrs, r.NumRows())
	}
	return ps, out
}

// readReleasing reads r to its end a batch at a time, checking each batch
// against the same rows of ref and releasing it before reading the next
// (so that its buffers can be reused), and returns the rows read.
func readReleasing(t *testing.T, r *Reader, schema *arrow.Schema, ref arrow.Record) int64 {
	t.Helper()
	var at int64
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return at
		}
		if err != nil {
			t.Fatal(err)
		}
		want := ref.NewSlice(at, at+rec.NumRows())
		if !sameRows(t, schema, []arrow.Record{rec}, []arrow.Record{want}) {
			t.Fatalf("rows %d–%d differ", at, at+rec.NumRows())
		}
		at += rec.NumRows()
		want.Release()
		rec.Release()
	}
}

// readRest reads r to its end and returns its batches (caller releases).
func readRest(r *Reader) ([]arrow.Record, error) {
	var recs []arrow.Record
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return recs, nil
		}
		if err != nil {
			releaseAll(recs)
			return nil, err
		}
		recs = append(recs, rec)
	}
}
