package ledger

import (
	"math"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestPutColumnFloatLists: a float list column (an embedding) mixes into
// the content hash exactly what putValue's ValueStr text mixes in, row by
// row, with null lists, empty lists, null elements and exponent-form
// values among the rows; and a NaN, on which ValueStr panics, is hashed.
func TestPutColumnFloatLists(t *testing.T) {
	tests := []struct {
		name string
		typ  arrow.DataType
	}{
		{"fixed_size_list float32", arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)},
		{"list float64", arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			b := array.NewBuilder(mem, tc.typ)
			defer b.Release()
			lb := b.(array.ListLikeBuilder)
			const rows = 3000 // the rows are split between workers
			for r := 0; r < rows; r++ {
				if r%9 == 4 {
					lb.AppendNull()
					continue
				}
				lb.Append(true)
				n := 3
				if _, fixed := tc.typ.(*arrow.FixedSizeListType); !fixed {
					n = r % 4
				}
				for j := 0; j < n; j++ {
					v := float64(r*(j+1)) * math.Pow(10, float64(r%30-15))
					switch vb := lb.ValueBuilder().(type) {
					case *array.Float32Builder:
						if r == 13 && j == 1 {
							vb.AppendNull()
							continue
						}
						vb.Append(float32(v))
					case *array.Float64Builder:
						if r == 17 && j == 0 {
							v = math.NaN()
						}
						vb.Append(v)
					}
				}
			}
			col := b.NewArray()
			defer col.Release()
			got := make([]lanes, rows)
			putColumn(got, col)
			for r := 0; r < rows; r++ {
				var want lanes
				if col.IsNull(r) {
					want.put(tagNull, 0, 0)
				} else if r == 17 && tc.typ.ID() == arrow.LIST {
					continue // NaN: Arrow's ValueStr panics, putColumn hashes the text [NaN,…]
				} else {
					putValue(&want, col, r)
				}
				if got[r] != want {
					t.Fatalf("row %d: lanes %v, want %v", r, got[r], want)
				}
			}
		})
	}
}
