package learners

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/pate-tool/pate/learners/kernel"
)

// clustered returns n rows of dim features around centres blobs: a shape
// of low intrinsic dimension, which the inverted file prunes.
func clustered(r *rand.Rand, n, dim, centres int, spread float64) *Matrix {
	c := make([]float64, centres*dim)
	for i := range c {
		c[i] = 10 * r.NormFloat64()
	}
	x := NewMatrix(n, dim)
	for i := 0; i < n; i++ {
		b := r.IntN(centres)
		for j := 0; j < dim; j++ {
			x.Data[i*dim+j] = float32(c[b*dim+j] + spread*r.NormFloat64())
		}
	}
	return x
}

// TestIndexedSearchMatchesScan: the inverted file gives the scan's
// neighbours and distances exactly, ties (by index) included, on shapes it
// prunes and on shapes it does not, and for queries it leaves to the scan.
func TestIndexedSearchMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	grid := func(n, dim, levels int) *Matrix {
		x := NewMatrix(n, dim)
		for i := range x.Data {
			x.Data[i] = float32(r.IntN(levels))
		}
		return x
	}
	gauss := func(n, dim int) *Matrix {
		x := NewMatrix(n, dim)
		for i := range x.Data {
			x.Data[i] = float32(r.NormFloat64())
		}
		return x
	}
	split := func(x *Matrix, n int) (*Matrix, *Matrix) { return subMatrix(x, 0, n), subMatrix(x, n, x.Rows) }
	c16, q16 := split(clustered(r, 6500, 16, 40, 1), 6000)
	c8, q8 := split(clustered(r, 3400, 8, 20, 0.5), 3000)
	// Queries that repeat 40 rows (Search looks each distinct row up once).
	rep := NewMatrix(600, 16)
	for i := 0; i < rep.Rows; i++ {
		copy(rep.Row(i), q16.Row(r.IntN(40)))
	}
	tests := []struct {
		name        string
		base, query *Matrix
		k           int
	}{
		{"repeated queries", c16, rep, 10},
		{"clusters 16 features", c16, q16, 10},
		{"clusters k 1", c8, q8, 1},
		{"queries off the clusters", c16, clustered(r, 300, 16, 40, 1.5), 10},
		{"grid ties", grid(4000, 5, 4), grid(300, 5, 4), 10},
		{"duplicates", grid(2500, 3, 2), grid(100, 3, 3), 7},
		{"gaussian 64 features", gauss(2100, 64), gauss(200, 64), 10},
		{"repeated rows 16 features", repeatRows(r, grid(300, 16, 16), 3000), repeatRows(r, grid(40, 16, 16), 300), 10},
		{"odd width", clustered(r, 3000, 7, 20, 0.8), clustered(r, 200, 7, 20, 0.8), 10},
		{"few rows, many queries, k 1", clustered(r, 700, 16, 40, 1), clustered(r, 3000, 16, 40, 1), 1},
		{"k near rows", clustered(r, 2048, 4, 5, 1), clustered(r, 50, 4, 5, 1), 2000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scan := scanIndex(tc.base)
			ix := scanIndex(tc.base)
			if ix.inv = buildIVF(tc.base, ix.norms, ivfMinRowsMany); ix.inv == nil {
				t.Fatal("no index built")
			}
			if sqDistsAVX != (ix.inv.blocks != nil) {
				t.Fatal("the rows' blocks are kept without AVX, or not with it")
			}
			q := tc.query
			// A query the index leaves to the scan: not finite.
			q.Data[3] = float32(math.NaN())
			n := q.Rows * tc.k
			wantI, wantD := make([]int32, n), make([]float32, n)
			gotI, gotD := make([]int32, n), make([]float32, n)
			if err := scan.Search(q, tc.k, wantI, wantD); err != nil {
				t.Fatal(err)
			}
			// The AVX kernel where the CPU has it, then the portable one.
			blocks, centres := ix.inv.blocks, ix.inv.centreBlocks
			for _, kernel := range []string{"avx", "portable"} {
				if kernel == "avx" && blocks == nil {
					continue
				}
				ix.inv.blocks, ix.inv.centreBlocks = blocks, centres
				if kernel == "portable" {
					ix.inv.blocks, ix.inv.centreBlocks = nil, nil
				}
				if err := ix.Search(q, tc.k, gotI, gotD); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < q.Rows; i++ {
					a, b := i*tc.k, (i+1)*tc.k
					if !slices.Equal(gotI[a:b], wantI[a:b]) || !slices.Equal(gotD[a:b], wantD[a:b]) {
						t.Fatalf("%s, query %d: indexed %v %v, scan %v %v", kernel, i, gotI[a:b], gotD[a:b], wantI[a:b], wantD[a:b])
					}
				}
			}
			if i := 5; !slices.Equal(gotI[i*tc.k:(i+1)*tc.k], naiveNearest(tc.base, q, i, tc.k)) && tc.name == "grid ties" {
				t.Fatalf("query %d: not the float64 reference's neighbours", i)
			}
		})
	}
}

