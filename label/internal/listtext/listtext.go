// Package listtext writes the text Arrow's ValueStr gives a row of a list
// column of float32 or float64 (an embedding) without Arrow's JSON
// encoder, whose encoder run, compaction and per-number parse made that
// text most of the cost of identifying rows of 384-value embeddings (the
// partition's identity of a row with a null element uses it), and the
// float64 a float32's shortest text reads as (Float64, the ledger's
// canonical value of a float32).
package listtext

import (
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// Append appends to dst the text arr.ValueStr(i) gives row i of the list
// column arr (a fixed-size list, list or large list) and returns it with
// ok true, when the row is not null and holds float32 or float64 values;
// otherwise it returns dst unchanged and false. A null element is "null",
// as in Arrow's JSON; NaN and ±Inf, which JSON has no text for (Arrow's
// ValueStr panics on them), are "NaN", "+Inf" and "-Inf".
func Append(dst []byte, arr array.ListLike, i int) ([]byte, bool) {
	if arr.IsNull(i) {
		return dst, false
	}
	s, e := arr.ValueOffsets(i)
	switch vals := arr.ListValues().(type) {
	case *array.Float32:
		return appendRow32(dst, vals, s, e)
	case *array.Float64:
		return appendRow(dst, vals, vals.Float64Values(), s, e, appendFloat64)
	}
	return dst, false
}

func appendRow[T float32 | float64](dst []byte, vals arrow.Array, v []T, s, e int64, put func([]byte, T) []byte) ([]byte, bool) {
	if s < 0 || e < s || e > int64(len(v)) {
		return dst, false
	}
	nulls := vals.NullN() > 0
	dst = append(dst, '[')
	for j, x := range v[s:e] {
		if j > 0 {
			dst = append(dst, ',')
		}
		switch f := float64(x); {
		case nulls && vals.IsNull(int(s)+j):
			dst = append(dst, "null"...)
		case math.IsNaN(f):
			dst = append(dst, "NaN"...)
		case math.IsInf(f, 1):
			dst = append(dst, "+Inf"...)
		case math.IsInf(f, -1):
			dst = append(dst, "-Inf"...)
		default:
			dst = put(dst, x)
		}
	}
	return append(dst, ']'), true
}

// appendRow32 is appendRow for float32 values, with their text written in
// place by formatList32: the row's room is reserved once rather than
// checked at each value. formatList32 writes NaN and ±Inf as appendRow
// does.
func appendRow32(dst []byte, vals *array.Float32, s, e int64) ([]byte, bool) {
	v := vals.Float32Values()
	if s < 0 || e < s || e > int64(len(v)) {
		return dst, false
	}
	v = v[s:e]
	n := len(dst)
	buf := slices.Grow(dst, 2+len(v)*(maxLen32+1))
	buf = buf[:cap(buf)]
	buf[n] = '['
	n++
	if vals.NullN() == 0 {
		n = formatList32(buf, n, v)
	} else {
		for j := range v {
			if vals.IsNull(int(s) + j) {
				n += copy(buf[n:], "null,")
				continue
			}
			n = formatList32(buf, n, v[j:j+1])
		}
	}
	if len(v) > 0 {
		n--
	}
	buf[n] = ']'
	return buf[:n+1], true
}

// appendFloat64 formats a finite number as goccy/go-json's AppendFloat64
// does (the JSON Arrow's ValueStr gives); formatList32, in ftoa32.go,
// writes float32s.
func appendFloat64(b []byte, v float64) []byte {
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, v, format, -1, 64)
}
