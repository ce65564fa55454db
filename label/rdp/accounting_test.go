package rdp

import (
	"errors"
	"math"
	"testing"
)

func TestZCDPRoundTrip(t *testing.T) {
	tests := []struct {
		name       string
		eps, delta float64
	}{
		{"eps0.1", 0.1, 1e-5}, {"eps0.5", 0.5, 1e-5}, {"eps1", 1, 1e-5},
		{"eps2", 2, 1e-6}, {"eps8", 8, 1e-5}, {"eps20", 20, 1e-9},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rho := RhoForEps(tc.eps, tc.delta)
			got := ZCDPEps(rho, tc.delta)
			if got > tc.eps {
				t.Errorf("ZCDPEps(RhoForEps(%v)) = %.15g > eps", tc.eps, got)
			}
			if tc.eps-got > 1e-9 {
				t.Errorf("ZCDPEps(RhoForEps(%v)) = %.15g, more than 1e-9 below", tc.eps, got)
			}
			// The zCDP conversion is at least as good as the classic ρ+2√(ρ ln 1/δ).
			if classic := rho + 2*math.Sqrt(rho*math.Log(1/tc.delta)); got > classic {
				t.Errorf("ZCDPEps = %v worse than classic %v", got, classic)
			}
			// Never worse than the improved conversion over the paper orders.
			curve := make([]float64, 0)
			orders := DefaultOrders()
			for _, o := range orders {
				curve = append(curve, rho*o)
			}
			if e, _ := EpsImproved(orders, curve, tc.delta); got > e+1e-12 {
				t.Errorf("ZCDPEps = %v worse than the improved conversion on the grid %v", got, e)
			}
		})
	}
}

func TestConversionsMonotone(t *testing.T) {
	orders := DefaultOrders()
	prevC, prevI, prevZ, prevG := -1.0, -1.0, -1.0, -1.0
	for _, sigma := range []float64{200, 100, 50, 20, 10, 5, 2, 1} {
		curve := GaussianRDP(sigma, orders)
		c, _ := EpsClassic(orders, curve, 1e-5)
		i, _ := EpsImproved(orders, curve, 1e-5)
		z := ZCDPEps(GNMaxRho(sigma), 1e-5)
		g := GDPEps(math.Sqrt2/sigma, 1e-5)
		if c < prevC || i < prevI || z < prevZ || g < prevG {
			t.Errorf("sigma %v: conversions not monotone: %v %v %v %v after %v %v %v %v", sigma, c, i, z, g, prevC, prevI, prevZ, prevG)
		}
		if i > c {
			t.Errorf("sigma %v: improved %v > classic %v", sigma, i, c)
		}
		if z > i+1e-12 {
			t.Errorf("sigma %v: zCDP over all orders %v > improved on the grid %v", sigma, z, i)
		}
		if g > z {
			t.Errorf("sigma %v: GDP %v > RDP conversion %v of the same Gaussian", sigma, g, z)
		}
		prevC, prevI, prevZ, prevG = c, i, z, g
	}
}

