package pqtest

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// FixtureSchema is the schema of the generated fixtures: every type the
// CSV reader infers, all nullable.
func FixtureSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
	}, nil)
}

// FixtureRecord builds n deterministic rows of FixtureSchema with some
// nulls, starting at row offset start.
func FixtureRecord(mem memory.Allocator, start, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, FixtureSchema())
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

// FixtureRecords splits rows rows of FixtureRecord into records of chunk
// rows.
func FixtureRecords(mem memory.Allocator, rows, chunk int) []arrow.Record {
	var recs []arrow.Record
	for i := 0; i < rows; i += chunk {
		recs = append(recs, FixtureRecord(mem, i, min(chunk, rows-i)))
	}
	return recs
}

// ReleaseAll releases every record of recs.
func ReleaseAll(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// SameRows reports whether two record lists hold the same rows and fields
// (batch boundaries may differ), and fails t where they do not.
func SameRows(t testing.TB, s *arrow.Schema, got, want []arrow.Record) bool {
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

// ProjectRecords returns new records holding only the named columns of
// recs (which share a schema), and their schema.
func ProjectRecords(recs []arrow.Record, cols []string) (*arrow.Schema, []arrow.Record) {
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
