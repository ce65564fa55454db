package label

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Helpers of the event-based empirical ε bounds (multi-label and
// private-learner tests): Clopper–Pearson bounds on one event's two
// probabilities turned into a lower bound on ε at δ. Such a bound at
// δ = 1e-5 is weak (10⁶ runs see few tail events); the audits that must
// catch a wrong accountant are the trade-off audits in tradeoff_test.go.

// auditDelta is the δ at which the zCDP claim of one query is converted.
const auditDelta = 1e-5

// clopperPearson returns the two-sided Clopper–Pearson interval for x
// successes out of n trials, each side at level alpha/2.
func clopperPearson(x, n int, alpha float64) (lo, hi float64) {
	if x > 0 {
		lo = distuv.Beta{Alpha: float64(x), Beta: float64(n - x + 1)}.Quantile(alpha / 2)
	}
	hi = 1
	if x < n {
		hi = distuv.Beta{Alpha: float64(x + 1), Beta: float64(n - x)}.Quantile(1 - alpha/2)
	}
	return lo, hi
}

// epsLowerBound is the smallest ε for which P1 ≤ e^ε·P0 + δ can hold given
// the confidence intervals, in the worse of the two directions; 0 when the
// data prove nothing.
func epsLowerBound(x1, x0, n int, alpha, delta float64) float64 {
	lo1, hi1 := clopperPearson(x1, n, alpha)
	lo0, hi0 := clopperPearson(x0, n, alpha)
	best := 0.0
	if lo1-delta > 0 && hi0 > 0 {
		best = math.Max(best, math.Log((lo1-delta)/hi0))
	}
	if lo0-delta > 0 && hi1 > 0 {
		best = math.Max(best, math.Log((lo0-delta)/hi1))
	}
	return best
}

func TestClopperPearson(t *testing.T) {
	tests := []struct {
		x, n           int
		wantLo, wantHi float64
	}{
		// Reference values from scipy.stats.beta.ppf (statsmodels proportion_confint method="beta").
		{0, 10, 0, 0.30849710},
		{10, 10, 0.69150290, 1},
		{5, 10, 0.18708603, 0.81291397},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d of %d", tc.x, tc.n), func(t *testing.T) {
			lo, hi := clopperPearson(tc.x, tc.n, 0.05)
			if math.Abs(lo-tc.wantLo) > 1e-6 || math.Abs(hi-tc.wantHi) > 1e-6 {
				t.Errorf("got [%.8f, %.8f], want [%.8f, %.8f]", lo, hi, tc.wantLo, tc.wantHi)
			}
		})
	}
}
