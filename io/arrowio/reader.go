package arrowio

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
	"io"
	"os"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/klauspost/compress/gzip"
)

// DefaultBatchSize is the number of rows per record batch when
// ReadOptions.BatchSize is zero.
const DefaultBatchSize = 65536

// ReadOptions configures Open.
type ReadOptions struct {
	// BatchSize is the maximum number of rows per record batch; 0 means
	// DefaultBatchSize.
	BatchSize int
	// Columns projects the input onto these top-level columns, in this
	// order; nil (or empty) keeps every column. A name the input does not
	// have is an error wrapping ErrNoColumn.
	Columns []string
	// Allocator allocates the record batches; nil means
	// memory.DefaultAllocator.
	Allocator memory.Allocator
	// Stdin is read when the path is "-"; nil means os.Stdin.
	Stdin io.Reader
	// Workers is the number of goroutines that decode Parquet row groups
	// in parallel (batches still come out in file order); 0 means
	// min(GOMAXPROCS, row groups), 1 decodes one row group at a time
	// (still in a goroutine of its own, ahead of Read). Other formats
	// ignore it.
	Workers int
	// TempDir is where standard input is spooled when it holds Parquet or
	// an Arrow IPC file (formats that need random access), and where the
	// decoded pages of a Parquet row group too large to hold are spilled
	// (an unlinked file, see parquet_spill.go); "" means os.TempDir().
	TempDir string
	// SelectLater opens the input without reading ahead of the first
	// Read, so that Reader.Select can still narrow the columns read: a
	// Parquet file decodes only the columns it keeps.
	SelectLater bool
	// NoSpill keeps the decoded pages of a large Parquet row group in
	// memory (or streamed) instead of spilling them to a temporary file:
	// for sensitive data, so that its decoded values are never written
	// anywhere, at the cost of memory on files of huge row groups.
	// (Standard input in Parquet or IPC form is still spooled, as it
	// must be for random access.)
	NoSpill bool
	// CSVTypes, when not nil, declares the type of a CSV input's columns
	// instead of inferring them from its rows: for sensitive data, whose
	// schema must not depend on its values. A column it names gets that
	// type (int64, float64, boolean or utf8); every other column is read
	// as utf8. Nothing is read ahead, and the reader never fails on a
	// value: a cell that does not parse as its column's type is read as
	// null, and a record with the wrong number of fields is skipped (see
	// Reader.Skipped); quotes are read leniently. Other formats ignore it
	// (their schema is declared in the file).
	CSVTypes map[string]arrow.DataType
	// CSVDefault, with CSVTypes, is the type of the columns CSVTypes does
	// not name (nil: utf8): a file of integer vote counts declares all its
	// columns int64 this way.
	CSVDefault arrow.DataType
	// CountRows, for a CSV file given by its path (not standard input)
	// and read without CSVTypes, counts its records in a first pass so
	// that NumRows is known: for a public file, whose length plans the
	// noise. Never for sensitive data, whose row count is sensitive (it
	// is ignored with CSVTypes).
	CountRows bool

	// tune, when not nil, sets the readers' thresholds and switches
	// (tests and benchmarks; nil: pqread.DefaultTuning).
	tune *pqread.Tuning
	// stats, when not nil, receives the Parquet reader's and the
	// recyclers' counts (tests); nil: each reader counts into its own.
	stats *pqread.Stats
}

// tuning is the readers' tuning: tune, or the defaults.
func (o *ReadOptions) tuning() *pqread.Tuning {
	if o.tune != nil {
		return o.tune
	}
	return pqread.DefaultTuning()
}

// source yields owned record batches of one input format.
type source interface {
	// schema is the schema of the records next returns.
	schema() *arrow.Schema
	// next returns the next record, owned by the caller, or io.EOF.
	next() (arrow.Record, error)
	// numRows is the total number of rows, or -1 when unknown.
	numRows() int64
	close() error
}

// Reader reads record batches from a Parquet, Arrow IPC or CSV input. It
// is not safe for concurrent use.
type Reader struct {
	name   string // the path, or "stdin" for "-"
	path   string // the path as given to Open
	opts   ReadOptions
	read1  bool // Read has been called
	format Format
	src    source
	out    *arrow.Schema // schema after projection
	proj   []int         // indices into src.schema(), nil = identity
	batch  int64

	pending arrow.Record // current source record being sliced
	off     int64        // rows of pending already handed out
	err     error        // sticky error (io.EOF at the end)

	nrows int64 // src.numRows(), kept after Close

	skippedFiles []string // files of a directory left out for their format

	file  *os.File     // the opened input file, if any
	spool string       // path of the stdin spool file, if any
	gz    *gzip.Reader // the decompressor of a gzip input, if any
}

