package rdp

import (
	"errors"
	"fmt"
	"math"
	"math/big"
)

// The smooth-sensitivity release of the data-dependent RDP of GNMax (PATE
// 2018, Section 4.2 and Appendix C: the GNSS mechanism, Theorem 23), with
// integer noise.
//
// The released quantity is Y = ⌈f/g⌉, f the data-dependent RDP of the
// queries at the fixed order λ and g = GNSSGrid: an integer. Its local
// sensitivity is at most LS_f/g + 1 (a ceiling adds at most 1), and
// S' = SS_β/g + 2 (one more for floating-point rounding) is a β-smooth upper
// bound on it. The noise is a discrete Gaussian N_Z(0, s²), s = σ_SS·S'
// rounded up to a rational of six significant digits (plus one unit of the
// last digit): s = σ_SS·S'', S'' ≤ (1 + GNSSScaleSlack)·S', so S'' is
// β''-smooth with β'' = β + ln(1 + GNSSScaleSlack). It is drawn exactly from
// the secure source (no floating point on the noise path).
//
// Cost. The noise of neighbours x, y is N_Z(Y(x), σ²S''(x)²) and
// N_Z(Y(y), σ²S''(y)²) with |Y(x) − Y(y)| ≤ min(S''(x), S''(y)) and
// S''(x)/S''(y) = u ∈ [e^{−β''}, e^{β''}]. For continuous Gaussians the
// Rényi divergence of order λ is, scaled so that S''(y) = 1,
//
//	λΔ²/(2σ²κ_u) − ln u − ln(κ_u)/(2(λ−1)),  κ_u = λ − (λ−1)u², Δ ≤ min(u, 1),
//
// and bounding each term by its largest value over u (Δ ≤ 1, κ_u ≥
// κ = λ − (λ−1)e^{2β''} > 0, −ln u ≤ β'') gives
//
//	λ/(2σ²κ) + β'' + max(0, −ln κ)/(2(λ−1)),  for 1 < λ < e^{2β''}/(e^{2β''} − 1).
//
// This is not the GNSSRDP formula of PATE 2018 (Theorem 23, as in the
// reference code): that formula's first term, λe^{2β}/σ², does not grow as
// κ → 0, and at orders near 1/(2β) it is below the exact divergence (at
// β = 0.0329, σ_SS = 6.23, λ = 14, the parameters of the paper's MNIST
// figure, the exact divergence is 1.607, the formula 0.518; see
// TestGNSSDiscreteRDPBound). The release uses the bound above.
//
// For discrete Gaussians with integer means, Poisson summation gives, for
// every t > 0 and real c, Σ_x e^{−(x−c)²/2t²} ≤ √(2π)·t·(1 + θ(t)), θ(t) =
// 2Σ_{k≥1} e^{−2π²t²k²}, with equality at c = 0 (the normaliser of
// N_Z(μ, s²)). The sum Σ p^λ q^{1−λ} of two discrete Gaussians of parameters
// s1 (of p), s2 is such a sum with 1/t² = λ/s1² − (λ−1)/s2² ≤ λ/s1², divided
// by Z(s1)^λ·Z(s2)^{1−λ}; so it exceeds the continuous integral by at most
// the factor (1 + θ(t))·(1 + θ(s2))^{λ−1}, and with t ≥ s1/√λ ≥ σ_SS/√λ and
// s2 ≥ σ_SS (S'' ≥ 1) the divergence grows by at most
// ln(1 + θ(σ_SS/√λ))/(λ−1) + ln(1 + θ(σ_SS)). GNSSDiscreteRDP is the sum.

// GNSSGrid is the width, in RDP units, of the grid the data-dependent RDP is
// rounded up to before the discrete noise is added.
const GNSSGrid = 1e-6

// gnssGridInv is 1/GNSSGrid, exactly.
const gnssGridInv = 1_000_000

// GNSSScaleSlack bounds the relative rounding up of the noise parameter.
const GNSSScaleSlack = 2e-5

// gnssTheta returns θ(t) = 2·Σ_{k≥1} e^{−2π²t²k²}, rounded up.
func gnssTheta(t float64) float64 {
	if !(t > 0) {
		return math.Inf(1)
	}
	a := 2 * math.Pi * math.Pi * t * t
	s := 0.0
	for k := 1.0; k < 1e6; k++ {
		term := math.Exp(-a * k * k)
		s += term
		if term < 1e-300 || term < s*1e-17 {
			// The rest is below term·Σ e^{−a(2k+1)j} ≤ term/(1 − e^{−a}).
			s += term / -math.Expm1(-a)
			break
		}
	}
	return 2 * s * (1 + 1e-12)
}

