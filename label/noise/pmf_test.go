package noise

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Test helpers: exact probability mass functions, in float64 (fine in tests,
// never on the sampling path), and a χ² goodness-of-fit check.

// window is a pmf on the integers [-m, m]; p[i] is P(X = i−m), with the mass
// of the tails beyond ±m folded into the two end points.
type window struct {
	m int
	p []float64
}

// gaussianPMF returns the discrete Gaussian pmf, its normaliser computed by
// summing the series over |x| ≤ m = ⌈14σ⌉+10 (the rest is below e^{−98}).
func gaussianPMF(sigma float64) window {
	m := int(math.Ceil(14*sigma)) + 10
	p := make([]float64, 2*m+1)
	var z float64
	for i := range p {
		x := float64(i - m)
		p[i] = math.Exp(-x * x / (2 * sigma * sigma))
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	return window{m: m, p: p}
}

// laplacePMF returns the discrete Laplace pmf in closed form,
// P(x) = tanh(1/(2t))·e^{−|x|/t}, over |x| ≤ ⌈40t⌉+10, with the exact tail
// mass P(X > m) = P(X < −m) = tanh(1/(2t))·e^{−(m+1)/t}/(1 − e^{−1/t}) folded in.
func laplacePMF(t float64) window {
	m := int(math.Ceil(40*t)) + 10
	c := math.Tanh(1 / (2 * t))
	p := make([]float64, 2*m+1)
	for i := range p {
		p[i] = c * math.Exp(-math.Abs(float64(i-m))/t)
	}
	tail := c * math.Exp(-float64(m+1)/t) / -math.Expm1(-1/t)
	p[0] += tail
	p[2*m] += tail
	return window{m: m, p: p}
}

// moments returns the variance and the fourth central moment of a symmetric pmf.
func (w window) moments() (variance, mu4 float64) {
	for i, p := range w.p {
		x := float64(i - w.m)
		variance += p * x * x
		mu4 += p * x * x * x * x
	}
	return variance, mu4
}

// chiSquareTest draws n values and returns the χ² statistic, its degrees of
// freedom and p-value against w. Bins are formed greedily from the left so
// that each holds an expected count of at least max(5, n/1000); the last,
// short bin is merged into its neighbour.
func chiSquareTest(t *testing.T, w window, n int, draw func() int64) (stat float64, df int, p float64) {
	t.Helper()
	minExp := max(5, float64(n)/1000)
	binOf := make([]int, len(w.p))
	var expected []float64
	acc := 0.0
	for i, pi := range w.p {
		binOf[i] = len(expected)
		acc += pi * float64(n)
		if acc >= minExp {
			expected = append(expected, acc)
			acc = 0
		}
	}
	if acc > 0 {
		last := len(expected) - 1
		expected[last] += acc
		for i := range binOf {
			if binOf[i] > last {
				binOf[i] = last
			}
		}
	}
	counts := make([]float64, len(expected))
	for range n {
		x := draw()
		i := int(max(-int64(w.m), min(int64(w.m), x))) + w.m
		counts[binOf[i]]++
	}
	for i, e := range expected {
		d := counts[i] - e
		stat += d * d / e
	}
	df = len(expected) - 1
	if df < 1 {
		t.Fatalf("χ² test with %d bins: the pmf is too concentrated for this binning", len(expected))
	}
	return stat, df, distuv.ChiSquared{K: float64(df)}.Survival(stat)
}
