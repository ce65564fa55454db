package rdp

import (
	"fmt"
	"math"
	"strconv"
)

// EpsClassic converts an RDP curve to (ε, δ)-DP with Mironov's Prop. 3,
// ε = min_λ RDP(λ) − ln δ/(λ−1) (core.compute_eps_from_delta). It returns ε
// and the first order attaining the minimum. Mismatched lengths give NaN.
func EpsClassic(orders, rdp []float64, delta float64) (eps, order float64) {
	if len(orders) != len(rdp) || len(orders) == 0 {
		return math.NaN(), math.NaN()
	}
	ld := math.Log(delta)
	eps, order = math.Inf(1), orders[0]
	for i, o := range orders {
		e := rdp[i] - ld/(o-1)
		if e < eps {
			eps, order = e, o
		}
	}
	return eps, order
}

// improvedAt is the improved conversion at one order (Balle et al. 2020,
// Canonne–Kamath–Steinke 2020; hyperparameters_2022 rdp_accountant).
func improvedAt(a, r, delta float64) float64 {
	switch {
	case delta*delta+math.Expm1(-r) >= 0:
		return 0
	case a > 1.01:
		return r + math.Log1p(-1/a) - math.Log(delta*a)/(a-1)
	default:
		return math.Inf(1)
	}
}

// EpsImproved converts an RDP curve to (ε, δ)-DP with the improved bound
// ε = RDP + ln(1−1/λ) − ln(δλ)/(λ−1) (ε = 0 when δ² + expm1(−RDP) ≥ 0; orders
// ≤ 1.01 are not used), clipped at 0. It returns ε and the first optimal order.
func EpsImproved(orders, rdp []float64, delta float64) (eps, order float64) {
	if len(orders) != len(rdp) || len(orders) == 0 {
		return math.NaN(), math.NaN()
	}
	eps, order = math.Inf(1), orders[0]
	for i, o := range orders {
		e := improvedAt(o, rdp[i], delta)
		if e < eps {
			eps, order = e, o
		}
	}
	return math.Max(0, eps), order
}

// zcdpEpsAt is the improved conversion of ρ-zCDP at order λ.
func zcdpEpsAt(rho, delta, lambda float64) float64 {
	return rho*lambda + math.Log1p(-1/lambda) - math.Log(delta*lambda)/(lambda-1)
}

// ZCDPEps returns the (ε, δ) guarantee of ρ-zCDP (RDP(λ) = ρλ at every order),
// minimising the improved conversion numerically over all real orders λ > 1
// (a dense logarithmic grid refined by golden-section search). Every λ gives a
// valid bound, so numerical inexactness can only make ε larger.
func ZCDPEps(rho, delta float64) float64 {
	if !(delta > 0 && delta < 1) || rho < 0 || math.IsNaN(rho) {
		return math.NaN()
	}
	if math.IsInf(rho, 1) {
		return math.Inf(1)
	}
	if delta*delta+math.Expm1(-rho) >= 0 {
		return 0
	}
	// Search t = ln(λ−1) on [-12, 25].
	best, _ := gridThenGolden(func(t float64) float64 { return zcdpEpsAt(rho, delta, 1+math.Exp(t)) }, -12, 25, 800)
	return math.Max(0, best)
}

// gridThenGolden minimises f, unimodal on [lo, hi], by a grid of n steps
// then a golden-section search in the grid step on either side of the
// grid's best point, never leaving [lo, hi]. It returns the smallest value
// it evaluated and where.
func gridThenGolden(f func(float64) float64, lo, hi float64, n int) (best, at float64) {
	best, at = f(lo), lo
	if !(hi > lo) {
		return best, at
	}
	step := (hi - lo) / float64(n)
	for i := 1; i <= n; i++ {
		t := lo + step*float64(i)
		if i == n {
			t = hi
		}
		if v := f(t); v < best {
			best, at = v, t
		}
	}
	a, b := math.Max(lo, at-step), math.Min(hi, at+step)
	g := (math.Sqrt(5) - 1) / 2
	c, d := b-g*(b-a), a+g*(b-a)
	fc, fd := f(c), f(d)
	for i := 0; i < 100 && b-a > 1e-13; i++ {
		if fc < fd {
			b, d, fd = d, c, fc
			c = b - g*(b-a)
			fc = f(c)
		} else {
			a, c, fc = c, d, fd
			d = a + g*(b-a)
			fd = f(d)
		}
	}
	if fc < best {
		best, at = fc, c
	}
	if fd < best {
		best, at = fd, d
	}
	return best, at
}