// repeatRows returns n rows drawn from the rows of x, each several times
// (letter's public file, repeated: many exact duplicates).
func repeatRows(r *rand.Rand, x *Matrix, n int) *Matrix {
	out := NewMatrix(n, x.Cols)
	for i := 0; i < n; i++ {
		copy(out.Row(i), x.Row(r.IntN(x.Rows)))
	}
	return out
}

// TestSqDists: the block kernels (portable, and AVX where the CPU has
// it) give the scan's distances bit for bit,
// for every width (the partial sums modulo 4 and the tail), odd and even
// row counts, duplicates of the query and rounding near zero.
func TestSqDists(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 4))
	for _, tc := range []struct {
		name string
		dim  int
		ints bool // small integers: many exact duplicates of the query
	}{
		{"width 1", 1, false}, {"width 3", 3, false}, {"width 4", 4, true}, {"width 5", 5, false},
		{"width 16", 16, false}, {"width 16 integers", 16, true}, {"width 17", 17, false}, {"width 64", 64, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			draw := func() float32 {
				if tc.ints {
					return float32(r.IntN(3))
				}
				return float32(r.NormFloat64() * 100)
			}
			for n := 0; n <= 9; n++ {
				q := make([]float32, tc.dim)
				for j := range q {
					q[j] = draw()
				}
				rows := make([]float32, n*tc.dim)
				for j := range rows {
					rows[j] = draw()
				}
				if n > 1 {
					copy(rows[tc.dim:2*tc.dim], q) // an exact duplicate
					for j := range q {
						rows[j] = q[j] * (1 + 1e-7) // a near one
					}
				}
				norms := make([]float32, n)
				for i := range norms {
					x := rows[i*tc.dim : (i+1)*tc.dim]
					norms[i] = kernel.Dot(x, x)
				}
				qn := kernel.Dot(q, q)
				got := make([]float32, n)
				sqDists(q, qn, rows, norms, got)
				// The AVX kernel, a block of 8 rows at a time.
				var avx []float32
				if sqDistsAVX {
					blocks, padded := featureMajor(rows, norms, tc.dim)
					avx = make([]float32, len(padded))
					for b := 0; b < len(padded)/8; b++ {
						sqDists8AVX(&q[0], tc.dim, qn, &blocks[b*8*tc.dim], &padded[b*8], &avx[b*8], 0)
					}
				}
				for i := range got {
					want := qn + norms[i] - 2*kernel.Dot(q, rows[i*tc.dim:(i+1)*tc.dim])
					if want < 0 {
						want = 0
					}
					if math.Float32bits(got[i]) != math.Float32bits(want) {
						t.Fatalf("%d rows, row %d: %v, the scan's %v", n, i, got[i], want)
					}
					if avx != nil && math.Float32bits(avx[i]) != math.Float32bits(want) {
						t.Fatalf("%d rows, row %d: AVX %v, the scan's %v", n, i, avx[i], want)
					}
				}
			}
		})
	}
}

// TestIndexPilot: the index is kept where it prunes (clusters) and dropped
// where it would compute most distances anyway (Gaussian rows of 64
// features) or where the rows are too few or not finite.
func TestIndexPilot(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	gauss := NewMatrix(4000, 64)
	for i := range gauss.Data {
		gauss.Data[i] = float32(r.NormFloat64())
	}
	inf := clustered(r, 3000, 4, 8, 1)
	inf.Data[17] = float32(math.Inf(1))
	tests := []struct {
		name string
		base *Matrix
		want bool
	}{
		{"clusters", clustered(r, 5000, 16, 30, 1), true},
		{"few rows", clustered(r, ivfMinRows-1, 4, 8, 1), false},
		{"gaussian 64", gauss, false},
		{"not finite", inf, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NewNeighborIndex(tc.base).Indexed(); got != tc.want {
				t.Errorf("indexed %v, want %v", got, tc.want)
			}
		})
	}
	// Fewer rows are indexed for many queries, and only for many.
	few := clustered(r, 700, 16, 30, 1)
	for _, tc := range []struct {
		name    string
		queries int
		want    bool
	}{
		{"few rows, many queries", ivfManyQueries * few.Rows, true},
		{"few rows, fewer queries", ivfManyQueries*few.Rows - 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := neighborIndexFor(few, tc.queries).Indexed(); got != tc.want {
				t.Errorf("indexed %v, want %v", got, tc.want)
			}
		})
	}
}