// Open opens the input at path and prepares to read it in batches. The
// caller must Close the Reader.
//
// The path is "-" for standard input, a file, a directory of shards or a
// glob pattern (see ListShards). A file's format is told apart by
// SniffFormat; a gzip-compressed file (told by its magic bytes, whatever
// its name) holding CSV or an Arrow IPC stream is read through a
// decompressor. The shards of a directory or a pattern are read one after
// another, never more than one open at a time, as one input whose schema
// is the first shard's plus a string column per hive partition key.
func Open(path string, opts ReadOptions) (*Reader, error) {
	if path == "-" {
		return openOne(path, opts)
	}
	shards, skipped, err := ListFiles(path)
	if err != nil {
		return nil, err
	}
	if len(shards) == 1 && shards[0].Path == path && len(shards[0].Keys) == 0 && len(skipped) == 0 {
		return openOne(path, opts)
	}
	r, err := openShards(path, shards, opts)
	if err != nil {
		return nil, err
	}
	r.skippedFiles = skipped
	return r, nil
}

// SkippedFiles returns the files of an input directory that are not
// read, their format being none Open reads (see ListShards), by path.
func (r *Reader) SkippedFiles() []string { return r.skippedFiles }

// openOne opens one file (or standard input) as Open describes.
func openOne(path string, opts ReadOptions) (r *Reader, err error) {
	if opts.Workers < 0 {
		return nil, fmt.Errorf("%s: negative worker count %d", path, opts.Workers)
	}
	if opts.BatchSize < 0 {
		return nil, fmt.Errorf("%s: negative batch size %d", path, opts.BatchSize)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if err := checkColumnList(path, opts.Columns); err != nil {
		return nil, err
	}
	r = &Reader{name: path, path: path, opts: opts, batch: int64(opts.BatchSize)}
	defer func() {
		if err != nil {
			r.Close()
			r = nil
		}
	}()

	var stream io.Reader // sequential access, for IPC stream and CSV
	if path == "-" {
		r.name = "stdin"
		in := opts.Stdin
		if in == nil {
			in = os.Stdin
		}
		br := bufio.NewReaderSize(in, 1<<16)
		head, perr := br.Peek(sniffLen)
		if perr != nil && !errors.Is(perr, io.EOF) && !errors.Is(perr, bufio.ErrBufferFull) {
			return r, fmt.Errorf("%s: %w", r.name, perr)
		}
		if isGzip(head) {
			if br, head, err = r.gunzip(br); err != nil {
				return r, err
			}
		}
		if r.format, err = SniffFormat(head, r.name); err != nil {
			return r, err
		}
		if err := r.checkCompressed(); err != nil {
			return r, err
		}
		if r.format == FormatParquet || r.format == FormatIPCFile {
			if err := r.spoolStdin(br, opts.TempDir); err != nil {
				return r, err
			}
		} else {
			stream = br
		}
	} else {
		f, oerr := os.Open(path)
		if oerr != nil {
			return r, oerr // *fs.PathError names the path
		}
		r.file = f
		head := make([]byte, sniffLen)
		n, rerr := f.ReadAt(head, 0)
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return r, fmt.Errorf("%s: %w", path, rerr)
		}
		stream = bufio.NewReaderSize(f, 1<<16)
		if isGzip(head[:n]) {
			var br *bufio.Reader
			if br, head, err = r.gunzip(stream); err != nil {
				return r, err
			}
			stream, n = br, len(head)
		}
		if r.format, err = SniffFormat(head[:n], path); err != nil {
			return r, err
		}
		if err := r.checkCompressed(); err != nil {
			return r, err
		}
	}

	err = r.guard("open", func() error {
		var err error
		switch r.format {
		case FormatParquet:
			r.src, err = openParquet(r.file, r.name, opts)
		case FormatIPCFile:
			r.src, err = openIPCFile(r.file, r.name, opts)
		case FormatIPCStream:
			r.src, err = openIPCStream(stream, r.name, opts)
		case FormatCSV:
			r.src, err = openCSV(stream, r.name, opts)
		}
		return err
	})
	if err != nil {
		return r, err
	}
	r.nrows = r.src.numRows()
	if r.nrows < 0 && opts.CountRows && opts.CSVTypes == nil && r.format == FormatCSV && r.regular() {
		// A parse error is left for Read to report, where it is met.
		if n, err := countCSVRows(path); err == nil {
			r.nrows = n
		}
	}
	return r, r.project(opts.Columns)
}

