package arrowio

import (
	"bytes"
	"errors"
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

	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

const testdata = "../../testdata"

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

// encodeCSV encodes recs (of pqtest.FixtureSchema()-like flat types) as CSV with a
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
	recs := pqtest.FixtureRecords(mem, rows, chunk)
	defer pqtest.ReleaseAll(recs)
	paths := map[Format]string{
		FormatParquet:   filepath.Join(dir, "fx.parquet"),
		FormatIPCFile:   filepath.Join(dir, "fx.arrow"),
		FormatIPCStream: filepath.Join(dir, "fx.arrows"),
		FormatCSV:       filepath.Join(dir, "fx.csv"),
	}
	if err := WriteParquet(paths[FormatParquet], pqtest.FixtureSchema(), recs, ParquetOptions{RowGroupRows: 1500}); err != nil {
		t.Fatal(err)
	}
	for f, b := range map[Format][]byte{
		FormatIPCFile:   encodeIPC(t, pqtest.FixtureSchema(), recs, true),
		FormatIPCStream: encodeIPC(t, pqtest.FixtureSchema(), recs, false),
		FormatCSV:       encodeCSV(t, pqtest.FixtureSchema(), recs),
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
			pqtest.ReleaseAll(recs)
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
		if !pqtest.SameRows(t, schema, []arrow.Record{rec}, []arrow.Record{want}) {
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
			pqtest.ReleaseAll(recs)
			return nil, err
		}
		recs = append(recs, rec)
	}
}
