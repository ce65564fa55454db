package learners

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// idColumn builds one column of n rows from value(i) (nil: null).
func idColumn(mem memory.Allocator, typ arrow.DataType, n int, value func(i int) any) arrow.Array {
	b := array.NewBuilder(mem, typ)
	defer b.Release()
	for i := 0; i < n; i++ {
		v := value(i)
		if v == nil {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.Append(v.(int64))
		case *array.Float64Builder:
			bb.Append(v.(float64))
		case *array.StringBuilder:
			bb.Append(v.(string))
		case *array.BooleanBuilder:
			bb.Append(v.(bool))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(v.(int64)))
		case *array.BinaryDictionaryBuilder:
			if err := bb.AppendString(v.(string)); err != nil {
				panic(err)
			}
		}
	}
	return b.NewArray()
}

func TestIDColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	perm := rng.Perm(3000) // a public third of 3,000 shuffled row numbers
	uuids := make([]string, 100)
	for i := range uuids {
		uuids[i] = fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", rng.Uint32(), i, i, i, rng.Uint64()>>16)
	}
	uuid := func(i int) string { return uuids[i] }
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	tests := []struct {
		name  string
		typ   arrow.DataType
		rows  int
		value func(i int) any
		id    bool
	}{
		{"shuffled row numbers", arrow.PrimitiveTypes.Int64, 1000, func(i int) any { return int64(perm[i] + 1) }, true},
		{"a sorted sequence from 10,000", arrow.PrimitiveTypes.Int64, 200, func(i int) any { return int64(10000 + i) }, true},
		{"row numbers with nulls", arrow.PrimitiveTypes.Int64, 300, func(i int) any {
			if i%7 == 0 {
				return nil
			}
			return int64(perm[i])
		}, true},
		{"row numbers stored as floats", arrow.PrimitiveTypes.Float64, 500, func(i int) any { return float64(perm[i]) }, true},
		{"ages (repeated)", arrow.PrimitiveTypes.Int64, 1000, func(i int) any { return int64(18 + rng.IntN(70)) }, false},
		{"distinct but spread integers (an amount)", arrow.PrimitiveTypes.Int64, 1000, func(i int) any { return int64(rng.IntN(1 << 40)) }, false},
		{"continuous measurements", arrow.PrimitiveTypes.Float64, 1000, func(i int) any { return rng.NormFloat64() }, false},
		{"too few rows to tell", arrow.PrimitiveTypes.Int64, IDMinRows - 1, func(i int) any { return int64(i) }, false},
		{"distinct strings", arrow.BinaryTypes.String, 300, func(i int) any { return fmt.Sprintf("cust-%d", perm[i]) }, true},
		{"distinct strings in a dictionary", dict, 300, func(i int) any { return fmt.Sprintf("cust-%d", perm[i]) }, true},
		{"categories", arrow.BinaryTypes.String, 300, func(i int) any { return []string{"a", "b", "c"}[i%3] }, false},
		{"few distinct strings", arrow.BinaryTypes.String, IDMinRows - 1, func(i int) any { return fmt.Sprint(i) }, false},
		{"UUIDs", arrow.BinaryTypes.String, 5, func(i int) any { return uuid(i) }, true},
		{"UUIDs, one repeated", arrow.BinaryTypes.String, 100, func(i int) any { return uuid(i % 99) }, true},
		{"booleans", arrow.FixedWidthTypes.Boolean, 2, func(i int) any { return i == 0 }, false},
		{"one date per row", arrow.FixedWidthTypes.Date32, 500, func(i int) any { return int64(perm[i]) }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: tc.typ, Nullable: true},
				{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
			// Two batches, so that the rule reads across them.
			var recs []arrow.Record
			for lo := 0; lo < tc.rows; lo += (tc.rows + 1) / 2 {
				hi := min(tc.rows, lo+(tc.rows+1)/2)
				c := idColumn(mem, tc.typ, hi-lo, func(i int) any { return tc.value(lo + i) })
				x := idColumn(mem, arrow.PrimitiveTypes.Float64, hi-lo, func(i int) any { return 0.5 })
				recs = append(recs, array.NewRecord(schema, []arrow.Array{c, x}, int64(hi-lo)))
				c.Release()
				x.Release()
			}
			defer func() {
				for _, r := range recs {
					r.Release()
				}
			}()
			got := IDColumns(schema, []string{"c", "x"}, recs, DefaultMaxSampleRows)
			if tc.id != (len(got) == 1 && got[0].Name == "c") || len(got) > 1 {
				t.Fatalf("IDColumns = %+v, want column c an identifier: %v", got, tc.id)
			}
			if tc.id && got[0].Why == "" {
				t.Error("an identifier without a reason")
			}
		})
	}
}

func TestIDColumnsReadsOnlyTheSample(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: arrow.PrimitiveTypes.Int64}}, nil)
	// 100 distinct row numbers, then a repeat past the sample's end.
	c := idColumn(mem, arrow.PrimitiveTypes.Int64, 101, func(i int) any { return int64(i % 100) })
	defer c.Release()
	rec := array.NewRecord(schema, []arrow.Array{c}, 101)
	defer rec.Release()
	for _, tc := range []struct {
		maxRows int
		want    int
	}{{100, 1}, {101, 0}, {0, 0}} {
		if got := IDColumns(schema, []string{"c"}, []arrow.Record{rec}, tc.maxRows); len(got) != tc.want {
			t.Errorf("maxRows %d: %d identifiers, want %d", tc.maxRows, len(got), tc.want)
		}
	}
}
