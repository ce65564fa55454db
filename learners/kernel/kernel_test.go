package kernel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// genGrid returns values that are multiples of 1/8 in [-2, 2]: every float32
// dot product of such vectors (up to a few thousand features) is exact, so the
// kernel must agree with the float64 reference bit for bit, ties included.
func genGrid(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.IntN(33)-16) / 8
	}
	return v
}

func genNormal(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// refResult is the float64 reference outcome: counts holds the votes of the
// teachers whose argmax is clear; ambiguous lists, per row, the teachers whose
// best score is within float32 rounding of another class, each as a bitmask
// of the classes it may vote for.
type refResult struct {
	counts    []int32
	ambiguous [][]int
}

// refVotes is the straightforward float64 reference: argmax per teacher, ties
// → lowest class. When tolerant is false every teacher counts as clear (for
// data whose float32 arithmetic is exact).
func refVotes(k, c, dim int, w, b, x []float32, n int, tolerant bool) refResult {
	return refVotesSeen(k, c, dim, w, b, nil, x, n, tolerant)
}

// refVotesSeen is refVotes for teachers that see only some classes
// (seen[t*c+cl], nil: all): each teacher's argmax over the classes it sees,
// ties → lowest class, the others never scored.
func refVotesSeen(k, c, dim int, w, b []float32, seen []bool, x []float32, n int, tolerant bool) refResult {
	res := refResult{counts: make([]int32, n*c), ambiguous: make([][]int, n)}
	s := make([]float64, c)
	mag := make([]float64, c)
	for i := 0; i < n; i++ {
		xi := x[i*dim : (i+1)*dim]
		for t := 0; t < k; t++ {
			sees := func(cl int) bool { return seen == nil || seen[t*c+cl] }
			first := -1
			for cl := 0; cl < c; cl++ {
				if !sees(cl) {
					continue
				}
				if first < 0 {
					first = cl
				}
				wc := w[(t*c+cl)*dim : (t*c+cl+1)*dim]
				acc := float64(b[t*c+cl])
				m := math.Abs(acc)
				for j := range wc {
					p := float64(wc[j]) * float64(xi[j])
					acc += p
					m += math.Abs(p)
				}
				s[cl], mag[cl] = acc, m
			}
			best := first
			for cl := first + 1; cl < c; cl++ {
				if sees(cl) && s[cl] > s[best] {
					best = cl
				}
			}
			if !tolerant {
				res.counts[i*c+best]++
				continue
			}
			// The kernel compares scores relative to the teacher's first
			// class computed from rounded difference weights; the
			// worst-case error of comparing classes cl and best is
			// (dim+3)·u·(Σ|terms| of cl, best and twice the first class),
			// the bound of recursive summation.
			mask := 0
			for cl := 0; cl < c; cl++ {
				if !sees(cl) {
					continue
				}
				tol := 1.01 * float64(dim+3) * 0x1p-24 * (mag[cl] + mag[best] + 2*mag[first])
				if s[best]-s[cl] <= tol {
					mask |= 1 << cl
				}
			}
			if mask == 1<<best {
				res.counts[i*c+best]++
			} else {
				res.ambiguous[i] = append(res.ambiguous[i], mask)
			}
		}
	}
	return res
}

// checkVotes asserts that got is consistent with the reference: every row sums
// to k, clear teachers' votes are exact, and ambiguous teachers voted for one
// of their candidate classes (checked as a bipartite count bound, which is
// exact when there are no ambiguous teachers).
func checkVotes(t *testing.T, k, c, n int, got []int32, ref refResult) (ambiguousVotes int) {
	t.Helper()
	for i := 0; i < n; i++ {
		row := got[i*c : (i+1)*c]
		var sum int32
		for _, v := range row {
			sum += v
		}
		if sum != int32(k) {
			t.Fatalf("row %d: votes sum to %d, want %d (%v)", i, sum, k, row)
		}
		amb := ref.ambiguous[i]
		ambiguousVotes += len(amb)
		for cl := 0; cl < c; cl++ {
			extra := row[cl] - ref.counts[i*c+cl]
			reach := int32(0)
			for _, m := range amb {
				if m&(1<<cl) != 0 {
					reach++
				}
			}
			if extra < 0 || extra > reach {
				t.Fatalf("row %d class %d: got %d votes, reference %d clear + up to %d ambiguous (row %v)",
					i, cl, row[cl], ref.counts[i*c+cl], reach, row)
			}
		}
	}
	return ambiguousVotes
}

// paths runs f once per kernel path this machine can run (SIMD levels, then
// pure Go).
func paths(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	for _, isa := range supportedISAs() {
		t.Run(isa.String(), func(t *testing.T) {
			old := activeISA
			activeISA = isa
			defer func() { activeISA = old }()
			f(t)
		})
	}
}

func TestVotesMatchesReference(t *testing.T) {
	type tc struct {
		name           string
		k, c, dim, n   int
		grid, tolerant bool
	}
	var cases []tc
	for _, c := range []int{2, 3, 10} {
		for _, dim := range []int{1, 7, 14, 64, 100, 384, 785, 1024} {
			if c == 10 && (dim == 384 || dim == 1024) {
				continue // embedding widths: two classes (int16 path) and three suffice
			}
			for _, k := range []int{1, 5, 33, 250, 251} { // 33: an odd number (3) of 16-teacher groups
				for _, n := range []int{1, 15, 1000} {
					// Keep the float64 reference affordable: shrink the largest
					// shapes (still several 12-row blocks plus a tail), more so
					// under -short and -race.
					budget := 250 * 64 * 10 * 1000
					if testing.Short() || raceEnabled {
						budget = 251 * 64 * 2 * 1000
					}
					if n == 1000 && dim*k*c*n > budget {
						n = 203
						if testing.Short() || raceEnabled {
							n = 37
						}
					}
					for _, grid := range []bool{true, false} {
						kind := "normal"
						if grid {
							kind = "grid"
						}
						cases = append(cases, tc{
							name: fmt.Sprintf("%s/c%d/d%d/k%d/n%d", kind, c, dim, k, n),
							k:    k, c: c, dim: dim, n: n, grid: grid, tolerant: !grid,
						})
					}
				}
			}
		}
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			gen := genNormal
			if tc.grid {
				gen = genGrid
			}
			w := gen(r, tc.k*tc.c*tc.dim)
			b := gen(r, tc.k*tc.c)
			x := gen(r, tc.n*tc.dim)
			l, err := NewLinear(tc.k, tc.c, tc.dim, w, b)
			if err != nil {
				t.Fatal(err)
			}
			ref := refVotes(tc.k, tc.c, tc.dim, w, b, x, tc.n, tc.tolerant)
			xt := columnMajor(x, tc.n, tc.dim, tc.n+3)
			paths(t, func(t *testing.T) {
				layouts := []string{"row-major", "column-major"}
				if activeISA == isaGeneric {
					// The pure-Go path copies tiles row-major first, which
					// TestVotesColumnsMatchesRowMajor covers; skip its slowest case.
					layouts = layouts[:1]
				}
				for _, layout := range layouts {
					got := make([]int32, tc.n*tc.c)
					for j := range got {
						got[j] = -99 // Votes must overwrite
					}
					if layout == "row-major" {
						l.Votes(x, tc.n, got)
					} else {
						l.VotesColumns(xt, tc.n+3, tc.n, got)
					}
					amb := checkVotes(t, tc.k, tc.c, tc.n, got, ref)
					if amb*20 > tc.n*tc.k {
						t.Errorf("%s: %d of %d votes are near ties: test data too weak", layout, amb, tc.n*tc.k)
					}
				}
			})
		})
	}
}

