// Package fdp is test support for auditing differential privacy through
// trade-off curves (Dong, Roth, Su 2022, "Gaussian differential privacy"):
// a mechanism is f-DP when every test between its output distributions on
// two neighbouring inputs has false-negative rate at least f(false-positive
// rate). An audit runs the mechanism many times on a worst-case pair of
// neighbours, counts the errors of a test fixed in advance, bounds both
// error rates from above with Clopper–Pearson, and fails when that upper
// point lies strictly below the curve the claimed privacy implies (Nasr et
// al. 2023, "Tight auditing of differentially private machine learning").
// With probability at least 1 − 2·level an honest mechanism passes: its
// true rates (α, β) lie on or above f, both upper bounds are at least the
// true rates, and f is non-increasing, so β_hi ≥ β ≥ f(α) ≥ f(α_hi).
package fdp

import (
	"math"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// Upper is the one-sided Clopper–Pearson upper bound, at confidence
// 1 − level, on the success probability behind x successes in n trials:
// the p with Pr[X ≤ x | p] = level.
func Upper(x, n int, level float64) float64 {
	if x >= n {
		return 1
	}
	if x == 0 { // closed form
		return -math.Expm1(math.Log(level) / float64(n))
	}
	// Pr[X ≤ x | p] = I_{1−p}(n − x, x + 1), decreasing in p. Bisection on
	// the forward function: gonum's Beta quantile loses accuracy far out.
	cdf := func(p float64) float64 { return mathext.RegIncBeta(float64(n-x), float64(x+1), 1-p) }
	return bisect(func(p float64) bool { return cdf(p) <= level }, float64(x)/float64(n), 1, true)
}

// Lower is the one-sided Clopper–Pearson lower bound, at confidence
// 1 − level: the p with Pr[X ≥ x | p] = level.
func Lower(x, n int, level float64) float64 {
	if x <= 0 {
		return 0
	}
	if x == n {
		return math.Exp(math.Log(level) / float64(n))
	}
	// Pr[X ≥ x | p] = I_p(x, n − x + 1), increasing in p.
	sf := func(p float64) float64 { return mathext.RegIncBeta(float64(x), float64(n-x+1), p) }
	return bisect(func(p float64) bool { return sf(p) <= level }, 0, float64(x)/float64(n), false)
}

// bisect finds the boundary in [lo, hi] of a predicate that is true on one
// side of it: on the right when right, else on the left. It returns the
// end of the bracket on the predicate's side (the conservative end).
func bisect(ok func(float64) bool, lo, hi float64, right bool) float64 {
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if ok(mid) == right {
			hi = mid
		} else {
			lo = mid
		}
	}
	if right {
		return hi
	}
	return lo
}

// Curve is a trade-off function: the least false-negative rate a test with
// false-positive rate alpha may have.
type Curve func(alpha float64) float64

// Gaussian is G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), the curve of μ-GDP.
func Gaussian(mu float64) Curve {
	return func(alpha float64) float64 {
		if alpha <= 0 {
			return 1
		}
		if alpha >= 1 {
			return 0
		}
		return stdNormal.CDF(stdNormal.Quantile(1-alpha) - mu)
	}
}

// Approx is the curve of (ε, δ)-DP:
// max(0, 1 − δ − e^ε·α, e^{−ε}·(1 − δ − α)).
func Approx(eps, delta float64) Curve {
	return func(alpha float64) float64 {
		return math.Max(0, math.Max(1-delta-math.Exp(eps)*alpha, math.Exp(-eps)*(1-delta-alpha)))
	}
}

// Pure is the curve of ε-DP: Approx(ε, 0).
func Pure(eps float64) Curve { return Approx(eps, 0) }

var stdNormal = distuv.Normal{Mu: 0, Sigma: 1}

// MuLowerBound is the least μ for which μ-GDP is consistent with a test
// of false-positive rate fpr and false-negative rate fnr: the μ with
// G_μ(fpr) = fnr, or 0 when the point is above G_0.
func MuLowerBound(fpr, fnr float64) float64 {
	if fpr <= 0 || fnr <= 0 {
		return math.Inf(1)
	}
	if fpr >= 1 || fnr >= 1 {
		return 0
	}
	return math.Max(0, stdNormal.Quantile(1-fpr)-stdNormal.Quantile(fnr))
}

// EpsLowerBound is the least ε for which (ε, δ)-DP is consistent with a
// test of rates fpr and fnr (0 when any ε is).
func EpsLowerBound(fpr, fnr, delta float64) float64 {
	lb := 0.0
	if fpr > 0 && 1-delta-fnr > 0 {
		lb = math.Max(lb, math.Log((1-delta-fnr)/fpr))
	} else if fpr <= 0 && 1-delta-fnr > 0 {
		return math.Inf(1)
	}
	if fnr > 0 && 1-delta-fpr > 0 {
		lb = math.Max(lb, math.Log((1-delta-fpr)/fnr))
	} else if fnr <= 0 && 1-delta-fpr > 0 {
		return math.Inf(1)
	}
	return lb
}

// Point is the outcome of one audit check: a test fixed before sampling,
// its false positives among N0 runs on the first input and its false
// negatives among N1 runs on the neighbour.
type Point struct {
	FP, N0 int
	FN, N1 int
}

