package rdp

import (
	"math"
	"sync"
)

// Smooth-sensitivity analysis of PATE 2018 (research/pate_2018/smooth_sensitivity.py).

type sskey struct{ sigma, order float64 }

var logq0Cache sync.Map // sskey → float64

func muGNMax(sigma, logq float64) (mu1, mu2 float64) {
	mu2 = sigma * math.Sqrt(-logq)
	return mu2 + 1, mu2
}

// LogQ0GNMax returns ln q0, the point above which the data-independent GNMax
// bound beats the data-dependent one at this order (compute_logq0_gnmax; the
// root is found with Brent's method to scipy's brentq tolerances). It returns
// NaN if no valid bracket exists.
func LogQ0GNMax(sigma, order float64) float64 {
	k := sskey{sigma, order}
	if v, ok := logq0Cache.Load(k); ok {
		return v.(float64)
	}
	v := computeLogQ0(sigma, order)
	logq0Cache.Store(k, v)
	return v
}

func computeLogQ0(sigma, order float64) float64 {
	valid := func(logq float64) bool {
		mu1, mu2 := muGNMax(sigma, logq)
		if mu1 < order {
			return false
		}
		eps2 := mu2 / (sigma * sigma)
		return logq <= (mu2-1)*eps2-mu2*math.Log(mu1/(mu1-1)*mu2/(mu2-1))
	}
	cmp := func(logq float64) float64 {
		return dataDepGNMaxAt(sigma, logq, order) - order/(sigma*sigma)
	}
	logub := math.Min(math.Min(-(1+1/sigma)*(1+1/sigma), -((order-.99)/sigma)*((order-.99)/sigma)), -1/(sigma*sigma))
	if !valid(logub) {
		return math.NaN()
	}
	if cmp(logub) < 0 {
		return logub
	}
	loglb := 2 * logub
	for cmp(loglb) > 0 {
		if loglb <= -10000 {
			return math.NaN()
		}
		loglb *= 1.5
	}
	r, ok := brentq(cmp, loglb, logub, 2e-12, 4*0x1p-52, 100)
	if !ok || !valid(r) {
		return math.NaN()
	}
	return r
}

func blGNMax(q, sigma float64, m int) float64 {
	return float64(m-1) / 2 * math.Erfc(1/sigma+erfcinv(2*q/float64(m-1)))
}

func buGNMax(q, sigma float64, m int) float64 {
	return math.Min(1, float64(m-1)/2*math.Erfc(-1/sigma+erfcinv(2*q/float64(m-1))))
}

func logQ1(sigma, order float64, m int) float64 {
	return math.Log(blGNMax(math.Exp(LogQ0GNMax(sigma, order)), sigma, m))
}

func rdpGNMaxSS(sigma, logq, order float64) float64 {
	if logq >= LogQ0GNMax(sigma, order) {
		return order / (sigma * sigma)
	}
	return dataDepGNMaxAt(sigma, logq, order)
}

func localSensGNMax(logq, sigma float64, m int, order float64) float64 {
	lq0 := LogQ0GNMax(sigma, order)
	lq1 := logQ1(sigma, order, m)
	if lq1 <= logq && logq <= lq0 {
		logq = lq1
	}
	b := rdpGNMaxSS(sigma, logq, order)
	bu := rdpGNMaxSS(sigma, math.Log(buGNMax(math.Exp(logq), sigma, m)), order)
	bl := rdpGNMaxSS(sigma, math.Log(blGNMax(math.Exp(logq), sigma, m)), order)
	return math.Max(bu-b, b-bl)
}

// LocalSensitivityBoundsGNMax returns, for d = 0 … numTeachers−1, an upper
// bound on the local sensitivity of the GNMax data-dependent RDP at distance d
// (Algorithms 4–5; compute_local_sensitivity_bounds_gnmax).
func LocalSensitivityBoundsGNMax(votes []int64, numTeachers int, sigma, order float64) []float64 {
	m := len(votes)
	lq0 := LogQ0GNMax(sigma, order)
	lq1 := logQ1(sigma, order, m)
	logq := LogQGaussian(votes, sigma)
	plateau := localSensGNMax(lq1, sigma, m, order)
	res := make([]float64, numTeachers)
	for i := range res {
		res[i] = plateau
	}
	if (lq1 <= logq && logq <= lq0) || numTeachers == 0 {
		return res
	}
	v := append([]int64(nil), votes...)
	sortDesc(v)
	res[0] = localSensGNMax(logq, sigma, m, order)
	d := 0
	goLeft := logq > lq0
	for (goLeft && logq > lq0 && v[1] > 0) || (!goLeft && logq < lq1) {
		d++
		if d >= numTeachers {
			break
		}
		if goLeft {
			v[0]++
			v[1]--
			for idx := 1; idx < len(v)-1 && v[idx] < v[idx+1]; idx++ {
				v[idx], v[idx+1] = v[idx+1], v[idx]
			}
		} else {
			v[0]--
			v[1]++
		}
		logq = LogQGaussian(v, sigma)
		res[d] = localSensGNMax(logq, sigma, m, order)
	}
	return res
}

// thresholdRDPList returns the data-dependent threshold RDP at this order for
// max votes v = 0 … numTeachers.
func thresholdRDPList(numTeachers int, threshold, sigma, order float64) []float64 {
	o := []float64{order}
	res := make([]float64, numTeachers+1)
	for v := range res {
		logp := normLogSF(threshold-float64(v), sigma)
		res[v] = ThresholdDataDependentRDP(logp, sigma, o)[0]
	}
	return res
}

