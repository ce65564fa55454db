package label

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// The identity of a row holding a list of numbers (an embedding) carries
// the list's canonical text, valueText's: Arrow's ValueStr, the JSON
// goccy/go-json writes. Through ValueStr that takes a JSON encoder run,
// a compaction and a parse per number, most of a run's time on 384-value
// embeddings; appendFloatLists writes the same bytes directly.

// appendFloatLists appends to rows[r] the identity bytes of row lo+r of
// the list column c, exactly as rowIdentity does, if c is a list of
// float32 or float64 with no null and no non-finite value in those rows
// (JSON has no text for NaN or ±Inf); it returns false, having appended
// nothing, otherwise.
func appendFloatLists(rows [][]byte, c arrow.Array, lo int) bool {
	a, ok := c.(array.ListLike)
	if !ok || len(rows) == 0 {
		return false
	}
	switch vals := a.ListValues().(type) {
	case *array.Float32:
		return appendLists(rows, a, vals, vals.Float32Values(), lo, appendJSONFloat32)
	case *array.Float64:
		return appendLists(rows, a, vals, vals.Float64Values(), lo, appendJSONFloat64)
	}
	return false
}

func appendLists[T float32 | float64](rows [][]byte, a array.ListLike, vals arrow.Array, v []T, lo int, put func([]byte, T) []byte) bool {
	nulls := vals.NullN() > 0
	for r := range rows {
		if a.IsNull(lo + r) {
			continue
		}
		s, e := a.ValueOffsets(lo + r)
		if s < 0 || e < s || e > int64(len(v)) {
			return false
		}
		for j, x := range v[s:e] {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) || nulls && vals.IsNull(int(s)+j) {
				return false
			}
		}
	}
	var text []byte
	for r, dst := range rows {
		if a.IsNull(lo + r) {
			rows[r] = append(dst, 0xff)
			continue
		}
		s, e := a.ValueOffsets(lo + r)
		text = append(text[:0], '[')
		for j := s; j < e; j++ {
			if j > s {
				text = append(text, ',')
			}
			text = put(text, v[j])
		}
		text = append(text, ']')
		dst = binary.AppendUvarint(append(dst, 0x01), uint64(len(text)))
		rows[r] = append(dst, text...)
	}
	return true
}

// appendJSONFloat32 and appendJSONFloat64 format a finite number as
// goccy/go-json's AppendFloat32 and AppendFloat64 do (Arrow's JSON).
func appendJSONFloat32(b []byte, v float32) []byte {
	format := byte('f')
	if abs := float32(math.Abs(float64(v))); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, float64(v), format, -1, 32)
}

func appendJSONFloat64(b []byte, v float64) []byte {
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	return strconv.AppendFloat(b, v, format, -1, 64)
}
