package label

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/internal/listtext"
)

// classSet is the public, ordered set of values a label column may take.
// Class i of every vote histogram is Values[i].
type classSet struct {
	typ    arrow.DataType
	values []string // canonical text of each class, in order
	index  map[string]int
	ints   []int64  // values parsed, for integer label types
	uints  []uint64 // values parsed, for unsigned label types
}

// labelTypeSupported reports whether pate can release labels of type t.
func labelTypeSupported(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64,
		arrow.STRING, arrow.LARGE_STRING, arrow.BOOL:
		return true
	}
	return false
}

// releasedLabelType is the type labels of a column of type t are released
// with: a dictionary of strings (a categorical) or a string_view column
// gives utf8 labels, any other type its own.
func releasedLabelType(t arrow.DataType) arrow.DataType {
	switch t.ID() {
	case arrow.STRING_VIEW:
		return arrow.BinaryTypes.String
	case arrow.DICTIONARY:
		switch t.(*arrow.DictionaryType).ValueType.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.STRING_VIEW:
			return arrow.BinaryTypes.String
		}
	}
	return t
}

// newClassSet builds a class set from canonical values, sorted (numerically
// for integer types) so that the order does not depend on the data's order.
func newClassSet(t arrow.DataType, values []string) (*classSet, error) {
	vals := append([]string(nil), values...)
	seen := make(map[string]bool, len(vals))
	out := vals[:0]
	for _, v := range vals {
		c, err := canonical(t, v)
		if err != nil {
			return nil, err
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sortClassValues(t, out)
	cs := &classSet{typ: t, values: out, index: make(map[string]int, len(out))}
	for i, v := range out {
		cs.index[v] = i
		n, _ := strconv.ParseInt(v, 10, 64)
		u, _ := strconv.ParseUint(v, 10, 64)
		cs.ints = append(cs.ints, n)
		cs.uints = append(cs.uints, u)
	}
	return cs, nil
}

// canonical parses a user-declared class value for type t and returns the
// text form used by valueText, so that "1" and "01" name the same class. A
// value outside t's range is refused: released as t it would wrap round
// (300 as an int8 label is 44).
func canonical(t arrow.DataType, v string) (string, error) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		n, err := strconv.ParseInt(v, 10, bitWidth(t))
		if err != nil {
			return "", fmt.Errorf("class %q is not a %s (the label column's type)", v, t)
		}
		return strconv.FormatInt(n, 10), nil
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		n, err := strconv.ParseUint(v, 10, bitWidth(t))
		if err != nil {
			return "", fmt.Errorf("class %q is not a %s (the label column's type)", v, t)
		}
		return strconv.FormatUint(n, 10), nil
	case arrow.BOOL:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return "", fmt.Errorf("class %q is not a boolean (the label column is %s)", v, t)
		}
		return strconv.FormatBool(b), nil
	}
	return v, nil
}

// bitWidth is the width of an integer type (64 for any other).
func bitWidth(t arrow.DataType) int {
	if fw, ok := t.(arrow.FixedWidthDataType); ok && fw.BitWidth() <= 64 {
		return fw.BitWidth()
	}
	return 64
}

func sortClassValues(t arrow.DataType, vals []string) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		sort.Slice(vals, func(i, j int) bool {
			a, _ := strconv.ParseInt(vals[i], 10, 64)
			b, _ := strconv.ParseInt(vals[j], 10, 64)
			return a < b
		})
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		sort.Slice(vals, func(i, j int) bool {
			a, _ := strconv.ParseUint(vals[i], 10, 64)
			b, _ := strconv.ParseUint(vals[j], 10, 64)
			return a < b
		})
	default: // strings; booleans sort as "false" < "true"
		sort.Strings(vals)
	}
}

