package arrowio

import (
	"errors"
	"fmt"
	"github.com/pate-tool/pate/io/arrowio/internal/arrowfix"
	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
	"io"
	"os"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// shardSource reads the shards of a directory or a pattern one after
// another, each through a Reader of its own (one open at a time, so memory
// is bounded by one shard's reader), as one input: the first shard's
// columns, then a string column per partition key.
type shardSource struct {
	name   string
	shards []Shard
	opts   ReadOptions // for each shard: the file's columns of the projection
	sch    *arrow.Schema
	nfile  int   // columns that come from the files
	total  int64 // -1: unknown
	i      int   // index of the shard cur reads
	cur    *Reader
	order  []int // cur's column of each file column of sch

	records, cells int64 // Skipped of the shards already read
}

// openShards opens the shards of path as one Reader.
func openShards(path string, shards []Shard, opts ReadOptions) (r *Reader, err error) {
	if opts.BatchSize < 0 {
		return nil, fmt.Errorf("%s: negative batch size %d", path, opts.BatchSize)
	}
	if opts.BatchSize == 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if err := checkColumnList(path, opts.Columns); err != nil {
		return nil, err
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	keys := shards[0].Keys
	child := opts
	if len(opts.Columns) > 0 {
		child.Columns = slices.DeleteFunc(slices.Clone(opts.Columns), func(c string) bool {
			return slices.ContainsFunc(keys, func(k PartitionKey) bool { return k.Name == c })
		})
		if len(child.Columns) == 0 {
			// Only partition keys: the files still give the row count.
			child.Columns = nil
		}
	}
	s := &shardSource{name: path, shards: shards, opts: child, total: 0}
	r = &Reader{name: path, path: path, opts: opts, batch: int64(opts.BatchSize), src: s}
	defer func() {
		if err != nil {
			r.Close()
			r = nil
		}
	}()
	if s.cur, err = openOne(shards[0].Path, child); err != nil {
		return r, err
	}
	r.format = s.cur.Format()
	fields := slices.Clone(s.cur.Schema().Fields())
	s.nfile = len(fields)
	for i := range fields {
		// Another shard's writer may have left out the not-null flag.
		fields[i].Nullable = true
	}
	for _, k := range keys {
		if s.cur.Schema().HasField(k.Name) {
			return r, fmt.Errorf("%s: %q is both a partition key (folder %s=…) and a column of shard %s: %w", path, k.Name, k.Name, shards[0].Path, ErrFormat)
		}
		fields = append(fields, arrow.Field{Name: k.Name, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	md := s.cur.Schema().Metadata()
	s.sch = arrow.NewSchema(fields, &md)
	s.order = identity(s.nfile)
	// Every shard's schema, and its row count where a footer tells it, up
	// front: a mismatch stops the run before anything is released. The
	// footers' schemas are compared with each other, the schemas of the
	// shards' readers (which may convert types) with each other as the
	// shards are read.
	var ref *arrow.Schema
	for i, sh := range shards {
		if len(shards) == 1 {
			s.total = s.cur.NumRows()
			break
		}
		sch, rows, err := probeShard(sh.Path, child)
		if err != nil {
			return r, err
		}
		if i == 0 {
			ref = sch
		} else if _, err := s.columnOrder(ref, sh.Path, sch); err != nil {
			return r, err
		}
		if rows < 0 || s.total < 0 {
			s.total = -1
		} else {
			s.total += rows
		}
	}
	r.nrows = s.total
	return r, r.project(opts.Columns)
}

func identity(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// probeShard returns a shard's schema (after the projection of opts) and
// its row count (-1 when not known before reading): from the footer of a
// Parquet or Arrow IPC file, without decoding any data; else by opening
// it (a CSV file's header, and with opts.CountRows its rows, counted).
func probeShard(path string, opts ReadOptions) (sch *arrow.Schema, rows int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, -1, err
	}
	defer f.Close()
	head := make([]byte, sniffLen)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, -1, fmt.Errorf("%s: %w", path, err)
	}
	format, ferr := SniffFormat(head[:n], path)
	if ferr != nil || isGzip(head[:n]) || (format != FormatParquet && format != FormatIPCFile) {
		r, err := openOne(path, opts)
		if err != nil {
			return nil, -1, err
		}
		defer r.Close()
		return r.Schema(), r.NumRows(), nil
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt %s file (footer): %v: %w", path, format, p, ErrFormat)
		}
	}()
	var full *arrow.Schema
	if format == FormatParquet {
		pf, _, err := pqread.OpenFooter(f, parquet.NewReaderProperties(opts.Allocator), opts.tune)
		if err != nil {
			return nil, -1, fmt.Errorf("%s: corrupt parquet file: %w: %w", path, ErrFormat, err)
		}
		fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1}, opts.Allocator)
		if err != nil {
			return nil, -1, fmt.Errorf("%s: corrupt parquet file: %w: %w", path, ErrFormat, err)
		}
		if full, err = fr.Schema(); err != nil {
			return nil, -1, fmt.Errorf("%s: parquet schema: %w: %w", path, ErrFormat, err)
		}
		md := full.Metadata()
		full = arrow.NewSchema(pqread.StripFieldIDs(full.Fields()), &md)
		rows = pf.NumRows()
	} else {
		st, err := f.Stat()
		if err != nil {
			return nil, -1, fmt.Errorf("%s: %w", path, err)
		}
		blocks, err := arrowfix.CheckIPCFile(f, st.Size(), opts.tuning().MaxDecompressed)
		if err != nil {
			return nil, -1, fmt.Errorf("%s: corrupt arrow ipc file: %w: %w", path, ErrFormat, err)
		}
		fr, err := ipc.NewFileReader(f, ipc.WithAllocator(opts.Allocator))
		if err != nil {
			return nil, -1, fmt.Errorf("%s: corrupt arrow ipc file: %w: %w", path, ErrFormat, err)
		}
		full = fr.Schema()
		if u := unviewSchema(full); u != nil { // as openIPCFile hands it out
			full = u
		}
		fr.Close()
		rows = 0
		for _, b := range blocks {
			rows += b.NumRows()
		}
	}
	if len(opts.Columns) == 0 {
		return full, rows, nil
	}
	fields := make([]arrow.Field, len(opts.Columns))
	for i, c := range opts.Columns {
		idx := full.FieldIndices(c)
		if len(idx) == 0 {
			return nil, -1, fmt.Errorf("%s: column %q: %w (have %s)", path, c, ErrNoColumn, fieldNames(full, 12))
		}
		fields[i] = full.Field(idx[0])
	}
	return arrow.NewSchema(fields, nil), rows, nil
}

// columnOrder maps the file columns of the shards' schema to the columns
// of one shard's schema sch: the same names, in any order, of the same
// types. A mismatch names the shard and the column, never a value.
func (s *shardSource) columnOrder(ref *arrow.Schema, path string, sch *arrow.Schema) ([]int, error) {
	nfile := ref.NumFields()
	if sch.NumFields() != nfile {
		return nil, fmt.Errorf("%s: shard %s has %d columns, shard %s has %d (%s): every shard must have one schema: %w",
			s.name, path, sch.NumFields(), s.shards[0].Path, nfile, fieldNames(ref, 12), ErrFormat)
	}
	order := make([]int, nfile)
	for j := 0; j < nfile; j++ {
		f := ref.Field(j)
		idx := sch.FieldIndices(f.Name)
		if len(idx) != 1 {
			return nil, fmt.Errorf("%s: shard %s has no column %q (or has it twice), shard %s has it: every shard must have one schema: %w",
				s.name, path, f.Name, s.shards[0].Path, ErrFormat)
		}
		if g := sch.Field(idx[0]); !arrow.TypeEqual(g.Type, f.Type) {
			return nil, fmt.Errorf("%s: shard %s has column %q of type %s, shard %s has it of type %s: every shard must have one schema: %w",
				s.name, path, f.Name, g.Type, s.shards[0].Path, f.Type, ErrFormat)
		}
		order[j] = idx[0]
	}
	return order, nil
}

// fileSchema is the shards' schema without the partition keys.
func (s *shardSource) fileSchema() *arrow.Schema {
	return arrow.NewSchema(s.sch.Fields()[:s.nfile], nil)
}

func (s *shardSource) schema() *arrow.Schema { return s.sch }
func (s *shardSource) numRows() int64        { return s.total }

func (s *shardSource) skipped() (int64, int64) {
	records, cells := s.records, s.cells
	if s.cur != nil {
		r, c := s.cur.Skipped()
		records, cells = records+r, cells+c
	}
	return records, cells
}

func (s *shardSource) next() (arrow.Record, error) {
	for {
		if s.cur == nil {
			if s.i >= len(s.shards) {
				return nil, io.EOF
			}
			path := s.shards[s.i].Path
			r, err := openOne(path, s.opts)
			if err != nil {
				return nil, err
			}
			s.cur = r
			if s.order, err = s.columnOrder(s.fileSchema(), path, r.Schema()); err != nil {
				return nil, err
			}
		}
		rec, err := s.cur.Read()
		if errors.Is(err, io.EOF) {
			if err := s.closeCurrent(); err != nil {
				return nil, err
			}
			s.i++
			continue
		}
		if err != nil {
			return nil, err
		}
		out := s.reshape(rec, s.shards[s.i].Keys)
		rec.Release()
		return out, nil
	}
}

// reshape returns rec with the shards' schema: its columns in the first
// shard's order, then the partition keys' values.
func (s *shardSource) reshape(rec arrow.Record, keys []PartitionKey) arrow.Record {
	n := int(rec.NumRows())
	cols := make([]arrow.Array, 0, s.sch.NumFields())
	for _, j := range s.order {
		cols = append(cols, rec.Column(j))
	}
	var own []arrow.Array
	for _, k := range keys {
		b := array.NewStringBuilder(s.opts.Allocator)
		b.Reserve(n)
		if k.Null {
			b.AppendNulls(n)
		} else {
			b.ReserveData(n * len(k.Value))
			for i := 0; i < n; i++ {
				b.Append(k.Value)
			}
		}
		a := b.NewArray()
		b.Release()
		own = append(own, a)
		cols = append(cols, a)
	}
	out := newRecord(s.sch, cols, int64(n))
	for _, a := range own {
		a.Release()
	}
	return out
}

func (s *shardSource) closeCurrent() error {
	if s.cur == nil {
		return nil
	}
	r, c := s.cur.Skipped()
	s.records, s.cells = s.records+r, s.cells+c
	err := s.cur.Close()
	s.cur = nil
	return err
}

func (s *shardSource) close() error { return s.closeCurrent() }