func TestGDPEps(t *testing.T) {
	tests := []struct {
		name      string
		mu, delta float64
	}{
		{"mu1_delta1e-5", 1, 1e-5}, {"mu0.5_delta1e-6", 0.5, 1e-6}, {"mu2_delta1e-3", 2, 1e-3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := GDPEps(tc.mu, tc.delta)
			dl := func(e float64) float64 {
				return normCDF(-e/tc.mu+tc.mu/2) - math.Exp(e)*normCDF(-e/tc.mu-tc.mu/2)
			}
			// Root of δ(ε) = δ: just below ε the curve is above δ.
			if d := dl(e); d > tc.delta*(1+1e-9) {
				t.Errorf("delta(eps=%v) = %v > %v", e, d, tc.delta)
			}
			if d := dl(e * (1 - 1e-9)); d <= tc.delta {
				t.Errorf("delta just below eps=%v is %v <= %v: eps not the smallest", e, d, tc.delta)
			}
			if z := ZCDPEps(tc.mu*tc.mu/2, tc.delta); e > z {
				t.Errorf("GDP eps %v > zCDP eps %v", e, z)
			}
		})
	}
	// Known value: μ = 1, δ = 1e-5 gives ε = 4.377178 (the root property is
	// checked above; the zCDP conversion of ρ = ½ gives 4.728).
	if e := GDPEps(1, 1e-5); math.Abs(e-4.377178) > 1e-6 {
		t.Errorf("GDPEps(1, 1e-5) = %v, want 4.377178", e)
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name       string
		eps, delta float64
		rho        float64
	}{
		{"gnmax_sigma40", 1, 1e-5, GNMaxRho(40)},
		{"threshold_sigma150", 0.5, 1e-6, ThresholdRho(150)},
		{"lnmax_b20", 2, 1e-5, LNMaxRho(20)},
		{"tenth_of_budget", 1, 1e-5, RhoForEps(1, 1e-5) / 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFilter(tc.eps, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			want, err := QueriesThatFit(tc.eps, tc.delta, tc.rho)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for {
				if !f.Fits(tc.rho) {
					break
				}
				if err := f.Charge(tc.rho); err != nil {
					t.Fatalf("charge %d: %v", n, err)
				}
				n++
			}
			if err := f.Charge(tc.rho); !errors.Is(err, ErrBudgetExceeded) {
				t.Errorf("charge past the budget: err = %v, want ErrBudgetExceeded", err)
			}
			if n != want || f.Charges() != n {
				t.Errorf("%d charges fit, QueriesThatFit says %d", n, want)
			}
			if f.Spent() > f.Budget() {
				t.Errorf("spent %v > budget %v", f.Spent(), f.Budget())
			}
			if f.Remaining() >= tc.rho {
				t.Errorf("remaining %v >= one more charge %v", f.Remaining(), tc.rho)
			}
			if f.SpentEps() > tc.eps {
				t.Errorf("spent eps %v > guarantee %v", f.SpentEps(), tc.eps)
			}
		})
	}
	for _, bad := range []struct{ eps, delta float64 }{{0, 1e-5}, {-1, 1e-5}, {1, 0}, {1, 1}, {math.Inf(1), 1e-5}} {
		if _, err := NewFilter(bad.eps, bad.delta); err == nil {
			t.Errorf("NewFilter(%v, %v) accepted", bad.eps, bad.delta)
		}
	}
	f, _ := NewFilter(1, 1e-5)
	if f.Fits(math.NaN()) || f.Fits(-1) || f.Charge(math.NaN()) == nil {
		t.Error("NaN or negative charges must be refused")
	}
	// Exactly the budget fits; one ulp more does not.
	if !f.Fits(f.Budget()) || f.Fits(math.Nextafter(f.Budget(), 2)) {
		t.Error("the budget itself must fit and nothing above it")
	}
}

func TestPlanRoundTrip(t *testing.T) {
	const delta = 1e-5
	for _, eps := range []float64{0.5, 1, 2, 8} {
		for _, n := range []int{100, 1500, 100000} {
			budget := RhoForEps(eps, delta)
			spends := func(counts []int, rhos []float64) bool { return exactFits(budget, counts, rhos) }
			t.Run("gnmax", func(t *testing.T) {
				s, err := PlanGNMax(eps, delta, n)
				if err != nil {
					t.Fatal(err)
				}
				checkShort(t, s)
				if !spends([]int{n}, []float64{GNMaxRho(s)}) || spends([]int{n}, []float64{GNMaxRho(0.99 * s)}) {
					t.Errorf("eps %v n %d: sigma %v does not round-trip", eps, n, s)
				}
				if q, _ := QueriesThatFit(eps, delta, GNMaxRho(s)); q < n {
					t.Errorf("QueriesThatFit(%v) = %d < %d", s, q, n)
				}
			})
			t.Run("confident", func(t *testing.T) {
				s1, s2, err := PlanConfident(eps, delta, n, 0.45, 150.0/40)
				if err != nil {
					t.Fatal(err)
				}
				checkShort(t, s1)
				checkShort(t, s2)
				a := AnsweredOf(n, 0.45)
				if !spends([]int{n, a}, []float64{ThresholdRho(s1), GNMaxRho(s2)}) ||
					spends([]int{n, a}, []float64{ThresholdRho(0.99 * s1), GNMaxRho(0.99 * s2)}) {
					t.Errorf("eps %v n %d: sigmas %v, %v do not round-trip", eps, n, s1, s2)
				}
			})
			t.Run("lnmax", func(t *testing.T) {
				b, err := PlanLNMax(eps, delta, n)
				if err != nil {
					t.Fatal(err)
				}
				checkShort(t, b)
				if !spends([]int{n}, []float64{LNMaxRho(b)}) || spends([]int{n}, []float64{LNMaxRho(0.99 * b)}) {
					t.Errorf("eps %v n %d: b %v does not round-trip", eps, n, b)
				}
			})
		}
	}
	if _, err := PlanGNMax(0, delta, 10); err == nil {
		t.Error("eps 0 accepted")
	}
	if _, err := PlanGNMax(1, delta, 0); err == nil {
		t.Error("0 queries accepted")
	}
}

// checkShort asserts that v has at most 4 significant digits.
func checkShort(t *testing.T, v float64) {
	t.Helper()
	if r := roundUpSig(v, 4); r != v {
		t.Errorf("%v is not a 4-significant-digit decimal", v)
	}
}

