package label

import (
	"testing"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

func testStableEM(t *testing.T, rows [][]float32, y []int32, classes int, p MechanismParams) *stableEM {
	t.Helper()
	s, err := newStableEM(matrix(rows), y, classes, p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanStableEM(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    MechanismParams
		eps  float64
		n    int64
	}{
		{"all planned", MechanismParams{}, 2, 16281},
		{"few queries", MechanismParams{}, 1, 10},
		{"gamma given", MechanismParams{Gamma: "0.2"}, 4, 1000},
		{"rate given", MechanismParams{SubsetRate: "0.001"}, 4, 100},
		{"em epsilon given", MechanismParams{EMEpsilon: "0.01"}, 4, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			if err := planStableEM(&p, tc.eps, 1e-5, tc.n, 2); err != nil {
				t.Fatal(err)
			}
			e0, err := pureEventEps(MechanismStableEM, 2, p)
			if err != nil {
				t.Fatal(err)
			}
			fit, _ := rdp.PureEventsThatFit(tc.eps, 1e-5, e0, 0)
			if fit < tc.n {
				t.Errorf("planned %+v: ε per query %g pays for %d of %d queries", p, e0, fit, tc.n)
			}
			t.Logf("%+v: ε per query %.5g, %d queries fit", p, e0, fit)
		})
	}
}

// TestEmpiricalPrivacyStableEM: the private prediction at one query point
// on neighbouring datasets (a row added that flips the best stump's label
// at x), many seeded runs, against the claimed ε = ln(1 + Cβ/γ).
func TestEmpiricalPrivacyStableEM(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 30000
	}
	// One feature; D has two rows, D′ adds a third whose label makes a
	// different stump the best at x = 1.
	D := [][]float32{{0}, {2}}
	yD := []int32{0, 1}
	D1 := [][]float32{{0}, {2}, {1}}
	yD1 := []int32{0, 1, 0}
	x := []float32{1}
	for _, tc := range []MechanismParams{
		{SubsetRate: "0.3", Gamma: "0.2", EMEpsilon: "2"},
		{SubsetRate: "0.1", Gamma: "0.5", EMEpsilon: "1"},
	} {
		claim, err := pureEventEps(MechanismStableEM, 2, tc)
		if err != nil {
			t.Fatal(err)
		}
		tally := func(rows [][]float32, y []int32, seed uint64) []int {
			s := testStableEM(t, rows, y, 2, tc)
			s.src = noise.NewSeededSource(seed, 11)
			out := make([]int, 2)
			for range n {
				c, err := s.predict(x)
				if err != nil {
					t.Fatal(err)
				}
				out[c]++
			}
			return out
		}
		t0, t1 := tally(D, yD, 1), tally(D1, yD1, 2)
		lb, event := bestEventBound(t0, t1, n, 0)
		t.Logf("q %s γ %s ε_EM %s: claimed ε %.3f; D → %v, D′ → %v; empirical ε ≥ %.3f (event %s), ratio %.2f",
			tc.SubsetRate, tc.Gamma, tc.EMEpsilon, claim, t0, t1, lb, event, lb/claim)
		if lb > claim {
			t.Errorf("empirical lower bound %.4f exceeds the claimed ε %.4f", lb, claim)
		}
	}
}
