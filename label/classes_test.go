package label

import (
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestClassColumnBuild: class indices become the label values of every
// supported type, a negative index a null, in one batch.
func TestClassColumnBuild(t *testing.T) {
	tests := []struct {
		typ     arrow.DataType
		classes []string
		cls     []int32
		want    string // the built array's String()
	}{
		{arrow.PrimitiveTypes.Int8, []string{"-128", "0", "127"}, []int32{2, 0, -1, 1}, "[127 -128 (null) 0]"},
		{arrow.PrimitiveTypes.Int16, []string{"-5", "300"}, []int32{1, 0}, "[300 -5]"},
		{arrow.PrimitiveTypes.Int32, []string{"7", "70000"}, []int32{1, -1}, "[70000 (null)]"},
		{arrow.PrimitiveTypes.Int64, []string{"-9223372036854775808", "1"}, []int32{0, 1}, "[-9223372036854775808 1]"},
		{arrow.PrimitiveTypes.Uint8, []string{"0", "255"}, []int32{1, 1, 0}, "[255 255 0]"},
		{arrow.PrimitiveTypes.Uint16, []string{"65535"}, []int32{0}, "[65535]"},
		{arrow.PrimitiveTypes.Uint32, []string{"1", "4294967295"}, []int32{-1, 1}, "[(null) 4294967295]"},
		{arrow.PrimitiveTypes.Uint64, []string{"18446744073709551615"}, []int32{0}, "[18446744073709551615]"},
		{arrow.FixedWidthTypes.Boolean, []string{"false", "true"}, []int32{1, 0, -1}, "[true false (null)]"},
		{arrow.BinaryTypes.String, []string{"<=50K", ">50K"}, []int32{1, -1, 0}, `[">50K" (null) "<=50K"]`},
		{arrow.BinaryTypes.LargeString, []string{"a", "b"}, []int32{0, 1}, `["a" "b"]`},
		{arrow.PrimitiveTypes.Int32, []string{"1"}, nil, "[]"},
	}
	for _, tc := range tests {
		t.Run(tc.typ.String(), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			cc, err := NewClassColumn(tc.typ, tc.classes)
			if err != nil {
				t.Fatal(err)
			}
			a := cc.Build(mem, tc.cls)
			defer a.Release()
			if !arrow.TypeEqual(a.DataType(), tc.typ) || a.String() != tc.want {
				t.Errorf("built %s %s, want %s %s", a.DataType(), a.String(), tc.typ, tc.want)
			}
		})
	}
}

// TestClassOutOfRangeRefused: a class that the label type cannot hold is an
// error where it is declared, not a label that wraps round when released
// (300 as an int8 would be 44), and a saved labeler's classes must be what
// a run records.
func TestClassOutOfRangeRefused(t *testing.T) {
	tests := []struct {
		typ     arrow.DataType
		classes []string
		err     string
	}{
		{arrow.PrimitiveTypes.Int8, []string{"0", "300"}, `class "300" is not a int8`},
		{arrow.PrimitiveTypes.Int16, []string{"-40000"}, `class "-40000" is not a int16`},
		{arrow.PrimitiveTypes.Uint8, []string{"256"}, `class "256" is not a uint8`},
		{arrow.PrimitiveTypes.Uint32, []string{"-1"}, `class "-1" is not a uint32`},
		{arrow.PrimitiveTypes.Int32, []string{"x"}, `class "x" is not a int32`},
		{arrow.FixedWidthTypes.Boolean, []string{"yes"}, `class "yes" is not a boolean`},
		{arrow.PrimitiveTypes.Int32, []string{"2", "1"}, "not distinct canonical int32 values in order"},
		{arrow.PrimitiveTypes.Int32, []string{"01"}, "not distinct canonical"},
		{arrow.BinaryTypes.String, []string{"a", "a"}, "not distinct canonical"},
		{arrow.PrimitiveTypes.Float64, []string{"1"}, "not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.typ.String()+" "+strings.Join(tc.classes, ","), func(t *testing.T) {
			_, err := NewClassColumn(tc.typ, tc.classes)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("NewClassColumn(%s, %q) = %v, want an error containing %q", tc.typ, tc.classes, err, tc.err)
			}
		})
	}
	if _, err := newClassSet(arrow.PrimitiveTypes.Int8, []string{"1", "300"}); err == nil {
		t.Error("a declared class of 300 for an int8 label was accepted")
	}
}
