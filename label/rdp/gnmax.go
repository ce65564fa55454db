package rdp

import "math"

// GaussianRDP returns the data-independent RDP curve of GNMax, λ/σ² (L2
// sensitivity √2), one value per order (core.rdp_data_independent_gaussian).
func GaussianRDP(sigma float64, orders []float64) []float64 {
	v := sigma * sigma
	out := make([]float64, len(orders))
	for i, o := range orders {
		out[i] = o / v
	}
	return out
}

// ThresholdRDP returns the data-independent RDP curve of the Confident-GNMax
// threshold step (sensitivity 1), λ/(2σ1²), computed as GaussianRDP(√2·σ1).
func ThresholdRDP(sigma1 float64, orders []float64) []float64 {
	return GaussianRDP(math.Sqrt2*sigma1, orders)
}

// argmaxFirst returns the index of the first maximum.
func argmaxFirst(counts []int64) int {
	best := 0
	for i, c := range counts {
		if c > counts[best] {
			best = i
		}
	}
	return best
}

// LogQGaussian returns an upper bound on ln Pr[GNMax output ≠ argmax]
// (Proposition 7: union bound of Gaussian tails, capped at ln(1−1/m));
// core.compute_logq_gaussian. Ties use the first argmax.
func LogQGaussian(counts []int64, sigma float64) float64 {
	n := len(counts)
	if n <= 1 {
		return math.Inf(-1)
	}
	im := argmaxFirst(counts)
	scale := math.Sqrt(2 * sigma * sigma)
	terms := make([]float64, 0, n-1)
	for j, c := range counts {
		if j == im {
			continue
		}
		terms = append(terms, normLogSF(float64(counts[im]-c), scale))
	}
	return math.Min(logSumExp(terms), math.Log(1-1/float64(n)))
}

// GaussianDataDependentRDP bounds the RDP of GNMax given ln q (Theorem 6 with
// the higher orders of Proposition 10), exactly as core.rdp_gaussian: where
// the conditions fail it returns λ/σ²; for ln q = −Inf it returns 0.
func GaussianDataDependentRDP(logq, sigma float64, orders []float64) []float64 {
	out := make([]float64, len(orders))
	if math.IsInf(logq, -1) {
		return out
	}
	variance := sigma * sigma
	mu2 := math.Sqrt(variance * -logq)
	mu1 := mu2 + 1
	anyMask := false
	for i, o := range orders {
		out[i] = o / variance
		if mu1 > o && mu2 > 1 {
			anyMask = true
		}
	}
	rdp1 := mu1 / variance
	rdp2 := mu2 / variance
	logA2 := (mu2 - 1) * rdp2
	if !(anyMask && logq <= logA2-mu2*(math.Log(1+1/(mu1-1))+math.Log(1+1/(mu2-1))) && -logq > rdp2) {
		return out
	}
	log1q := log1mExp(logq)
	inner := log1q - log1mExp((logq+rdp2)*(1-1/mu2))
	bterm := rdp1 - logq/(mu1-1)
	for i, o := range orders {
		if !(mu1 > o && mu2 > 1) {
			continue
		}
		logA := (o - 1) * inner
		logB := (o - 1) * bterm
		logS := logAddExp(log1q+logA, logq+logB)
		if v := logS / (o - 1); v < out[i] {
			out[i] = v
		}
	}
	return out
}

// dataDepGNMaxAt applies Theorem 6 at one order without checking its
// conditions (smooth_sensitivity._compute_data_dep_bound_gnmax).
func dataDepGNMaxAt(sigma, logq, order float64) float64 {
	variance := sigma * sigma
	mu2 := sigma * math.Sqrt(-logq)
	mu1 := mu2 + 1
	eps1 := mu1 / variance
	eps2 := mu2 / variance
	log1q := math.Log1p(-math.Exp(logq))
	logA := (order - 1) * (log1q - math.Log1p(-math.Exp((logq+eps2)*(1-1/mu2))))
	logB := (order - 1) * (eps1 - logq/(mu1-1))
	return logAddExp(log1q+logA, logq+logB) / (order - 1)
}

// IsDataIndependentAlwaysOptGaussian reports, per order, whether the
// data-independent GNMax bound equals the data-dependent one even for a
// unanimous vote (numpy.isclose), i.e. data-dependent analysis cannot help.
func IsDataIndependentAlwaysOptGaussian(numTeachers, numClasses int, sigma float64, orders []float64) []bool {
	unanimous := make([]int64, numClasses)
	unanimous[0] = int64(numTeachers)
	dep := GaussianDataDependentRDP(LogQGaussian(unanimous, sigma), sigma, orders)
	ind := GaussianRDP(sigma, orders)
	out := make([]bool, len(orders))
	for i := range out {
		out[i] = isClose(dep[i], ind[i])
	}
	return out
}

// isClose is numpy.isclose with its default tolerances.
func isClose(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-8+1e-5*math.Abs(b)
}

// LogPrAnswered returns ln Pr[round(max n) + N(0, σ1²) ≥ T], the log
// probability that Confident GNMax answers (core.compute_logpr_answered).
// The max is rounded half to even, as Python's round().
func LogPrAnswered(threshold, sigma1 float64, counts []int64) float64 {
	m := counts[argmaxFirst(counts)]
	return normLogSF(threshold-math.RoundToEven(float64(m)), sigma1)
}

// logPrAnsweredFloat is LogPrAnswered for real-valued (baseline-shifted) votes.
func logPrAnsweredFloat(threshold, sigma1, maxVote float64) float64 {
	return normLogSF(threshold-math.RoundToEven(maxVote), sigma1)
}

// ThresholdDataDependentRDP returns the data-dependent RDP curve of the
// threshold step given ln Pr[answered] (core.compute_rdp_threshold): q =
// min(p, 1−p) and Theorem 6 with σ → √2·σ1.
func ThresholdDataDependentRDP(logPrAnswered, sigma1 float64, orders []float64) []float64 {
	logq := math.Min(logPrAnswered, log1mExp(logPrAnswered))
	return GaussianDataDependentRDP(logq, math.Sqrt2*sigma1, orders)
}

// IsDataIndependentAlwaysOptThreshold reports whether the data-independent
// threshold bound equals the data-dependent one at both extremes max = 0 and
// max = numTeachers, for one order (core.is_data_independent_always_opt_threshold).
func IsDataIndependentAlwaysOptThreshold(numTeachers int, threshold, sigma1, order float64) bool {
	o := []float64{order}
	ind := ThresholdRDP(sigma1, o)[0]
	d1 := ThresholdDataDependentRDP(LogPrAnswered(threshold, sigma1, []int64{0}), sigma1, o)[0]
	d2 := ThresholdDataDependentRDP(LogPrAnswered(threshold, sigma1, []int64{int64(numTeachers)}), sigma1, o)[0]
	return isClose(d1, ind) && isClose(d2, ind)
}
