package rdp

import (
	"math"
	"testing"
)

// The sampled Gaussian's charge (SGMRDP, SGMRho) bounds the moment of
// adding a row with the zCDP of the unsampled release, which the discrete
// Gaussian meets (Canonne, Kamath, Steinke 2020); for removing a row it
// takes from Mironov, Talwar and Zhang 2019 that the other direction is no
// larger, which they prove for the continuous Gaussian only. These tests
// compute both directions exactly for the discrete Gaussian private-knn
// draws, on the shifts one row can make to its vote histogram — e₁ (a vote
// added) and e₁ − e₂ (a vote moved) — and hold the charge to them.
//
// For a shift v the privacy loss depends on x only through ⟨x, v⟩, so each
// direction is a one-dimensional sum. With N_Z(0, σ²) on every class and
// μ = (1−q)·N + q·N(· − v), the ratio μ/N at x is
// r = (1−q) + q·exp((2⟨x,v⟩ − ‖v‖²)/(2σ²)), and
//
//	add:    D_α(μ‖N) = ln E_N[r^α]/(α−1)
//	remove: D_α(N‖μ) = ln E_N[r^(1−α)]/(α−1).
//
// For v = e₁, ⟨x, v⟩ = x₁ ~ N_Z(0, σ²). For v = e₁ − e₂, u = x₁ − x₂ has
// P(u) = C_{u mod 2}·exp(−u²/(4σ²))/Z², with Z = Σ exp(−x²/(2σ²)),
// C₀ = Σ exp(−x²/σ²) and C₁ = Σ exp(−(x+½)²/σ²): the sum over x₂ of
// exp(−((u+x₂)² + x₂²)/(2σ²)) is exp(−u²/(4σ²))·Σ exp(−(x₂+u/2)²/σ²).

// logTheta is ln Σ_{x∈Z} exp(−(x+off)²/s).
func logTheta(s, off float64) float64 {
	n := int(math.Ceil(40*math.Sqrt(s))) + 2
	ts := make([]float64, 0, 2*n+1)
	for x := -n; x <= n; x++ {
		y := float64(x) + off
		ts = append(ts, -y*y/s)
	}
	return logSumExp(ts)
}

// discreteSGMDivergences are the exact add and remove Rényi divergences of
// order alpha of the sampled discrete Gaussian (rate q, σ) on the shift e₁
// (pair false) or e₁ − e₂ (pair true).
func discreteSGMDivergences(q, sigma, alpha float64, pair bool) (add, remove float64) {
	s2 := sigma * sigma
	lz := logTheta(2*s2, 0)
	var logP func(u int) float64
	var norm2 float64
	var scale float64 // ⟨x,v⟩ = scale·u
	if pair {
		c0, c1 := logTheta(s2, 0), logTheta(s2, 0.5)
		logP = func(u int) float64 {
			c := c0
			if u%2 != 0 {
				c = c1
			}
			uf := float64(u)
			return c - uf*uf/(4*s2) - 2*lz
		}
		norm2, scale = 2, 1
	} else {
		logP = func(u int) float64 { uf := float64(u); return -uf*uf/(2*s2) - lz }
		norm2, scale = 1, 1
	}
	// The add sum peaks near ⟨x,v⟩ ≈ α·‖v‖²... and both decay as a
	// Gaussian beyond: cover the peak and 60 standard deviations of P.
	width := 60*sigma*math.Sqrt(norm2) + 8
	hi := int(math.Ceil(alpha*norm2 + width))
	lo := -int(math.Ceil(width))
	l1q := math.Log1p(-q)
	lq := math.Log(q)
	adds := make([]float64, 0, hi-lo+1)
	rems := make([]float64, 0, hi-lo+1)
	for u := lo; u <= hi; u++ {
		e := (2*scale*float64(u) - norm2) / (2 * s2)
		// ln r = ln((1−q) + q·e^e), without overflow.
		a, b := l1q, lq+e
		lr := math.Max(a, b) + math.Log1p(math.Exp(-math.Abs(a-b)))
		lp := logP(u)
		adds = append(adds, lp+alpha*lr)
		rems = append(rems, lp+(1-alpha)*lr)
	}
	return logSumExp(adds) / (alpha - 1), logSumExp(rems) / (alpha - 1)
}

