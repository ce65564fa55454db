package learners

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestEncodeListMatchesElements: a list column encoded a row at a time
// (encodeList) gives exactly the bits encodeElem gives an element at a
// time, into row-major and column-major tiles, with NaN, ±Inf, short or
// empty lists, null lists and null elements among the encoded rows.
func TestEncodeListMatchesElements(t *testing.T) {
	const width = 37
	f32, f64 := arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64
	tests := []struct {
		name      string
		typ       arrow.DataType
		ragged    bool // some rows short, one empty
		nullElem  bool // a null element in the encoded batch
		fastTaken bool
		nullLists bool // null lists in the encoded batch
	}{
		{"fixed_size_list float32", arrow.FixedSizeListOf(width, f32), false, false, true, false},
		{"fixed_size_list float64", arrow.FixedSizeListOf(width, f64), false, false, true, false},
		{"list float32, short and empty lists", arrow.ListOf(f32), true, false, true, false},
		{"large_list float64", arrow.LargeListOf(f64), false, false, true, false},
		{"fixed_size_list float32, a null element", arrow.FixedSizeListOf(width, f32), false, true, true, false},
		{"list float32, null lists", arrow.ListOf(f32), true, true, true, true},
		{"fixed_size_list float64, null lists", arrow.FixedSizeListOf(width, f64), false, false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(3, 4))
			build := func(rows int, specials bool) arrow.Record {
				return oneColumn(mem, tc.typ, func(b array.Builder) {
					lb := b.(array.ListLikeBuilder)
					for r := 0; r < rows; r++ {
						if tc.nullLists && specials && r%9 == 4 {
							lb.AppendNull()
							continue
						}
						lb.Append(true)
						n := width
						if tc.ragged && specials && r%4 == 1 {
							n = r % width // short, and empty at r = 37·k
						}
						for j := 0; j < n; j++ {
							v := rng.NormFloat64()*3 + float64(j)
							if specials && rng.IntN(50) == 0 {
								v = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
							}
							switch vb := lb.ValueBuilder().(type) {
							case *array.Float32Builder:
								if tc.nullElem && specials && r == 5 && j == 3 {
									vb.AppendNull()
									continue
								}
								vb.Append(float32(v))
							case *array.Float64Builder:
								vb.Append(v)
							}
						}
					}
				})
			}
			fit := build(200, false)
			defer fit.Release()
			enc, err := FitEncoder(fit.Schema(), []string{"c"}, []arrow.Record{fit}, EncoderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if enc.Dim() != width || listRun(enc.Columns) != width {
				t.Fatalf("dim %d, list run %d: want %d each (no missing indicators)", enc.Dim(), listRun(enc.Columns), width)
			}
			rec := build(300, true)
			defer rec.Release()
			p, err := enc.Prepare(rec)
			if err != nil {
				t.Fatal(err)
			}
			const lo, rows = 7, 290
			ld := rows + 5
			for _, layout := range []struct {
				name string
				t    func([]float32) tile
				size int
			}{
				{"row-major", func(d []float32) tile { return tile{d: d, rows: rows, rs: width, cs: 1} }, rows * width},
				{"column-major", func(d []float32) tile { return tile{d: d, rows: rows, rs: 1, cs: ld} }, ld * width},
			} {
				got, want := make([]float32, layout.size), make([]float32, layout.size)
				if ok := encodeList(p.cols[0], lo, enc.Columns, p.lists[0], layout.t(got)); ok != tc.fastTaken {
					t.Fatalf("%s: encodeList took the column: %v, want %v", layout.name, ok, tc.fastTaken)
				}
				for i := range enc.Columns {
					encodeElem(p.cols[0], lo, &enc.Columns[i], layout.t(want))
				}
				if !tc.fastTaken {
					clear(got)
					p.encode(lo, layout.t(got)) // through the fallback
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: value %d is %g, want %g", layout.name, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestFitListMatchesElements: fitting a list column a row at a time
// (addList) gives exactly the statistics addElem gives an element at a
// time, with nulls, NaN, ±Inf, null lists and short lists in the sample,
// also when addList splits the elements across three goroutines.
func TestFitListMatchesElements(t *testing.T) {
	defer func(old int) { parallelFitValues = old }(parallelFitValues)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	for _, tc := range []struct {
		typ      arrow.DataType
		parallel bool
	}{
		{arrow.FixedSizeListOf(9, arrow.PrimitiveTypes.Float32), false},
		{arrow.ListOf(arrow.PrimitiveTypes.Float64), false},
		{arrow.FixedSizeListOf(9, arrow.PrimitiveTypes.Float32), true},
		{arrow.ListOf(arrow.PrimitiveTypes.Float64), true},
	} {
		typ := tc.typ
		parallelFitValues = 1 << 30
		if tc.parallel {
			parallelFitValues = 1
		}
		t.Run(fmt.Sprintf("%s parallel=%v", typ, tc.parallel), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(5, 6))
			rec := oneColumn(mem, typ, func(b array.Builder) {
				lb := b.(array.ListLikeBuilder)
				for r := 0; r < 500; r++ {
					if r%31 == 3 {
						lb.AppendNull()
						continue
					}
					lb.Append(true)
					n := 9
					if typ.ID() == arrow.LIST && r%7 == 2 {
						n = r % 9
					}
					for j := 0; j < n; j++ {
						v := rng.NormFloat64()*5 + float64(j)
						if rng.IntN(40) == 0 {
							v = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[rng.IntN(3)]
						}
						switch vb := lb.ValueBuilder().(type) {
						case *array.Float32Builder:
							if r%23 == 5 && j == 4 {
								vb.AppendNull()
								continue
							}
							vb.Append(float32(v))
						case *array.Float64Builder:
							vb.Append(v)
						}
					}
				}
			})
			defer rec.Release()
			const width = 9
			got, want := make([]fitStats, width), make([]fitStats, width)
			for i := range got {
				got[i] = fitStats{min: math.Inf(1), max: math.Inf(-1)}
				want[i] = got[i]
			}
			if !addList(got, rec.Column(0), 450) {
				t.Fatal("addList refused a float list")
			}
			for j := range want {
				want[j].addElem(rec.Column(0), j, 450)
			}
			for j := range got {
				g, w := got[j], want[j]
				if g.n != w.n || g.missing != w.missing || math.Float64bits(g.mean) != math.Float64bits(w.mean) ||
					math.Float64bits(g.m2) != math.Float64bits(w.m2) || g.min != w.min || g.max != w.max {
					t.Fatalf("element %d: %+v, want %+v", j, g, w)
				}
			}
		})
	}
}

// TestScaledMatchesDivision: scaled gives the bits of float32((v−mean)/std)
// for random values and for values whose quotient lies next to a float32
// rounding boundary (the midpoint between two float32s, where the product
// and the quotient could round apart), at normal, subnormal and huge
// magnitudes.
func TestScaledMatchesDivision(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	check := func(v, mean, std float64) {
		t.Helper()
		if got, want := scaled(v, mean, std, 1/std), float32((v-mean)/std); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("scaled(%v, %v, %v) = %v, want %v", v, mean, std, got, want)
		}
	}
	n := 2_000_000
	if testing.Short() {
		n = 200_000
	}
	for i := 0; i < n; i++ {
		mean := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(8)-4))
		std := math.Abs(rng.NormFloat64())*math.Pow(10, float64(rng.IntN(12)-6)) + 1e-300
		switch i % 3 {
		case 0: // anything
			check(rng.NormFloat64()*std*math.Pow(2, float64(rng.IntN(300)-150))+mean, mean, std)
		default: // a quotient within a few float64 units of a float32 midpoint
			f := float32(rng.NormFloat64() * math.Pow(2, float64(rng.IntN(280)-140)))
			mid := (float64(f) + float64(math.Nextafter32(f, float32(math.Inf(1))))) / 2
			v := mid*std + mean
			for k := -4; k <= 4; k++ {
				check(v, mean, std)
				v = math.Nextafter(v, math.Inf(k))
			}
		}
	}
}
