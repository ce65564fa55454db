package label

import (
	"github.com/apache/arrow/go/v15/arrow"
)

// RecordReader wraps the Read method of a stream of record batches.
//
// Read returns the next batch, which the caller owns and must Release, or
// io.EOF at the end of the stream.
type RecordReader interface {
	Schema() *arrow.Schema
	Read() (arrow.Record, error)
}

// RecordWriter wraps the Write method of a sink of record batches. Write does
// not take ownership of rec.
type RecordWriter interface {
	Write(rec arrow.Record) error
}
