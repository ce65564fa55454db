package fdp

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// The bounds are exact Clopper–Pearson bounds: at the upper bound, seeing
// at most x successes has probability level; at the lower, at least x.
func TestClopperPearsonBounds(t *testing.T) {
	for _, tc := range []struct {
		x, n  int
		level float64
	}{
		{0, 100000, 5e-7}, {1, 1000, 1e-3}, {40000, 100000, 5e-7}, {999990, 1000000, 1e-7}, {5, 10, 0.025},
	} {
		t.Run(fmt.Sprintf("%d of %d", tc.x, tc.n), func(t *testing.T) {
			hi := Upper(tc.x, tc.n, tc.level)
			if got := (distuv.Binomial{N: float64(tc.n), P: hi}).CDF(float64(tc.x)); math.Abs(got-tc.level) > 1e-3*tc.level {
				t.Errorf("Pr[X ≤ %d | p = %g] = %g, want %g", tc.x, hi, got, tc.level)
			}
			if tc.x > 0 {
				lo := Lower(tc.x, tc.n, tc.level)
				if got := 1 - (distuv.Binomial{N: float64(tc.n), P: lo}).CDF(float64(tc.x-1)); math.Abs(got-tc.level) > 1e-3*tc.level {
					t.Errorf("Pr[X ≥ %d | p = %g] = %g, want %g", tc.x, lo, got, tc.level)
				}
			}
		})
	}
	// Reference: scipy.stats.beta.ppf(0.975, 6, 5) (two-sided 95% interval of 5 of 10).
	if got := Upper(5, 10, 0.025); math.Abs(got-0.81291397) > 1e-6 {
		t.Errorf("Upper(5, 10) = %.8f, want 0.81291397", got)
	}
}

func TestCurves(t *testing.T) {
	tests := []struct {
		name        string
		f           Curve
		alpha, want float64
	}{
		{"G_0 is the diagonal", Gaussian(0), 0.3, 0.7},
		{"G_1 at 0.5", Gaussian(1), 0.5, 0.15865525},
		{"pure ε=1, first branch", Pure(1), 0.1, 1 - math.E*0.1},
		{"pure ε=1, second branch", Pure(1), 0.5, 0.5 / math.E},
		{"(ε, δ)", Approx(1, 0.1), 0.1, 0.9 - math.E*0.1},
		// ρ-zCDP contains the Gaussian mechanism of μ = √(2ρ), so its curve
		// is below G_μ, and no lower than ρ' for ρ' > ρ.
		{"zCDP below its Gaussian", ZCDP(0.5), 0.3, 0}, // checked below
	}
	for _, tc := range tests[:5] {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.f(tc.alpha); math.Abs(got-tc.want) > 1e-7 {
				t.Errorf("f(%g) = %.8f, want %.8f", tc.alpha, got, tc.want)
			}
		})
	}
	for _, rho := range []float64{0.05, 0.5, 2} {
		for _, a := range []float64{0.01, 0.1, 0.3, 0.6} {
			z, g, z2 := ZCDP(rho)(a), Gaussian(math.Sqrt(2*rho))(a), ZCDP(2*rho)(a)
			if !(z <= g+1e-9) || !(z2 <= z) || z <= 0 {
				t.Errorf("ρ = %g, α = %g: zCDP curve %g, Gaussian %g, zCDP(2ρ) %g", rho, a, z, g, z2)
			}
		}
	}
}

// The lower bounds invert the curves: the point of a curve gives back its
// parameter.
func TestLowerBounds(t *testing.T) {
	for _, mu := range []float64{0.3, 1, 2} {
		for _, a := range []float64{0.05, 0.3} {
			if got := MuLowerBound(a, Gaussian(mu)(a)); math.Abs(got-mu) > 1e-6 {
				t.Errorf("MuLowerBound on G_%g at %g = %g", mu, a, got)
			}
			// A Gaussian mechanism's own point has ρ at most μ²/2.
			if got := RhoLowerBound(a, Gaussian(mu)(a)); !(got <= mu*mu/2+1e-9) || got < 0.5*mu*mu/2 {
				t.Errorf("RhoLowerBound on G_%g at %g = %g, want in [ρ/2, ρ = %g]", mu, a, got, mu*mu/2)
			}
		}
	}
	for _, eps := range []float64{0.5, 2} {
		a := 0.05
		if got := EpsLowerBound(a, Pure(eps)(a), 0); math.Abs(got-eps) > 1e-9 {
			t.Errorf("EpsLowerBound on pure %g = %g", eps, got)
		}
	}
	for _, rho := range []float64{0.1, 1} {
		a := 0.2
		if got := RhoLowerBound(a, ZCDP(rho)(a)); math.Abs(got-rho) > 1e-3*rho {
			t.Errorf("RhoLowerBound on the zCDP(%g) curve = %g", rho, got)
		}
	}
	if got := RhoLowerBound(0.5, 0.5); got != 0 {
		t.Errorf("a useless test proves ρ ≥ %g", got)
	}
}

// Shifted and Difference on small exact distributions, and an exact
// point that lies below G_{1/σ}: the discrete Gaussian is not 1/σ-GDP.
func TestExactPoints(t *testing.T) {
	d := Difference([]float64{0.5, 0, 0.5}, []float64{0.25, 0.5, 0.25}) // values −1, 0, 1
	want := []float64{0.125, 0.25, 0.25, 0.25, 0.125}
	for i := range want {
		if math.Abs(d[i]-want[i]) > 1e-15 {
			t.Fatalf("Difference = %v, want %v", d, want)
		}
	}
	fpr, fnr := Shifted(want, 2, 1, 0)
	if math.Abs(fpr-0.375) > 1e-15 || math.Abs(fnr-0.375) > 1e-15 {
		t.Errorf("Shifted = %g, %g, want 0.375, 0.375", fpr, fnr)
	}
	g := DiscreteGaussian(1, 40)
	a, b := Shifted(g, 40, 1, 0)
	if b >= Gaussian(1)(a) {
		t.Errorf("the discrete Gaussian of σ = 1 at threshold 0 (%.4f, %.4f) is not below G_1 (%.4f)", a, b, Gaussian(1)(a))
	}
	if b < ZCDP(0.5)(a) {
		t.Errorf("the discrete Gaussian of σ = 1 (%.4f, %.4f) is below the 0.5-zCDP curve (%.4f) it satisfies", a, b, ZCDP(0.5)(a))
	}
}
