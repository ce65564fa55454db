package label

import (
	"encoding/binary"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/pate-tool/pate/label/internal/listtext"
)

// The identity of a row holding a list of numbers (an embedding) carries
// the list's canonical text, valueText's: Arrow's ValueStr, the JSON
// goccy/go-json writes. Through ValueStr that takes a JSON encoder run,
// a compaction and a parse per number, most of a run's time on 384-value
// embeddings; appendFloatLists writes the same bytes with listtext.

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
	// Every row's text first: a row that has none leaves the block to
	// rowIdentity before anything is appended.
	var text []byte
	ends := make([]int, len(rows))
	for r := range rows {
		if !a.IsNull(lo + r) {
			if text, ok = listtext.Append(text, a, lo+r); !ok {
				return false
			}
		}
		ends[r] = len(text)
	}
	start := 0
	for r, dst := range rows {
		if a.IsNull(lo + r) {
			rows[r] = append(dst, 0xff)
			continue
		}
		t := text[start:ends[r]]
		start = ends[r]
		dst = binary.AppendUvarint(append(dst, 0x01), uint64(len(t)))
		rows[r] = append(dst, t...)
	}
	return true
}
