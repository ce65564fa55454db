package label

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// private-learner: private PAC learning over a finite hypothesis
// class with the exponential mechanism (Kasiviswanathan et al. 2011,
// McSherry & Talwar 2007). The class is fixed from public data only: a
// decision stump on each encoded feature, thresholds at public quantiles,
// one class on each side (every ordered pair of distinct classes, so both
// polarities). One model is drawn with probability ∝ exp(−ε·errors(h)/2),
// errors counted on the sensitive rows (sensitivity 1: a row changes the
// errors of every h by at most 1), then every public row is labelled by it:
// one ε-DP event, (ε, 0)-DP in all.

// permuteAndFlip draws an index with the permute-and-flip mechanism
// (McKenney & Sheffet 2020) for the scores −errs, of sensitivity 1, at
// privacy eps: candidates are visited in a uniformly random order and each
// is accepted with probability exp(−eps·(errs[i] − min errs)/2); the best
// is always accepted, so the walk ends. It is eps-DP and never worse than
// the exponential mechanism. The coins are exact: Bernoulli(exp(−γ)) for
// the rational γ = eps·(errs[i] − min)/2 (Canonne, Kamath, Steinke 2020),
// and a Fisher–Yates shuffle with exact uniform draws.
func permuteAndFlip(src noise.Source, errs []int64, eps *big.Rat) (int, error) {
	if len(errs) == 0 {
		return -1, fmt.Errorf("exponential mechanism over an empty class")
	}
	best := slices.Min(errs)
	order := make([]int32, len(errs))
	for i := range order {
		order[i] = int32(i)
	}
	half := new(big.Rat).Quo(eps, big.NewRat(2, 1))
	gamma := new(big.Rat)
	for i := range order {
		j := i + int(noise.UniformUint64(src, uint64(len(order)-i)))
		order[i], order[j] = order[j], order[i]
		h := int(order[i])
		d := errs[h] - best
		if d == 0 {
			return h, nil
		}
		gamma.Mul(half, new(big.Rat).SetInt64(d))
		ok, err := noise.BernoulliExp(src, gamma)
		if err != nil {
			return -1, err
		}
		if ok {
			return h, nil
		}
	}
	return int(order[len(order)-1]), nil // unreachable: the best is accepted
}

// privateLearner is the model the exponential mechanism chose; it labels
// every public row (one-hot "votes").
type privateLearner struct {
	hyps    []learners.Stump
	errs    []int64 // sensitive: the mechanism's scores, dropped once it has chosen
	chosen  learners.Stump
	ready   bool
	classes int
}

// newPrivateLearner fixes the class from the public sample xPub and scores
// it on the sensitive rows X, y.
func newPrivateLearner(xPub, X *learners.Matrix, y []int32, classes, bins int) (*privateLearner, error) {
	splits := learners.PublicSplits(xPub, bins)
	if len(splits) == 0 {
		return nil, invalid("private-learner: the public sample has no feature with two distinct values: no stump to choose from")
	}
	return &privateLearner{hyps: learners.Stumps(splits, classes), errs: learners.StumpErrors(X, y, classes, splits), classes: classes}, nil
}

// choose charges the budget for the one ε-DP event and draws the model.
func (p *privateLearner) choose(src noise.Source, eps *big.Rat, b budget, rho float64) error {
	if !b.Fits(rho) {
		return fmt.Errorf("%w: the budget cannot pay for the exponential mechanism", ErrBudgetRefused)
	}
	if err := b.Charge(rho); err != nil {
		return fmt.Errorf("%w: %v", ErrBudgetRefused, err)
	}
	i, err := permuteAndFlip(src, p.errs, eps)
	if err != nil {
		return fmt.Errorf("private-learner: %w", err)
	}
	p.chosen, p.ready, p.errs = p.hyps[i], true, nil
	return nil
}

