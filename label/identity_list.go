package label

import (
	"encoding/binary"
	"math"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/label/internal/listtext"
)

// The partition identity of a row holding a list of float32 or float64 (an
// embedding) with no null element is the elements' bits, as a float
// column's is: tag 0x02, the number of bytes, then each element's
// little-endian bits. Formatting 384 numbers a row as text (valueText, what
// any other list gets) was a quarter of a run on embeddings. The choice is
// the row's own (a row with a null element keeps the text form), so one
// row never changes the identity of another: a neighbouring dataset moves
// only its own row between teachers.

// appendFloatListBits appends the bits form of row i of a, a list of
// float32 or float64, and reports whether it applies (a non-null row with
// no null element); it appends nothing when it does not.
func appendFloatListBits(dst []byte, a array.ListLike, i int) ([]byte, bool) {
	if a.IsNull(i) {
		return dst, false
	}
	s, e := a.ValueOffsets(i)
	switch v := a.ListValues().(type) {
	case *array.Float32:
		return appendBits(dst, v, v.Float32Values(), s, e)
	case *array.Float64:
		return appendBits(dst, v, v.Float64Values(), s, e)
	}
	return dst, false
}

// appendBits appends the bits form of v[s:e]: on a little-endian machine
// the values' memory as it is.
func appendBits[T float32 | float64](dst []byte, vals arrow.Array, v []T, s, e int64) ([]byte, bool) {
	if s < 0 || e < s || e > int64(len(v)) {
		return dst, false
	}
	if vals.NullN() > 0 {
		for j := s; j < e; j++ {
			if vals.IsNull(int(j)) {
				return dst, false
			}
		}
	}
	v = v[s:e]
	width := int(unsafe.Sizeof(T(0)))
	dst = binary.AppendUvarint(append(dst, 0x02), uint64(len(v)*width))
	if len(v) == 0 {
		return dst, true
	}
	if littleEndian {
		return append(dst, unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*width)...), true
	}
	for _, x := range v {
		if width == 4 {
			dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(x)))
		} else {
			dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(float64(x)))
		}
	}
	return dst, true
}

// littleEndian says whether the machine stores numbers little-endian.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// appendFloatLists appends to rows[r] the identity bytes of row lo+r of
// the list column c, exactly as rowIdentity does, if c is a list of
// float32 or float64; it returns false, having appended nothing,
// otherwise.
func appendFloatLists(rows [][]byte, c arrow.Array, lo int) bool {
	a, ok := c.(array.ListLike)
	if !ok || len(rows) == 0 {
		return false
	}
	switch a.ListValues().(type) {
	case *array.Float32, *array.Float64:
	default:
		return false
	}
	for r, dst := range rows {
		if a.IsNull(lo + r) {
			rows[r] = append(dst, 0xff)
			continue
		}
		if out, ok := appendFloatListBits(dst, a, lo+r); ok {
			rows[r] = out
			continue
		}
		rows[r] = appendListText(dst, a, lo+r)
	}
	return true
}

// appendListText appends the text form of a non-null list row: tag 0x01,
// the text's length, valueText's text (listtext writes the same bytes
// faster).
func appendListText(dst []byte, a array.ListLike, i int) []byte {
	text, ok := listtext.Append(nil, a, i)
	if !ok {
		t, _ := valueText(a, i)
		text = []byte(t)
	}
	dst = binary.AppendUvarint(append(dst, 0x01), uint64(len(text)))
	return append(dst, text...)
}
