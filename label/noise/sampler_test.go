package noise

import (
	"errors"
	"math"
	"math/big"
	"sync"
	"testing"
)

func mustRat(t testing.TB, s string) *big.Rat {
	t.Helper()
	r, err := ParseRat(s)
	if err != nil {
		t.Fatalf("ParseRat(%q): %v", s, err)
	}
	return r
}

func mustGaussian(t testing.TB, sigma string) *DiscreteGaussian {
	t.Helper()
	g, err := NewDiscreteGaussian(mustRat(t, sigma))
	if err != nil {
		t.Fatalf("NewDiscreteGaussian(%s): %v", sigma, err)
	}
	return g
}

func mustLaplace(t testing.TB, scale string) *DiscreteLaplace {
	t.Helper()
	l, err := NewDiscreteLaplace(mustRat(t, scale))
	if err != nil {
		t.Fatalf("NewDiscreteLaplace(%s): %v", scale, err)
	}
	return l
}

// slowSigma is 3 + 2^−40: q² = 2^80 overflows, so the Gaussian takes the
// math/big path on its own. slowScale is 2 + 2^−70: its denominator does
// not fit in 64 bits, so the Laplace sampler takes the math/big path.
const (
	slowSigma = "3298534883329/1099511627776"
	slowScale = "2361183241434822606849/1180591620717411303424"
)

// draws scales a test's sample size down tenfold under -short (the race
// detector makes sampling ~10× slower), keeping a shorter variant running.
func draws(n int) int {
	if testing.Short() {
		return n / 10
	}
	return n
}

func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

func TestDiscreteGaussianChiSquare(t *testing.T) {
	tests := []struct {
		name  string
		sigma string
		slow  bool // force the math/big path
		ref   bool // the CKS20 reference path (reference_test.go)
		draws int
		fast  bool // expected path chosen by the constructor
	}{
		{name: "sigma=0.5", sigma: "0.5", draws: 1_000_000, fast: true},
		{name: "sigma=1", sigma: "1", draws: 1_000_000, fast: true},
		{name: "sigma=6.23", sigma: "6.23", draws: 1_000_000, fast: true},
		{name: "sigma=40", sigma: "40", draws: 1_000_000, fast: true},
		{name: "sigma=200", sigma: "200", draws: 1_000_000, fast: true},
		{name: "sigma=1e4", sigma: "1e4", draws: 1_000_000, fast: true},
		{name: "big/sigma=3+2^-40", sigma: slowSigma, draws: 300_000},
		{name: "big-forced/sigma=0.5", sigma: "0.5", slow: true, draws: 300_000, fast: true},
		{name: "big-forced/sigma=40", sigma: "40", slow: true, draws: 300_000, fast: true},
		// The lazy tables: t = 1 (one Laplace entry), t = 1001 > 256 (the
		// general proposal path) with a Gaussian table capped at 8192.
		{name: "sigma=0.7", sigma: "0.7", draws: 1_000_000, fast: true},
		{name: "sigma=10.09", sigma: "10.09", draws: 1_000_000, fast: true},
		{name: "sigma=1000", sigma: "1000", draws: 1_000_000, fast: true},
		{name: "reference/sigma=40", sigma: "40", ref: true, draws: 300_000, fast: true},
		{name: "reference/sigma=6.23", sigma: "6.23", ref: true, draws: 300_000, fast: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := mustGaussian(t, tc.sigma)
			if g.fast != tc.fast {
				t.Fatalf("fast path = %v, want %v", g.fast, tc.fast)
			}
			if tc.slow {
				g.fast = false
			}
			sample := g.Sample
			if tc.ref {
				sample = g.referenceSample
			}
			src := NewSeededSource(2020, uint64(i))
			stat, df, p := chiSquareTest(t, gaussianPMF(ratFloat(g.sigma)), draws(tc.draws), func() int64 { return sample(src) })
			t.Logf("χ² = %.1f, df = %d, p = %.4f", stat, df, p)
			if p <= 0.001 {
				t.Errorf("χ² = %.1f with %d df: p = %.2g ≤ 0.001", stat, df, p)
			}
		})
	}
}

