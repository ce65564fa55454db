package rdp

import (
	"math"
	"testing"
)

// TestZCDPEpsWithin: a charge that holds on the orders 2..A converts on
// those orders only. Inside its range the best order is the unbounded
// conversion's; outside it the bound is read at the range's edge and is
// never below the unbounded figure; no order outside [2, A] is ever
// returned.
func TestZCDPEpsWithin(t *testing.T) {
	tests := []struct {
		name          string
		rho, delta, a float64
		want          float64 // when > 0: the expected ε to 1e-3
	}{
		// private-knn's one answer: ρ 2.319e-4 on the orders 2..4 at δ 1e-5
		// (the run's report: ε 3.089 at order 4), where the unbounded
		// conversion reads order ≈ 167 and says 0.0712.
		{"knn one answer", 2.319e-4, 1e-5, 4, 3.0887},
		{"range holds the optimum", 0.05, 1e-5, 500, 0},
		{"optimum above the range", 1e-3, 1e-6, 10, 0},
		{"optimum below order 2", 5, 1e-5, 64, 0},
		{"the single order 2", 0.5, 1e-5, 2, 0},
		{"huge range", 1e-7, 1e-9, 4096, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			free := ZCDPEps(tc.rho, tc.delta)
			got, order := ZCDPEpsWithin(tc.rho, tc.delta, tc.a)
			if !(order >= 2 && order <= tc.a) {
				t.Fatalf("order %g outside [2, %g]", order, tc.a)
			}
			if got < free*(1-1e-12) {
				t.Fatalf("ε %g within the orders, below the unbounded %g", got, free)
			}
			// It is the improved conversion at its order, and no order of
			// a fine grid of the range does better.
			if at := math.Max(0, improvedAt(order, tc.rho*order, tc.delta)); math.Abs(at-got) > 1e-12*math.Max(1, got) {
				t.Fatalf("ε %g is not the conversion %g at its order %g", got, at, order)
			}
			for i := 0; i <= 2000; i++ {
				l := 2 + (tc.a-2)*float64(i)/2000
				if v := math.Max(0, improvedAt(l, tc.rho*l, tc.delta)); v < got*(1-1e-9) {
					t.Fatalf("order %g gives %g < %g", l, v, got)
				}
			}
			zo := ZCDPOrder(tc.rho, tc.delta)
			if zo >= 2 && zo <= tc.a && math.Abs(got-free) > 1e-9*math.Max(1, free) {
				t.Fatalf("optimum %g inside the range: %g, unbounded %g", zo, got, free)
			}
			if tc.want > 0 && math.Abs(got-tc.want) > 1e-3 {
				t.Fatalf("ε %g, want %g", got, tc.want)
			}
		})
	}
	if e, _ := ZCDPEpsWithin(0.1, 1e-5, 1.5); !math.IsInf(e, 1) {
		t.Errorf("a range below order 2 gives %g, want +Inf", e)
	}
	if e, o := ZCDPEpsWithin(0.1, 1e-5, Unbounded); e != ZCDPEps(0.1, 1e-5) || !math.IsNaN(o) {
		t.Errorf("Unbounded: %g at %g, want ZCDPEps", e, o)
	}
}

func TestCommonMaxOrder(t *testing.T) {
	tests := []struct{ a, b, want float64 }{
		{Unbounded, Unbounded, Unbounded},
		{Unbounded, 7, 7},
		{9, Unbounded, 9},
		{9, 7, 7},
		{math.Inf(1), 5, 5},
	}
	for _, tc := range tests {
		if got := CommonMaxOrder(tc.a, tc.b); got != tc.want {
			t.Errorf("CommonMaxOrder(%g, %g) = %g, want %g", tc.a, tc.b, got, tc.want)
		}
	}
}
