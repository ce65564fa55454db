package label

import (
	"fmt"
	"testing"

	"github.com/pate-tool/pate/label/internal/fdp"
	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/learners"
)

// knnOrders is a grid of the orders 2..maxOrder, ends included.
func knnOrders(maxOrder int) []float64 {
	var o []float64
	for l := 2.0; l < float64(maxOrder); l *= 1.02 {
		o = append(o, l)
	}
	return append(o, float64(maxOrder))
}

// knnCurve is the trade-off curve private-knn's claim implies: ρ-zCDP on
// the orders 2..maxOrder only (the orders its charge holds on).
func knnCurve(rho float64, maxOrder int) fdp.Curve {
	return fdp.ZCDPOnOrders(rho, knnOrders(maxOrder))
}

// knnRhoLowerBound is the least ρ consistent with a test of rates fpr and
// fnr on the orders 2..maxOrder.
func knnRhoLowerBound(maxOrder int) func(fpr, fnr float64) float64 {
	return fdp.RhoLowerBoundOnOrders(knnOrders(maxOrder))
}

// TestTradeoffPrivateKNN audits private-knn end to end on the sampled
// Gaussian's worst case: the query sits at distance 1 from m rows of class
// 0 (d0; m so large that the subsample always holds one, so the 1-nearest
// vote is (1, 0)), and d1 adds one row of class 1 at the query itself,
// which takes the vote to (0, 1) whenever it is sampled: votes moved by √2
// with probability γ, the pair MTZ's bound is tight for. The test says d1
// when class 1 is released. The voter draws its subsample and the
// aggregator its noise, seeded per run, as a run does; the claim is the
// aggregator's rhoAnswer, on the orders up to the params' max order.
//
// Power: a fixed test at moderate rates sees the low orders, so the claims
// audited hold on orders 2..2 and 2..3, where ρ is the sampled Gaussian's
// RDP(2)/2 or nearly; at σ = 2, γ = 0.9 it is 0.211, and the test's point
// allows no ρ below about 0.11: a claim of γ/2 (0.062) or noise of σ/2
// fails it.
//
// With a privacy unit (unit > 0) the m rows of d0 are units of 1 to 5 rows
// and d1 adds a unit of that many rows at the query: sampling units, one
// row each, it enters the subsample with probability γ, as the one row
// does, and the same claim holds. Sampling its rows independently, it
// would enter with probability 1 − (1 − γ)⁵ = 0.83 at γ = 0.3, and the
// point's lower bound would rise from about 0.05 to 0.39, above the claim
// of 0.227 at σ = 1 (checked by running the case on the row path).
func TestTradeoffPrivateKNN(t *testing.T) {
	cases := []struct {
		sigma, rate string
		maxOrder    int
		unit        int // rows of the added unit; 0: no privacy unit
	}{
		{"2", "0.9", 2, 0},
		{"1.5", "0.8", 3, 0},
		{"1", "0.3", 2, 5},
	}
	n := tradeoffRuns()
	const m = 200
	for _, tc := range cases {
		name := fmt.Sprintf("σ=%s γ=%s", tc.sigma, tc.rate)
		if tc.unit > 0 {
			name += fmt.Sprintf(" unit of %d rows", tc.unit)
		}
		t.Run(name, func(t *testing.T) {
			if tc.unit > 0 && testing.Short() {
				t.Skip("the privacy-unit case runs without -short")
			}
			p := MechanismParams{Sigma: tc.sigma, KNNK: 1, SampleRate: tc.rate, MaxOrder: tc.maxOrder}
			a := claimOf(t, MechanismPrivateKNN, 2, p)
			voters := func(withZ bool) (*learners.Matrix, []int32, []int32) {
				x := learners.NewMatrix(0, 1)
				var y, units []int32
				if withZ { // first: its index wins no tie, it has none
					for range max(tc.unit, 1) {
						x.Data, y, units = append(x.Data, 0), append(y, 1), append(units, 0)
					}
				}
				for i, u := 0, int32(1); i < m; u++ { // units of 1 to 5 rows
					for j := 0; j <= int(u)%5 && i < m; j, i = j+1, i+1 {
						x.Data, y, units = append(x.Data, 1), append(y, 0), append(units, u)
					}
				}
				x.Rows = len(y)
				return x, y, units
			}
			trial := func(withZ bool, pred func(int, outcome) bool) func() func(uint64) bool {
				return func() func(uint64) bool {
					x, y, units := voters(withZ)
					l := &Labeler{cfg: Config{Params: p}}
					var v voter
					var err error
					if tc.unit > 0 {
						v, err = privateKNNMechanism{}.unitLearner(l, x, y, units, 2)
					} else {
						v, err = privateKNNMechanism{}.learner(l, x, y, 2, nil, nil)
					}
					if err != nil {
						t.Error(err)
						return func(uint64) bool { return false }
					}
					kv := v.(*knnVoter)
					agg, err := newAggregator(MechanismPrivateKNN, 2, p)
					if err != nil {
						t.Error(err)
						return func(uint64) bool { return false }
					}
					q := learners.NewMatrix(1, 1)
					counts := make([]int32, 2)
					check, answer := make([]int64, 1), make([]int64, 2)
					var b unlimited
					return func(seed uint64) bool {
						kv.src = noise.NewSeededSource(seed, 98)
						kv.Votes(q, counts)
						agg.noiseFor(noise.NewSeededSource(seed, 99), check, answer)
						j, o := agg.query(counts, check[0], answer, nil, &b)
						return pred(j, o)
					}
				}
			}
			reject := func(j int, o outcome) bool { return o == outAnswered && j == 1 }
			accept := func(j int, o outcome) bool { return !reject(j, o) }
			fp := countRuns(n, 1, trial(false, reject))
			fn := countRuns(n, 2, trial(true, accept))
			pt := fdp.Point{FP: fp, N0: n, FN: fn, N1: n}
			tradeoffCheck{mechanism: "private-knn " + name, claim: "ρ", curve: knnCurve(a.rhoAnswer, tc.maxOrder),
				claimed: a.rhoAnswer, lower: knnRhoLowerBound(tc.maxOrder), point: pt}.verify(t, 1)
		})
	}
}
