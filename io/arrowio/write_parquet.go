package arrowio

import (
	"bufio"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/pate-tool/pate/io/atomicfile"
)

// ParquetOptions configures WriteParquet.
type ParquetOptions struct {
	// Compression codec; the zero value is compress.Codecs.Uncompressed.
	Compression compress.Compression
	// Dictionary turns on dictionary encoding (off: plain encoding).
	Dictionary bool
	// RowGroupRows is the maximum number of rows per row group; 0 means
	// 1 << 20.
	RowGroupRows int64
	// Allocator is used while writing; nil means memory.DefaultAllocator.
	Allocator memory.Allocator
	// StoreSchema stores the Arrow schema (with its metadata) in the file.
	StoreSchema bool
}

// WriteParquet writes recs (all with schema s) to a Parquet file at path,
// atomically (temporary file renamed into place). The root schema element
// is written REQUIRED, as the Parquet spec asks (arrow-go v15 defaults to
// REPEATED, which some readers reject). It is meant for tests, benchmarks
// and fixtures; it does not take ownership of recs.
func WriteParquet(path string, s *arrow.Schema, recs []arrow.Record, opts ParquetOptions) (err error) {
	if opts.Allocator == nil {
		opts.Allocator = memory.DefaultAllocator
	}
	if opts.RowGroupRows <= 0 {
		opts.RowGroupRows = 1 << 20
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: writing parquet: %v", path, p)
		}
	}()
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

	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("%s: cannot create output: %w", path, err)
	}
	defer f.Abort() // after Commit it does nothing
	// A bufio.Writer is no io.Closer, so WriteTable leaves f open.
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := pqarrow.WriteTable(tbl, bw, opts.RowGroupRows, props, pqarrow.NewArrowWriterProperties(arrProps...)); err != nil {
		return fmt.Errorf("%s: writing parquet: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
