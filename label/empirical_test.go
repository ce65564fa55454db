package label

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// The empirical privacy audit: run the aggregator many times on two
// neighbouring vote histograms (one privacy unit flips one teacher's vote),
// find the output event that best tells them apart, and turn Clopper–Pearson
// bounds on its two probabilities into a lower bound on the ε the mechanism
// can satisfy. That bound must never exceed the ε the accountant claims for
// one query; if it does, the noise is smaller than the accounting assumes (or
// the accounting is wrong).

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

// outcomeCounts runs the aggregator n times on counts and tallies the
// outputs: index j < classes for label j, classes for an abstention.
func outcomeCounts(t *testing.T, a *aggregator, counts []int32, n int, seed uint64) []int {
	t.Helper()
	src := noise.NewSeededSource(seed, 99)
	tally := make([]int, a.classes+1)
	check := make([]int64, 1)
	answer := make([]int64, a.classes)
	var b unlimited
	for range n {
		a.noiseFor(src, check, answer)
		var rd *roundDraw
		if a.round != nil { // --replicable: the row's rounding, drawn after its noise
			d := a.round.draw(src)
			rd = &d
		}
		j, out := a.query(counts, check[0], answer, rd, &b)
		switch out {
		case outAnswered:
			if j < 0 || j >= a.classes {
				t.Fatalf("label %d outside [0, %d)", j, a.classes)
			}
			tally[j]++
		case outAbstained:
			tally[a.classes]++
		default:
			t.Fatalf("unlimited budget stopped a query")
		}
	}
	return tally
}

// claimedEps is the ε the accountant claims for one query of a: pure ε for
// LNMax, the zCDP ρ of one query converted at auditDelta otherwise.
func claimedEps(a *aggregator) (eps, delta float64) {
	if a.kind == MechanismLNMax {
		return a.epsAnswer, 0
	}
	return rdp.ZCDPEps(a.rhoPerQuery(), auditDelta), auditDelta
}

type auditCase struct {
	name    string
	kind    string
	classes int
	params  MechanismParams
	// d0 and d1 are neighbouring histograms: one teacher moved its vote.
	d0, d1 []int32
	// sample overrides the noise the runs use (the claim still comes from
	// params): a negative control that must be caught.
	sample *MechanismParams
	// width > 0 makes the runs replicable (replicable rounding, this grid);
	// the claim is the plain mechanism's.
	width float64
}

