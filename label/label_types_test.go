package label

import (
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