// valueText returns the canonical text of arr[i]; ok is false for nulls.
func valueText(arr arrow.Array, i int) (string, bool) {
	if arr.IsNull(i) {
		return "", false
	}
	switch a := arr.(type) {
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10), true
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10), true
	case *array.Uint8:
		return strconv.FormatUint(uint64(a.Value(i)), 10), true
	case *array.Uint16:
		return strconv.FormatUint(uint64(a.Value(i)), 10), true
	case *array.Uint32:
		return strconv.FormatUint(uint64(a.Value(i)), 10), true
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10), true
	case *array.String:
		return a.Value(i), true
	case *array.LargeString:
		return a.Value(i), true
	case *array.StringView:
		return a.Value(i), true
	case *array.Dictionary:
		return valueText(a.Dictionary(), a.GetValueIndex(i))
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), true
	case array.ListLike:
		// A float list's ValueStr text, without Arrow's JSON encoder
		// (which panics on NaN and ±Inf).
		if t, ok := listtext.Append(nil, a, i); ok {
			return string(t), true
		}
	}
	return arr.ValueStr(i), true
}

// appendClass appends class c (or a null when c < 0) to a builder of the
// label column's type.
func (cs *classSet) appendClass(b array.Builder, c int) {
	one := [1]int32{int32(c)}
	cs.appendClasses(b, one[:])
}

// appendClasses appends classes cls (a null for each negative one) to a
// builder of the label column's type: the one place class indices become
// label values, a batch at a time.
func (cs *classSet) appendClasses(b array.Builder, cls []int32) {
	b.Reserve(len(cls))
	switch bb := b.(type) {
	case *array.Int8Builder:
		appendMapped(bb, cls, func(c int32) int8 { return int8(cs.ints[c]) })
	case *array.Int16Builder:
		appendMapped(bb, cls, func(c int32) int16 { return int16(cs.ints[c]) })
	case *array.Int32Builder:
		appendMapped(bb, cls, func(c int32) int32 { return int32(cs.ints[c]) })
	case *array.Int64Builder:
		appendMapped(bb, cls, func(c int32) int64 { return cs.ints[c] })
	case *array.Uint8Builder:
		appendMapped(bb, cls, func(c int32) uint8 { return uint8(cs.uints[c]) })
	case *array.Uint16Builder:
		appendMapped(bb, cls, func(c int32) uint16 { return uint16(cs.uints[c]) })
	case *array.Uint32Builder:
		appendMapped(bb, cls, func(c int32) uint32 { return uint32(cs.uints[c]) })
	case *array.Uint64Builder:
		appendMapped(bb, cls, func(c int32) uint64 { return cs.uints[c] })
	case *array.BooleanBuilder:
		appendMapped(bb, cls, func(c int32) bool { return cs.values[c] == "true" })
	case *array.StringBuilder:
		appendMapped(bb, cls, func(c int32) string { return cs.values[c] })
	case *array.LargeStringBuilder:
		appendMapped(bb, cls, func(c int32) string { return cs.values[c] })
	default:
		b.AppendNulls(len(cls))
	}
}

// appendMapped appends value(c) for each class c >= 0 of cls and a null for
// each negative one.
func appendMapped[T any, B interface {
	Append(T)
	AppendNull()
}](b B, cls []int32, value func(int32) T) {
	for _, c := range cls {
		if c < 0 {
			b.AppendNull()
		} else {
			b.Append(value(c))
		}
	}
}

// ClassColumn builds label columns of one label type from class indices:
// how a saved labeler's predictions become the label column, with exactly
// the values a labelling run releases.
type ClassColumn struct{ cs *classSet }

// NewClassColumn returns the builder of a label column of type t whose
// class i is classes[i]. The classes must be what a run records: canonical
// text of t's values, distinct and in pate's order.
func NewClassColumn(t arrow.DataType, classes []string) (*ClassColumn, error) {
	if !labelTypeSupported(t) {
		return nil, fmt.Errorf("labels of type %s are not supported", t)
	}
	cs, err := newClassSet(t, classes)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(cs.values, classes) {
		return nil, fmt.Errorf("the %d classes are not distinct canonical %s values in order", len(classes), t)
	}
	return &ClassColumn{cs: cs}, nil
}

// Build returns the label column of classes cls (a null for each negative
// one), allocated from mem. The caller releases it.
func (cc *ClassColumn) Build(mem memory.Allocator, cls []int32) arrow.Array {
	b := array.NewBuilder(mem, cc.cs.typ)
	defer b.Release()
	cc.cs.appendClasses(b, cls)
	return b.NewArray()
}
