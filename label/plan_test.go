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

func TestTimelineThinsItself(t *testing.T) {
	st := &runState{filter: &unlimited{}, step: timelineStep(-1)}
	for row := int64(1); row <= 10_000_000; row++ {
		if row%st.step == 0 {
			st.mark(row)
		}
	}
	if n := len(st.timeline); n > maxTimeline || n < maxTimeline/2 {
		t.Fatalf("%d timeline points for 10M rows", n)
	}
	for i := 1; i < len(st.timeline); i++ {
		if st.timeline[i].Rows <= st.timeline[i-1].Rows {
			t.Fatalf("timeline out of order at %d", i)
		}
	}
}