// LocalSensitivityBoundsThreshold returns, for d = 0 … numTeachers−1, the
// local sensitivity bounds of the threshold step's data-dependent RDP at
// distance d (compute_local_sensitivity_bounds_threshold).
func LocalSensitivityBoundsThreshold(counts []int64, numTeachers int, threshold, sigma, order float64) []float64 {
	return lsThreshold(counts, numTeachers, thresholdRDPList(numTeachers, threshold, sigma, order))
}

func lsThreshold(counts []int64, numTeachers int, list []float64) []float64 {
	ls := func(v int) float64 {
		r := math.Inf(-1)
		if v > 0 {
			r = math.Abs(list[v-1] - list[v])
		}
		if v < numTeachers {
			r = math.Max(r, math.Abs(list[v+1]-list[v]))
		}
		return r
	}
	curMax := int(math.RoundToEven(float64(counts[argmaxFirst(counts)])))
	out := make([]float64, numTeachers)
	for d := 0; d < max(curMax, numTeachers-curMax) && d < numTeachers; d++ {
		r := math.Inf(-1)
		if curMax+d <= numTeachers && curMax+d >= 0 {
			r = ls(curMax + d)
		}
		if curMax-d >= 0 && curMax-d <= numTeachers {
			r = math.Max(r, ls(curMax-d))
		}
		out[d] = r
	}
	return out
}

// DiscountedMax returns the β-smooth upper bound max_d e^{−βd}·ls[d].
func DiscountedMax(beta float64, ls []float64) float64 {
	m := math.Inf(-1)
	for d, v := range ls {
		m = math.Max(m, v*math.Exp(-beta*float64(d)))
	}
	return m
}

// GNSSRDP returns the RDP at this order of releasing a value plus Gaussian
// noise scaled by its β-smooth sensitivity, σ_SS·SS_β·N(0,1) (Theorem 23):
// λe^{2β}/σ² + (−½ln(1−2λβ) + βλ)/(λ−1). It is +Inf outside 1 < λ < 1/(2β).
// It is the paper's formula, kept to reproduce the paper's figures; at
// orders near 1/(2β) it is below the exact Rényi divergence of Gaussians it
// covers (see gnss.go), and the release (ReleaseGNMaxSS) charges
// GNSSDiscreteRDP instead.
func GNSSRDP(beta, sigma, order float64) float64 {
	if beta > 0 && !(1 < order && order < 1/(2*beta)) {
		return math.Inf(1)
	}
	return order*math.Exp(2*beta)/(sigma*sigma) + (-.5*math.Log(1-2*order*beta)+beta*order)/(order-1)
}

// betaOfQ is the data-dependent GNMax RDP as a function of q (the symbolic
// "beta" of check_conditions).
func betaOfQ(q, sigma, order float64) float64 {
	return dataDepGNMaxAt(sigma, math.Log(q), order)
}

// derivative returns a central-difference estimate of f'(x) with a step
// relative to x (Richardson-extrapolated).
func derivative(f func(float64) float64, x float64) float64 {
	h := 1e-4 * math.Abs(x)
	if h == 0 {
		h = 1e-8
	}
	d1 := (f(x+h) - f(x-h)) / (2 * h)
	d2 := (f(x+h/2) - f(x-h/2)) / h
	return (4*d2 - d1) / 3
}

// CheckConditions verifies conditions C5 and C6 of the smooth-sensitivity
// analysis (Section B.4.2): the data-dependent RDP is non-decreasing in q on
// (0, q0) (C5), and its increase under the upper bound bu(q) is
// non-decreasing on (0, bl(q0)) (C6). As the reference, it minimises the
// derivative with a bounded Brent search and tests the minimum for ≥ 0; the
// reference differentiates symbolically, this port numerically.
func CheckConditions(sigma float64, numClasses int, order float64) (c5, c6 bool) {
	lq0 := LogQ0GNMax(sigma, order)
	if math.IsNaN(lq0) || numClasses < 2 {
		return false, false
	}
	q0 := math.Exp(lq0)
	beta := func(q float64) float64 { return betaOfQ(q, sigma, order) }
	_, m5 := fminbound(func(q float64) float64 { return derivative(beta, q) }, 0, q0)
	c5 = m5 >= 0
	if !c5 {
		return false, false
	}
	m := float64(numClasses - 1)
	bu := func(q float64) float64 { return m / 2 * math.Erfc(erfcinv(2*q/m)-1/sigma) }
	dbeta := func(q float64) float64 { return beta(bu(q)) - beta(q) }
	_, m6 := fminbound(func(q float64) float64 { return derivative(dbeta, q) }, 0, blGNMax(q0, sigma, numClasses))
	return c5, m6 >= 0
}

// erfcinv returns the inverse complementary error function. Go's math.Erfcinv
// computes Erfinv(1−y) and loses all precision for tiny y; below 0.5 the
// result is polished by Newton steps on ln erfc (computed via logNdtr), which
// stays accurate down to the smallest positive doubles.
func erfcinv(y float64) float64 {
	if !(y > 0) || y >= 0.5 {
		return math.Erfcinv(y)
	}
	x := math.Erfcinv(y)
	if math.IsInf(x, 0) || math.IsNaN(x) || y < 1e-10 {
		// Asymptotic start: erfc(x) ≈ e^{−x²}/(x√π).
		l := -math.Log(y)
		x = math.Sqrt(l - 0.5*math.Log(math.Pi*l))
	}
	ly := math.Log(y)
	for i := 0; i < 50; i++ {
		le := math.Ln2 + logNdtr(-x*math.Sqrt2) // ln erfc(x)
		d := -2 / math.SqrtPi * math.Exp(-x*x-le)
		step := (le - ly) / d
		x -= step
		if math.Abs(step) <= 1e-16*math.Abs(x) {
			break
		}
	}
	return x
}