// columnMajor returns the n rows of x (n × dim, row-major) column-major with
// leading dimension ld >= n, NaN in the gap so that a wrong stride shows.
func columnMajor(x []float32, n, dim, ld int) []float32 {
	xt := make([]float32, (dim-1)*ld+n)
	for j := range xt {
		xt[j] = float32(math.NaN())
	}
	for row := 0; row < n; row++ {
		for j := 0; j < dim; j++ {
			xt[j*ld+row] = x[row*dim+j]
		}
	}
	return xt
}

// TestVotesNearLowPrecisionScores gives each teacher a bias that cancels
// its score on one row as computed from the int16 path's low-precision
// copies of the weights and features (16-bit integers at power-of-two
// scales): there the float32 score is just the rounding error of that copy,
// far above float32 rounding, so a kernel that trusted the low-precision
// scores would vote wrong on many of those rows. Every path must match the
// float64 reference.
func TestVotesNearLowPrecisionScores(t *testing.T) {
	tests := []struct{ k, dim, n int }{
		{k: 250, dim: 384, n: 25},
		{k: 40, dim: 512, n: 24},
		{k: 33, dim: 129, n: 13},
		{k: 17, dim: 64, n: 5},
		{k: 20, dim: 1024, n: 7},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprintf("int16/k%d/d%d/n%d", tc.k, tc.dim, tc.n), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 13))
			w := genNormal(r, tc.k*2*tc.dim)
			x := genNormal(r, tc.n*tc.dim)
			b := make([]float32, tc.k*2)
			d := make([]float32, tc.dim)
			bq := int16Bits(tc.dim)
			round := func(v float32, s float64) float64 { return math.RoundToEven(float64(v)*s) / s }
			for tt := 0; tt < tc.k; tt++ {
				xi := x[(tt%tc.n)*tc.dim : (tt%tc.n+1)*tc.dim]
				for j := range d {
					d[j] = w[(tt*2+1)*tc.dim+j] - w[tt*2*tc.dim+j]
				}
				sw, sx := int16Scale(d, bq), int16Scale(xi, bq)
				var s float64
				for j, v := range xi {
					s += round(d[j], sw) * round(v, sx)
				}
				b[tt*2+1] = float32(-s)
			}
			l, err := NewLinear(tc.k, 2, tc.dim, w, b)
			if err != nil {
				t.Fatal(err)
			}
			ref := refVotes(tc.k, 2, tc.dim, w, b, x, tc.n, true)
			xt := columnMajor(x, tc.n, tc.dim, tc.n+1)
			paths(t, func(t *testing.T) {
				got := make([]int32, tc.n*2)
				l.Votes(x, tc.n, got)
				checkVotes(t, tc.k, 2, tc.n, got, ref)
				l.VotesColumns(xt, tc.n+1, tc.n, got)
				checkVotes(t, tc.k, 2, tc.n, got, ref)
			})
		})
	}
}