// GNSSGaussianRDP bounds the Rényi divergence of order λ between
// N(μ1, σ²S1²) and N(μ2, σ²S2²) for every |μ1 − μ2| ≤ min(S1, S2) and
// S1/S2 ∈ [e^{−β}, e^{β}] (the continuous GNSS mechanism; see the top of
// this file): λ/(2σ²κ) + β + max(0, −ln κ)/(2(λ−1)), κ = λ − (λ−1)e^{2β}.
// It is +Inf unless 1 < λ and κ > 0.
func GNSSGaussianRDP(beta, sigma, order float64) float64 {
	if !(beta >= 0) || !(sigma > 0) || !(order > 1) || math.IsInf(order, 0) {
		return math.Inf(1)
	}
	k := order - (order-1)*math.Exp(2*beta)
	if !(k > 0) {
		return math.Inf(1)
	}
	return order/(2*sigma*sigma*k) + beta + math.Max(0, -math.Log(k))/(2*(order-1))
}

// GNSSDiscreteRDP returns the RDP at order λ of the discrete GNSS release
// with smoothness β (before the slack of the rounded noise parameter) and
// noise multiplier σ_SS: GNSSGaussianRDP at β” = β + ln(1 + GNSSScaleSlack)
// plus the discretisation term (see the top of this file). It is +Inf
// outside the orders where that bound is finite.
func GNSSDiscreteRDP(beta, sigmaSS, order float64) float64 {
	if !(beta > 0) || !(sigmaSS > 0) {
		return math.Inf(1)
	}
	c := GNSSGaussianRDP(beta+math.Log1p(GNSSScaleSlack), sigmaSS, order)
	if math.IsInf(c, 1) || math.IsNaN(c) {
		return math.Inf(1)
	}
	return c + math.Log1p(gnssTheta(sigmaSS/math.Sqrt(order)))/(order-1) + math.Log1p(gnssTheta(sigmaSS))
}

// GNSSRelease is one smooth-sensitivity release of the data-dependent RDP
// of GNMax queries: a sample, different each time.
type GNSSRelease struct {
	// Beta, SigmaSS, Order are the parameters, fixed before the votes are
	// read; Grid is GNSSGrid.
	Beta, SigmaSS, Order, Grid float64
	// Cost is the RDP of the release at Order (GNSSDiscreteRDP), data-independent.
	Cost float64
	// RDP is the released data-dependent RDP of the queries (a noisy
	// sample) plus Cost: the total RDP at Order the release states.
	RDP float64
	// Eps is RDP converted to ε at Delta by the conversion asked for.
	Eps, Delta float64
	Conversion string
}

// PrepareGNMaxSS prepares one smooth-sensitivity release of the
// data-dependent RDP, at the fixed order, of GNMax with noise sigma on the
// votes (every row one query), with the noise parameters β and σ_SS fixed
// in advance. The caller draws the integer noise, N_Z(0, Scale²), exactly
// from a secure source and passes it to Release, which adds the release's
// own cost. It refuses parameters for which the release is not valid (the
// order outside the range of GNSSDiscreteRDP, or conditions C5 and C6 not
// holding at σ, the number of classes and the order) and the orders at
// which GNMax is data-independent for these teachers (there is then nothing
// to sanitize: publish the data-independent ε). Every refusal depends on
// the parameters, the number of classes and of teachers, never on the
// votes. The plan itself is not releasable: only Release's result is.
func PrepareGNMaxSS(votes [][]int64, sigma, beta, sigmaSS, order, delta float64, conversion string) (*GNSSPlan, error) {
	return prepareGNMaxSS(votes, sigma, beta, sigmaSS, order, delta, conversion)
}

// GNSSPlan is a release prepared from the votes, before its noise is
// drawn: the integer Y (never shown) and the noise's scale.
type GNSSPlan struct {
	y int64
	// Scale is the parameter s of the discrete Gaussian N_Z(0, s²) the
	// release's noise is drawn from.
	Scale *big.Rat
	r     GNSSRelease // the parameters and the cost
}

// Release returns the release for the noise z drawn from N_Z(0, Scale²).
func (g *GNSSPlan) Release(z int64) *GNSSRelease {
	// (Y + Z)·grid exactly, then as a float64 for the conversion (both
	// post-processing of the released integer).
	noisy, _ := new(big.Rat).SetFrac(big.NewInt(g.y+z), big.NewInt(gnssGridInv)).Float64()
	r := g.r
	r.RDP = math.Max(noisy, 0) + r.Cost
	if r.Conversion == "improved" {
		r.Eps = improvedAt(r.Order, r.RDP, r.Delta)
	} else {
		r.Eps = r.RDP + math.Log(1/r.Delta)/(r.Order-1)
	}
	return &r
}

