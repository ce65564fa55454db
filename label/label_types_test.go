package label

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestCategoricalAndViewLabels: a Categorical (dictionary of strings) or
// string_view label column is read value by value and released as utf8.
func TestCategoricalAndViewLabels(t *testing.T) {
	tests := []struct {
		name     string
		typ      arrow.DataType
		released arrow.DataType
		add      func(b array.Builder, v string)
	}{
		{"dictionary of utf8", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint32, ValueType: arrow.BinaryTypes.String},
			arrow.BinaryTypes.String, func(b array.Builder, v string) { _ = b.(*array.BinaryDictionaryBuilder).AppendString(v) }},
		{"dictionary of utf8, int8 indices", &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String},
			arrow.BinaryTypes.String, func(b array.Builder, v string) { _ = b.(*array.BinaryDictionaryBuilder).AppendString(v) }},
		{"string_view", arrow.BinaryTypes.StringView, arrow.BinaryTypes.String,
			func(b array.Builder, v string) { b.(*array.StringViewBuilder).Append(v) }},
		{"large_utf8 keeps its type", arrow.BinaryTypes.LargeString, arrow.BinaryTypes.LargeString,
			func(b array.Builder, v string) { b.(*array.LargeStringBuilder).Append(v) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			if got := releasedLabelType(tc.typ); !arrow.TypeEqual(got, tc.released) {
				t.Fatalf("released as %s, want %s", got, tc.released)
			}
			if !labelTypeSupported(releasedLabelType(tc.typ)) {
				t.Fatalf("%s labels refused", tc.typ)
			}
			b := array.NewBuilder(mem, tc.typ)
			defer b.Release()
			for _, v := range []string{"no", "a value past twelve bytes", "no"} {
				tc.add(b, v)
			}
			b.AppendNull()
			a := b.NewArray()
			defer a.Release()
			var got []string
			for i := 0; i < a.Len(); i++ {
				v, ok := valueText(a, i)
				if !ok {
					v = "<null>"
				}
				got = append(got, v)
			}
			want := []string{"no", "a value past twelve bytes", "no", "<null>"}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("values %q, want %q", got, want)
				}
			}
		})
	}
}

// TestUnsupportedLabelTypes: a label column of another type is refused
// naming the column and its type; a float one (a class number as pandas
// or JavaScript store it) also says how to cast it.
func TestUnsupportedLabelTypes(t *testing.T) {
	for _, tc := range []struct {
		typ  arrow.DataType
		want []string
	}{
		{arrow.PrimitiveTypes.Float64, []string{`label column "y" has type float64`, "Polars pl.col(\"y\").cast(pl.Int64)", "y::INTEGER"}},
		{arrow.PrimitiveTypes.Float32, []string{`label column "y" has type float32`, "cast the column to an integer"}},
		{arrow.FixedWidthTypes.Date32, []string{`label column "y" has type date32`}},
	} {
		sens := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "y", Type: tc.typ}}, nil)
		pub := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
		_, err := New(Config{Label: "y", Teachers: 2, Epsilon: 1, Delta: 1e-5, BatchSize: 10}, sens, pub)
		if !errors.Is(err, ErrInvalidInput) {
			t.Fatalf("%s: error %v, want ErrInvalidInput", tc.typ, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.typ, err, w)
			}
		}
		if !arrow.IsFloating(tc.typ.ID()) && strings.Contains(err.Error(), "cast") {
			t.Errorf("%s: %q suggests a cast", tc.typ, err)
		}
	}
}