// int16Scale is the power of two 2^e by which the int16 path scales v
// before rounding: the largest with max|v|·2^e < 2^bq.
func int16Scale(v []float32, bq int) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(float64(x)))
	}
	if m == 0 {
		return 1
	}
	_, k := math.Frexp(m)
	return math.Ldexp(1, bq-k)
}

// TestVotesInt16Extremes puts the int16 path at its limits: every product
// at the largest integer magnitude (the widest sums the bit bound allows,
// which must not overflow), rows and teachers mixing huge and tiny values,
// all-zero rows and teachers, subnormal features, and rows whose largest
// value is outside the range the path rounds (they are rescored). Every
// path must match the float64 reference.
func TestVotesInt16Extremes(t *testing.T) {
	type tc struct {
		name   string
		k, dim int
		w, x   func(r *rand.Rand, t, j int) float32 // weight of teacher t (difference class), feature j of row t
	}
	const n = 14
	one := func(v float32) func(*rand.Rand, int, int) float32 {
		return func(*rand.Rand, int, int) float32 { return v }
	}
	normal := func(r *rand.Rand, _, _ int) float32 { return float32(r.NormFloat64()) }
	tests := []tc{
		// 0.99999994 rounds up to 2^bq at the scale the path picks; at
		// 511 and 127 features dim·4^bq is within 0.2% of 2³¹.
		{name: "largest-magnitude-sums-d511", k: 20, dim: 511, w: one(0.99999994), x: one(-0.99999994)},
		{name: "largest-magnitude-sums-d127", k: 20, dim: 127, w: one(-0.99999994), x: one(-0.99999994)},
		{name: "largest-magnitude-sums-d1024", k: 20, dim: 1024, w: one(0.99999994), x: one(0.99999994)},
		{name: "alternating-signs", k: 20, dim: 385, w: func(_ *rand.Rand, _, j int) float32 { return float32(1 - 2*(j%2)) },
			x: func(_ *rand.Rand, _, j int) float32 { return float32(1 - 2*(j%2)) }},
		{name: "huge-and-tiny", k: 33, dim: 200, w: func(r *rand.Rand, t, j int) float32 {
			if j == t%200 {
				return 1e12
			}
			return float32(r.NormFloat64() * 1e-20)
		}, x: func(r *rand.Rand, t, j int) float32 {
			if j == 7 {
				return 3e-15
			}
			return float32(r.NormFloat64() * 1e-25)
		}},
		{name: "subnormal-features", k: 17, dim: 96, w: normal, x: func(r *rand.Rand, _, _ int) float32 {
			return float32(r.NormFloat64()) * 0x1p-140
		}},
		{name: "rows-beyond-range", k: 17, dim: 96, w: normal, x: func(r *rand.Rand, t, j int) float32 {
			switch {
			case t%3 == 0 && j == 5:
				return 0x1p60
			case t%3 == 1:
				return float32(r.NormFloat64()) * 0x1p-70
			}
			return float32(r.NormFloat64())
		}},
		{name: "zero-rows-and-teachers", k: 31, dim: 128, w: func(r *rand.Rand, t, _ int) float32 {
			if t%2 == 0 {
				return 0
			}
			return float32(r.NormFloat64())
		}, x: func(r *rand.Rand, t, _ int) float32 {
			if t%3 == 0 {
				return 0
			}
			return float32(r.NormFloat64())
		}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 29))
			w := make([]float32, tc.k*2*tc.dim) // class 0 weights zero: the differences are w's class 1
			b := genNormal(r, tc.k*2)
			for tt := 0; tt < tc.k; tt++ {
				for j := 0; j < tc.dim; j++ {
					w[(tt*2+1)*tc.dim+j] = tc.w(r, tt, j)
				}
			}
			x := make([]float32, n*tc.dim)
			for row := 0; row < n; row++ {
				for j := 0; j < tc.dim; j++ {
					x[row*tc.dim+j] = tc.x(r, row, j)
				}
			}
			l, err := NewLinear(tc.k, 2, tc.dim, w, b)
			if err != nil {
				t.Fatal(err)
			}
			if cpuISA >= isaAVX2Int16 && l.packed.i16 == nil {
				t.Fatal("no int16 packing: the case does not reach the int16 path")
			}
			ref := refVotes(tc.k, 2, tc.dim, w, b, x, n, true)
			paths(t, func(t *testing.T) {
				got := make([]int32, n*2)
				l.Votes(x, n, got)
				checkVotes(t, tc.k, 2, n, got, ref)
			})
		})
	}
}

