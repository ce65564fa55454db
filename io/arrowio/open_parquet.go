package arrowio

import (
	"os"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/io/arrowio/internal/pqread"
)

// openParquet opens a Parquet file with the reader of internal/pqread.
func openParquet(f *os.File, name string, opts ReadOptions) (source, error) {
	s, err := pqread.Open(f, name, pqread.Options{
		BatchSize:   opts.BatchSize,
		Columns:     opts.Columns,
		Allocator:   opts.Allocator,
		Workers:     opts.Workers,
		TempDir:     opts.TempDir,
		SelectLater: opts.SelectLater,
		NoSpill:     opts.NoSpill,
		Tuning:      opts.tune,
		Stats:       opts.stats,
	})
	if err != nil {
		return nil, err
	}
	return parquetSource{s}, nil
}

// parquetSource is a pqread.Source seen as a source.
type parquetSource struct{ s pqread.Source }

func (p parquetSource) schema() *arrow.Schema       { return p.s.Schema() }
func (p parquetSource) outSchema() *arrow.Schema    { return p.s.OutSchema() }
func (p parquetSource) next() (arrow.Record, error) { return p.s.Next() }
func (p parquetSource) numRows() int64              { return p.s.NumRows() }
func (p parquetSource) close() error                { return p.s.Close() }

// begin starts the row-group workers of a reader opened with SelectLater.
func (p parquetSource) begin() {
	if b, ok := p.s.(interface{ Begin() }); ok {
		b.Begin()
	}
}

// lookAhead is the most bytes of list values the reader may hold ahead
// (Reader.LookAhead).
func (p parquetSource) lookAhead() int64 {
	if l, ok := p.s.(interface{ LookAhead() int64 }); ok {
		return l.LookAhead()
	}
	return 0
}
