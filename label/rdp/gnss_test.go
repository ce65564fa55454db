package rdp

import (
	"math"
	"testing"

	"github.com/pate-tool/pate/label/noise"
)

// discreteGaussianRenyi sums D_λ(N_Z(m1, s1²) ‖ N_Z(m2, s2²)) numerically
// (in log space: the summand peaks far from both means at high orders).
func discreteGaussianRenyi(m1, s1, m2, s2, order float64) float64 {
	a := order/(s1*s1) - (order-1)/(s2*s2)
	if !(a > 0) {
		return math.Inf(1)
	}
	logZ := func(s float64) float64 {
		var z float64
		for x := -math.Ceil(60*s + 60); x <= math.Ceil(60*s+60); x++ {
			z += math.Exp(-x * x / (2 * s * s))
		}
		return math.Log(z)
	}
	l1, l2 := logZ(s1), logZ(s2)
	e := func(x float64) float64 {
		return order*(-(x-m1)*(x-m1)/(2*s1*s1)-l1) + (1-order)*(-(x-m2)*(x-m2)/(2*s2*s2)-l2)
	}
	c := (order*m1/(s1*s1) - (order-1)*m2/(s2*s2)) / a
	w := 60/math.Sqrt(a) + 60
	top := math.Max(e(math.Floor(c)), e(math.Ceil(c)))
	var sum float64
	for x := math.Floor(c - w); x <= c+w; x++ {
		sum += math.Exp(e(x) - top)
	}
	return (top + math.Log(sum)) / (order - 1)
}

