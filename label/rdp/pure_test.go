package rdp

import (
	"math"
	"testing"
)

func TestPureComposition(t *testing.T) {
	tests := []struct {
		name               string
		n                  int64
		eps0, rho0, delta  float64
		wantBasic, wantRho float64
		wantBasicWins      bool
	}{
		// One ε = 1 event: basic 1 at δ = 0; zCDP ρ = 0.5 converts to
		// more than 1 at δ = 1e-5, so basic composition is claimed.
		{"one event", 1, 1, 0, 1e-5, 1, 0.5, true},
		// 1000 events of 0.01: basic 10; ρ = 1000·0.0001/2 = 0.05, which
		// converts to about 1.5 at δ = 1e-5.
		{"many small events", 1000, 0.01, 0, 1e-5, 10, 0.05, false},
		// A Gaussian part has no pure reading.
		{"with discovery", 2, 0.5, 0.01, 1e-5, math.Inf(1), 0.26, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := PureComposition(tc.n, tc.eps0, tc.rho0, tc.delta)
			if !(r.Basic == tc.wantBasic || math.Abs(r.Basic-tc.wantBasic) < 1e-12) {
				t.Errorf("basic = %v, want %v", r.Basic, tc.wantBasic)
			}
			if math.Abs(r.Rho-tc.wantRho) > 1e-15 {
				t.Errorf("rho = %v, want %v", r.Rho, tc.wantRho)
			}
			if math.Abs(r.ZCDP-ZCDPEps(tc.wantRho, tc.delta)) > 1e-12 {
				t.Errorf("zcdp = %v", r.ZCDP)
			}
			eps, d, basic := r.Claim(tc.delta)
			if basic != tc.wantBasicWins {
				t.Errorf("claimed basic = %v (basic %v, zCDP %v)", basic, r.Basic, r.ZCDP)
			}
			if basic && (d != 0 || eps != r.Basic) || !basic && (d != tc.delta || eps != r.ZCDP) {
				t.Errorf("claim (%v, %v) is not the smaller reading", eps, d)
			}
		})
	}
	// Independent check of the zCDP reading of many small events: the
	// classic conversion ρ + 2√(ρ ln 1/δ) bounds it from above, and the
	// improved one is within a few percent below it.
	r := PureComposition(1000, 0.01, 0, 1e-5)
	classic := 0.05 + 2*math.Sqrt(0.05*math.Log(1e5))
	if !(r.ZCDP < classic && r.ZCDP > 0.75*classic) {
		t.Errorf("zCDP reading %v, classic conversion %v", r.ZCDP, classic)
	}
}

func TestPureEventsThatFit(t *testing.T) {
	tests := []struct {
		name             string
		eps, delta, eps0 float64
		rho0             float64
		want             int64
	}{
		// Basic composition: ⌊2/0.5⌋ = 4; zCDP: ρ_B(2, 1e-5) ≈ 0.0845
		// pays for ⌊0.0845/0.125⌋ = 0.
		{"basic wins", 2, 1e-5, 0.5, 0, 4},
		{"exact multiple", 1, 1e-5, 0.25, 0, 4},
		{"one whole event", 0.5, 1e-5, 0.5, 0, 1},
		{"too large", 0.5, 1e-5, 0.6, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := PureEventsThatFit(tc.eps, tc.delta, tc.eps0, tc.rho0)
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.want {
				t.Errorf("n = %d, want %d", n, tc.want)
			}
		})
	}
	// zCDP wins for small events: eps0 = 0.001 at (2, 1e-5): basic gives
	// 2000, zCDP gives ⌊2ρ_B/1e-6⌋.
	rb := RhoForEps(2, 1e-5)
	n, err := PureEventsThatFit(2, 1e-5, 0.001, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(math.Floor(rb / 5e-7))
	if n != want || n <= 2000 {
		t.Errorf("n = %d, want %d (> 2000)", n, want)
	}
	if ZCDPEps(float64(n)*5e-7, 1e-5) > 2 {
		t.Errorf("%d events do not fit", n)
	}
	// With a Gaussian part only the zCDP reading counts.
	n, _ = PureEventsThatFit(2, 1e-5, 0.001, rb/2)
	if want := int64(math.Floor((rb - rb/2) / 5e-7)); n != want {
		t.Errorf("with discovery n = %d, want %d", n, want)
	}
	if _, err := PureEventsThatFit(2, 1e-5, 0, 0); err == nil {
		t.Error("eps0 = 0 accepted")
	}
}

func TestPlanPureEps(t *testing.T) {
	tests := []struct {
		name       string
		eps, delta float64
		n          int64
		want       float64
	}{
		{"one event takes the whole budget", 2, 1e-5, 1, 2},
		{"four events, basic", 2, 1e-5, 4, 0.5},
		{"three events, rounded down", 1, 1e-5, 3, 0.3333},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := PlanPureEps(tc.eps, tc.delta, tc.n, 0)
			if err != nil {
				t.Fatal(err)
			}
			if e != tc.want {
				t.Errorf("eps0 = %v, want %v", e, tc.want)
			}
		})
	}
	// Many events: the zCDP reading, √(2ρ_B/n) rounded down.
	e, err := PlanPureEps(2, 1e-5, 10000, 0)
	if err != nil {
		t.Fatal(err)
	}
	exact := math.Sqrt(2 * RhoForEps(2, 1e-5) / 10000)
	if !(e <= exact && e > exact*(1-1e-3)) {
		t.Errorf("eps0 = %v, want just below %v", e, exact)
	}
	if n, _ := PureEventsThatFit(2, 1e-5, e, 0); n < 10000 {
		t.Errorf("planned eps0 %v pays for %d events only", e, n)
	}
}

func TestStableTVAndFlipEps(t *testing.T) {
	// Hand-derived: q = 0.01, ε' = 0.1: tanh(0.05) = 0.0499583749…,
	// β = 0.01 + 0.99·0.0499583749 = 0.0594587912…; with γ = 0.5, C = 2:
	// ε = ln(1 + 2β/0.5) = 0.2133640…
	beta := StableTV(0.01, 0.1)
	if math.Abs(beta-0.059458791208) > 1e-11 {
		t.Errorf("β = %.12f", beta)
	}
	eps := FlipEps(beta, 0.5, 2)
	if math.Abs(eps-math.Log(1+4*0.059458791208)) > 1e-11 {
		t.Errorf("ε = %.12f", eps)
	}
	if StableTV(0, 0) != 0 || StableTV(1, 3) != 1 {
		t.Error("β endpoints")
	}
}