// BenchmarkNeighborSearch: the smoothing's search (the 10 nearest of
// 10,000 public rows) for rows of a real set's shape (letter's 16 features
// in 26 classes, as blobs with their spread) and of 64, scanned and through
// the inverted file, side by side (the ratio is the figure; a shape the
// pilot refuses is scanned whatever the index would do).
func BenchmarkNeighborSearch(b *testing.B) {
	const base, queries, k = 10000, 4096, 10
	for _, s := range []struct {
		name         string
		dim, classes int
		spread       float64
	}{{"16x26", 16, 26, 0.6}, {"64x2", 64, 2, 1}} {
		r := rand.New(rand.NewPCG(7, uint64(s.dim)))
		all := clustered(r, base+queries, s.dim, s.classes*8, s.spread)
		x, q := subMatrix(all, 0, base), subMatrix(all, base, base+queries)
		scan := scanIndex(x)
		scan.keepBlocks() // as NewNeighborIndex keeps them for a scan
		ix := scanIndex(x)
		ix.inv = buildIVF(x, ix.norms, ivfMinRows)
		idx, dist := make([]int32, queries*k), make([]float32, queries*k)
		for _, c := range []struct {
			name string
			ix   *NeighborIndex
		}{{"scan", scan}, {"indexed", ix}} {
			b.Run(s.name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					if err := c.ix.Search(q, k, idx, dist); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N*queries), "µs/row")
			})
		}
	}
}

// TestFirstAtLeast: the inverted file's binary searches are
// sort.SearchFloat64s and its strict twin, ties, ends and infinite bounds
// included.
func TestFirstAtLeast(t *testing.T) {
	a := []float64{0, 1, 1, 1, 2.5, 3, 3, 7}
	for _, tc := range []struct {
		name string
		a    []float64
		v    float64
	}{
		{"empty", nil, 1}, {"below all", a, -1}, {"minus infinity", a, math.Inf(-1)},
		{"on a tie", a, 1}, {"between", a, 2}, {"on the last", a, 7}, {"above all", a, 8},
		{"plus infinity", a, math.Inf(1)}, {"one", []float64{4}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, want := firstAtLeast(tc.a, tc.v), sort.SearchFloat64s(tc.a, tc.v); got != want {
				t.Errorf("%d, sort.SearchFloat64s %d", got, want)
			}
			above := sort.Search(len(tc.a), func(i int) bool { return tc.a[i] > tc.v })
			if got := firstAbove(tc.a, tc.v); got != above {
				t.Errorf("first above: %d, sort.Search %d", got, above)
			}
		})
	}
}

// TestScanKernels: the scan gives the same neighbours and distances with
// the AVX kernel (where the CPU has it) as with the portable one: widths
// with and without a tail, row counts that do not fill a block of 8 or the
// scan's tiles, duplicates and ties, and rows and queries that are not
// finite (the farthest neighbours).
func TestScanKernels(t *testing.T) {
	if !sqDistsAVX {
		t.Skip("no AVX: the scan has one kernel")
	}
	r := rand.New(rand.NewPCG(2, 6))
	gauss := func(n, dim int) *Matrix {
		x := NewMatrix(n, dim)
		for i := range x.Data {
			x.Data[i] = float32(r.NormFloat64())
		}
		return x
	}
	grid := func(n, dim int) *Matrix {
		x := NewMatrix(n, dim)
		for i := range x.Data {
			x.Data[i] = float32(r.IntN(3))
		}
		return x
	}
	withNaN := func(x *Matrix) *Matrix {
		x.Data[5] = float32(math.NaN())
		x.Data[len(x.Data)-1] = float32(math.Inf(1))
		return x
	}
	tests := []struct {
		name        string
		base, query *Matrix
		k           int
	}{
		{"one row", gauss(1, 4), gauss(10, 4), 1},
		{"five rows, width 3", gauss(5, 3), gauss(40, 3), 5},
		{"300 rows, width 16", gauss(300, 16), gauss(100, 16), 10},
		{"width 17", gauss(517, 17), gauss(70, 17), 7},
		{"width 64", gauss(700, 64), gauss(90, 64), 10},
		{"duplicates", grid(600, 5), grid(80, 5), 10},
		{"not finite", withNaN(gauss(260, 8)), withNaN(gauss(50, 8)), 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fast := NewNeighborIndex(tc.base)
			if fast.Indexed() || fast.blocks == nil {
				t.Fatal("not the AVX scan")
			}
			plain := scanIndex(tc.base)
			n := tc.query.Rows * tc.k
			gi, gd, wi, wd := make([]int32, n), make([]float32, n), make([]int32, n), make([]float32, n)
			if err := fast.Search(tc.query, tc.k, gi, gd); err != nil {
				t.Fatal(err)
			}
			if err := plain.Search(tc.query, tc.k, wi, wd); err != nil {
				t.Fatal(err)
			}
			for i := range gi {
				if gi[i] != wi[i] || math.Float32bits(gd[i]) != math.Float32bits(wd[i]) {
					t.Fatalf("neighbour %d of query %d: %d at %v, portable %d at %v", i%tc.k, i/tc.k, gi[i], gd[i], wi[i], wd[i])
				}
			}
		})
	}
}
