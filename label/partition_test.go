package label

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/noise"
)

func TestPartitionerIsAFunctionOfTheUnit(t *testing.T) {
	tests := []struct {
		name  string
		k     int
		units int
	}{
		{"250 teachers", 250, 32561},
		{"3 teachers", 3, 1000},
		{"1 teacher", 1, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPartitioner(tc.k, noise.NewSeededSource(7, streamPartition))
			sizes := make([]int, tc.k)
			first := make([]int, tc.units)
			for u := 0; u < tc.units; u++ {
				id := []byte(fmt.Sprintf("unit-%d", u))
				first[u] = p.teacher(id)
				if first[u] < 0 || first[u] >= tc.k {
					t.Fatalf("teacher %d out of [0, %d)", first[u], tc.k)
				}
				sizes[first[u]]++
			}
			// The same unit always lands with the same teacher, whatever
			// else was asked in between: removing a unit moves no other.
			for u := tc.units - 1; u >= 0; u-- {
				if got := p.teacher([]byte(fmt.Sprintf("unit-%d", u))); got != first[u] {
					t.Fatalf("unit %d: teacher %d, then %d", u, first[u], got)
				}
			}
			// Balanced within a few standard deviations of a multinomial.
			mean := float64(tc.units) / float64(tc.k)
			for j, s := range sizes {
				if d := float64(s) - mean; d*d > 36*mean {
					t.Errorf("teacher %d has %d units, expected about %.0f", j, s, mean)
				}
			}
		})
	}
}

func TestPartitionerKeyDependsOnTheSeed(t *testing.T) {
	a := newPartitioner(250, noise.NewSeededSource(1, streamPartition))
	b := newPartitioner(250, noise.NewSeededSource(2, streamPartition))
	same := 0
	for u := 0; u < 1000; u++ {
		id := []byte(fmt.Sprintf("%d", u))
		if a.teacher(id) == b.teacher(id) {
			same++
		}
	}
	if same > 20 { // about 4 expected
		t.Errorf("%d of 1000 units share a teacher under two seeds", same)
	}
}

// TestRowIdentitiesMatchesRowIdentity: the column-at-a-time identities of
// a block of rows are byte for byte the row-at-a-time ones (a row's teacher
// must not depend on the path), on Adult (strings, integers, nulls), on
// every fixed-width type the block path handles, with nulls, and on slices
// with offsets.
func TestRowIdentitiesMatchesRowIdentity(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, adult := readParquet(t, "adult_train.parquet", mem)
	defer releaseAll(adult)

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range 1000 {
		valid := i%7 != 3
		b.Field(0).(*array.Float64Builder).AppendValues([]float64{float64(i) / 3}, []bool{valid})
		b.Field(1).(*array.Float32Builder).AppendValues([]float32{float32(i) * 1.5}, []bool{i%5 != 1})
		b.Field(2).(*array.Int64Builder).AppendValues([]int64{int64(i) << 33}, []bool{valid})
		b.Field(3).(*array.Int32Builder).AppendValues([]int32{int32(-i)}, []bool{i%11 != 0})
		b.Field(4).(*array.Uint8Builder).AppendValues([]uint8{uint8(i)}, []bool{i%13 != 2})
	}
	typed := b.NewRecord()
	defer typed.Release()
	sl := typed.NewSlice(37, 900)
	defer sl.Release()

	tests := []struct {
		name string
		rec  arrow.Record
	}{
		{"adult", adult[0]},
		{"fixed-width types with nulls", typed},
		{"slice", sl},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cols := tc.rec.Columns()
			n := int(tc.rec.NumRows())
			for _, blk := range []int{1, 7, 256} {
				rows := make([][]byte, blk)
				for lo := 0; lo < n; lo += blk {
					part := rows[:min(blk, n-lo)]
					for k := range part {
						part[k] = append(part[k][:0], 0)
					}
					rowIdentities(part, cols, lo)
					for k, got := range part {
						want := rowIdentity([]byte{0}, cols, lo+k)
						if !bytes.Equal(got, want) {
							t.Fatalf("block %d, row %d: identity %x, want %x", blk, lo+k, got, want)
						}
					}
				}
			}
		})
	}
}
