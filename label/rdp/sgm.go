package rdp

import (
	"fmt"
	"math"
)

// The sampled Gaussian mechanism (SGM): each row of the sensitive data is
// kept with probability q (Poisson subsampling), and a function of the kept
// rows whose value one row moves by at most Δ in ℓ2 is released with
// Gaussian noise of standard deviation σ. With z = σ/Δ (the noise
// multiplier), Mironov, Talwar and Zhang ("Rényi Differential Privacy of the
// Sampled Gaussian Mechanism", 2019, §3.3) give its RDP at an integer order
// α ≥ 2 in closed form:
//
//	A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k exp((k²−k)/(2z²)),
//	RDP(α) = ln A_α / (α−1),
//
// the expression dp_accounting's _compute_log_a_int evaluates (the reference
// values in testdata/sgm_rdp_reference.json come from a 50-digit port of it).
//
// Here it is evaluated as ln A_α = log1p(A_α − 1), with
// A_α − 1 = Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k expm1((k²−k)/(2z²)) (the k = 0, 1
// terms of the binomial sum add up to the rest of 1): every term is
// positive, so a small A_α − 1 keeps its digits where the plain sum would
// cancel.
//
// The bound only uses E_{μ0}[(μ1/μ0)^k] ≤ exp((k²−k)/(2z²)) for the pair of
// the mechanism on neighbouring inputs, i.e. that the unsampled release is
// 1/(2z²)-zCDP; the discrete Gaussian on an integer vector meets it with
// 1/(2z²) = Δ²/(2σ²) (Canonne, Kamath, Steinke 2020), so SGMLogA bounds
// the moment of adding a row. For removing one, MTZ 2019 show the other
// moment is no larger for the continuous Gaussian; no published proof
// covers the discrete one. TestDiscreteSGMChargeCoversBothDirections
// computes both directions exactly for the discrete Gaussian on the shifts
// one row makes to a vote histogram (e₁, e₁ − e₂), over σ ∈ [0.3, 40],
// q ∈ [0.001, 0.99] and orders 2 to 4096, integer and not, and holds the
// charge above them (the largest removal divergence is 0.99996 of it).

// SGMLogA returns ln A_α of the sampled Gaussian mechanism with sampling
// rate q ∈ (0, 1] and noise multiplier z > 0 at the integer order α ≥ 2.
// It returns NaN for arguments outside those ranges.
func SGMLogA(q, z float64, alpha int) float64 {
	if !(q > 0 && q <= 1) || !(z > 0) || math.IsInf(z, 0) || alpha < 2 {
		return math.NaN()
	}
	inv := 1 / (2 * z * z)
	if q == 1 {
		return float64(alpha) * float64(alpha-1) * inv
	}
	a := float64(alpha)
	lq, l1q := math.Log(q), math.Log1p(-q)
	lga, _ := math.Lgamma(a + 1)
	// log of Σ_{k≥2} C(α,k)(1−q)^{α−k} q^k expm1((k²−k)/(2z²)).
	terms := make([]float64, 0, alpha-1)
	top := math.Inf(-1)
	for k := 2; k <= alpha; k++ {
		kf := float64(k)
		lk, _ := math.Lgamma(kf + 1)
		lr, _ := math.Lgamma(a - kf + 1)
		e := (kf*kf - kf) * inv
		var lexp float64 // ln expm1(e)
		if e > 30 {
			lexp = e + math.Log1p(-math.Exp(-e))
		} else {
			lexp = math.Log(math.Expm1(e))
		}
		t := lga - lk - lr + kf*lq + (a-kf)*l1q + lexp
		terms = append(terms, t)
		top = math.Max(top, t)
	}
	var s float64
	for _, t := range terms {
		s += math.Exp(t - top)
	}
	lm1 := top + math.Log(s) // ln(A_α − 1)
	if lm1 > 30 {
		return lm1 + math.Log1p(math.Exp(-lm1))
	}
	return math.Log1p(math.Exp(lm1))
}

// SGMRDP returns the RDP of the sampled Gaussian mechanism at the integer
// order α ≥ 2: ln A_α/(α−1).
func SGMRDP(q, z float64, alpha int) float64 {
	return SGMLogA(q, z, alpha) / float64(alpha-1)
}

// SGMMaxOrder bounds the orders SGMRho covers.
const SGMMaxOrder = 4096

