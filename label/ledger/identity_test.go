package ledger

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// col is one column of a test table: its name and its values (int, int32,
// float32, float64, string, bool, or nil for a null).
type col struct {
	name string
	typ  arrow.DataType
	vals []any
}

func record(t *testing.T, mem memory.Allocator, cols []col) arrow.Record {
	t.Helper()
	var fields []arrow.Field
	var arrs []arrow.Array
	for _, c := range cols {
		fields = append(fields, arrow.Field{Name: c.name, Type: c.typ, Nullable: true})
		b := array.NewBuilder(mem, c.typ)
		for _, v := range c.vals {
			if v == nil {
				b.AppendNull()
				continue
			}
			switch bb := b.(type) {
			case *array.Int64Builder:
				bb.Append(int64(v.(int)))
			case *array.Int32Builder:
				bb.Append(int32(v.(int)))
			case *array.Float64Builder:
				bb.Append(v.(float64))
			case *array.Float32Builder:
				bb.Append(v.(float32))
			case *array.StringBuilder:
				bb.Append(v.(string))
			case *array.BooleanBuilder:
				bb.Append(v.(bool))
			default:
				t.Fatalf("no builder for %s", c.typ)
			}
		}
		arrs = append(arrs, b.NewArray())
		b.Release()
	}
	rec := array.NewRecord(arrow.NewSchema(fields, nil), arrs, int64(len(cols[0].vals)))
	for _, a := range arrs {
		a.Release()
	}
	return rec
}

func contentID(t *testing.T, mem memory.Allocator, batches ...[]col) string {
	t.Helper()
	var h ContentHash
	for _, b := range batches {
		rec := record(t, mem, b)
		if err := h.Add(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	return h.ID()
}

// TestContentHash: the identity is the multiset of rows, whatever their
// order, the order of the columns, the numeric types, the spelling of a
// number (a CSV's "1" or a Parquet 1.0) and the batching; a row more, a
// changed value or a renamed column is another dataset.
func TestContentHash(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	i64, i32 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32
	f64, f32 := arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Float32
	str := arrow.BinaryTypes.String
	base := []col{
		{"age", i64, []any{39, 50, 38}},
		{"w", f64, []any{0.1, 2.5, nil}},
		{"job", str, []any{"clerk", "exec", "clerk"}},
		{"income", i64, []any{0, 1, 0}},
	}
	want := contentID(t, mem, base)
	tests := []struct {
		name    string
		batches [][]col
		same    bool
	}{
		{"the same rows", [][]col{base}, true},
		{"rows in another order", [][]col{{
			{"age", i64, []any{38, 39, 50}}, {"w", f64, []any{nil, 0.1, 2.5}},
			{"job", str, []any{"clerk", "clerk", "exec"}}, {"income", i64, []any{0, 0, 1}}}}, true},
		{"columns in another order", [][]col{{base[3], base[1], base[0], base[2]}}, true},
		{"int32, float32 and numbers as text (a CSV)", [][]col{{
			{"age", i32, []any{39, 50, 38}}, {"w", f32, []any{float32(0.1), float32(2.5), nil}},
			{"job", str, []any{"clerk", "exec", "clerk"}}, {"income", str, []any{"0", "1.0", "0"}}}}, true},
		{"the label as float64", [][]col{{base[0], base[1], base[2], {"income", f64, []any{0.0, 1.0, 0.0}}}}, true},
		{"an empty string for the null", [][]col{{base[0], {"w", str, []any{"0.1", "2.5", ""}}, base[2], base[3]}}, true},
		{"two batches", [][]col{
			{{"age", i64, []any{39}}, {"w", f64, []any{0.1}}, {"job", str, []any{"clerk"}}, {"income", i64, []any{0}}},
			{{"age", i64, []any{50, 38}}, {"w", f64, []any{2.5, nil}}, {"job", str, []any{"exec", "clerk"}}, {"income", i64, []any{1, 0}}},
		}, true},
		{"one row more (a duplicate)", [][]col{{
			{"age", i64, []any{39, 50, 38, 38}}, {"w", f64, []any{0.1, 2.5, nil, nil}},
			{"job", str, []any{"clerk", "exec", "clerk", "clerk"}}, {"income", i64, []any{0, 1, 0, 0}}}}, false},
		{"one row less", [][]col{{
			{"age", i64, []any{39, 50}}, {"w", f64, []any{0.1, 2.5}},
			{"job", str, []any{"clerk", "exec"}}, {"income", i64, []any{0, 1}}}}, false},
		{"a label changed", [][]col{{base[0], base[1], base[2], {"income", i64, []any{0, 1, 1}}}}, false},
		{"values moved between rows", [][]col{{base[0], base[1], base[2], {"income", i64, []any{1, 0, 0}}}}, false},
		{"a column renamed", [][]col{{base[0], base[1], base[2], {"label", i64, []any{0, 1, 0}}}}, false},
		{"a column dropped", [][]col{{base[0], base[1], base[3]}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := contentID(t, mem, tc.batches...)
			if (got == want) != tc.same {
				t.Fatalf("same identity: %v, want %v", got == want, tc.same)
			}
		})
	}
	// A CSV is read as text, whatever types a reader would infer.
	csvs := []struct {
		name, text string
		same       bool
	}{
		{"the same rows as CSV", "\ufeffincome,age,job,w\n0,39,clerk,0.1\n1,50,exec,2.5\n0,38,clerk,\n", true},
		{"reordered, CRLF, quoted", "w,job,age,income\r\n,\"clerk\",38,0\r\n2.5,exec,50,1.0\r\n0.1,clerk,39,0\r\n", true},
		{"a short row", "income,age,job,w\n0,39,clerk,0.1\n1,50,exec,2.5\n0,38,clerk\n", true},
		{"a value of another type", "income,age,job,w\n0,39,clerk,0.1\n1,50,exec,2.5\n0,x,clerk,\n", false},
	}
	for _, tc := range csvs {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ContentIDCSV(strings.NewReader(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			if (got == want) != tc.same {
				t.Fatalf("same identity: %v, want %v", got == want, tc.same)
			}
		})
	}
	if len(want) != 64 || NamedID("adult") == want || NamedID("adult") != NamedID("adult") || NamedID("a") == NamedID("b") {
		t.Fatal("named identities")
	}
}
