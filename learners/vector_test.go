package learners

import (
	"math"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// oneColumn builds a record of a single column named "c" with build.
func oneColumn(mem memory.Allocator, t arrow.DataType, build func(array.Builder)) arrow.Record {
	s := arrow.NewSchema([]arrow.Field{{Name: "c", Type: t, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	build(b.Field(0))
	return b.NewRecord()
}

// TestEncoderNumberTypes: dates, times, timestamps, durations and decimals
// are numeric features in their documented units (their fitted mean and
// range say which), and a null is missing.
func TestEncoderNumberTypes(t *testing.T) {
	dec := &arrow.Decimal128Type{Precision: 10, Scale: 2}
	tests := []struct {
		name     string
		typ      arrow.DataType
		build    func(array.Builder)
		min, max float64
	}{
		{"date32 in days", arrow.FixedWidthTypes.Date32, func(b array.Builder) {
			b.(*array.Date32Builder).AppendValues([]arrow.Date32{19723, 19725}, nil)
			b.AppendNull()
		}, 19723, 19725},
		{"date64 in days", arrow.FixedWidthTypes.Date64, func(b array.Builder) {
			b.(*array.Date64Builder).AppendValues([]arrow.Date64{0, 2 * 86400e3}, nil)
			b.AppendNull()
		}, 0, 2},
		{"timestamp ns with zone in seconds", &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, func(b array.Builder) {
			b.(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1e9, 3e9}, nil)
			b.AppendNull()
		}, 1, 3},
		{"timestamp us in seconds", arrow.FixedWidthTypes.Timestamp_us, func(b array.Builder) {
			b.(*array.TimestampBuilder).AppendValues([]arrow.Timestamp{1700000000e6, 1700000010e6}, nil)
			b.AppendNull()
		}, 1700000000, 1700000010},
		{"time64 us in seconds", arrow.FixedWidthTypes.Time64us, func(b array.Builder) {
			b.(*array.Time64Builder).AppendValues([]arrow.Time64{0, 3600e6}, nil)
			b.AppendNull()
		}, 0, 3600},
		{"time32 ms in seconds", arrow.FixedWidthTypes.Time32ms, func(b array.Builder) {
			b.(*array.Time32Builder).AppendValues([]arrow.Time32{500, 1500}, nil)
			b.AppendNull()
		}, 0.5, 1.5},
		{"duration ms in seconds", arrow.FixedWidthTypes.Duration_ms, func(b array.Builder) {
			b.(*array.DurationBuilder).AppendValues([]arrow.Duration{1000, 4000}, nil)
			b.AppendNull()
		}, 1, 4},
		{"decimal128 as its value", dec, func(b array.Builder) {
			b.(*array.Decimal128Builder).AppendValues([]decimal128.Num{decimal128.FromI64(-250), decimal128.FromI64(125)}, nil)
			b.AppendNull()
		}, -2.5, 1.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rec := oneColumn(mem, tc.typ, tc.build)
			defer rec.Release()
			enc, err := FitEncoder(rec.Schema(), []string{"c"}, []arrow.Record{rec}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			f := enc.Columns[0]
			if f.Kind != KindNumeric || !f.Missing || enc.Dim() != 2 {
				t.Fatalf("kind %s, missing %v, dim %d; want numeric with a missing indicator", f.Kind, f.Missing, enc.Dim())
			}
			if math.Abs(f.Min-tc.min) > 1e-9 || math.Abs(f.Max-tc.max) > 1e-9 {
				t.Fatalf("range [%g, %g], want [%g, %g]", f.Min, f.Max, tc.min, tc.max)
			}
			x := NewMatrix(0, enc.Dim())
			if err := enc.Encode(rec, x); err != nil {
				t.Fatal(err)
			}
			checkRows(t, x, [][]float32{{-1, 0}, {1, 0}, {0, 1}})
		})
	}
}

// TestEncoderStringTypes: binary and view columns, and dictionaries of
// them, are categorical like utf8.
func TestEncoderStringTypes(t *testing.T) {
	tests := []struct {
		name string
		typ  arrow.DataType
		add  func(b array.Builder, v string)
	}{
		{"string_view", arrow.BinaryTypes.StringView, func(b array.Builder, v string) { b.(*array.StringViewBuilder).Append(v) }},
		{"binary", arrow.BinaryTypes.Binary, func(b array.Builder, v string) { b.(*array.BinaryBuilder).AppendString(v) }},
		{"large_binary", arrow.BinaryTypes.LargeBinary, func(b array.Builder, v string) { b.(*array.BinaryBuilder).AppendString(v) }},
		{"binary_view", arrow.BinaryTypes.BinaryView, func(b array.Builder, v string) { b.(*array.BinaryViewBuilder).AppendString(v) }},
		{"dictionary of binary", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.Binary},
			func(b array.Builder, v string) { _ = b.(*array.BinaryDictionaryBuilder).AppendString(v) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rec := oneColumn(mem, tc.typ, func(b array.Builder) {
				for _, v := range []string{"a long value past twelve bytes", "b", "a long value past twelve bytes"} {
					tc.add(b, v)
				}
				b.AppendNull()
			})
			defer rec.Release()
			enc, err := FitEncoder(rec.Schema(), []string{"c"}, []arrow.Record{rec}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := enc.Columns[0].Vocab; !slices.Equal(got, []string{"a long value past twelve bytes", "b"}) {
				t.Fatalf("vocabulary %q", got)
			}
			x := NewMatrix(0, enc.Dim())
			if err := enc.Encode(rec, x); err != nil {
				t.Fatal(err)
			}
			checkRows(t, x, [][]float32{{1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 1}})
		})
	}
}

// TestEncoderVectors: each element of a list of numbers is a feature
// "c[i]"; a null list or element, or one past a short list's end, is
// missing: its mean (0), and 1 in the list's one indicator column
// "c=<missing>"; a variable-size list takes the longest length of the
// sample; a sample with nothing missing gets no indicator.
func TestEncoderVectors(t *testing.T) {
	fsl := func(elem arrow.DataType) arrow.DataType { return arrow.FixedSizeListOf(3, elem) }
	// rows: [1 2 3], [3 null 5], null, [2 4 4]: element 0 has values 1 3 2,
	// element 1 has 2 4 (and two missing), element 2 has 3 5 4.
	rows := [][]float64{{1, 2, 3}, {3, math.NaN(), 5}, nil, {2, 4, 4}}
	fill := func(b array.Builder, short bool) {
		lb := b.(array.ListLikeBuilder)
		for ri, r := range rows {
			if r == nil {
				lb.AppendNull()
				continue
			}
			lb.Append(true)
			for j, v := range r {
				if short && ri == 1 && j == 2 {
					break // a list too short for a list column
				}
				switch vb := lb.ValueBuilder().(type) {
				case *array.Float32Builder:
					if math.IsNaN(v) {
						vb.AppendNull()
					} else {
						vb.Append(float32(v))
					}
				case *array.Float64Builder:
					if math.IsNaN(v) {
						vb.AppendNull()
					} else {
						vb.Append(v)
					}
				case *array.Int16Builder:
					if math.IsNaN(v) {
						vb.AppendNull()
					} else {
						vb.Append(int16(v))
					}
				}
			}
		}
	}
	tests := []struct {
		name  string
		typ   arrow.DataType
		short bool
		mean2 float64 // mean of element 2
	}{
		{"fixed_size_list float32", fsl(arrow.PrimitiveTypes.Float32), false, 4},
		{"fixed_size_list float64", fsl(arrow.PrimitiveTypes.Float64), false, 4},
		{"fixed_size_list int16", fsl(arrow.PrimitiveTypes.Int16), false, 4},
		{"list float32, a short list", arrow.ListOf(arrow.PrimitiveTypes.Float32), true, 3.5},
		{"large_list float64", arrow.LargeListOf(arrow.PrimitiveTypes.Float64), false, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rec := oneColumn(mem, tc.typ, func(b array.Builder) { fill(b, tc.short) })
			defer rec.Release()
			enc, err := FitEncoder(rec.Schema(), []string{"c"}, []arrow.Record{rec}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"c[0]", "c[1]", "c[2]", "c=<missing>"}
			if got := enc.FeatureNames(); !slices.Equal(got, want) {
				t.Fatalf("feature names %q, want %q", got, want)
			}
			if got := enc.Features(); !slices.Equal(got, []string{"c"}) {
				t.Fatalf("features %q, want [c]", got)
			}
			if m := enc.Columns[2].Mean; m != tc.mean2 {
				t.Fatalf("element 2's mean %g, want %g", m, tc.mean2)
			}
			x := NewMatrix(0, enc.Dim())
			if err := enc.Encode(rec, x); err != nil {
				t.Fatal(err)
			}
			// Element 0: mean 2, std sqrt(2/3); element 1: mean 3, std 1;
			// rows 1 (a null element, or short) and 2 (null) are missing.
			s0 := float32(1 / math.Sqrt(2.0/3))
			at := func(r, c int) float32 { return x.Data[r*x.Cols+c] }
			if x.Rows != 4 || x.Cols != 4 || at(0, 0) != -s0 || at(1, 0) != s0 || at(0, 1) != -1 || at(3, 1) != 1 || at(1, 1) != 0 ||
				at(0, 3) != 0 || at(1, 3) != 1 || at(2, 3) != 1 || at(3, 3) != 0 || at(2, 0) != 0 || at(2, 1) != 0 || at(2, 2) != 0 {
				t.Fatalf("encoded rows %v", x.Data)
			}
			if err := enc.CheckSchema(rec.Schema()); err != nil {
				t.Fatal(err)
			}
			// Fitted on rows 0 and 3 alone: no indicator, and row 2 (null)
			// then encodes as the means.
			clean := rec.NewSlice(3, 4)
			defer clean.Release()
			enc2, err := FitEncoder(rec.Schema(), []string{"c"}, []arrow.Record{clean}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := enc2.FeatureNames(); !slices.Equal(got, []string{"c[0]", "c[1]", "c[2]"}) {
				t.Fatalf("fitted without a missing element: feature names %q", got)
			}
			if err := enc2.Encode(rec, x); err != nil {
				t.Fatal(err)
			}
			if x.Cols != 3 || x.Data[2*3] != 0 || x.Data[2*3+1] != 0 || x.Data[2*3+2] != 0 {
				t.Fatalf("encoded rows %v", x.Data)
			}
		})
	}
}

// TestEncoderVectorErrors: lists of what is not a number stay unsupported,
// and a list column with only empty lists in the sample has no width.
func TestEncoderVectorErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	empty := oneColumn(mem, arrow.ListOf(arrow.PrimitiveTypes.Float32), func(b array.Builder) {
		b.(*array.ListBuilder).Append(true)
		b.AppendNull()
	})
	defer empty.Release()
	if _, err := FitEncoder(empty.Schema(), []string{"c"}, []arrow.Record{empty}, EncoderOptions{}); err == nil {
		t.Fatal("a list column of empty lists was fitted")
	}
	if _, err := KindOf(arrow.FixedSizeListOf(2, arrow.BinaryTypes.String)); err == nil {
		t.Fatal("a list of strings is a feature kind")
	}
}