func (tc auditCase) aggregators(t *testing.T) (claim, run *aggregator) {
	t.Helper()
	claim, err := newAggregator(tc.kind, tc.classes, tc.params)
	if err != nil {
		t.Fatal(err)
	}
	run = claim
	if tc.sample != nil || tc.width > 0 {
		p := tc.params
		if tc.sample != nil {
			p = *tc.sample
		}
		if run, err = newAggregator(tc.kind, tc.classes, p); err != nil {
			t.Fatal(err)
		}
		if tc.width > 0 {
			if run.round, err = newRounding(run, p, tc.width, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return claim, run
}

// audit returns the best empirical lower bound on ε over the output events
// and the name of the event that gave it.
func audit(t *testing.T, tc auditCase, n int) (lb float64, event string, claim float64) {
	t.Helper()
	ca, ra := tc.aggregators(t)
	claim, delta := claimedEps(ca)
	t0 := outcomeCounts(t, ra, tc.d0, n, 1)
	// A fresh aggregator for the second histogram keeps the event counts
	// apart; the noise stream differs (another seed) so the runs are independent.
	_, rb := tc.aggregators(t)
	t1 := outcomeCounts(t, rb, tc.d1, n, 2)
	// Every event is a set of outputs (a label, or an abstention): try each
	// non-trivial subset. Bonferroni over the events and the two
	// probabilities of each keeps the 95% level for the best one.
	outs := len(t0)
	events := 1<<outs - 2
	alpha := 0.05 / float64(2*events)
	for set := 1; set < 1<<outs-1; set++ {
		var x0, x1 int
		var names []string
		for j := range outs {
			if set&(1<<j) == 0 {
				continue
			}
			x0 += t0[j]
			x1 += t1[j]
			if j == tc.classes {
				names = append(names, "abstain")
			} else {
				names = append(names, fmt.Sprintf("label %d", j))
			}
		}
		if b := epsLowerBound(x1, x0, n, alpha, delta); b > lb {
			lb, event = b, strings.Join(names, " or ")
		}
	}
	t.Logf("%s: d0 %v → %v, d1 %v → %v", tc.name, tc.d0, t0, tc.d1, t1)
	return lb, event, claim
}

func TestEmpiricalPrivacyAudit(t *testing.T) {
	n := 1000000
	if testing.Short() {
		n = 100000
	}
	cases := []auditCase{
		{name: "gnmax two classes", kind: MechanismGNMax, classes: 2,
			params: MechanismParams{Sigma: "1"}, d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "gnmax ten classes", kind: MechanismGNMax, classes: 10,
			params: MechanismParams{Sigma: "1.5"},
			d0:     []int32{20, 20, 10, 10, 10, 10, 5, 5, 5, 5}, d1: []int32{21, 19, 10, 10, 10, 10, 5, 5, 5, 5}},
		{name: "gnmax tiny sigma", kind: MechanismGNMax, classes: 2,
			params: MechanismParams{Sigma: "0.5"}, d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "confident-gnmax threshold edge", kind: MechanismConfidentGNMax, classes: 2,
			params: MechanismParams{Threshold: 51, Sigma1: "1", Sigma2: "1"}, d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "confident-gnmax abstain tail", kind: MechanismConfidentGNMax, classes: 3,
			params: MechanismParams{Threshold: 54, Sigma1: "1.5", Sigma2: "2"}, d0: []int32{50, 30, 20}, d1: []int32{51, 30, 19}},
		{name: "lnmax eps 1", kind: MechanismLNMax, classes: 2,
			params: MechanismParams{LaplaceScale: "2"}, d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "lnmax eps 4", kind: MechanismLNMax, classes: 3,
			params: MechanismParams{LaplaceScale: "0.5"}, d0: []int32{40, 40, 20}, d1: []int32{41, 39, 20}},
		// --replicable: the rounding is post-processing, so the claim of
		// the plain mechanism must still hold.
		{name: "replicable confident-gnmax", kind: MechanismConfidentGNMax, classes: 2, width: 1,
			params: MechanismParams{Threshold: 51, Sigma1: "1", Sigma2: "1"}, d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "replicable gnmax", kind: MechanismGNMax, classes: 2, width: 2,
			params: MechanismParams{Sigma: "1"}, d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "replicable lnmax", kind: MechanismLNMax, classes: 3, width: 1,
			params: MechanismParams{LaplaceScale: "0.5"}, d0: []int32{40, 40, 20}, d1: []int32{41, 39, 20}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lb, event, claim := audit(t, tc, n)
			t.Logf("%s: empirical ε ≥ %.3f (event %q), claimed ε = %.3f, ratio %.3f", tc.name, lb, event, claim, lb/claim)
			if lb > claim {
				t.Errorf("empirical lower bound ε ≥ %.4f exceeds the claimed ε = %.4f (event %q)", lb, claim, event)
			}
		})
	}
}

// TestEmpiricalAuditHasPower is the negative control: a mechanism whose noise
// is much smaller than its claim assumes must be caught by the same harness,
// or the audit above proves nothing.
func TestEmpiricalAuditHasPower(t *testing.T) {
	n := 40000
	cases := []auditCase{
		{name: "gnmax noise 8x too small", kind: MechanismGNMax, classes: 2,
			params: MechanismParams{Sigma: "8"}, sample: &MechanismParams{Sigma: "0.5"},
			d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "lnmax noise 8x too small", kind: MechanismLNMax, classes: 2,
			params: MechanismParams{LaplaceScale: "8"}, sample: &MechanismParams{LaplaceScale: "1"},
			d0: []int32{50, 50}, d1: []int32{51, 49}},
		{name: "confident-gnmax threshold noise too small", kind: MechanismConfidentGNMax, classes: 2,
			params: MechanismParams{Threshold: 51, Sigma1: "10", Sigma2: "10"},
			sample: &MechanismParams{Threshold: 51, Sigma1: "0.5", Sigma2: "10"},
			d0:     []int32{50, 50}, d1: []int32{51, 49}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			lb, event, claim := audit(t, tc, n)
			t.Logf("%s: empirical ε ≥ %.3f (event %q), claimed ε = %.3f", tc.name, lb, event, claim)
			if lb <= claim {
				t.Errorf("the audit missed a mechanism with too little noise: ε ≥ %.4f, claim %.4f", lb, claim)
			}
		})
	}
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
