package label

import (
	"math"
	"strconv"
	"testing"
)

func TestRoundUpDecimal(t *testing.T) {
	tests := []struct {
		x      float64
		digits int
		want   string
	}{
		{118.7712, 4, "118.8"},
		{40, 4, "40.00"},
		{0.0123451, 3, "0.0124"},
		{123456, 2, "130000"},
		{6.23, 3, "6.23"},
	}
	for _, tc := range tests {
		got := roundUpDecimal(tc.x, tc.digits)
		g, _ := strconv.ParseFloat(got, 64)
		w, _ := strconv.ParseFloat(tc.want, 64)
		if g != w || g < tc.x {
			t.Errorf("roundUpDecimal(%g, %d) = %s, want %s", tc.x, tc.digits, got, tc.want)
		}
	}
}

func TestDiscreteGaussianTailPoint(t *testing.T) {
	tests := []struct{ sigma, p float64 }{{1, 1e-3}, {10, 1e-6}, {15.9, 1e-7}, {40, 1e-9}}
	for _, tc := range tests {
		tp := discreteGaussianTailPoint(tc.sigma, tc.p)
		// Continuous Gaussian tail as a cross-check: Pr[Z ≥ t] ≈ ½erfc(t/(σ√2)).
		tail := func(t int64) float64 { return 0.5 * math.Erfc((float64(t)-0.5)/(tc.sigma*math.Sqrt2)) }
		if tail(tp) > tc.p*1.5 || tail(tp-1) < tc.p/1.5 {
			t.Errorf("σ=%g p=%g: tail point %d (tails %g, %g)", tc.sigma, tc.p, tp, tail(tp-1), tail(tp))
		}
	}
}
