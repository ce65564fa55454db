package label

import (
	"math"
	"math/big"

	"github.com/pate-tool/pate/label/noise"
)

// Mechanism names accepted by Config.Mechanism.
const (
	MechanismConfidentGNMax = "confident-gnmax"
	MechanismGNMax          = "gnmax"
	MechanismLNMax          = "lnmax"
	// Private prediction beyond PATE (pure ε-DP events).
	MechanismPrivateLearner = "private-learner" // privlearner.go
	MechanismSVT            = "svt"             // svt.go
	MechanismStableEM       = "stable-em"       // stableem.go
)

// outcome is what the aggregator did with one query.
type outcome int

const (
	outAnswered  outcome = iota // a label was released
	outAbstained                // the noisy threshold check said no
	outStopped                  // the budget filter refused: this and every later query abstain
)

// budget is the filter the aggregator asks before every event.
type budget interface {
	Fits(rho float64) bool
	Charge(rho float64) error
}

// unlimited is the budget of a run without --epsilon: every event fits; the
// claim is then the worst case over the queries put, fixed by their count.
type unlimited struct{ spent float64 }

func (u *unlimited) Fits(float64) bool { return true }
func (u *unlimited) Charge(rho float64) error {
	u.spent += rho
	return nil
}

// aggregator turns one vote histogram into a released label or an
// abstention: an optional noisy threshold check on the top vote, then the
// argmax of the votes plus noise. A mechanism's build fills in its noise
// and what each event costs: zCDP ρ values fixed by its parameters
// (data-independent accounting), or the ε of a pure ε-DP event.
type aggregator struct {
	kind      string
	classes   int
	threshold int64
	answer    sampler                 // the argmax noise; nil: none (the pure ε-DP mechanisms)
	check     *noise.DiscreteGaussian // the threshold check's noise; nil: no check
	rhoAnswer float64                 // ρ of one noisy argmax
	rhoCheck  float64                 // ρ of one threshold check
	epsAnswer float64                 // pure ε of one answer or event, when it is one
	round     *rounding               // --replicable: replicable rounding of the noisy values (replicable.go)
	svt       *svtState               // svt: the sparse-vector state, which answers instead (svt.go)

	checks, argmaxes int64 // events charged so far
}

// sampler draws one value of exact integer noise (noise.DiscreteGaussian,
// noise.DiscreteLaplace).
type sampler interface {
	Sample(src noise.Source) int64
}

func parsePositive(name, s string) (*big.Rat, float64, error) {
	r, err := noise.ParseRat(s)
	if err != nil {
		return nil, 0, badParam(name, " %q: %v", s, err)
	}
	if r.Sign() <= 0 {
		return nil, 0, badParam(name, " must be positive, got %s", s)
	}
	f, _ := r.Float64()
	return r, f, nil
}

// newAggregator builds the aggregator of the named mechanism over the
// given number of classes with the parameters p.
func newAggregator(kind string, classes int, p MechanismParams) (*aggregator, error) {
	m, err := lookup(kind)
	if err != nil {
		return nil, err
	}
	a := &aggregator{kind: kind, classes: classes, threshold: p.Threshold}
	if err := m.build(a, p); err != nil {
		return nil, err
	}
	return a, nil
}

// rhoPerQuery is the most one query can cost.
func (a *aggregator) rhoPerQuery() float64 { return a.rhoCheck + a.rhoAnswer }

// noiseFor fills the noise of n queries: one threshold draw per query
// (Confident-GNMax) in check, classes argmax draws per query in answer. The
// noise does not depend on the data, so it can be drawn ahead of the votes,
// in parallel; each draw is used at most once and unused draws are dropped.
func (a *aggregator) noiseFor(src noise.Source, check, answer []int64) {
	if a.answer == nil { // no noise added to the votes
		clear(answer)
		return
	}
	if a.check != nil {
		for i := range check {
			check[i] = a.check.Sample(src)
		}
	}
	for i := range answer {
		answer[i] = a.answer.Sample(src)
	}
}

// query aggregates one histogram with the noise drawn for it (and, in a
// replicable run, the row's rounding rd; nil otherwise). It asks the
// budget before each event and charges it for what happens: the threshold
// check on every query, the noisy argmax only on answered ones
// (invariant 6).
func (a *aggregator) query(counts []int32, zCheck int64, zAnswer []int64, rd *roundDraw, b budget) (int, outcome) {
	if a.svt != nil {
		return a.svt.query(a, counts, b)
	}
	if a.check != nil {
		if !b.Fits(a.rhoCheck) {
			return -1, outStopped
		}
		_ = b.Charge(a.rhoCheck)
		a.checks++
		var top int64
		for _, c := range counts {
			if int64(c) > top {
				top = int64(c)
			}
		}
		if !a.passes(top+zCheck, rd) {
			return -1, outAbstained
		}
	}
	if !b.Fits(a.rhoAnswer) {
		return -1, outStopped
	}
	_ = b.Charge(a.rhoAnswer)
	a.argmaxes++
	if rd != nil && a.round.answer > 0 {
		return a.round.argmax(counts, zAnswer, *rd), outAnswered
	}
	best, bestVal := 0, int64(math.MinInt64)
	for j, c := range counts {
		if v := int64(c) + zAnswer[j]; v > bestVal {
			best, bestVal = j, v
		}
	}
	return best, outAnswered
}

// passes is the threshold check on the noisy top vote: rounded to the
// row's grid in a replicable run (rd non-nil).
func (a *aggregator) passes(noisyTop int64, rd *roundDraw) bool {
	if rd != nil {
		return a.round.passes(noisyTop, a.threshold, *rd)
	}
	return noisyTop >= a.threshold
}
