package pqread

import (
	"context"
	"errors"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/arrowfix"
	"github.com/pate-tool/pate/io/arrowio/internal/ioerr"
	"io"
	"os"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/metadata"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// Options configures Open: the fields of arrowio.ReadOptions that reach
// the Parquet reader.
type Options struct {
	// BatchSize is the most rows of a record the reader hands out (> 0).
	BatchSize int
	// Columns projects the file onto these top-level columns; nil keeps
	// every column.
	Columns []string
	// Allocator allocates the records (not nil).
	Allocator memory.Allocator
	// Workers is the number of row-group workers; 0 means GOMAXPROCS.
	Workers int
	// TempDir is where spill files are made ("": os.TempDir).
	TempDir string
	// SelectLater defers the start of the workers to the first Next (see
	// Source.Begin), so that the columns read can still be narrowed.
	SelectLater bool
	// NoSpill keeps the decoded pages of a large row group in memory
	// instead of spilling them to a temporary file.
	NoSpill bool
	// Tuning holds the reader's thresholds and switches; nil means
	// DefaultTuning().
	Tuning *Tuning
	// Stats, when not nil, receives the reader's counts (a test's view of
	// the paths taken); nil: the reader counts into its own.
	Stats *Stats
}

// Source is a Parquet file being read: Next hands out owned records, then
// io.EOF.
type Source interface {
	// Schema is the schema of the records Next returns.
	Schema() *arrow.Schema
	// OutSchema is Schema with the file's schema metadata.
	OutSchema() *arrow.Schema
	// Next returns the next record, owned by the caller, or io.EOF.
	Next() (arrow.Record, error)
	// NumRows is the number of rows of the file.
	NumRows() int64
	// Close releases the reader; it does not close the file.
	Close() error
}

type parquetSource struct {
	name  string
	pf    *file.Reader
	rr    pqarrow.RecordReader
	out   *arrow.Schema
	total int64 // rows in the file
	mem   memory.Allocator
	seen  int64 // rows read so far
	batch int   // index of the next batch, for error messages
}

// Open opens the Parquet file f (named name in messages) for reading in
// batches, by row-group workers (see parallelParquet). Errors of a corrupt
// file wrap ioerr.ErrFormat, and a projected column the file does not have
// ioerr.ErrNoColumn.
func Open(f *os.File, name string, opts Options) (Source, error) {
	if opts.Tuning == nil {
		opts.Tuning = DefaultTuning()
	}
	if opts.Stats == nil {
		opts.Stats = new(Stats)
	}
	t := opts.Tuning
	props := parquet.NewReaderProperties(opts.Allocator)
	props.BufferedStreamEnabled = true
	props.BufferSize = t.BufferSize
	pf, lf, err := OpenFooter(f, props, t)
	if err != nil {
		return nil, fmt.Errorf("%s: corrupt parquet file: %w: %w", name, ioerr.ErrFormat, err)
	}
	// Row groups are always decoded by their own record readers in worker
	// goroutines, even with one worker: a record reader spanning row
	// groups can read a corrupt row group as none and go on with the next
	// one, misaligning the columns; one row group at a time, its row count
	// is checked against the footer. (pqarrow's Parallel, for the
	// benchmark only, keeps the one-reader path, which needs every row
	// group's metadata.)
	n := pf.NumRowGroups()
	workers := n > 0 && !t.Parallel && !t.OneReader
	var groups []int // the record reader's row groups: all, or the first for its schema
	if workers {
		groups = []int{0}
		err = lf.ensure(0)
	} else {
		err = lf.ensureAll()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: corrupt parquet file: %w: %w", name, ioerr.ErrFormat, err)
	}
	s := &parquetSource{name: name, pf: pf, total: pf.NumRows(), mem: opts.Allocator}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(opts.BatchSize), Parallel: t.Parallel}, opts.Allocator)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: corrupt parquet file: %w: %w", name, ioerr.ErrFormat, err)
	}
	full, err := fr.Schema()
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: parquet schema: %w: %w", name, ioerr.ErrFormat, err)
	}
	var leaves []int
	if len(opts.Columns) > 0 {
		for _, c := range opts.Columns {
			i := topLevelIndex(fr.Manifest, c)
			if i < 0 {
				s.Close()
				return nil, fmt.Errorf("%s: column %q: %w (have %s)", name, c, ioerr.ErrNoColumn, fieldNames(full, 12))
			}
			leaves = appendLeaves(leaves, &fr.Manifest.Fields[i])
		}
		leaves = sortedUnique(leaves)
	}
	rr, err := fr.GetRecordReader(context.Background(), leaves, groups)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: parquet columns: %w: %w", name, ioerr.ErrFormat, err)
	}
	s.rr = rr
	md := full.Metadata()
	s.out = arrow.NewSchema(StripFieldIDs(rr.Schema().Fields()), &md)
	if workers {
		// Row groups of more than a segment may be streamed in segments,
		// which the workers share: a file of one row group can use them
		// all.
		seg := max(t.SegmentRows, int64(max(opts.BatchSize, minDecodeBatch)))
		units := max(n, int(min(pf.NumRows()/seg+1, 1<<20)))
		w := workerCount(opts.Workers, units)
		p, err := newParallelParquet(f, name, pf, lf, rr.Schema(), s.out, leaves, w, opts)
		s.Close()
		if err != nil {
			return nil, err
		}
		return p, nil
	}
	return s, nil
}

