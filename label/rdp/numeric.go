package rdp

import "math"

// logAddExp returns log(exp(x)+exp(y)) in the numpy.logaddexp form
// max + log1p(exp(-|x-y|)), which keeps the smaller term when both are tiny.
func logAddExp(x, y float64) float64 {
	if x == y {
		// Also handles x == y == ±Inf.
		return x + math.Ln2
	}
	if math.IsInf(x, -1) {
		return y
	}
	if math.IsInf(y, -1) {
		return x
	}
	if x > y {
		return x + math.Log1p(math.Exp(y-x))
	}
	return y + math.Log1p(math.Exp(x-y))
}

// logSumExp is the reference's _logaddexp for a list: m + log(Σ exp(x−m)).
func logSumExp(xs []float64) float64 {
	if len(xs) == 0 {
		return math.Inf(-1)
	}
	m := xs[0]
	for _, x := range xs[1:] {
		if x > m {
			m = x
		}
	}
	if math.IsInf(m, -1) {
		return m
	}
	if math.IsInf(m, 1) {
		return m
	}
	s := 0.0
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// log1mExp returns log(1−exp(x)) for x ≤ 0 (the reference's _log1mexp).
// It returns NaN for x > 0.
func log1mExp(x float64) float64 {
	switch {
	case x < -1:
		return math.Log1p(-math.Exp(x))
	case x < 0:
		return math.Log(-math.Expm1(x))
	case x == 0:
		return math.Inf(-1)
	default:
		return math.NaN()
	}
}

// logNdtr returns log Φ(a), the log of the standard normal CDF, accurately
// over the whole real line (scipy.special.log_ndtr): log1p(−Φ(−a)) on the
// right, log(erfc/2) in the middle and an asymptotic series far on the left,
// so that very negative arguments do not underflow to −Inf.
func logNdtr(a float64) float64 {
	t := a / math.Sqrt2
	switch {
	case math.IsNaN(a):
		return a
	case a >= -1:
		return math.Log1p(-math.Erfc(t) / 2)
	case a > -20:
		return math.Log(math.Erfc(-t) / 2)
	}
	if math.IsInf(a, -1) {
		return a
	}
	// log Φ(a) = −a²/2 − log(−a) − ½log(2π) + log(1 − 1/a² + 3/a⁴ − …).
	logLHS := -0.5*a*a - math.Log(-a) - 0.5*math.Log(2*math.Pi)
	last, rhs, num, denom := 0.0, 1.0, 1.0, 1.0
	cons := 1 / (a * a)
	sign := 1.0
	for i := 1; math.Abs(last-rhs) > 0x1p-52 && i < 500; i++ {
		last = rhs
		sign = -sign
		denom *= cons
		num *= float64(2*i - 1)
		rhs += sign * num * denom
	}
	return logLHS + math.Log(rhs)
}

// normLogSF returns log Pr[N(0, scale²) ≥ x] (scipy.stats.norm.logsf).
func normLogSF(x, scale float64) float64 {
	return logNdtr(-(x / scale))
}

// normCDF returns Φ(x).
func normCDF(x float64) float64 {
	return math.Erfc(-x/math.Sqrt2) / 2
}

// brentq finds a root of f in [xa, xb] (f(xa), f(xb) of opposite signs) with
// the algorithm of scipy.optimize.brentq (xtol, rtol as there).
func brentq(f func(float64) float64, xa, xb, xtol, rtol float64, maxIter int) (float64, bool) {
	xpre, xcur := xa, xb
	var xblk, fblk, spre, scur float64
	fpre, fcur := f(xpre), f(xcur)
	if fpre == 0 {
		return xpre, true
	}
	if fcur == 0 {
		return xcur, true
	}
	if math.Signbit(fpre) == math.Signbit(fcur) {
		return math.NaN(), false
	}
	for i := 0; i < maxIter; i++ {
		if fpre != 0 && fcur != 0 && math.Signbit(fpre) != math.Signbit(fcur) {
			xblk, fblk = xpre, fpre
			spre = xcur - xpre
			scur = spre
		}
		if math.Abs(fblk) < math.Abs(fcur) {
			xpre, xcur, xblk = xcur, xblk, xcur
			fpre, fcur, fblk = fcur, fblk, fcur
		}
		delta := (xtol + rtol*math.Abs(xcur)) / 2
		sbis := (xblk - xcur) / 2
		if fcur == 0 || math.Abs(sbis) < delta {
			return xcur, true
		}
		if math.Abs(spre) > delta && math.Abs(fcur) < math.Abs(fpre) {
			var stry float64
			if xpre == xblk {
				stry = -fcur * (xcur - xpre) / (fcur - fpre)
			} else {
				dpre := (fpre - fcur) / (xpre - xcur)
				dblk := (fblk - fcur) / (xblk - xcur)
				stry = -fcur * (fblk*dblk - fpre*dpre) / (dblk * dpre * (fblk - fpre))
			}
			if 2*math.Abs(stry) < math.Min(math.Abs(spre), 3*math.Abs(sbis)-delta) {
				spre, scur = scur, stry
			} else {
				spre, scur = sbis, sbis
			}
		} else {
			spre, scur = sbis, sbis
		}
		xpre, fpre = xcur, fcur
		if math.Abs(scur) > delta {
			xcur += scur
		} else if sbis > 0 {
			xcur += delta
		} else {
			xcur -= delta
		}
		fcur = f(xcur)
	}
	return xcur, false
}

// fminbound minimises f on [x1, x2] with scipy's bounded Brent method
// (minimize_scalar(method="bounded"), xatol 1e-5, 500 iterations) and
// returns the minimiser and the minimum found.
func fminbound(f func(float64) float64, x1, x2 float64) (float64, float64) {
	const xatol = 1e-5
	const maxfun = 500
	sqrtEps := math.Sqrt(2.2e-16)
	goldenMean := 0.5 * (3.0 - math.Sqrt(5.0))
	a, b := x1, x2
	fulc := a + goldenMean*(b-a)
	nfc, xf := fulc, fulc
	var rat, e float64
	x := xf
	fx := f(x)
	num := 1
	ffulc, fnfc := fx, fx
	xm := 0.5 * (a + b)
	tol1 := sqrtEps*math.Abs(xf) + xatol/3.0
	tol2 := 2.0 * tol1
	sign := func(v float64) float64 {
		switch {
		case v > 0:
			return 1
		case v < 0:
			return -1
		}
		return 0
	}
	for math.Abs(xf-xm) > (tol2 - 0.5*(b-a)) {
		golden := true
		if math.Abs(e) > tol1 {
			golden = false
			r := (xf - nfc) * (fx - ffulc)
			q := (xf - fulc) * (fx - fnfc)
			p := (xf-fulc)*q - (xf-nfc)*r
			q = 2.0 * (q - r)
			if q > 0.0 {
				p = -p
			}
			q = math.Abs(q)
			r = e
			e = rat
			if math.Abs(p) < math.Abs(0.5*q*r) && p > q*(a-xf) && p < q*(b-xf) {
				rat = p / q
				x = xf + rat
				if (x-a) < tol2 || (b-x) < tol2 {
					si := sign(xm-xf) + b2f(xm-xf == 0)
					rat = tol1 * si
				}
			} else {
				golden = true
			}
		}
		if golden {
			if xf >= xm {
				e = a - xf
			} else {
				e = b - xf
			}
			rat = goldenMean * e
		}
		si := sign(rat) + b2f(rat == 0)
		x = xf + si*math.Max(math.Abs(rat), tol1)
		fu := f(x)
		num++
		if fu <= fx {
			if x >= xf {
				a = xf
			} else {
				b = xf
			}
			fulc, ffulc = nfc, fnfc
			nfc, fnfc = xf, fx
			xf, fx = x, fu
		} else {
			if x < xf {
				a = x
			} else {
				b = x
			}
			if fu <= fnfc || nfc == xf {
				fulc, ffulc = nfc, fnfc
				nfc, fnfc = x, fu
			} else if fu <= ffulc || fulc == xf || fulc == nfc {
				fulc, ffulc = x, fu
			}
		}
		xm = 0.5 * (a + b)
		tol1 = sqrtEps*math.Abs(xf) + xatol/3.0
		tol2 = 2.0 * tol1
		if num >= maxfun {
			break
		}
	}
	return xf, fx
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