// Upper returns the Clopper–Pearson upper bounds on the two error rates,
// each at confidence 1 − level.
func (p Point) Upper(level float64) (fpr, fnr float64) {
	return Upper(p.FP, p.N0, level), Upper(p.FN, p.N1, level)
}

// Violates reports whether the upper point of p lies strictly below f:
// the test is better than the claimed privacy allows.
func (p Point) Violates(f Curve, level float64) bool {
	fpr, fnr := p.Upper(level)
	return fnr < f(fpr)
}

// Shifted returns the exact error rates of the threshold test "reject when
// X > k" between X ~ pmf and X + shift (shift ≥ 0), where pmf[i] is
// Pr[X = i − off]: FPR = Pr[X > k], FNR = Pr[X + shift ≤ k].
func Shifted(pmf []float64, off, shift, k int) (fpr, fnr float64) {
	for i, p := range pmf {
		x := i - off
		if x > k {
			fpr += p
		}
		if x+shift <= k {
			fnr += p
		}
	}
	return fpr, fnr
}

// DiscreteGaussian returns the pmf of the discrete Gaussian with parameter
// σ on [−r, r] (index i is the value i − r), renormalised on that range.
func DiscreteGaussian(sigma float64, r int) []float64 {
	return normalised(2*r+1, func(i int) float64 {
		x := float64(i - r)
		return math.Exp(-x * x / (2 * sigma * sigma))
	})
}

// DiscreteLaplace returns the pmf of the discrete Laplace of scale t
// (Pr[x] ∝ e^{−|x|/t}) on [−r, r].
func DiscreteLaplace(t float64, r int) []float64 {
	return normalised(2*r+1, func(i int) float64 { return math.Exp(-math.Abs(float64(i-r)) / t) })
}

func normalised(n int, w func(int) float64) []float64 {
	p := make([]float64, n)
	s := 0.0
	for i := range p {
		p[i] = w(i)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// Difference returns the pmf of Y − X for independent X ~ a and Y ~ b,
// both centred (index i is the value i − (len−1)/2); the result is centred
// the same way.
func Difference(a, b []float64) []float64 {
	out := make([]float64, len(a)+len(b)-1)
	for i, pa := range a {
		for j, pb := range b {
			// (j − rb) − (i − ra) + (ra + rb) = j + (len(a) − 1 − i)
			out[j+len(a)-1-i] += pa * pb
		}
	}
	return out
}

// renyiOrders are the orders at which ZCDP checks the Rényi bound: using
// fewer orders only weakens the curve (the audit stays sound).
var renyiOrders = func() []float64 {
	var o []float64
	for l := 1.0 + 1.0/64; l < 4096; l *= 1.05 {
		o = append(o, l)
	}
	return o
}()

// binaryRenyi is D_λ(P‖Q) for P = (p, 1 − p), Q = (q, 1 − q).
func binaryRenyi(p, q, l float64) float64 {
	term := func(a, b float64) float64 {
		switch {
		case a == 0:
			return math.Inf(-1)
		case b == 0:
			return math.Inf(1)
		}
		return l*math.Log(a) + (1-l)*math.Log(b)
	}
	x, y := term(p, q), term(1-p, 1-q)
	m := math.Max(x, y)
	if math.IsInf(m, 0) {
		return m
	}
	return (m + math.Log(math.Exp(x-m)+math.Exp(y-m))) / (l - 1)
}

// ZCDP is the curve implied by ρ-zCDP between neighbours (in both
// directions): the least β such that the test's two output distributions,
// (α, 1 − α) and (1 − β, β), are within Rényi divergence λρ of each other
// at every order λ (data processing of Rényi divergence). It holds for
// every ρ-zCDP mechanism, so it is the claim a zCDP accountant makes.
func ZCDP(rho float64) Curve { return ZCDPOnOrders(rho, renyiOrders) }

// ZCDPOnOrders is ZCDP's curve when the claim holds on the given orders
// only (a charge that is ρ-zCDP on a bounded range of orders).
func ZCDPOnOrders(rho float64, orders []float64) Curve {
	return func(alpha float64) float64 {
		if alpha >= 1 {
			return 0
		}
		if alpha <= 0 {
			return 1
		}
		ok := func(beta float64) bool {
			for _, l := range orders {
				if binaryRenyi(alpha, 1-beta, l) > l*rho || binaryRenyi(1-beta, alpha, l) > l*rho {
					return false
				}
			}
			return true
		}
		lo, hi := 0.0, 1-alpha // hi is feasible: the two distributions coincide
		for range 60 {
			mid := (lo + hi) / 2
			if ok(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		return lo // the largest β known infeasible: a lower bound on the curve
	}
}

// RhoLowerBound is the least ρ for which ρ-zCDP is consistent with a test
// of rates fpr and fnr (the largest λ-normalised binary Rényi divergence).
func RhoLowerBound(fpr, fnr float64) float64 { return RhoLowerBoundOnOrders(renyiOrders)(fpr, fnr) }

// RhoLowerBoundOnOrders is RhoLowerBound over the given orders only.
func RhoLowerBoundOnOrders(orders []float64) func(fpr, fnr float64) float64 {
	return func(fpr, fnr float64) float64 {
		if fpr+fnr >= 1 {
			return 0
		}
		lb := 0.0
		for _, l := range orders {
			lb = math.Max(lb, math.Max(binaryRenyi(fpr, 1-fnr, l), binaryRenyi(1-fnr, fpr, l))/l)
		}
		return lb
	}
}
