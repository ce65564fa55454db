package rdp

import (
	"fmt"
	"math"
)

// Accounting of differentially private gradient descent whose every step
// releases an integer vector (clipped per-example gradients, scaled and
// rounded to integers, summed) plus discrete Gaussian noise on every
// coordinate.
//
// One step with integer ℓ2 sensitivity Δ (Δ² = sensSq) and noise N_Z(0, σ²)
// per coordinate is Δ²/(2σ²)-zCDP, the same as the continuous Gaussian
// (Canonne, Kamath, Steinke 2020, their theorem on the multivariate discrete
// Gaussian: Rényi divergences of independent coordinates add, and each
// integer shift μ costs αμ²/(2σ²)). When the noise of a coordinate is
// instead the sum of n independent N_Z(0, σ²) (the distributed form of
// Kairouz, Liu, Steinke 2021), the sum is not a discrete Gaussian and the
// bound carries their small τ term, τ = 10·Σ_{k=1}^{n−1} e^{−2π²σ²k/(k+1)},
// which is 0 for n = 1 (DiscreteGaussianSumRho). zCDP composes by addition
// over the steps.

// DGaussStepsRho returns the zCDP ρ of steps releases, each of a dims-vector
// of squared ℓ2 sensitivity sensSq with noise per coordinate the sum of
// summands independent N_Z(0, σ²) (summands = 1 for one central discrete
// Gaussian, ρ = steps·sensSq/(2σ²)). Invalid arguments give NaN.
func DGaussStepsRho(sensSq, sigma float64, dims, summands, steps int) float64 {
	if steps < 0 || math.IsNaN(sensSq) || math.IsInf(sensSq, 0) {
		return math.NaN()
	}
	var one float64
	if summands == 1 {
		one = DiscreteGaussianRho(sensSq, sigma, dims)
	} else {
		one = DiscreteGaussianSumRho(sensSq, math.Inf(1), sigma, dims, summands)
	}
	return float64(steps) * one
}

// DGaussStepsEps returns the (ε, δ) guarantee of DGaussStepsRho plus
// rhoOther (the other charges of the same run), with the package's zCDP
// conversion ZCDPEps.
func DGaussStepsEps(sensSq, sigma float64, dims, summands, steps int, rhoOther, delta float64) float64 {
	return ZCDPEps(DGaussStepsRho(sensSq, sigma, dims, summands, steps)+rhoOther, delta)
}

// PlanDGaussSteps returns the smallest σ (rounded up to 4 significant
// digits, a short decimal the exact sampler takes exactly) such that steps
// central discrete Gaussian releases of squared sensitivity sensSq, plus
// the other charges rhoOther, fit a zCDP filter of budget RhoForEps(eps,
// delta): the composition converts to at most ε at δ.
func PlanDGaussSteps(eps, delta float64, steps int, sensSq, rhoOther float64) (sigma float64, err error) {
	budget, err := checkPlan(eps, delta, steps)
	if err != nil {
		return 0, err
	}
	if !(rhoOther >= 0) || rhoOther >= budget {
		return 0, fmt.Errorf("rdp: plan: other charges ρ %v leave nothing of the budget", rhoOther)
	}
	return PlanDGaussStepsRho(budget-rhoOther, steps, sensSq)
}

// PlanDGaussStepsRho is PlanDGaussSteps for a filter budget ρ given
// directly (the other charges already taken off).
func PlanDGaussStepsRho(budget float64, steps int, sensSq float64) (sigma float64, err error) {
	if err := checkBudget(budget, steps); err != nil {
		return 0, err
	}
	if !(sensSq > 0) || math.IsInf(sensSq, 0) {
		return 0, fmt.Errorf("rdp: plan: squared sensitivity %v must be a finite number > 0", sensSq)
	}
	return bumpUntil(math.Sqrt(float64(steps)*sensSq/(2*budget)), func(s float64) bool {
		return exactFits(budget, []int{steps}, []float64{DiscreteGaussianRho(sensSq, s, 1)})
	})
}