func prepareGNMaxSS(votes [][]int64, sigma, beta, sigmaSS, order, delta float64, conversion string) (*GNSSPlan, error) {
	if !(sigma > 0) || !(beta > 0) || !(sigmaSS > 0) || !(order > 1) || math.IsInf(order, 0) {
		return nil, errors.New("rdp: gnss release: σ, β and σ_SS must be > 0 and the order > 1")
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("rdp: gnss release: delta %v must be in (0, 1)", delta)
	}
	if conversion != "classic" && conversion != "improved" {
		return nil, fmt.Errorf("rdp: gnss release: unknown conversion %q (classic|improved)", conversion)
	}
	cost := GNSSDiscreteRDP(beta, sigmaSS, order)
	if math.IsInf(cost, 1) || math.IsNaN(cost) {
		return nil, fmt.Errorf("rdp: gnss release: order %v is not in (1, e^{2β}/(e^{2β}−1)) for β = %v (with the rounding slack)", order, beta)
	}
	if len(votes) == 0 {
		return nil, errors.New("rdp: gnss release: no votes")
	}
	m := len(votes[0])
	if m < 2 {
		return nil, fmt.Errorf("rdp: gnss release: %d classes, need at least 2", m)
	}
	teachers := int64(-1)
	for _, v := range votes {
		if len(v) != m {
			return nil, errors.New("rdp: gnss release: rows of different numbers of classes")
		}
		var s int64
		for _, c := range v {
			if c < 0 {
				return nil, errors.New("rdp: gnss release: a negative count")
			}
			s += c
		}
		if teachers < 0 {
			teachers = s
		} else if s != teachers {
			return nil, errors.New("rdp: gnss release: rows of different numbers of votes")
		}
	}
	if teachers < 1 {
		return nil, errors.New("rdp: gnss release: no teachers")
	}
	if c5, c6 := CheckConditions(sigma, m, order); !(c5 && c6) {
		return nil, fmt.Errorf("rdp: gnss release: conditions C5 and C6 do not hold at σ = %v, %d classes, order %v", sigma, m, order)
	}
	o := []float64{order}
	if IsDataIndependentAlwaysOptGaussian(int(teachers), m, sigma, o)[0] {
		return nil, fmt.Errorf("rdp: gnss release: at order %v the data-independent bound is always the smaller: publish the data-independent ε", order)
	}

	// The data-dependent RDP f and its β-smooth sensitivity.
	f := 0.0
	ls := make([]float64, teachers)
	for _, v := range votes {
		f += GaussianDataDependentRDP(LogQGaussian(v, sigma), sigma, o)[0]
		for d, x := range LocalSensitivityBoundsGNMax(v, int(teachers), sigma, order) {
			ls[d] += x
		}
	}
	ss := DiscountedMax(beta, ls)
	if math.IsNaN(f) || math.IsInf(f, 0) || math.IsNaN(ss) || math.IsInf(ss, 0) || ss < 0 {
		return nil, errors.New("rdp: gnss release: the analysis of these votes is not finite")
	}
	y := math.Ceil(f * gnssGridInv)
	if y > 1<<52 {
		return nil, errors.New("rdp: gnss release: the data-dependent RDP is too large for the grid")
	}
	s, err := roundUpRat(sigmaSS * (ss*gnssGridInv + 2))
	if err != nil {
		return nil, fmt.Errorf("rdp: gnss release: noise parameter: %w", err)
	}
	return &GNSSPlan{y: int64(y), Scale: s, r: GNSSRelease{Beta: beta, SigmaSS: sigmaSS, Order: order, Grid: GNSSGrid,
		Cost: cost, Delta: delta, Conversion: conversion}}, nil
}

// roundUpRat returns a rational s ≥ v with s ≤ v·(1 + GNSSScaleSlack): v
// rounded up to six significant digits, plus one unit of the sixth (which
// absorbs the rounding of the floating-point division below).
func roundUpRat(v float64) (*big.Rat, error) {
	if !(v > 0) || math.IsInf(v, 0) || v > 1<<40 {
		return nil, fmt.Errorf("%v is not in (0, 2^40]", v)
	}
	e := int(math.Floor(math.Log10(v))) - 5
	unit := new(big.Rat).SetInt64(1)
	ten := big.NewRat(10, 1)
	for i := 0; i < e; i++ {
		unit.Mul(unit, ten)
	}
	for i := 0; i > e; i-- {
		unit.Quo(unit, ten)
	}
	uf, _ := unit.Float64()
	n := math.Ceil(v/uf) + 1
	s := new(big.Rat).Mul(unit, new(big.Rat).SetFloat64(n))
	if sf, _ := s.Float64(); sf < v || sf > v*(1+GNSSScaleSlack) {
		return nil, fmt.Errorf("rounding %v gave %v", v, sf)
	}
	return s, nil
}
