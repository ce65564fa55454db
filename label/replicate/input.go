package replicate

import (
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
)

// ReadAll reads every record of r into one record (its batches
// concatenated): a replication splits the sensitive rows many times.
func ReadAll(mem memory.Allocator, r label.RecordReader) (arrow.Record, error) {
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	schema := r.Schema()
	cols := make([]arrow.Array, schema.NumFields())
	defer func() {
		for _, a := range cols {
			if a != nil {
				a.Release()
			}
		}
	}()
	for j := range cols {
		chunks := make([]arrow.Array, len(recs))
		for i, r := range recs {
			chunks[i] = r.Column(j)
		}
		if len(chunks) == 0 {
			cols[j] = array.MakeArrayOfNull(mem, schema.Field(j).Type, 0)
			continue
		}
		var err error
		if cols[j], err = array.Concatenate(chunks, mem); err != nil {
			return nil, fmt.Errorf("column %q: %w", schema.Field(j).Name, err)
		}
	}
	return array.NewRecord(schema, cols, -1), nil
}

// ColumnText reads column col of every record of r as text ("" for
// nulls): the true labels Options.Truth.
func ColumnText(r label.RecordReader, col int) ([]string, error) {
	var out []string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		a := rec.Column(col)
		for i := 0; i < a.Len(); i++ {
			v := ""
			if !a.IsNull(i) {
				v = a.ValueStr(i)
			}
			out = append(out, v)
		}
		rec.Release()
	}
}
