package listtext

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestAppendMatchesValueStr: Append gives exactly Arrow's ValueStr for
// values at the JSON exponent cut-offs, subnormals, ±0, extremes and
// ordinary ones, in fixed-size lists, lists and large lists of float32 and
// float64 (empty lists too) and with null elements, refuses null rows,
// and writes NaN and ±Inf (where ValueStr panics) as NaN, +Inf and -Inf.
func TestAppendMatchesValueStr(t *testing.T) {
	specials := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.999999e-7, 1e-7, -1e-7, 1e20, 1e21, -1e21, 1e22,
		123456789, 1.5e-45, 1e-40, math.SmallestNonzeroFloat64, math.MaxFloat32, -math.MaxFloat32, 1e300, 16777217, 0.3}
	f32, f64 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64
	tests := []struct {
		name string
		typ  arrow.DataType
	}{
		{"fixed_size_list float32", arrow.FixedSizeListOf(4, f32)},
		{"fixed_size_list float64", arrow.FixedSizeListOf(4, f64)},
		{"list float32", arrow.ListOf(f32)},
		{"large_list float64", arrow.LargeListOf(f64)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(1, 2))
			b := array.NewBuilder(mem, tc.typ)
			defer b.Release()
			lb := b.(array.ListLikeBuilder)
			const rows = 400
			refuse := map[int]bool{}
			special := map[int]string{} // the first element's text, where ValueStr panics
			for r := 0; r < rows; r++ {
				if r%50 == 7 {
					lb.AppendNull()
					refuse[r] = true
					continue
				}
				lb.Append(true)
				n := 4
				if _, fixed := tc.typ.(*arrow.FixedSizeListType); !fixed {
					n = r % 5 // empty lists too
				}
				for j := 0; j < n; j++ {
					v := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(50)-25))
					if rng.IntN(3) == 0 {
						v = specials[rng.IntN(len(specials))]
					}
					switch {
					case r%50 == 11 && j == 0:
						v = math.NaN()
						special[r] = "[NaN"
					case r%50 == 13 && j == 0:
						v = math.Inf(-1)
						special[r] = "[-Inf"
					}
					switch vb := lb.ValueBuilder().(type) {
					case *array.Float32Builder:
						if r%50 == 17 && j == 0 {
							vb.AppendNull() // JSON null
							continue
						}
						f := float32(v)
						if math.IsInf(float64(f), 0) && !math.IsInf(v, 0) {
							f = math.MaxFloat32
						}
						vb.Append(f)
					case *array.Float64Builder:
						vb.Append(v)
					}
				}
			}
			arr := b.NewArray()
			defer arr.Release()
			a := arr.(array.ListLike)
			for r := 0; r < rows; r++ {
				got, ok := Append([]byte("x"), a, r)
				if ok == refuse[r] {
					t.Fatalf("row %d: ok %v, want %v", r, ok, !refuse[r])
				}
				if !ok {
					if string(got) != "x" {
						t.Fatalf("row %d: refused after appending %q", r, got)
					}
					continue
				}
				if p, ok := special[r]; ok {
					if !strings.HasPrefix(string(got), "x"+p) {
						t.Fatalf("row %d: %q, want it to start with %q", r, got, p)
					}
					continue
				}
				if want := "x" + arr.ValueStr(r); string(got) != want {
					t.Fatalf("row %d: %q, want %q", r, got, want)
				}
			}
		})
	}
}
