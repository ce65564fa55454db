package rdp

import (
	"fmt"
	"math"
)

// Pure ε-DP events in the accountant.
//
// An ε-DP event is (ε²/2)-zCDP (Bun & Steinke 2016, Proposition 1.4), so it
// can be charged to a zCDP filter like any Gaussian event. When every event
// of a run is pure, basic composition gives a second reading, (Σ εᵢ, 0)-DP
// (Dwork & Roth 2014, Theorem 3.16), which is the smaller one for a few
// events; the zCDP reading wins for many. Both are valid, so a run may claim
// the smaller.

// PureReading is the guarantee of n events, each eps0-DP, on top of a zCDP
// part rho0 (a Gaussian class discovery, say; 0 when there is none).
type PureReading struct {
	// Basic is Σ εᵢ = n·eps0 at δ = 0; +Inf when rho0 > 0 (a Gaussian event
	// has no pure reading).
	Basic float64
	// Rho is rho0 + n·eps0²/2 and ZCDP its conversion at delta.
	Rho  float64
	ZCDP float64
}

// Claim returns the smaller reading and its δ (0 for basic composition).
func (r PureReading) Claim(delta float64) (eps, d float64, basic bool) {
	if r.Basic <= r.ZCDP {
		return r.Basic, 0, true
	}
	return r.ZCDP, delta, false
}

// PureComposition returns both readings of n events of eps0-DP each plus a
// zCDP part rho0, the zCDP one converted at delta.
func PureComposition(n int64, eps0, rho0, delta float64) PureReading {
	r := PureReading{Basic: math.Inf(1), Rho: rho0 + float64(n)*PureDPRho(eps0)}
	if rho0 == 0 {
		r.Basic = float64(n) * eps0
	}
	r.ZCDP = ZCDPEps(r.Rho, delta)
	return r
}

// PureEventsThatFit returns the largest number n of eps0-DP events that a
// budget (eps, delta) can pay for on top of the zCDP part rho0: n·eps0 ≤ eps
// by basic composition (only when rho0 = 0) or rho0 + n·eps0²/2 ≤
// RhoForEps(eps, delta), whichever allows more. All events cost the same, so
// capping their number in advance caps the spend of any adaptive run at the
// guarantee of n events (a run with fewer events is one padded with unused
// ones). It fails for eps0 ≤ 0 or a budget that is not a valid (ε, δ).
func PureEventsThatFit(eps, delta, eps0, rho0 float64) (int64, error) {
	if !(eps0 > 0) || math.IsInf(eps0, 0) {
		return 0, fmt.Errorf("rdp: pure event ε %v must be a finite number > 0", eps0)
	}
	if !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) || rho0 < 0 {
		return 0, fmt.Errorf("rdp: budget (ε %v, δ %v) on top of ρ %v is not valid", eps, delta, rho0)
	}
	var basic int64
	if rho0 == 0 {
		basic = int64(math.Floor(eps / eps0))
		for basic > 0 && float64(basic)*eps0 > eps {
			basic--
		}
		for float64(basic+1)*eps0 <= eps {
			basic++
		}
	}
	budget := RhoForEps(eps, delta)
	var zc int64
	if budget > rho0 {
		zc, _ = fitCount(budget-rho0, PureDPRho(eps0))
		for zc > 0 && rho0+float64(zc)*PureDPRho(eps0) > budget {
			zc--
		}
	}
	return max(basic, zc), nil
}

func fitCount(budget, each float64) (int64, bool) {
	n := math.Floor(budget / each)
	if n > math.MaxInt32 {
		return math.MaxInt32, true
	}
	k := int64(n)
	for float64(k+1)*each <= budget {
		k++
	}
	return k, false
}

// PlanPureEps returns the largest eps0 (rounded down to 4 significant
// digits, so that it is a short exact decimal) such that n events of eps0-DP
// fit the budget (eps, delta) on top of rho0, by either reading.
func PlanPureEps(eps, delta float64, n int64, rho0 float64) (float64, error) {
	if n < 1 {
		return 0, fmt.Errorf("rdp: plan for %d events: need at least one", n)
	}
	if !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) || rho0 < 0 {
		return 0, fmt.Errorf("rdp: budget (ε %v, δ %v) on top of ρ %v is not valid", eps, delta, rho0)
	}
	var e float64
	if rho0 == 0 {
		e = eps / float64(n)
	}
	if b := RhoForEps(eps, delta) - rho0; b > 0 {
		e = math.Max(e, math.Sqrt(2*b/float64(n)))
	}
	if !(e > 0) {
		return 0, fmt.Errorf("rdp: no budget left for %d events", n)
	}
	e = roundDownSig(e, 4)
	for e > 0 {
		if k, err := PureEventsThatFit(eps, delta, e, rho0); err == nil && k >= n {
			return e, nil
		}
		e = roundDownSig(e*(1-1e-4), 4)
	}
	return 0, fmt.Errorf("rdp: no budget left for %d events", n)
}

// roundDownSig rounds x > 0 down to sig significant decimal digits.
func roundDownSig(x float64, sig int) float64 {
	e := math.Floor(math.Log10(x)) - float64(sig-1)
	scale := math.Pow(10, e)
	m := math.Floor(x/scale + 1e-9)
	v := m * scale
	for v > x {
		m--
		v = m * scale
	}
	// Print and read back to get the shortest decimal.
	var r float64
	fmt.Sscanf(fmt.Sprintf("%.*g", sig, v), "%g", &r)
	if r > x {
		return v
	}
	return r
}

// StableTV is the additive stability β of the stable-em predictor (Dagan &
// Feldman 2020, proof of Theorem 1, with Poisson subsampling): a unit lands
// in the random subset with probability q, and otherwise the exponential
// mechanism, eps-DP for a fixed subset, moves any output probability by at
// most the total variation of two distributions within a factor e^eps of
// each other, tanh(eps/2). So β = q + (1−q)·tanh(eps/2).
func StableTV(q, eps float64) float64 {
	return q + (1-q)*math.Tanh(eps/2)
}

// FlipEps is the ε of private prediction after mixing a β-stable predictor
// with a uniform label over C classes with probability γ (Dagan & Feldman
// 2020, Corollary 1): each label has probability at least γ/C, so an
// additive change β becomes the factor 1 + Cβ/γ, ε = ln(1 + Cβ/γ).
func FlipEps(beta, gamma float64, classes int) float64 {
	return math.Log1p(float64(classes) * beta / gamma)
}