func TestRoundUp(t *testing.T) {
	a, b := 0.1, 0.2
	point3 := a + b // 0.30000000000000004 at run time
	tests := []struct {
		in     float64
		digits int
		want   float64
	}{
		{1.0001, 2, 1.01}, {1.0, 2, 1.0}, {2.516199, 3, 2.517}, {point3, 1, 0.4}, {3.157421, 2, 3.16},
	}
	for _, tc := range tests {
		if got := RoundUp(tc.in, tc.digits); got != tc.want || got < tc.in {
			t.Errorf("RoundUp(%v, %d) = %v, want %v", tc.in, tc.digits, got, tc.want)
		}
	}
	if !math.IsInf(RoundUp(math.Inf(1), 2), 1) {
		t.Error("RoundUp(+Inf) must stay +Inf")
	}
}

func TestParseOrders(t *testing.T) {
	tests := []struct {
		in      string
		n       int
		first   float64
		wantErr bool
	}{
		{"default", 297, 2, false}, {"pate2017", 8, 2, false}, {"2:64", 63, 2, false},
		{"32, 2.5,8,8", 3, 2.5, false}, {"1", 0, 0, true}, {"abc", 0, 0, true}, {"5:2", 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseOrders(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && (len(got) != tc.n || got[0] != tc.first) {
				t.Errorf("got %d orders starting %v, want %d starting %v", len(got), got[0], tc.n, tc.first)
			}
		})
	}
}

func TestLogNdtrTails(t *testing.T) {
	tests := []struct {
		a, want float64
	}{
		// log Φ(a) for very negative a from the asymptotic expansion (no -Inf).
		{-40, -804.608442013754}, {-20, -203.91715537109638}, {-5, -15.064998393988725}, {0, -math.Ln2}, {10, -7.61985302416047e-24},
	}
	for _, tc := range tests {
		if got := logNdtr(tc.a); !relClose(got, tc.want, 1e-12) {
			t.Errorf("logNdtr(%v) = %.15g, want %.15g", tc.a, got, tc.want)
		}
	}
	if v := logNdtr(-1e5); math.IsInf(v, 0) || math.IsNaN(v) {
		t.Errorf("logNdtr(-1e5) = %v", v)
	}
}

func TestAccountantPoisoned(t *testing.T) {
	a := NewAccountant([]float64{2, 3})
	a.Add([]float64{1})
	if a.Err() == nil {
		t.Error("wrong-length curve not reported")
	}
	if e, _ := a.EpsClassic(1e-5); !math.IsInf(e, 1) {
		t.Errorf("poisoned accountant eps = %v, want +Inf", e)
	}
}

func TestDiscreteGaussianRho(t *testing.T) {
	if got := DiscreteGaussianRho(2, 40, 10); got != 2.0/(2*1600) {
		t.Errorf("DiscreteGaussianRho = %v", got)
	}
	// The distributed (sum of n) form is never below the single one.
	if s, d := DiscreteGaussianSumRho(2, 2, 1, 10, 5), 2.0/(2*5); s < d {
		t.Errorf("sum rho %v < %v", s, d)
	}
}

func TestAnalyzeErrors(t *testing.T) {
	v := [][]int64{{5, 3, 2}, {6, 4, 0}}
	bad := []AnalyzeParams{
		{Mechanism: "gnmax", Accounting: Gaussian, Sigma2: 0, Delta: 1e-5},
		{Mechanism: "nope", Sigma2: 1, Delta: 1e-5}, // no Accounting,
		{Mechanism: "gnmax", Accounting: Gaussian, Sigma2: 1, Delta: 0},
		{Mechanism: "gnmax", Accounting: Gaussian, Sigma2: 1, Delta: 1e-5, Queries: 3},
		{Mechanism: "gnmax", Accounting: Gaussian, Sigma2: 1, Delta: 1e-5, Conversion: "x"},
	}
	for i, p := range bad {
		if _, err := Analyze(v, p); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
	if _, err := Analyze([][]int64{{5, 5}, {6, 3}}, AnalyzeParams{Mechanism: "gnmax", Accounting: Gaussian, Sigma2: 1, Delta: 1e-5}); err == nil {
		t.Error("rows with different vote totals accepted")
	}
	res, err := Analyze(v, AnalyzeParams{Mechanism: "lnmax", Accounting: Laplace, LaplaceScale: 20, Delta: 1e-5, Orders: PATE2017Orders()})
	if err != nil {
		t.Fatal(err)
	}
	if res.EpsDataDependent > res.EpsDataIndependent || res.ExpectedAnswered != 2 {
		t.Errorf("lnmax: %+v", res)
	}
}