// regular reports whether the Reader reads a regular file, which a
// first pass can read again (not a pipe, not standard input).
func (r *Reader) regular() bool {
	if r.file == nil || r.spool != "" {
		return false
	}
	st, err := r.file.Stat()
	return err == nil && st.Mode().IsRegular()
}

func checkColumnList(path string, cols []string) error {
	seen := make(map[string]bool, len(cols))
	for _, c := range cols {
		if seen[c] {
			return fmt.Errorf("%s: column %q listed twice", path, c)
		}
		seen[c] = true
	}
	return nil
}

// spoolStdin copies standard input into a temporary file and makes it the
// Reader's file.
func (r *Reader) spoolStdin(in io.Reader, dir string) error {
	f, err := os.CreateTemp(dir, "pate-stdin-*.spool")
	if err != nil {
		return fmt.Errorf("stdin: spooling %s input: %w", r.format, err)
	}
	r.file, r.spool = f, f.Name()
	if _, err := io.Copy(f, in); err != nil {
		return fmt.Errorf("stdin: spooling %s input to %s: %w", r.format, f.Name(), err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("stdin: spooling %s input to %s: %w", r.format, f.Name(), err)
	}
	return nil
}

// project sets the output schema and the column mapping for cols.
func (r *Reader) project(cols []string) error {
	in := r.src.schema()
	if len(cols) == 0 {
		r.out = in
		if ps, ok := r.src.(interface{ outSchema() *arrow.Schema }); ok {
			r.out = ps.outSchema()
		}
		return nil
	}
	fields := make([]arrow.Field, len(cols))
	r.proj = make([]int, len(cols))
	for i, c := range cols {
		idx := in.FieldIndices(c)
		if len(idx) == 0 {
			return fmt.Errorf("%s: column %q: %w (have %s)", r.name, c, ErrNoColumn, fieldNames(in, 12))
		}
		r.proj[i] = idx[0]
		fields[i] = in.Field(idx[0])
	}
	md := in.Metadata()
	if ps, ok := r.src.(interface{ outSchema() *arrow.Schema }); ok {
		md = ps.outSchema().Metadata()
		for i, j := range r.proj {
			fields[i] = ps.outSchema().Field(j)
		}
	}
	r.out = arrow.NewSchema(fields, &md)
	return nil
}

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

// guard runs fn, turning a panic into an error wrapping ErrFormat.
func (r *Reader) guard(what string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt %s file (%s): %v: %w", r.name, r.format, what, p, ErrFormat)
		}
	}()
	return fn()
}

// Schema returns the schema of the batches Read returns, after projection
// (columns in the order of ReadOptions.Columns). Its metadata is the
// input's schema metadata, where the format keeps one.
func (r *Reader) Schema() *arrow.Schema { return r.out }

// Select narrows the columns the Reader returns to cols (top-level names,
// in this order; ReadOptions.Columns' rules), or keeps them all for nil. It
// may be called before the first Read only. A Parquet input opened with
// SelectLater is opened again onto the columns kept, so that the others
// are never decoded; any other input is projected as it is read.
func (r *Reader) Select(cols []string) error {
	if r.read1 {
		return fmt.Errorf("%s: columns selected after the first read", r.name)
	}
	if len(cols) > 0 && r.opts.SelectLater && r.format == FormatParquet && r.path != "-" {
		opts := r.opts
		opts.Columns, opts.SelectLater = cols, false
		nr, err := Open(r.path, opts)
		if err != nil {
			return err
		}
		r.Close()
		*r = *nr
		return nil
	}
	if len(cols) > 0 {
		if err := checkColumnList(r.name, cols); err != nil {
			return err
		}
		if err := r.project(cols); err != nil {
			return err
		}
	}
	if b, ok := r.src.(interface{ begin() }); ok {
		b.begin()
	}
	return nil
}

// Format returns the input's format.
func (r *Reader) Format() Format { return r.format }

