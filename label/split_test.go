package label

import (
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/noise"
)

// TestSplitUnitsStable: removing one row leaves every other row in its part
// (what the sensitivity of pate replicate --private-report rests on), and
// the parts are near even.
func TestSplitUnitsStable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	build := func(skip int) arrow.Record {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for i := 0; i < 2000; i++ {
			if i == skip {
				continue
			}
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if i%7 == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append("v")
			}
		}
		return b.NewRecord()
	}
	for _, k := range []int{2, 3, 5} {
		all := build(-1)
		parts := SplitUnits(all, k, noise.NewSeededSource(3, 9))
		all.Release()
		sizes := make([]int, k)
		for _, p := range parts {
			sizes[p]++
		}
		for p, n := range sizes {
			if n < 2000/k-150 || n > 2000/k+150 {
				t.Errorf("k = %d: part %d has %d rows", k, p, n)
			}
		}
		for _, skip := range []int{0, 917, 1999} {
			less := build(skip)
			got := SplitUnits(less, k, noise.NewSeededSource(3, 9))
			less.Release()
			for i, j := 0, 0; i < 2000; i++ {
				if i == skip {
					continue
				}
				if got[j] != parts[i] {
					t.Fatalf("k = %d: removing row %d moved row %d from part %d to %d", k, skip, i, parts[i], got[j])
				}
				j++
			}
		}
	}
}