// SGMRho returns the smallest ρ such that the sampled Gaussian mechanism
// (q, z) satisfies RDP(α) ≤ ρ·α at every real order α ∈ [2, maxOrder]: a
// zCDP charge that holds on those orders only (the restriction is what lets
// subsampling amplify: above them the bound tends to the unsampled
// 1/(2z²)). ln A_α is convex in α (Hölder), so between two integer orders k
// and k+1 it lies below the chord of ln A_k and ln A_{k+1}; the supremum of
// chord/(α(α−1)) on [k, k+1] is taken at an end or at a root of its
// derivative, both in closed form. The result is rounded up by a relative
// 1e-9 to cover the floating-point error of ln A.
func SGMRho(q, z float64, maxOrder int) (float64, error) {
	if !(q > 0 && q <= 1) || !(z > 0) || math.IsInf(z, 0) {
		return 0, fmt.Errorf("rdp: sampled Gaussian: need 0 < q ≤ 1 and z > 0, got q = %v, z = %v", q, z)
	}
	if maxOrder < 2 || maxOrder > SGMMaxOrder {
		return 0, fmt.Errorf("rdp: sampled Gaussian: orders up to %d, need 2..%d", maxOrder, SGMMaxOrder)
	}
	if q == 1 {
		return 1 / (2 * z * z), nil
	}
	prev := SGMLogA(q, z, 2)
	rho := prev / 2
	for k := 2; k < maxOrder; k++ {
		next := SGMLogA(q, z, k+1)
		rho = math.Max(rho, chordMax(float64(k), prev, next))
		prev = next
	}
	if math.IsNaN(rho) || math.IsInf(rho, 0) {
		return 0, fmt.Errorf("rdp: sampled Gaussian q = %v, z = %v: the bound is not finite", q, z)
	}
	return rho * (1 + 1e-9), nil
}

// chordMax is the supremum over α ∈ [k, k+1] of L(α)/(α(α−1)), L the chord
// through (k, a) and (k+1, b): L(α) = c + sα with s = b−a, c = a − k·s. Its
// derivative vanishes where s·α² + 2c·α − c = 0.
func chordMax(k, a, b float64) float64 {
	s := b - a
	c := a - k*s
	f := func(x float64) float64 { return (c + s*x) / (x * (x - 1)) }
	best := math.Max(f(k), f(k+1))
	try := func(x float64) {
		if x > k && x < k+1 {
			best = math.Max(best, f(x))
		}
	}
	switch {
	case s != 0:
		d := 4*c*c + 4*s*c
		if d >= 0 {
			r := math.Sqrt(d)
			try((-2*c + r) / (2 * s))
			try((-2*c - r) / (2 * s))
		}
	case c != 0:
		try(0.5)
	}
	return best
}

// ZCDPOrder returns the order λ at which the improved conversion of ρ-zCDP
// at δ is smallest (the order a filter of budget ρ converts at): a grid
// search in ln(λ−1) as ZCDPEps does, refined by golden-section search. It
// returns NaN for δ ∉ (0, 1) or ρ not > 0.
func ZCDPOrder(rho, delta float64) float64 {
	if !(delta > 0 && delta < 1) || !(rho > 0) || math.IsInf(rho, 0) {
		return math.NaN()
	}
	f := func(t float64) float64 { return zcdpEpsAt(rho, delta, 1+math.Exp(t)) }
	const lo, hi, n = -12.0, 25.0, 800
	step := (hi - lo) / n
	best, bestT := math.Inf(1), lo
	for i := 0; i <= n; i++ {
		t := lo + step*float64(i)
		if v := f(t); v < best {
			best, bestT = v, t
		}
	}
	a, b := bestT-step, bestT+step
	g := (math.Sqrt(5) - 1) / 2
	for i := 0; i < 100; i++ {
		x, y := b-g*(b-a), a+g*(b-a)
		if f(x) < f(y) {
			b = y
		} else {
			a = x
		}
	}
	return 1 + math.Exp((a+b)/2)
}

// PlanSGMRho returns the smallest σ (rounded up to 4 significant digits)
// such that queries releases of the sampled Gaussian mechanism with rate q
// and ℓ2 sensitivity √l2SensSq, each charged SGMRho(q, σ/√l2SensSq,
// maxOrder), fit a zCDP filter of budget ρ.
func PlanSGMRho(budget float64, queries int, q, l2SensSq float64, maxOrder int) (float64, error) {
	if err := checkBudget(budget, queries); err != nil {
		return 0, err
	}
	if !(l2SensSq > 0) {
		return 0, fmt.Errorf("rdp: plan: sensitivity² %v must be > 0", l2SensSq)
	}
	d := math.Sqrt(l2SensSq)
	fits := func(s float64) bool {
		r, err := SGMRho(q, s/d, maxOrder)
		return err == nil && exactFits(budget, []int{queries}, []float64{r})
	}
	// The unsampled charge l2SensSq/(2σ²) bounds the sampled one: its σ
	// fits; halve the lower end until it does not, then bisect.
	hi := math.Sqrt(float64(queries)*l2SensSq/(2*budget)) * (1 + 1e-9)
	if !fits(hi) {
		return 0, fmt.Errorf("rdp: plan: the unsampled σ %v does not fit", hi)
	}
	lo := hi / 2
	for i := 0; fits(lo); i++ {
		if i > 60 {
			return 0, fmt.Errorf("rdp: plan: no lower σ bound below %v", lo)
		}
		hi, lo = lo, lo/2
	}
	for hi-lo > 1e-7*hi {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return bumpUntil(hi, fits)
}