// Skipped returns how many records of a CSV input read with
// ReadOptions.CSVTypes were skipped for their number of fields, and how
// many cells were read as null because they did not parse as their
// column's declared type, so far. They are statistics of the data: show
// them only where a local, not private, diagnostic may go.
func (r *Reader) Skipped() (records, cells int64) {
	if s, ok := r.src.(interface{ skipped() (int64, int64) }); ok {
		return s.skipped()
	}
	return 0, 0
}

// LookAhead returns the most bytes of decoded values the reader may hold
// ahead of its caller beyond a batch's worth: those of the list columns
// of a Parquet file, which are decoded a row group at a time (hundreds of
// MB for DuckDB's 122,880-row groups of embeddings); 0 when it holds no
// more than a few batches.
func (r *Reader) LookAhead() int64 {
	if s, ok := r.src.(interface{ lookAhead() int64 }); ok {
		return s.lookAhead()
	}
	return 0
}

// NumRows returns the number of rows of the input, or -1 when it is not
// known before reading: an Arrow IPC stream, a CSV input unless
// ReadOptions.CountRows counted it, or shards one of which is such.
func (r *Reader) NumRows() int64 { return r.nrows }

// Read returns the next record batch, with between 1 and BatchSize rows.
// The caller owns it and must Release it. At the end of the input Read
// returns io.EOF. Errors name the input and wrap ErrFormat when its bytes
// are corrupt; after an error every later Read returns the same error.
func (r *Reader) Read() (arrow.Record, error) {
	r.read1 = true
	if r.err != nil {
		return nil, r.err
	}
	var rec arrow.Record
	err := r.guard("read", func() error {
		var err error
		rec, err = r.read()
		return err
	})
	if err != nil {
		if rec != nil {
			rec.Release()
		}
		r.err = err
		return nil, err
	}
	return rec, nil
}

func (r *Reader) read() (arrow.Record, error) {
	for {
		if r.pending != nil {
			n := r.pending.NumRows()
			if r.off < n {
				end := min(n, r.off+r.batch)
				var rec arrow.Record
				if r.off == 0 && end == n {
					rec, r.pending = r.pending, nil
				} else {
					rec = r.pending.NewSlice(r.off, end)
					r.off = end
				}
				out := r.reshape(rec)
				rec.Release()
				return out, nil
			}
			r.pending.Release()
			r.pending = nil
		}
		rec, err := r.src.next()
		if err != nil {
			return nil, err
		}
		r.pending, r.off = rec, 0
	}
}

// reshape returns a new record with the output schema and the projected
// columns of rec; rec is not released.
func (r *Reader) reshape(rec arrow.Record) arrow.Record {
	if r.proj == nil {
		if rec.Schema() == r.out {
			rec.Retain()
			return rec
		}
		return newRecord(r.out, rec.Columns(), rec.NumRows())
	}
	cols := make([]arrow.Array, len(r.proj))
	for i, j := range r.proj {
		cols[i] = rec.Column(j)
	}
	return newRecord(r.out, cols, rec.NumRows())
}

// Close releases the Reader's resources, closes its file and removes any
// standard-input spool file. It is safe to call more than once.
func (r *Reader) Close() error {
	var errs []error
	if r.pending != nil {
		r.pending.Release()
		r.pending = nil
	}
	if r.src != nil {
		if err := r.guard("close", r.src.close); err != nil {
			errs = append(errs, err)
		}
		r.src = nil
	}
	if r.gz != nil {
		r.gz.Close() // only says whether the checksum was checked
		r.gz = nil
	}
	if r.file != nil {
		if err := r.file.Close(); err != nil {
			errs = append(errs, err)
		}
		r.file = nil
	}
	if r.spool != "" {
		if err := os.Remove(r.spool); err != nil {
			errs = append(errs, err)
		}
		r.spool = ""
	}
	if r.err == nil {
		r.err = fmt.Errorf("%s: reader is closed", r.name)
	}
	return errors.Join(errs...)
}

// sortedUnique returns the sorted, de-duplicated values of ints.
func sortedUnique(ints []int) []int {
	out := slices.Clone(ints)
	slices.Sort(out)
	return slices.Compact(out)
}

// newRecord builds a record with schema s from cols, which it retains.
func newRecord(s *arrow.Schema, cols []arrow.Array, rows int64) arrow.Record {
	return array.NewRecord(s, cols, rows)
}