// Votes implements voter: one vote for the chosen stump's label.
func (p *privateLearner) Votes(x *learners.Matrix, counts []int32) {
	clear(counts[:x.Rows*p.classes])
	for i := 0; i < x.Rows; i++ {
		counts[i*p.classes+int(p.chosen.Predict(x.Row(i)))] = 1
	}
}

// privateLearnerMechanism is private-learner (Kasiviswanathan et al. 2011,
// the generic private learner): one draw of the exponential mechanism
// chooses a decision stump, scored by its errors on the sensitive rows,
// and the stump labels every public row. The draw is its one pure ε-DP
// event; its answers are free.
type privateLearnerMechanism struct{}

func (privateLearnerMechanism) Name() string { return MechanismPrivateLearner }

func (privateLearnerMechanism) Noise() string {
	return "exponential mechanism sampled exactly by permute-and-flip (McKenney & Sheffet 2020) with Bernoulli(exp(−γ)) coins for rational γ (Canonne, Kamath, Steinke 2020)"
}

func (privateLearnerMechanism) validate(cfg *Config) error { return validatePure(cfg) }

// build: the answers charge nothing (the one event is the choice of the
// model, charged when the stream starts).
func (m privateLearnerMechanism) build(a *aggregator, p MechanismParams) error {
	eps0, err := m.eventEps(a.classes, p)
	a.epsAnswer = eps0
	return err
}

func (privateLearnerMechanism) eventEps(_ int, p MechanismParams) (float64, error) {
	_, e, err := parsePositive("em-epsilon", p.EMEpsilon)
	return e, err
}

// planEvents spends the whole budget on the one draw.
func (privateLearnerMechanism) planEvents(l *Labeler, _ *teacherData, f *pureFilter, p *MechanismParams, _ int64) error {
	if p.EMEpsilon == "" {
		p.EMEpsilon = roundDownDecimal(l.cfg.Epsilon, 4)
	}
	if p.Bins == 0 {
		p.Bins = DefaultBins
	}
	f.event = "one draw of the exponential mechanism (permute-and-flip) over the decision stumps: the model that labels every row"
	return nil
}

func (privateLearnerMechanism) capEvents(f *pureFilter, _ *MechanismParams, _ int64) error {
	f.max = 1
	return nil
}

func (privateLearnerMechanism) describe(*PureDPReport, MechanismParams, *aggregator) {}

func (privateLearnerMechanism) failureShare() float64 { return 0 }

func (privateLearnerMechanism) learnerName() string { return "decision stumps (private-learner)" }

// learner fixes the hypothesis class from the public head and scores it on
// the sensitive rows; the model is drawn when the stream starts (start).
func (privateLearnerMechanism) learner(l *Labeler, X *learners.Matrix, y []int32, classes int, enc *learners.Encoder, head []arrow.Record) (voter, error) {
	xPub, err := encodeHead(enc, head)
	if err != nil {
		return nil, invalid("%s: %v", l.cfg.pub(), err)
	}
	bins := l.cfg.Params.Bins
	if bins == 0 {
		bins = DefaultBins
	}
	return newPrivateLearner(xPub, X, y, classes, bins)
}

// start draws the model: the run's one event.
func (p *privateLearner) start(l *Labeler, params MechanismParams, agg *aggregator, b budget) error {
	return p.choose(l.source(streamPrivateLearner), ratOf(params.EMEpsilon), b, rdp.PureDPRho(agg.epsAnswer))
}

func (privateLearnerMechanism) auditEvents(rep *Report) error {
	if rep.Spent.PureEvents != 1 {
		return invalid("report: private-learner charges exactly one event, the report counts %d", rep.Spent.PureEvents)
	}
	return nil
}

func (privateLearnerMechanism) auditParams(*Report, *AuditResult) error { return nil }

func (privateLearnerMechanism) auditFailure(*Report, *AuditResult, float64) error { return nil }

func (privateLearnerMechanism) explainFailure(float64) string { return "" }