// RhoForEps returns the largest ρ with ZCDPEps(ρ, δ) ≤ eps (bisection on the
// monotone ZCDPEps). It returns 0 for eps ≤ 0 and NaN for δ ∉ (0,1).
func RhoForEps(eps, delta float64) float64 {
	if !(delta > 0 && delta < 1) || math.IsNaN(eps) {
		return math.NaN()
	}
	if eps <= 0 {
		return 0
	}
	lo, hi := 0.0, 1.0
	for ZCDPEps(hi, delta) <= eps {
		lo = hi
		hi *= 2
		if hi > 1e300 {
			return lo
		}
	}
	for i := 0; i < 200; i++ {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if ZCDPEps(mid, delta) <= eps {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// GDPEps returns the smallest ε ≥ 0 at which μ-Gaussian DP (Dong, Roth, Su)
// implies (ε, δ)-DP: Φ(−ε/μ+μ/2) − e^ε·Φ(−ε/μ−μ/2) ≤ δ (bisection to 1e-12).
func GDPEps(mu, delta float64) float64 {
	if !(delta > 0 && delta < 1) || !(mu >= 0) {
		return math.NaN()
	}
	if mu == 0 {
		return 0
	}
	if math.IsInf(mu, 1) {
		return math.Inf(1)
	}
	dl := func(e float64) float64 {
		return normCDF(-e/mu+mu/2) - math.Exp(e+logNdtr(-e/mu-mu/2))
	}
	if dl(0) <= delta {
		return 0
	}
	lo, hi := 0.0, 1.0
	for dl(hi) > delta {
		lo = hi
		hi *= 2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-13*math.Max(1, hi); i++ {
		mid := lo + (hi-lo)/2
		if dl(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// RoundUp rounds eps up to the given number of decimal places: the reported
// ε is never smaller than the computed one. Non-finite values are returned
// unchanged.
func RoundUp(eps float64, digits int) float64 {
	if math.IsNaN(eps) || math.IsInf(eps, 0) {
		return eps
	}
	if digits < 0 {
		digits = 0
	}
	if digits > 15 {
		return eps
	}
	m := math.Ceil(eps*math.Pow(10, float64(digits))) - 1
	for {
		v, err := strconv.ParseFloat(fmt.Sprintf("%.0fe-%d", m, digits), 64)
		if err != nil {
			return eps
		}
		if v >= eps {
			return v
		}
		m++
	}
}

// roundUpSig rounds x > 0 up to sig significant decimal digits, returning the
// float nearest to that short decimal (itself ≥ x).
func roundUpSig(x float64, sig int) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return x
	}
	e := int(math.Floor(math.Log10(x))) - (sig - 1)
	// Start one unit below the float estimate: x/10^e may round up.
	m := math.Ceil(x/math.Pow(10, float64(e))) - 1
	for i := 0; i < 10; i++ {
		v, err := strconv.ParseFloat(fmt.Sprintf("%.0fe%d", m, e), 64)
		if err != nil {
			return x
		}
		if v >= x {
			return v
		}
		m++
	}
	return x
}

// DiscreteGaussianRho returns the zCDP parameter ρ of releasing a d-dimensional
// integer vector with independent discrete Gaussian noise N_Z(0, σ²) on every
// coordinate, when the squared L2 sensitivity is l2SensSq.
//
// For integer shifts the one-dimensional discrete Gaussian satisfies
// D_λ(N_Z(μ,σ²)‖N_Z(ν,σ²)) ≤ λ(μ−ν)²/(2σ²) (Canonne, Kamath, Steinke 2020),
// and Rényi divergence adds over independent coordinates, so the vector is
// ρ = Δ²/(2σ²)-zCDP whatever d is (CKS20's multivariate statement). The extra
// term τ = 10·Σ_{k=1}^{n−1} e^{−2π²σ²·k/(k+1)} of Kairouz, Liu, Steinke 2021
// concerns a *sum of n* discrete Gaussians (distributed noise), which pate does
// not use; it is added here only when summands > 1 (see
// DiscreteGaussianSumRho). dims is accepted for symmetry and validated.
func DiscreteGaussianRho(l2SensSq, sigma float64, dims int) float64 {
	if dims < 1 || !(sigma > 0) || l2SensSq < 0 {
		return math.NaN()
	}
	return l2SensSq / (2 * sigma * sigma)
}

// DiscreteGaussianSumRho returns ρ for a d-dimensional release whose noise is
// the sum of n independent N_Z(0, σ²) per coordinate (Kairouz, Liu, Steinke
// 2021, Thm. 1, zCDP form): ε = min{√(Δ₂²/(nσ²) + ½τd), Δ₁/(√n σ) + τd} with
// τ = 10·Σ_{k=1}^{n−1} e^{−2π²σ²·k/(k+1)}, ρ = ε²/2. l1Sens may be +Inf to use
// the first term only.
func DiscreteGaussianSumRho(l2SensSq, l1Sens, sigma float64, dims, n int) float64 {
	if dims < 1 || n < 1 || !(sigma > 0) || l2SensSq < 0 {
		return math.NaN()
	}
	tau := 0.0
	c := 2 * math.Pi * math.Pi * sigma * sigma
	for k := 1; k < n; k++ {
		kk := float64(k)
		tau += math.Exp(-c * kk / (kk + 1))
	}
	tau *= 10
	nf := float64(n)
	e1 := math.Sqrt(l2SensSq/(nf*sigma*sigma) + 0.5*tau*float64(dims))
	e2 := l1Sens/(math.Sqrt(nf)*sigma) + tau*float64(dims)
	e := math.Min(e1, e2)
	return e * e / 2
}

// Unbounded is the maxOrder of a charge that holds at every Rényi order > 1
// (a zCDP charge): see ZCDPEpsWithin.
const Unbounded = 0

// CommonMaxOrder is the range of orders on which two charges both hold,
// each given by its maxOrder (Unbounded, or a charge on the orders
// 2..maxOrder): the smaller bound, Unbounded only when both are.
func CommonMaxOrder(a, b float64) float64 {
	switch {
	case a == Unbounded || math.IsInf(a, 1):
		return b
	case b == Unbounded || math.IsInf(b, 1):
		return a
	}
	return math.Min(a, b)
}

// ZCDPEpsWithin is ZCDPEps for a charge ρ that holds only on the Rényi
// orders 2..maxOrder (RDP(λ) ≤ ρλ there, nothing said elsewhere; private-
// knn's subsampled Gaussian): the improved conversion minimised over the
// real orders λ ∈ [2, maxOrder], never at an order the charge does not
// cover. maxOrder Unbounded (or +Inf) is ZCDPEps itself, every order > 1.
// It returns ε (clipped at 0) and the order attaining it (NaN for the
// unbounded case: ZCDPEps does not say). A maxOrder below 2 covers no order
// and gives +Inf.
func ZCDPEpsWithin(rho, delta, maxOrder float64) (eps, order float64) {
	if maxOrder == Unbounded || math.IsInf(maxOrder, 1) {
		return ZCDPEps(rho, delta), math.NaN()
	}
	if !(delta > 0 && delta < 1) || rho < 0 || math.IsNaN(rho) || math.IsNaN(maxOrder) {
		return math.NaN(), math.NaN()
	}
	if maxOrder < 2 || math.IsInf(rho, 1) {
		return math.Inf(1), math.NaN()
	}
	// improvedAt also says ε = 0 where δ² + expm1(−2ρ) ≥ 0 (order 2).
	at := func(t float64) float64 { return math.Min(maxOrder, math.Max(2, 1+math.Exp(t))) } // in range, whatever the rounding
	f := func(t float64) float64 { l := at(t); return improvedAt(l, rho*l, delta) }
	// Search t = ln(λ−1) on [0, ln(maxOrder−1)]: λ ∈ [2, maxOrder]. The
	// improved conversion of ρλ is unimodal in λ, so a grid then a
	// golden-section refinement inside the range finds its minimum; every
	// point evaluated is inside the range, so inexactness only raises ε.
	best, bestT := gridThenGolden(f, 0, math.Log(maxOrder-1), 400)
	return math.Max(0, best), at(bestT)
}