// topLevelIndex is the index in m.Fields of the top-level field name, or -1.
func topLevelIndex(m *pqarrow.SchemaManifest, name string) int {
	for i := range m.Fields {
		if m.Fields[i].Field != nil && m.Fields[i].Field.Name == name {
			return i
		}
	}
	return -1
}

// appendLeaves appends the leaf column indices under f. (pqarrow's
// manifest gives a list field a ColIndex too, 0 whatever its leaf: its
// children say where its leaf is.)
func appendLeaves(dst []int, f *pqarrow.SchemaField) []int {
	if len(f.Children) == 0 {
		return append(dst, f.ColIndex)
	}
	for i := range f.Children {
		dst = appendLeaves(dst, &f.Children[i])
	}
	return dst
}

func (s *parquetSource) Schema() *arrow.Schema    { return s.rr.Schema() }
func (s *parquetSource) OutSchema() *arrow.Schema { return s.out }
func (s *parquetSource) NumRows() int64           { return s.total }

func (s *parquetSource) Next() (arrow.Record, error) {
	if s.rr.Next() {
		rec, err := arrowfix.RepairRecordLists(s.rr.Record(), s.mem)
		if err != nil {
			return nil, fmt.Errorf("%s: parquet batch %d (rows %d..), %w", s.name, s.batch, s.seen, err)
		}
		s.seen += rec.NumRows()
		s.batch++
		return rec, nil
	}
	// pqarrow v15 reports the normal end as io.EOF from Err.
	if err := s.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: corrupt parquet file at batch %d (rows %d..): %w: %w", s.name, s.batch, s.seen, ioerr.ErrFormat, err)
	}
	if s.seen != s.total {
		return nil, fmt.Errorf("%s: corrupt parquet file: read %d rows, footer says %d: %w", s.name, s.seen, s.total, ioerr.ErrFormat)
	}
	return nil, io.EOF
}

func (s *parquetSource) Close() error {
	if s.rr != nil {
		s.rr.Release()
		s.rr = nil
	}
	// file.Reader.Close would close the *os.File, which the Reader owns.
	return nil
}

// StripFieldIDs drops the "PARQUET:field_id" = "-1" field metadata that
// pqarrow adds to every field of a file written without field ids, so that
// the same data read from Parquet, Arrow IPC or CSV has equal schemas.
func StripFieldIDs(fields []arrow.Field) []arrow.Field {
	out := make([]arrow.Field, len(fields))
	for i, f := range fields {
		if v, ok := f.Metadata.GetValue("PARQUET:field_id"); ok && v == "-1" {
			var keys, vals []string
			for j, k := range f.Metadata.Keys() {
				if k != "PARQUET:field_id" {
					keys, vals = append(keys, k), append(vals, f.Metadata.Values()[j])
				}
			}
			f.Metadata = arrow.NewMetadata(keys, vals)
		}
		out[i] = f
	}
	return out
}

// dropStatistics forgets the column chunk statistics of the parsed footer
// md's row groups. Reading does not use them, and decoded they are most of
// the footer's memory, which grows with the number of row groups: 8 MB for
// a ten-million-row file of 15 columns. A nested column's null count is
// kept (a few bytes a chunk): a list chunk without a null is decoded a
// segment at a time (listCursor).
func dropStatistics(md *metadata.FileMetaData) {
	for _, rg := range md.RowGroups {
		for _, cc := range rg.GetColumns() {
			if md := cc.GetMetaData(); md != nil {
				if st := md.Statistics; st != nil && len(md.PathInSchema) > 1 && st.NullCount != nil {
					st.Max, st.Min, st.MaxValue, st.MinValue = nil, nil, nil, nil
				} else {
					md.Statistics = nil
				}
				md.EncodingStats = nil
			}
		}
	}
}

// checkRowGroups checks what Arrow's readers assume of a footer without
// checking it: every row group of md (numbered from first) has a column
// chunk per leaf column, and every chunk carries its metadata. pqarrow
// sets its column readers up in goroutines of its own, where a nil
// dereference on a chunk without metadata is a panic pate cannot recover
// (FuzzReadParquet found one).
func checkRowGroups(md *metadata.FileMetaData, first int) error {
	leaves := md.Schema.NumColumns()
	for k, rg := range md.RowGroups {
		i := first + k
		if rg == nil {
			return fmt.Errorf("row group %d has no metadata", i)
		}
		if n := len(rg.GetColumns()); n != leaves {
			return fmt.Errorf("row group %d has %d column chunks, the schema %d columns", i, n, leaves)
		}
		for j, cc := range rg.GetColumns() {
			switch {
			case cc == nil || cc.GetMetaData() == nil:
				return fmt.Errorf("row group %d, column %d: the column chunk has no metadata", i, j)
			case cc.IsSetCryptoMetadata():
				return fmt.Errorf("row group %d, column %d: encrypted column chunks are not supported", i, j)
			}
		}
	}
	return nil
}

// fieldNames lists up to max of the field names of s, for messages.
func fieldNames(s *arrow.Schema, max int) string {
	names := make([]string, 0, min(s.NumFields(), max))
	for i, f := range s.Fields() {
		if i == max {
			return fmt.Sprintf("%q and %d more", names, s.NumFields()-max)
		}
		names = append(names, f.Name)
	}
	return fmt.Sprintf("%q", names)
}

// sortedUnique returns ints sorted, without repeats.
func sortedUnique(ints []int) []int {
	out := slices.Clone(ints)
	slices.Sort(out)
	return slices.Compact(out)
}
