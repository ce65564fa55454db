package label

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// specialFloats are values whose JSON text takes the exponent form, sits
// at its cut-offs, or is otherwise easy to get wrong.
var specialFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.999999e-7, 1e-7, -1e-7, 1e20, 1e21, -1e21, 1e22,
	123456789, 1.5e-45, math.SmallestNonzeroFloat64, math.MaxFloat32, -math.MaxFloat32, math.MaxFloat64, 3.4028235e38, 16777217}

// listColumn builds a list column of type dt from rows (nil: a null
// list); nullElem makes element j of every row a null where set.
func listColumn(t *testing.T, mem memory.Allocator, dt arrow.DataType, rows [][]float64, nullElem int) arrow.Array {
	t.Helper()
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	var vb array.Builder
	switch lb := b.(type) {
	case *array.FixedSizeListBuilder:
		vb = lb.ValueBuilder()
	case *array.ListBuilder:
		vb = lb.ValueBuilder()
	}
	for _, r := range rows {
		if r == nil {
			b.AppendNull()
			continue
		}
		switch lb := b.(type) {
		case *array.FixedSizeListBuilder:
			lb.Append(true)
		case *array.ListBuilder:
			lb.Append(true)
		}
		for j, v := range r {
			switch {
			case j == nullElem:
				vb.AppendNull()
			case vb.Type().ID() == arrow.FLOAT32:
				f := float32(v)
				if math.IsInf(float64(f), 0) && !math.IsInf(v, 0) {
					f = math.MaxFloat32 // out of float32's range
				}
				vb.(*array.Float32Builder).Append(f)
			default:
				vb.(*array.Float64Builder).Append(v)
			}
		}
	}
	return b.NewArray()
}

func TestFloatListIdentities(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(7, 7))
	const width = 6
	rows := make([][]float64, 300)
	for i := range rows {
		rows[i] = make([]float64, width)
		for j := range rows[i] {
			switch rng.IntN(4) {
			case 0:
				rows[i][j] = specialFloats[rng.IntN(len(specialFloats))]
			case 1:
				rows[i][j] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(60)-30))
			default:
				rows[i][j] = rng.NormFloat64()
			}
		}
	}
	withNulls := append([][]float64{nil}, rows...)
	withNulls[40] = nil
	ragged := append([][]float64{{}}, rows...)
	for i := range ragged {
		if i%5 == 1 {
			ragged[i] = ragged[i][:i%width]
		}
	}
	nan := append([][]float64{}, rows...)
	nan[3] = []float64{1, math.NaN(), 2, 3, 4, 5}
	inf := append([][]float64{}, rows...)
	inf[9] = []float64{1, math.Inf(-1), 2, 3, 4, 5}
	f32, f64 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64

	tests := []struct {
		name     string
		dt       arrow.DataType
		rows     [][]float64
		nullElem int
		fast     bool // appendFloatLists takes every block
	}{
		{"fixed-size float32", arrow.FixedSizeListOf(width, f32), rows, -1, true},
		{"fixed-size float64", arrow.FixedSizeListOf(width, f64), rows, -1, true},
		{"fixed-size float32, null lists", arrow.FixedSizeListOf(width, f32), withNulls, -1, true},
		{"list float32, empty and short lists", arrow.ListOf(f32), ragged, -1, true},
		{"list float64, null lists", arrow.ListOf(f64), withNulls, -1, true},
		{"null element", arrow.FixedSizeListOf(width, f32), rows, 2, true},
		{"NaN", arrow.FixedSizeListOf(width, f32), nan, -1, true},
		{"-Inf", arrow.ListOf(f64), inf, -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			col := listColumn(t, mem, tc.dt, tc.rows, tc.nullElem)
			defer col.Release()
			n := col.Len()
			for _, blk := range []int{1, 7, 256} {
				for lo := 0; lo < n; lo += blk {
					part := make([][]byte, min(blk, n-lo))
					for k := range part {
						part[k] = []byte{0}
					}
					ok := appendFloatLists(part, col, lo)
					if !ok {
						if tc.fast {
							t.Fatalf("block %d at row %d: fast path refused", blk, lo)
						}
						for k := range part {
							if len(part[k]) != 1 {
								t.Fatalf("block %d, row %d: refused after appending", blk, lo+k)
							}
						}
						continue
					}
					for k, got := range part {
						want := rowIdentity([]byte{0}, []arrow.Array{col}, lo+k)
						if !bytes.Equal(got, want) {
							t.Fatalf("block %d, row %d: identity %q, want %q", blk, lo+k, got, want)
						}
					}
				}
			}
		})
	}
}

// TestFloatListIdentityIsTheRowsOwn: a row's partition identity depends on
// that row alone. An embedding row is identified by its elements' bits
// (tag 0x02), a row with a null element by its text (tag 0x01), and a
// neighbouring row with a null element changes no other row's identity.
func TestFloatListIdentityIsTheRowsOwn(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f32 := arrow.PrimitiveTypes.Float32
	plain := listColumn(t, mem, arrow.FixedSizeListOf(3, f32), [][]float64{{1, 2, 3}, {4, 5, 6}, {0.5, -1, 2}}, -1)
	defer plain.Release()
	b := array.NewFixedSizeListBuilder(mem, 3, f32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	b.Append(true)
	vb.AppendValues([]float32{1, 2, 3}, nil)
	b.Append(true)
	vb.Append(4)
	vb.AppendNull() // this row's own text form, and only this row's
	vb.Append(6)
	b.Append(true)
	vb.AppendValues([]float32{0.5, -1, 2}, nil)
	mixed := b.NewArray()
	defer mixed.Release()

	ids := func(c arrow.Array) [][]byte {
		rows := [][]byte{{0}, {0}, {0}}
		if !appendFloatLists(rows, c, 0) {
			t.Fatal("fast path refused a float32 list")
		}
		return rows
	}
	a, m := ids(plain), ids(mixed)
	want := []byte{0, 0x02, 12, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40, 0, 0, 0x40, 0x40}
	if !bytes.Equal(a[0], want) {
		t.Errorf("row [1 2 3]: identity % x, want % x", a[0], want)
	}
	if !bytes.Equal(a[0], m[0]) || !bytes.Equal(a[2], m[2]) {
		t.Error("a null element in row 1 changed the identity of rows 0 or 2")
	}
	if m[1][1] != 0x01 || !bytes.Contains(m[1], []byte("null")) {
		t.Errorf("row with a null element: identity %q, want its text form", m[1])
	}
}