func TestDiscreteLaplaceChiSquare(t *testing.T) {
	tests := []struct {
		name  string
		scale string
		slow  bool
		ref   bool
		draws int
		fast  bool
	}{
		{name: "scale=0.5", scale: "0.5", draws: 1_000_000, fast: true},
		{name: "scale=1", scale: "1", draws: 1_000_000, fast: true},
		{name: "scale=3", scale: "3", draws: 1_000_000, fast: true},
		{name: "scale=20", scale: "20", draws: 1_000_000, fast: true},
		{name: "scale=2/3", scale: "2/3", draws: 1_000_000, fast: true},
		{name: "scale=1000", scale: "1000", draws: 1_000_000, fast: true},
		{name: "big/scale=2+2^-70", scale: slowScale, draws: 300_000},
		{name: "big-forced/scale=3", scale: "3", slow: true, draws: 300_000, fast: true},
		{name: "big-forced/scale=6.5", scale: "6.5", slow: true, draws: 300_000, fast: true},
		// The lazy tables: t = 5 with s = 2, t = 41, t = 1 with s = 3, the
		// general path (t = 300 > 256), the largest table and no table.
		{name: "scale=2.5", scale: "2.5", draws: 1_000_000, fast: true},
		{name: "scale=41", scale: "41", draws: 1_000_000, fast: true},
		{name: "scale=1/3", scale: "1/3", draws: 1_000_000, fast: true},
		{name: "scale=300", scale: "300", draws: 500_000, fast: true},
		{name: "scale=4096", scale: "4096", draws: 300_000, fast: true},
		{name: "scale=5000", scale: "5000", draws: 300_000, fast: true},
		{name: "reference/scale=20", scale: "20", ref: true, draws: 300_000, fast: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := mustLaplace(t, tc.scale)
			if l.fast != tc.fast {
				t.Fatalf("fast path = %v, want %v", l.fast, tc.fast)
			}
			if tc.slow {
				l.fast = false
			}
			sample := l.Sample
			if tc.ref {
				sample = l.referenceSample
			}
			src := NewSeededSource(2021, uint64(i))
			stat, df, p := chiSquareTest(t, laplacePMF(ratFloat(l.scale)), draws(tc.draws), func() int64 { return sample(src) })
			t.Logf("χ² = %.1f, df = %d, p = %.4f", stat, df, p)
			if p <= 0.001 {
				t.Errorf("χ² = %.1f with %d df: p = %.2g ≤ 0.001", stat, df, p)
			}
		})
	}
}

// TestMoments checks that the sample mean is ≈ 0 and the sample variance ≈
// the exact variance, within 6 standard errors.
func TestMoments(t *testing.T) {
	n := float64(draws(400_000))
	tests := []struct {
		name   string
		w      window
		sample func(Source) int64
	}{
		{name: "gaussian/sigma=1", w: gaussianPMF(1), sample: mustGaussian(t, "1").Sample},
		{name: "gaussian/sigma=40", w: gaussianPMF(40), sample: mustGaussian(t, "40").Sample},
		{name: "laplace/scale=1", w: laplacePMF(1), sample: mustLaplace(t, "1").Sample},
		{name: "laplace/scale=20", w: laplacePMF(20), sample: mustLaplace(t, "20").Sample},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := NewSeededSource(7, uint64(i))
			var sum, sum2 float64
			for range int(n) {
				x := float64(tc.sample(src))
				sum += x
				sum2 += x * x
			}
			variance, mu4 := tc.w.moments()
			mean := sum / n
			if se := math.Sqrt(variance / n); math.Abs(mean) > 6*se {
				t.Errorf("mean = %.4f, want 0 ± %.4f", mean, 6*se)
			}
			v := sum2/n - mean*mean
			if se := math.Sqrt((mu4 - variance*variance) / n); math.Abs(v-variance) > 6*se {
				t.Errorf("variance = %.4f, want %.4f ± %.4f", v, variance, 6*se)
			}
		})
	}
	// The discrete Gaussian's variance is below σ² (CKS20, Proposition 19).
	if v, _ := gaussianPMF(1).moments(); v >= 1 || v < 0.99 {
		t.Errorf("exact variance at σ = 1 is %.5f, want just below 1", v)
	}
}

