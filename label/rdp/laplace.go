package rdp

import (
	"math"
	"math/big"
)

// LogQLaplace returns an upper bound on ln Pr[LNMax output ≠ argmax] for
// Laplace noise of scale λ (core.compute_logq_laplace): Σ_j (2+g_j)/4·e^{−g_j}
// with g_j = (n_max − n_j)/λ, capped at ln(1−1/m).
func LogQLaplace(counts []int64, lambda float64) float64 {
	n := len(counts)
	if n <= 1 {
		return math.Inf(-1)
	}
	im := argmaxFirst(counts)
	terms := make([]float64, 0, n-1)
	for j, c := range counts {
		if j == im {
			continue
		}
		x := float64(c-counts[im]) / lambda
		terms = append(terms, math.Log(2-x)+math.Log(.25)+x)
	}
	return math.Min(logSumExp(terms), math.Log(1-1/float64(n)))
}

// PureEpsRDP returns the RDP curve of an ε-DP mechanism whose non-argmax
// outcome has probability at most q = e^logq (core.rdp_pure_eps):
// min(ελ²…, ln T/(λ−1), ε), the T term only when q ≤ 1/(e^ε+1). With
// logq = 0 it is the data-independent min(ε, λε²/2).
func PureEpsRDP(logq, eps float64, orders []float64) []float64 {
	q := math.Exp(logq)
	out := make([]float64, len(orders))
	useT := q <= 1/(math.Exp(eps)+1)
	var a, b float64
	if useT {
		a = math.Log1p(-q)
		b = math.Log1p(-q) - log1mExp(eps+logq)
	}
	for i, o := range orders {
		logT := math.Inf(1)
		if useT {
			logT = logAddExp(a+b*(o-1), logq+eps*(o-1))
		}
		out[i] = math.Min(math.Min(0.5*eps*eps*o, logT/(o-1)), eps)
	}
	return out
}

// PureDP returns the RDP curve of an ε-DP event, min(ε, λε²/2).
func PureDP(eps float64, orders []float64) []float64 {
	return PureEpsRDP(0, eps, orders)
}

// PATE 2017 moments accountant (research/pate_2017/analysis.py).

// ComputeQNoisyMax returns the PATE 2017 bound on Pr[LNMax output ≠ winner]
// for Laplace noise of scale 1/noiseEps: Σ (g+2)/(4e^g), g = noiseEps·gap,
// capped at 1−1/m (analysis.compute_q_noisy_max).
func ComputeQNoisyMax(counts []int64, noiseEps float64) float64 {
	w := argmaxFirst(counts)
	q := 0.0
	for i, c := range counts {
		if i == w {
			continue
		}
		gap := -(noiseEps * float64(c-counts[w]))
		q += (gap + 2.0) / (4.0 * math.Exp(gap))
	}
	return math.Min(q, 1.0-1.0/float64(len(counts)))
}

// ComputeQNoisyMaxApprox is the faster approximation of ComputeQNoisyMax
// ((m−1) times the term of the runner-up; analysis.compute_q_noisy_max_approx).
func ComputeQNoisyMaxApprox(counts []int64, noiseEps float64) float64 {
	w := argmaxFirst(counts)
	maxRest := math.Inf(-1)
	for i, c := range counts {
		if i == w {
			continue
		}
		if v := noiseEps * float64(c-counts[w]); v > maxRest {
			maxRest = v
		}
	}
	gap := -maxRest
	q := float64(len(counts)-1) * (gap + 2.0) / (4.0 * math.Exp(gap))
	return math.Min(q, 1.0-1.0/float64(len(counts)))
}

// LogMGFExact returns the PATE 2017 bound on the log moment generating
// function of moment l for a privEps-DP mechanism with non-winner probability
// q (analysis.logmgf_exact). logmgf(l) = l·RDP(l+1).
func LogMGFExact(q, privEps, l float64) float64 {
	logT := privEps * l
	if q < 0.5 {
		tOne := (1 - q) * powRounded((1-q)/(1-math.Exp(privEps)*q), l)
		tTwo := q * math.Exp(privEps*l)
		if t := tOne + tTwo; t > 0 && !math.IsNaN(t) {
			logT = math.Log(t)
		}
	}
	return math.Min(math.Min(0.5*privEps*privEps*l*(l+1), logT), privEps*l)
}

// LogMGFFromCounts is LogMGFExact for LNMax with Laplace scale 1/noiseEps,
// which is (2·noiseEps)-DP (analysis.logmgf_from_counts).
func LogMGFFromCounts(counts []int64, noiseEps, l float64) float64 {
	return LogMGFExact(ComputeQNoisyMax(counts, noiseEps), 2.0*noiseEps, l)
}

// SensAtK returns the PATE 2017 local sensitivity of the logmgf at distance k
// (analysis.sens_at_k; it tests the unsorted counts[0] < counts[1]+k, as the
// reference does).
func SensAtK(counts []int64, noiseEps, l float64, k int64) float64 {
	if 0.5*noiseEps*l > 1 || len(counts) < 2 {
		return 0
	}
	if counts[0] < counts[1]+k {
		return 0
	}
	s := append([]int64(nil), counts...)
	sortDesc(s)
	s[0] -= k
	s[1] += k
	val := LogMGFFromCounts(s, noiseEps, l)
	s[0]--
	s[1]++
	return LogMGFFromCounts(s, noiseEps, l) - val
}

// SmoothedSens returns the PATE 2017 β-smooth sensitivity of the logmgf
// (analysis.smoothed_sens).
func SmoothedSens(counts []int64, noiseEps, l, beta float64) float64 {
	var k int64
	ss := SensAtK(counts, noiseEps, l, k)
	var mx int64
	for _, c := range counts {
		mx = max(mx, c)
	}
	for k < mx {
		k++
		s := SensAtK(counts, noiseEps, l, k)
		ss = math.Max(ss, math.Exp(-beta*float64(k))*s)
		if s == 0 {
			break
		}
	}
	return ss
}

// MomentsEps converts total log moments (index i ↔ moment l = i+1) to ε at
// δ as PATE 2017 does: ε_l = (logmgf_l − ln δ)/l. It returns the per-moment
// values, the smallest one and its moment l (first on ties).
func MomentsEps(logmgf []float64, delta float64) (perL []float64, eps, lOpt float64) {
	perL = make([]float64, len(logmgf))
	eps = math.Inf(1)
	for i, m := range logmgf {
		l := float64(i + 1)
		perL[i] = (m - math.Log(delta)) / l
		if perL[i] < eps {
			eps, lOpt = perL[i], l
		}
	}
	return perL, eps, lOpt
}

// powRounded returns x**y correctly rounded when y is a small non-negative
// integer (computed exactly in extended precision), else math.Pow. Go's
// math.Pow multiplies repeatedly for integer exponents and can be several ulps
// off; the reference (C pow) is correctly rounded in practice.
func powRounded(x, y float64) float64 {
	if y != math.Trunc(y) || y < 0 || y > 64 || math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return math.Pow(x, y)
	}
	n := int(y)
	acc := new(big.Float).SetPrec(64 * 64).SetFloat64(1)
	b := new(big.Float).SetPrec(64 * 64).SetFloat64(x)
	for i := 0; i < n; i++ {
		acc.Mul(acc, b)
	}
	v, _ := acc.Float64()
	return v
}

func sortDesc(s []int64) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] > s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
