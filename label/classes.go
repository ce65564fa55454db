package label

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
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
// text form used by valueText, so that "1" and "01" name the same class.
func canonical(t arrow.DataType, v string) (string, error) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return "", fmt.Errorf("class %q is not an integer (the label column is %s)", v, t)
		}
		return strconv.FormatInt(n, 10), nil
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return "", fmt.Errorf("class %q is not an unsigned integer (the label column is %s)", v, t)
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
	}
	return arr.ValueStr(i), true
}

// appendClass appends class c (or a null when c < 0) to a builder of the
// label column's type.
func (cs *classSet) appendClass(b array.Builder, c int) {
	if c < 0 {
		b.AppendNull()
		return
	}
	switch bb := b.(type) {
	case *array.Int8Builder:
		bb.Append(int8(cs.ints[c]))
	case *array.Int16Builder:
		bb.Append(int16(cs.ints[c]))
	case *array.Int32Builder:
		bb.Append(int32(cs.ints[c]))
	case *array.Int64Builder:
		bb.Append(cs.ints[c])
	case *array.Uint8Builder:
		bb.Append(uint8(cs.uints[c]))
	case *array.Uint16Builder:
		bb.Append(uint16(cs.uints[c]))
	case *array.Uint32Builder:
		bb.Append(uint32(cs.uints[c]))
	case *array.Uint64Builder:
		bb.Append(cs.uints[c])
	case *array.StringBuilder:
		bb.Append(cs.values[c])
	case *array.LargeStringBuilder:
		bb.Append(cs.values[c])
	case *array.BooleanBuilder:
		bb.Append(cs.values[c] == "true")
	default:
		b.AppendNull()
	}
}