func TestBernoulliExp(t *testing.T) {
	tests := []struct {
		name  string
		gamma string
		big   bool // force the math/big path
		draws int
	}{
		{name: "0", gamma: "0", draws: 100_000},
		{name: "1/10", gamma: "1/10", draws: 1_000_000},
		{name: "1/2", gamma: "1/2", draws: 1_000_000},
		{name: "1", gamma: "1", draws: 1_000_000},
		{name: "3/2", gamma: "3/2", draws: 1_000_000},
		{name: "7/3", gamma: "7/3", draws: 1_000_000},
		{name: "5", gamma: "5", draws: 1_000_000},
		// d·k overflows 64 bits from k = 2: Bernoulli(n/d)∧Bernoulli(1/k).
		{name: "d near 2^63", gamma: "4611686018427387905/9223372036854775807", draws: 1_000_000},
		{name: "big/0", gamma: "0", big: true, draws: 10_000},
		{name: "big/1/2", gamma: "1/2", big: true, draws: 100_000},
		{name: "big/7/3", gamma: "7/3", big: true, draws: 100_000},
		{name: "big/huge denominator", gamma: "1180591620717411303425/1180591620717411303424", draws: 100_000},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := mustRat(t, tc.gamma)
			src := NewSeededSource(99, uint64(i))
			nd := draws(tc.draws)
			hits := 0
			for range nd {
				var ok bool
				if tc.big {
					ok = bernExpBig(&rng{src: src}, g.Num(), g.Denom())
				} else {
					var err error
					if ok, err = BernoulliExp(src, g); err != nil {
						t.Fatal(err)
					}
				}
				if ok {
					hits++
				}
			}
			want := math.Exp(-ratFloat(g))
			if want == 1 {
				if hits != nd {
					t.Fatalf("γ = 0: %d of %d draws true, want all", hits, nd)
				}
				return
			}
			n := float64(nd)
			got := float64(hits) / n
			if se := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 5*se {
				t.Errorf("P = %.5f, want exp(−%s) = %.5f ± %.5f", got, tc.gamma, want, 5*se)
			}
		})
	}
	if _, err := BernoulliExp(NewSeededSource(1, 1), big.NewRat(-1, 2)); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("γ < 0: err = %v, want ErrInvalidParameter", err)
	}
}

