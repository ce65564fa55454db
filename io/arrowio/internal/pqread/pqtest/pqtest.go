// Package pqtest holds what the tests of io/arrowio and of its Parquet
// reader share: the Parquet fixtures of list columns whose pages break
// inside rows, which Arrow's own writer never produces (pqtest.go), and the
// generated fixture records and the comparisons of read records
// (records.go). It is imported by tests only.
package pqtest

import (
	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/schema"
)

// WriteSpanningList writes rows rows of one list<float32> column l32, row
// i of 1 + 7i mod 5 values, through the low-level column writer in batches
// of 7 levels and pages of 64 bytes, which break pages inside rows (the
// Arrow writer does not).
func WriteSpanningList(t testing.TB, path string, rows int, codec compress.Compression) {
	var vals []float32
	var def, rep []int16
	for i := range rows {
		for j := range 1 + (7*i)%5 {
			vals = append(vals, float32(i)+float32(j)/8)
			def = append(def, 1)
			rep = append(rep, min(int16(j), 1))
		}
	}
	writeLevels(t, path, "l32", parquet.Repetitions.Required, codec, vals, def, rep)
}

// SpanningNullRow is row i of WriteSpanningNullList: null, its values
// (NaN for a null element).
func SpanningNullRow(i int) (null bool, vals []float64) {
	switch i % 9 {
	case 0, 1: // a null list, as the format writes it and as DuckDB does
		return true, nil
	case 2: // an empty list
		return false, []float64{}
	case 3: // a null element
		return false, []float64{float64(i), math.NaN(), float64(i) + 0.25}
	}
	for j := range 1 + (7*i)%5 {
		vals = append(vals, float64(i)+float64(j)/8)
	}
	return false, vals
}

// WriteSpanningNullList writes rows rows of one optional list<float32>
// column n32 of optional elements (SpanningNullRow) as WriteSpanningList
// does, pages breaking inside rows: null lists (one level entry, or six
// as DuckDB writes a NULL FLOAT[6]), empty lists and null elements.
func WriteSpanningNullList(t testing.TB, path string, rows int, codec compress.Compression) {
	var vals []float32
	var def, rep []int16
	for i := range rows {
		null, row := SpanningNullRow(i)
		switch {
		case null && i%9 == 1:
			for j := range 6 {
				def, rep = append(def, 0), append(rep, min(int16(j), 1))
			}
		case null:
			def, rep = append(def, 0), append(rep, 0)
		case len(row) == 0:
			def, rep = append(def, 1), append(rep, 0)
		}
		for j, v := range row {
			rep = append(rep, min(int16(j), 1))
			if math.IsNaN(v) {
				def = append(def, 2)
				continue
			}
			def = append(def, 3)
			vals = append(vals, float32(v))
		}
	}
	writeLevels(t, path, "n32", parquet.Repetitions.Optional, codec, vals, def, rep)
}

// writeLevels writes one list<float32> column name (the list and its
// element of repetition r) of the given values and levels through the
// low-level column writer, in batches of 7 levels and pages of 64 bytes.
func writeLevels(t testing.TB, path, name string, r parquet.Repetition, codec compress.Compression, vals []float32, def, rep []int16) {
	elem, err := schema.NewPrimitiveNode("element", r, parquet.Types.Float, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	list, err := schema.ListOfWithName(name, elem, r, -1)
	if err != nil {
		t.Fatal(err)
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, schema.FieldList{list}, -1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	props := parquet.NewWriterProperties(parquet.WithDataPageSize(64), parquet.WithBatchSize(7),
		parquet.WithDictionaryDefault(false), parquet.WithCompression(codec), parquet.WithStats(true))
	w := file.NewParquetWriter(f, root, file.WithWriterProps(props))
	rg := w.AppendRowGroup()
	cw, err := rg.NextColumn()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cw.(*file.Float32ColumnChunkWriter).WriteBatch(vals, def, rep); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// PlainSchema has a column of every kind the fast path takes (required,
// optional with some nulls, optional without nulls, all null, and two of
// few distinct values, which a dictionary keeps encoded throughout a
// chunk while the others' dictionaries may overflow) and some it must
// leave to pqarrow (date, timestamp, string, int16, uint32).
var PlainSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
	{Name: "i32n", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64n", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
	{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
	{Name: "f64n", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "f64full", Type: arrow.PrimitiveTypes.Float64, Nullable: true}, // nullable, no nulls
	{Name: "f32null", Type: arrow.PrimitiveTypes.Float32, Nullable: true}, // all null
	{Name: "date", Type: arrow.FixedWidthTypes.Date32, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
	{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
	{Name: "u32", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "i32low", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	{Name: "i64low", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// PlainRecord builds n rows of PlainSchema from row start on; nulls come
// in runs and scattered, so that the levels use both RLE and bit-packed
// runs.
func PlainRecord(mem memory.Allocator, start, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, PlainSchema)
	defer b.Release()
	for i := start; i < start+n; i++ {
		null := i%7 == 3 || (i/500)%5 == 2
		b.Field(0).(*array.Int32Builder).Append(int32(i*37 - 5000))
		if null {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int32Builder).Append(int32(-i))
		}
		if i%3 == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int64Builder).Append(int64(i) << 33)
		}
		b.Field(3).(*array.Float32Builder).Append(float32(i) / 3)
		b.Field(4).(*array.Float64Builder).Append(math.Sin(float64(i)))
		if null {
			b.Field(5).AppendNull()
		} else {
			b.Field(5).(*array.Float64Builder).Append(float64(i) * 1e-3)
		}
		b.Field(6).(*array.Float64Builder).Append(-float64(i))
		b.Field(7).AppendNull()
		if i%4 == 1 {
			b.Field(8).AppendNull()
		} else {
			b.Field(8).(*array.Date32Builder).Append(arrow.Date32(i))
		}
		b.Field(9).(*array.TimestampBuilder).Append(arrow.Timestamp(int64(i) * 1_000_003))
		if i%5 == 0 {
			b.Field(10).AppendNull()
		} else {
			b.Field(10).(*array.StringBuilder).Append("v" + strconv.Itoa(i%41))
		}
		b.Field(11).(*array.Int16Builder).Append(int16(i))
		b.Field(12).(*array.Uint32Builder).Append(uint32(i) * 3)
		if i%11 == 0 {
			b.Field(13).AppendNull()
		} else {
			b.Field(13).(*array.Int32Builder).Append(int32(i%6) - 2)
		}
		b.Field(14).(*array.Int64Builder).Append(int64(i%3) * 1e12)
	}
	return b.NewRecord()
}
