package rdp

import (
	"math"
	"testing"
)

func TestDGaussStepsRho(t *testing.T) {
	tau := func(sigma float64, n int) float64 {
		s := 0.0
		for k := 1; k < n; k++ {
			s += math.Exp(-2 * math.Pi * math.Pi * sigma * sigma * float64(k) / float64(k+1))
		}
		return 10 * s
	}
	cases := []struct {
		name                  string
		sensSq, sigma         float64
		dims, summands, steps int
		want                  float64
	}{
		// Central: T·Δ²/(2σ²), whatever the dimension.
		{"one step", 1, 1, 1, 1, 1, 0.5},
		{"60 steps", 4, 10, 5, 1, 60, 60 * 4.0 / 200},
		{"dimension-free", 4, 10, 5000, 1, 60, 60 * 4.0 / 200},
		{"no steps", 4, 10, 5, 1, 0, 0},
		// Sum of two discrete Gaussians of σ = 0.5: ε = √(Δ²/(2σ²) + ½τd),
		// ρ = ε²/2, τ = 10·e^{−π²σ²}.
		{"distributed, small σ", 1, 0.5, 3, 2, 1, (1/(2*0.25) + 0.5*tau(0.5, 2)*3) / 2},
		{"distributed, 10 steps", 9, 2, 7, 4, 10, 10 * (9/(4*4.0) + 0.5*tau(2, 4)*7) / 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := DGaussStepsRho(c.sensSq, c.sigma, c.dims, c.summands, c.steps)
			if !relClose(got, c.want, 1e-13) {
				t.Errorf("DGaussStepsRho = %.17g, want %.17g", got, c.want)
			}
		})
	}
	for _, bad := range [][5]float64{{1, 0, 1, 1, 1}, {1, 1, 0, 1, 1}, {-1, 1, 1, 1, 1}, {1, 1, 1, 0, 1}, {1, 1, 1, 1, -1}, {math.NaN(), 1, 1, 1, 1}} {
		if got := DGaussStepsRho(bad[0], bad[1], int(bad[2]), int(bad[3]), int(bad[4])); !math.IsNaN(got) {
			t.Errorf("DGaussStepsRho%v = %v, want NaN", bad, got)
		}
	}
}

// TestDGaussStepsMatchesContinuous compares the discrete Gaussian's
// accounting with the continuous Gaussian mechanism's. A central discrete
// Gaussian costs exactly the continuous ρ; the distributed form's τ term
// vanishes as σ grows, leaving the continuous ρ of the summed variance. In
// (ε, δ) the zCDP conversion stays above the continuous Gaussian's exact
// curve (Gaussian DP with μ = √T·Δ/σ: it may not claim more than the
// continuous mechanism achieves) and within 30% of it.
func TestDGaussStepsMatchesContinuous(t *testing.T) {
	const delta = 1e-5
	for _, sigma := range []float64{1, 2, 5, 10, 40, 200} {
		const sensSq, steps, dims, n = 4.0, 60, 100, 8
		cont := float64(steps) * sensSq / (2 * sigma * sigma)
		if got := DGaussStepsRho(sensSq, sigma, dims, 1, steps); !relClose(got, cont, 1e-14) {
			t.Errorf("σ=%v: central ρ %v, continuous %v", sigma, got, cont)
		}
		// n summands of σ² have variance nσ².
		dist := DGaussStepsRho(sensSq, sigma, dims, n, steps)
		contSum := cont / n
		if dist < contSum {
			t.Errorf("σ=%v: distributed ρ %v below the continuous %v", sigma, dist, contSum)
		}
		if sigma >= 2 && !relClose(dist, contSum, 1e-9) {
			t.Errorf("σ=%v: distributed ρ %v, continuous %v: τ should have vanished", sigma, dist, contSum)
		}
		if sigma == 1 && relClose(dist, contSum, 1e-12) {
			t.Errorf("σ=1: distributed ρ %v has no τ term", dist)
		}
		mu := math.Sqrt(float64(steps)*sensSq) / sigma
		exact := GDPEps(mu, delta)
		got := DGaussStepsEps(sensSq, sigma, dims, 1, steps, 0, delta)
		if got < exact || got > 1.3*exact {
			t.Errorf("σ=%v: ε %v, continuous Gaussian's exact ε %v", sigma, got, exact)
		}
	}
}

func TestPlanDGaussSteps(t *testing.T) {
	cases := []struct {
		eps, delta     float64
		steps          int
		sensSq, others float64
	}{
		{1, 1e-5, 60, 1, 0},
		{0.5, 1e-5, 60, 263169, 0},
		{2, 1e-5, 60, 270400, 1e-3},
		{4, 1e-6, 200, 17, 0},
		{1, 1e-5, 1, 1, 0},
	}
	for _, c := range cases {
		sigma, err := PlanDGaussSteps(c.eps, c.delta, c.steps, c.sensSq, c.others)
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		checkShort(t, sigma)
		budget := RhoForEps(c.eps, c.delta)
		// Closed form: σ² ≥ T·Δ²/(2(ρ − others)), tight to the 4 digits.
		lo := math.Sqrt(float64(c.steps) * c.sensSq / (2 * (budget - c.others)))
		if sigma < lo || sigma > lo*(1+2e-3) {
			t.Errorf("%+v: σ %v, closed form %v", c, sigma, lo)
		}
		if got := DGaussStepsEps(c.sensSq, sigma, 1, 1, c.steps, c.others, c.delta); got > c.eps {
			t.Errorf("%+v: planned σ %v spends ε %v", c, sigma, got)
		}
		// One digit less noise must not fit.
		smaller := sigma * (1 - 1e-3)
		if got := DGaussStepsEps(c.sensSq, smaller, 1, 1, c.steps, c.others, c.delta); got <= c.eps {
			t.Errorf("%+v: σ %v also fits (ε %v): the plan is not tight", c, smaller, got)
		}
	}
	for _, bad := range []struct {
		eps, delta     float64
		steps          int
		sensSq, others float64
	}{
		{0, 1e-5, 60, 1, 0}, {1, 0, 60, 1, 0}, {1, 1e-5, 0, 1, 0}, {1, 1e-5, 60, 0, 0},
		{1, 1e-5, 60, math.Inf(1), 0}, {1, 1e-5, 60, 1, 1}, {1, 1e-5, 60, 1, -1}, {1, 1e-5, 60, 1, math.NaN()},
	} {
		if _, err := PlanDGaussSteps(bad.eps, bad.delta, bad.steps, bad.sensSq, bad.others); err == nil {
			t.Errorf("PlanDGaussSteps%+v: no error", bad)
		}
	}
}