// TestGNSSDiscreteRDPBound: for neighbouring inputs whose released integers
// differ by at most the smooth bound S of either (S' ≥ 1) and whose noise
// parameters σ_SS·S differ by a factor of at most e^β, the Rényi divergence
// of the two discrete Gaussians, summed numerically, is within the cost
// GNSSDiscreteRDP charges, in both directions; small σ_SS, where the
// discretisation matters most, included.
func TestGNSSDiscreteRDPBound(t *testing.T) {
	for _, sigma := range []float64{1, 2, 6.23} {
		for _, beta := range []float64{0.01, 0.0329, 0.1} {
			for _, order := range []float64{1.5, 2, 5, 14} {
				cost := GNSSDiscreteRDP(beta, sigma, order)
				b := beta + math.Log1p(GNSSScaleSlack)
				if order >= math.Exp(2*b)/math.Expm1(2*b) {
					if !math.IsInf(cost, 1) {
						t.Errorf("β %v, order %v outside the range: cost %v, want +Inf", beta, order, cost)
					}
					continue
				}
				if !(cost >= GNSSGaussianRDP(beta, sigma, order)) {
					t.Errorf("discrete cost %v below the continuous bound %v", cost, GNSSGaussianRDP(beta, sigma, order))
				}
				for _, s1 := range []float64{1, 1.7, 4} {
					for _, ratio := range []float64{math.Exp(-beta), 1, math.Exp(beta)} {
						s2 := s1 * ratio
						for _, shift := range []float64{0, math.Floor(math.Min(s1, s2))} {
							for _, dir := range []bool{false, true} {
								a, b := sigma*s1, sigma*s2
								if dir {
									a, b = b, a
								}
								d := discreteGaussianRenyi(0, a, shift, b, order)
								if d > cost {
									t.Errorf("σ_SS %v, β %v, order %v, S %v→%v, shift %v: divergence %v above the cost %v",
										sigma, beta, order, s1, s2, shift, d, cost)
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGNSSRDPFormulaBelowExactDivergence pins why the release does not use
// the GNSSRDP formula of PATE 2018 (Theorem 23, as in the reference code):
// at the parameters of the paper's MNIST figure (β = 0.0329, σ_SS = 6.23,
// order 14) two Gaussians the theorem covers, N(0, (σe^β)²) and N(1, σ²),
// are 1.607 apart in Rényi divergence of order 14, above the formula's
// 0.518; GNSSGaussianRDP bounds it.
func TestGNSSRDPFormulaBelowExactDivergence(t *testing.T) {
	const beta, sigma, order = 0.0329, 6.23, 14.0
	d := discreteGaussianRenyi(0, sigma*math.Exp(beta), 1, sigma, order) // discretisation: below 1e-9 here
	if math.Abs(d-1.6070558) > 1e-4 {
		t.Fatalf("divergence %v, want 1.6070558", d)
	}
	if f := GNSSRDP(beta, sigma, order); f >= d {
		t.Errorf("the PATE 2018 formula %v is no longer below the divergence %v: revisit GNSSGaussianRDP", f, d)
	}
	if g := GNSSGaussianRDP(beta, sigma, order); g < d {
		t.Errorf("GNSSGaussianRDP %v is below the divergence %v", g, d)
	}
}

// ReleaseGNMaxSS is the release as package label makes it: the plan, and
// its noise drawn exactly from src.
func ReleaseGNMaxSS(votes [][]int64, sigma, beta, sigmaSS, order, delta float64, conversion string, src noise.Source) (*GNSSRelease, error) {
	plan, err := PrepareGNMaxSS(votes, sigma, beta, sigmaSS, order, delta, conversion)
	if err != nil {
		return nil, err
	}
	dg, err := noise.NewDiscreteGaussian(plan.Scale)
	if err != nil {
		return nil, err
	}
	return plan.Release(dg.Sample(src)), nil
}

func drawRelease(t *testing.T, plan *GNSSPlan, src noise.Source) *GNSSRelease {
	t.Helper()
	dg, err := noise.NewDiscreteGaussian(plan.Scale)
	if err != nil {
		t.Fatal(err)
	}
	return plan.Release(dg.Sample(src))
}

// TestReleaseGNMaxSS: a release is a fresh sample (two releases on the same
// votes differ), centred on the data-dependent RDP plus the cost, which is
// data-independent and positive; parameters for which the release is not
// valid are refused before any noise is drawn.
func TestReleaseGNMaxSS(t *testing.T) {
	votes := make([][]int64, 200)
	for i := range votes {
		// Mostly confident queries with a few close ones, 250 teachers.
		top := int64(200 + i%40)
		if i%10 == 0 {
			top = 130
		}
		votes[i] = []int64{top, 250 - top - 5, 5}
	}
	const sigma, beta, sigmaSS, order, delta = 40, 0.03, 6, 8, 1e-5
	src := noise.NewSeededSource(1, 0)
	a, err := ReleaseGNMaxSS(votes, sigma, beta, sigmaSS, order, delta, "classic", src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReleaseGNMaxSS(votes, sigma, beta, sigmaSS, order, delta, "classic", src)
	if err != nil {
		t.Fatal(err)
	}
	if a.RDP == b.RDP {
		t.Errorf("two releases are equal (%v): no noise drawn?", a.RDP)
	}
	if a.Cost != b.Cost || !(a.Cost > 0) || a.Cost != GNSSDiscreteRDP(beta, sigmaSS, order) {
		t.Errorf("cost %v, %v, want %v", a.Cost, b.Cost, GNSSDiscreteRDP(beta, sigmaSS, order))
	}
	if want := a.RDP + math.Log(1/delta)/(order-1); a.Eps != want {
		t.Errorf("classic ε %v, want %v", a.Eps, want)
	}
	// The mean of many releases is the data-dependent RDP plus the cost.
	f := 0.0
	for _, v := range votes {
		f += GaussianDataDependentRDP(LogQGaussian(v, sigma), sigma, []float64{order})[0]
	}
	plan, err := prepareGNMaxSS(votes, sigma, beta, sigmaSS, order, delta, "improved")
	if err != nil {
		t.Fatal(err)
	}
	var mean float64
	const n = 2000
	for i := 0; i < n; i++ {
		mean += drawRelease(t, plan, src).RDP / n
	}
	if math.Abs(mean-(f+a.Cost)) > 0.02*(f+a.Cost) {
		t.Errorf("mean release %v, want about %v + %v", mean, f, a.Cost)
	}
	if float64(plan.y)*GNSSGrid < f || float64(plan.y)*GNSSGrid > f+2*GNSSGrid {
		t.Errorf("Y·grid = %v, want ⌈f/grid⌉·grid for f = %v", float64(plan.y)*GNSSGrid, f)
	}

	for _, tc := range []struct {
		name                 string
		beta, sigmaSS, order float64
	}{
		{"order beyond the range of β", 0.1, 6, 6},
		{"no β", 0, 6, 8},
		{"no σ_SS", 0.03, 0, 8},
		{"order 1", 0.03, 6, 1},
	} {
		if _, err := ReleaseGNMaxSS(votes, sigma, tc.beta, tc.sigmaSS, tc.order, delta, "classic", src); err == nil {
			t.Errorf("%s: released", tc.name)
		}
	}
}
