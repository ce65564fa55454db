package pqread

// Test helpers: fixtures, and a Reader over Open that reads a Parquet file
// the way arrowio.Reader does (records sliced to the batch size, panics
// turned into errors wrapping ErrFormat), for the tests of this package.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/pate-tool/pate/io/arrowio/internal/ioerr"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread/pqtest"
)

// ErrFormat is the error a corrupt file's read wraps.
var ErrFormat = ioerr.ErrFormat

// DefaultBatchSize is arrowio's default batch size.
const DefaultBatchSize = 65536

// ReadOptions are the options of Open, as arrowio.ReadOptions passes them.
type ReadOptions = Options

// Reader reads a Parquet file as arrowio.Reader does.
type Reader struct {
	name    string
	f       *os.File
	src     Source
	out     *arrow.Schema
	proj    []int // columns of the source's records, nil = all
	batch   int64
	pending arrow.Record
	off     int64
	err     error
}

// openFile opens the Parquet file at path with the defaults arrowio.Open fills in.
func openFile(path string, opts ReadOptions) (r *Reader, err error) {
	if opts.Workers < 0 || opts.BatchSize < 0 {
		return nil, fmt.Errorf("%s: negative worker count or batch size", path)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Tuning == nil {
		// A test that sends files down one path or another gives a
		// tuning of its own; no test reaches another's.
		opts.Tuning = DefaultTuning()
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r = &Reader{name: path, f: f, batch: int64(opts.BatchSize)}
	if err := r.guard("open", func() error {
		var err error
		r.src, err = Open(f, path, opts)
		return err
	}); err != nil {
		f.Close()
		return nil, err
	}
	r.out = r.src.OutSchema()
	if len(opts.Columns) > 0 {
		// As arrowio.Reader projects: the columns in the order asked, the
		// fields and metadata of OutSchema.
		in := r.src.Schema()
		fields := make([]arrow.Field, len(opts.Columns))
		for i, c := range opts.Columns {
			j := in.FieldIndices(c)[0]
			r.proj = append(r.proj, j)
			fields[i] = r.src.OutSchema().Field(j)
		}
		md := r.src.OutSchema().Metadata()
		r.out = arrow.NewSchema(fields, &md)
	}
	if !opts.SelectLater {
		if b, ok := r.src.(interface{ Begin() }); ok {
			b.Begin()
		}
	}
	return r, nil
}

func (r *Reader) guard(what string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt parquet file (%s): %v: %w", r.name, what, p, ErrFormat)
		}
	}()
	return fn()
}

// Schema is the schema of the records Read returns.
func (r *Reader) Schema() *arrow.Schema { return r.out }

// LookAhead is Source's LookAhead, or 0.
func (r *Reader) LookAhead() int64 {
	if l, ok := r.src.(interface{ LookAhead() int64 }); ok {
		return l.LookAhead()
	}
	return 0
}

// Read returns the next record of at most the batch size, owned by the
// caller, or io.EOF; an error sticks.
func (r *Reader) Read() (arrow.Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	var rec arrow.Record
	err := r.guard("read", func() error {
		for {
			if r.pending != nil {
				n := r.pending.NumRows()
				if r.off < n {
					end := min(n, r.off+r.batch)
					var part arrow.Record
					if r.off == 0 && end == n {
						part, r.pending = r.pending, nil
					} else {
						part = r.pending.NewSlice(r.off, end)
						r.off = end
					}
					cols := part.Columns()
					if r.proj != nil {
						cols = make([]arrow.Array, len(r.proj))
						for i, j := range r.proj {
							cols[i] = part.Column(j)
						}
					}
					rec = array.NewRecord(r.out, cols, part.NumRows())
					part.Release()
					return nil
				}
				r.pending.Release()
				r.pending = nil
			}
			next, err := r.src.Next()
			if err != nil {
				return err
			}
			r.pending, r.off = next, 0
		}
	})
	if err != nil {
		r.err = err
		return nil, err
	}
	return rec, nil
}

// Close releases the reader and closes the file; a later Read fails.
func (r *Reader) Close() error {
	var errs []error
	if r.pending != nil {
		r.pending.Release()
		r.pending = nil
	}
	if r.src != nil {
		if err := r.guard("close", r.src.Close); err != nil {
			errs = append(errs, err)
		}
		r.src = nil
	}
	if r.f != nil {
		if err := r.f.Close(); err != nil {
			errs = append(errs, err)
		}
		r.f = nil
	}
	if r.err == nil {
		r.err = fmt.Errorf("%s: reader is closed", r.name)
	}
	return errors.Join(errs...)
}

// ParquetOptions configures WriteParquet.
type ParquetOptions struct {
	Compression  compress.Compression
	Dictionary   bool
	RowGroupRows int64
	Allocator    memory.Allocator
	StoreSchema  bool
}

// WriteParquet writes recs to path as arrowio.WriteParquet does.
func WriteParquet(path string, s *arrow.Schema, recs []arrow.Record, opts ParquetOptions) error {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = 1 << 20
	}
	props := parquet.NewWriterProperties(
		parquet.WithAllocator(opts.Allocator),
		parquet.WithCompression(opts.Compression),
		parquet.WithDictionaryDefault(opts.Dictionary),
		parquet.WithMaxRowGroupLength(opts.RowGroupRows),
		parquet.WithRootRepetition(parquet.Repetitions.Required),
	)
	arrProps := []pqarrow.WriterOption{pqarrow.WithAllocator(opts.Allocator)}
	if opts.StoreSchema {
		arrProps = append(arrProps, pqarrow.WithStoreSchema())
	}
	tbl := array.NewTableFromRecords(s, recs)
	defer tbl.Release()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := pqarrow.WriteTable(tbl, bw, opts.RowGroupRows, props, pqarrow.NewArrowWriterProperties(arrProps...)); err != nil {
		return fmt.Errorf("%s: writing parquet: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

func itoa(i int) string { return strconv.Itoa(i) }

// readAll reads every batch of path, checking the batch-size contract, and
// returns the batches (caller releases) and the Reader's schema.
func readAll(t testing.TB, path string, opts ReadOptions) (*arrow.Schema, []arrow.Record) {
	t.Helper()
	r, err := openFile(path, opts)
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
	return r.Schema(), recs
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