func TestConstructors(t *testing.T) {
	tests := []struct {
		name    string
		param   *big.Rat
		wantErr bool
		fast    bool
		text    string
	}{
		{name: "40", param: big.NewRat(40, 1), fast: true, text: "40"},
		{name: "6.23", param: big.NewRat(623, 100), fast: true, text: "6.23"},
		{name: "1/3", param: big.NewRat(1, 3), fast: true, text: "1/3"},
		{name: "2^40", param: new(big.Rat).SetInt64(1 << 40), fast: false, text: "1099511627776"},
		{name: "float 0.1", param: new(big.Rat).SetFloat64(0.1), fast: false, text: "3602879701896397/36028797018963968"},
		{name: "nil", param: nil, wantErr: true},
		{name: "zero", param: new(big.Rat), wantErr: true},
		{name: "negative", param: big.NewRat(-1, 2), wantErr: true},
		{name: "above 2^40", param: new(big.Rat).SetInt64(1<<40 + 1), wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewDiscreteGaussian(tc.param)
			l, err2 := NewDiscreteLaplace(tc.param)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidParameter) || !errors.Is(err2, ErrInvalidParameter) {
					t.Fatalf("errors = %v, %v; want ErrInvalidParameter", err, err2)
				}
				return
			}
			if err != nil || err2 != nil {
				t.Fatalf("errors = %v, %v", err, err2)
			}
			if g.fast != tc.fast {
				t.Errorf("Gaussian fast path = %v, want %v", g.fast, tc.fast)
			}
			if !l.fast {
				t.Errorf("Laplace fast path = false, want true")
			}
			if got, want := g.String(), "discrete Gaussian(σ="+tc.text+")"; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			if got, want := l.String(), "discrete Laplace(scale="+tc.text+")"; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			// Accessors return copies, and the constructors copied their input.
			g.Sigma().SetInt64(-7)
			l.Scale().SetInt64(-7)
			tc.param.Add(tc.param, big.NewRat(1, 1))
			if g.Sigma().Cmp(l.Scale()) != 0 || g.Sigma().Sign() <= 0 || g.Sigma().Cmp(tc.param) == 0 {
				t.Errorf("parameters changed through a copy: σ = %v, scale = %v", g.Sigma(), l.Scale())
			}
		})
	}
}

// TestGaussianTailFallback checks the per-proposal math/big fallback of the
// fast path, taken when (|y|·q²t − p²)² overflows 64 bits.
func TestGaussianTailFallback(t *testing.T) {
	g := mustGaussian(t, "6.23")
	r := &rng{src: NewSeededSource(3, 3)}
	y := int64(1_000_000) // far beyond the fast path's range at σ = 6.23
	for range 100 {
		if g.acceptBig(r, big.NewInt(y)) {
			t.Fatal("a proposal at 160000σ was accepted")
		}
	}
	// Near the mode the big decision agrees with exp(−γ).
	hits := 0
	for range 20_000 {
		if g.acceptBig(r, big.NewInt(6)) {
			hits++
		}
	}
	// γ = (6 − 6.23²/7)²/(2·6.23²)
	s2 := 6.23 * 6.23
	want := math.Exp(-(6 - s2/7) * (6 - s2/7) / (2 * s2))
	if got, se := float64(hits)/20_000, math.Sqrt(want*(1-want)/20_000); math.Abs(got-want) > 5*se {
		t.Errorf("acceptance at y = 6: %.4f, want %.4f", got, want)
	}
}

func TestNoAllocations(t *testing.T) {
	src := NewSeededSource(1, 1)
	tests := []struct {
		name   string
		sample func(Source) int64
	}{
		{name: "gaussian/sigma=40", sample: mustGaussian(t, "40").Sample},
		{name: "gaussian/sigma=6.23", sample: mustGaussian(t, "6.23").Sample},
		{name: "laplace/scale=20", sample: mustLaplace(t, "20").Sample},
		{name: "laplace/scale=2.5", sample: mustLaplace(t, "2.5").Sample},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if a := testing.AllocsPerRun(10_000, func() { tc.sample(src) }); a != 0 {
				t.Errorf("%v allocations per sample, want 0", a)
			}
		})
	}
}

// TestConcurrentUse shares one sampler between goroutines, each with its own
// Source (run under -race in CI), and checks that results are deterministic.
func TestConcurrentUse(t *testing.T) {
	g := mustGaussian(t, "40")
	const workers, n = 4, 10_000
	var wg sync.WaitGroup
	sums := make([]int64, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := NewSeededSource(5, uint64(w))
			for range n {
				sums[w] += g.Sample(src)
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		src := NewSeededSource(5, uint64(w))
		var s int64
		for range n {
			s += g.Sample(src)
		}
		if s != sums[w] {
			t.Errorf("worker %d: sum %d concurrently, %d alone", w, sums[w], s)
		}
	}
}
