package label

import (
	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/noise"
)

// SplitUnits assigns every row of rec to one of k parts with the keyed
// function that partitions teachers (an HMAC of the row's canonical bytes
// under a key drawn from src). A row's part depends only on the key and on
// the row itself: adding or removing one row changes one part and leaves the
// others as they were, which is what a sensitivity bound over the parts
// needs (pate replicate --private-report). Identical rows share a part.
func SplitUnits(rec arrow.Record, k int, src noise.Source) []int {
	p := newPartitioner(k, src)
	cols := rec.Columns()
	out := make([]int, rec.NumRows())
	var buf []byte
	for i := range out {
		buf = rowIdentity(buf[:0], cols, i)
		out[i] = p.teacher(buf)
	}
	return out
}