// TestTiesGoToLowestClass uses all-zero weights: every score ties, so every
// teacher must vote class 0.
func TestTiesGoToLowestClass(t *testing.T) {
	for _, c := range []int{2, 3, 10} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			const k, dim, n = 37, 19, 21
			l, err := NewLinear(k, c, dim, make([]float32, k*c*dim), make([]float32, k*c))
			if err != nil {
				t.Fatal(err)
			}
			x := genNormal(rand.New(rand.NewPCG(3, 3)), n*dim)
			paths(t, func(t *testing.T) {
				got := make([]int32, n*c)
				l.Votes(x, n, got)
				for i := 0; i < n; i++ {
					if got[i*c] != k {
						t.Fatalf("row %d: %v, want all %d votes on class 0", i, got[i*c:(i+1)*c], k)
					}
				}
			})
		})
	}
}

func TestNewLinearErrors(t *testing.T) {
	cases := []struct {
		name            string
		k, c, dim, w, b int
	}{
		{"zero teachers", 0, 2, 3, 0, 0},
		{"one class", 2, 1, 3, 6, 2},
		{"zero dim", 2, 2, 0, 0, 4},
		{"short weights", 2, 2, 3, 11, 4},
		{"long biases", 2, 2, 3, 12, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLinear(tc.k, tc.c, tc.dim, make([]float32, tc.w), make([]float32, tc.b))
			if !errors.Is(err, ErrShape) {
				t.Fatalf("err = %v, want ErrShape", err)
			}
		})
	}
	l, err := NewLinear(3, 4, 5, make([]float32, 60), make([]float32, 12))
	if err != nil {
		t.Fatal(err)
	}
	if l.Teachers() != 3 || l.Classes() != 4 || l.Dim() != 5 {
		t.Fatalf("accessors = %d, %d, %d, want 3, 4, 5", l.Teachers(), l.Classes(), l.Dim())
	}
}