// TestDiscreteSGMTotal: the one-dimensional sums are probability
// distributions, and at q = 1 the add divergence is the discrete
// Gaussian's, at most α‖v‖²/(2σ²).
func TestDiscreteSGMTotal(t *testing.T) {
	for _, sigma := range []float64{0.3, 1, 7} {
		for _, pair := range []bool{false, true} {
			add, rem := discreteSGMDivergences(0.999999999, sigma, 2, pair)
			n2 := 1.0
			if pair {
				n2 = 2
			}
			if bound := 2 * n2 / (2 * sigma * sigma); add > bound*(1+1e-6) || rem > bound*(1+1e-6) {
				t.Errorf("σ %g pair %v: q ≈ 1 gives %g, %g above the unsampled %g", sigma, pair, add, rem, bound)
			}
			// Divergences are ≥ 0 (to float64's 1e-15) and, for q tiny,
			// near the charge's own tiny figure.
			a, r := discreteSGMDivergences(1e-9, sigma, 2, pair)
			if tiny := SGMRDP(1e-9, sigma/math.Sqrt(2), 2) + 1e-14; !(a >= -1e-15 && a < tiny && r >= -1e-15 && r < tiny) {
				t.Errorf("σ %g pair %v: q ≈ 0 gives %g, %g", sigma, pair, a, r)
			}
		}
	}
}

// TestDiscreteSGMChargeCoversBothDirections: on a grid of σ, q and orders,
// integer and not, neither direction exceeds the charge: SGMRDP at integer
// orders (ρα of SGMRho on any range of orders reaching α is at least it),
// and ρα of SGMRho on the orders 2..⌈α⌉ between them. The sums are float64:
// ln E of an E within 1e-8 of 1 keeps about 1e-16 absolute, so a divergence
// may exceed the charge by 1e-14 nats in absolute terms and pass; the
// ratio is logged over the charges large enough to read it to 1e-6.
func TestDiscreteSGMChargeCoversBothDirections(t *testing.T) {
	sigmas := []float64{0.3, 0.5, 1, 2, 5, 13, 40}
	qs := []float64{0.001, 0.01, 0.1, 0.5, 0.99}
	alphas := []float64{2, 2.5, 3, 4, 7.3, 16, 64, 257.5, 1024, 4096}
	if testing.Short() {
		alphas = []float64{2, 2.5, 3, 7.3, 64, 1024}
	}
	worst := map[string]float64{}
	for _, sigma := range sigmas {
		z := sigma / math.Sqrt(2) // private-knn: ℓ2 sensitivity √2 (knnRho)
		for _, q := range qs {
			for _, alpha := range alphas {
				var charged float64
				if alpha == math.Trunc(alpha) {
					charged = SGMRDP(q, z, int(alpha))
				} else {
					rho, err := SGMRho(q, z, int(math.Ceil(alpha)))
					if err != nil {
						t.Fatal(err)
					}
					charged = rho * alpha
				}
				for _, pair := range []bool{false, true} {
					add, rem := discreteSGMDivergences(q, sigma, alpha, pair)
					for _, d := range []struct {
						dir string
						v   float64
					}{{"add", add}, {"remove", rem}} {
						if math.IsNaN(d.v) || d.v > charged*(1+1e-9)+1e-14 {
							t.Errorf("σ %g q %g α %g shift pair=%v: %s divergence %.10g above the charge %.10g",
								sigma, q, alpha, pair, d.dir, d.v, charged)
						}
						if r := d.v / charged; charged > 1e-6 && r > worst[d.dir] {
							worst[d.dir] = r
						}
					}
				}
			}
		}
	}
	t.Logf("largest exact divergence / charge over the grid (charges > 1e-6): add %.6f, remove %.6f", worst["add"], worst["remove"])
}