// TestVotesConcurrent runs several goroutines on one Linear; run with -race.
func TestVotesConcurrent(t *testing.T) {
	for _, c := range []int{2, 10} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			const k, dim, n, workers = 250, 64, 301, 4
			r := rand.New(rand.NewPCG(11, uint64(c)))
			w, b := genGrid(r, k*c*dim), genGrid(r, k*c)
			l, err := NewLinear(k, c, dim, w, b)
			if err != nil {
				t.Fatal(err)
			}
			x := genGrid(r, workers*n*dim)
			want := make([]int32, workers*n*c)
			l.Votes(x, workers*n, want)
			got := make([]int32, workers*n*c)
			var wg sync.WaitGroup
			for g := 0; g < workers; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for rep := 0; rep < 3; rep++ {
						l.Votes(x[g*n*dim:(g+1)*n*dim], n, got[g*n*c:(g+1)*n*c])
					}
				}()
			}
			wg.Wait()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("count %d: concurrent %d, serial %d", i, got[i], want[i])
				}
			}
		})
	}
}

// TestVotesNaN checks that a row containing NaN gives every vote to class 0
// on every path (NaN scores never compare greater).
func TestVotesNaN(t *testing.T) {
	for _, c := range []int{2, 3, 10} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			const k, dim, n = 40, 9, 30
			r := rand.New(rand.NewPCG(5, uint64(c)))
			l, err := NewLinear(k, c, dim, genNormal(r, k*c*dim), genNormal(r, k*c))
			if err != nil {
				t.Fatal(err)
			}
			x := genNormal(r, n*dim)
			for i := 0; i < n; i += 3 {
				x[i*dim+i%dim] = float32(math.NaN())
			}
			paths(t, func(t *testing.T) {
				got := make([]int32, n*c)
				l.Votes(x, n, got)
				for i := 0; i < n; i += 3 {
					if got[i*c] != k {
						t.Fatalf("row %d with NaN: %v, want all %d votes on class 0", i, got[i*c:(i+1)*c], k)
					}
				}
			})
		})
	}
}

// TestVotesColumnsMatchesRowMajor checks that the column-major entry point
// gives exactly the votes of the row-major one on every path (both sum the
// same products in the same order), with a leading dimension larger than
// the rows and NaN in the gap so that a wrong stride shows.
func TestVotesColumnsMatchesRowMajor(t *testing.T) {
	tests := []struct{ k, c, dim, n, ld int }{
		{k: 250, c: 2, dim: 64, n: 128, ld: 128},
		{k: 250, c: 2, dim: 64, n: 125, ld: 131},
		{k: 33, c: 3, dim: 14, n: 37, ld: 40},
		{k: 5, c: 10, dim: 7, n: 1, ld: 3},
		{k: 251, c: 2, dim: 100, n: 13, ld: 13},
		{k: 16, c: 4, dim: 1, n: 30, ld: 64},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprintf("k%d/c%d/d%d/n%d/ld%d", tc.k, tc.c, tc.dim, tc.n, tc.ld), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 11))
			w := genNormal(r, tc.k*tc.c*tc.dim)
			b := genNormal(r, tc.k*tc.c)
			x := genNormal(r, tc.n*tc.dim)
			xt := make([]float32, tc.dim*tc.ld)
			for j := range xt {
				xt[j] = float32(math.NaN())
			}
			for row := 0; row < tc.n; row++ {
				for j := 0; j < tc.dim; j++ {
					xt[j*tc.ld+row] = x[row*tc.dim+j]
				}
			}
			l, err := NewLinear(tc.k, tc.c, tc.dim, w, b)
			if err != nil {
				t.Fatal(err)
			}
			paths(t, func(t *testing.T) {
				want := make([]int32, tc.n*tc.c)
				l.Votes(x, tc.n, want)
				got := make([]int32, tc.n*tc.c)
				for j := range got {
					got[j] = -99
				}
				l.VotesColumns(xt[:(tc.dim-1)*tc.ld+tc.n], tc.ld, tc.n, got)
				if !slices.Equal(got, want) {
					t.Fatalf("column-major votes differ from row-major:\n got %v\nwant %v", got, want)
				}
			})
		})
	}
}
