package label

import (
	"fmt"
	"math"
	"math/big"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// svt: model-agnostic private aggregation through stability
// (Bassily, Thakkar, Thakurta 2018, "Model-agnostic private learning",
// Algorithm A_stab): the distance to instability of the teachers' majority
// (how many teachers must change their vote before the majority changes,
// minus one) is compared with a noisy threshold by the sparse vector
// technique. A query found stable gets the majority at no per-query cost;
// an unstable one abstains and ends the current sparse-vector instance
// (AboveThreshold with cutoff 1); a new instance, with a fresh noisy
// threshold, is started and charged when the next query comes. The run
// stops when the budget cannot pay for another instance.
//
// Privacy (what the report claims, and pate audit re-derives):
//   - each instance is AboveThreshold over the queries −dist (sensitivity 1:
//     one privacy unit changes one teacher, one vote), with discrete
//     Laplace noise of scale 2/ε0 on the threshold and 4/ε0 on each query:
//     ε0-DP (Dwork & Roth 2014, Theorem 3.23; the proof only shifts the
//     noise by integers, so the discrete Laplace of Canonne, Kamath, Steinke
//     2020 serves as well as the continuous one);
//   - the instances compose (their number is capped before the run): basic
//     composition or zCDP, ε0²/2 each (rdp.PureEventsThatFit), instead of
//     the paper's advanced composition, which is looser;
//   - the released majority of a query reported stable is the same on the
//     neighbouring dataset whenever its distance is ≥ 1; a query of
//     distance 0 is reported stable only if its query noise exceeds the
//     threshold plus the threshold noise. With a ≥ 1, that needs an
//     instance's threshold noise ≤ −a (at most cap instances) or a query
//     noise ≥ w − a + 1 (at most m queries): the union bound
//     cap·Pr[η ≤ −a] + m·Pr[ν ≥ w − a + 1], minimised over a, is the δ
//     added to the guarantee (svtFailureDelta). The paper's threshold
//     w = 3λ·log(2(m+T)/δ) is this bound with cruder constants.
// Deviations from the paper, each sound: discrete instead of continuous
// Laplace noise; the composition and the failure δ computed exactly as
// above rather than with the paper's closed-form constants.

// svtState is the sparse vector's state: it lives in the aggregator stage,
// which handles queries one at a time, in row order.
type svtState struct {
	w         int64
	threshold *noise.DiscreteLaplace // scale 2/ε0
	qnoise    *noise.DiscreteLaplace // scale 4/ε0
	rho       float64                // ε0²/2: the marker of one instance's charge
	src       noise.Source
	active    bool
	eta       int64
	instances int64
	unstable  int64
}

// svtScales returns the threshold and query noise scales 2/ε0 and 4/ε0 as
// exact rationals.
func svtScales(eps0 string) (*big.Rat, *big.Rat, error) {
	e, _, err := parsePositive("svt-epsilon0", eps0)
	if err != nil {
		return nil, nil, err
	}
	inv := new(big.Rat).Inv(e)
	return new(big.Rat).Mul(inv, big.NewRat(2, 1)), new(big.Rat).Mul(inv, big.NewRat(4, 1)), nil
}

func newSVT(p MechanismParams, eps0 float64) (*svtState, error) {
	ts, qs, err := svtScales(p.SVTEpsilon0)
	if err != nil {
		return nil, err
	}
	s := &svtState{w: p.SVTThreshold, rho: rdp.PureDPRho(eps0)}
	if s.threshold, err = noise.NewDiscreteLaplace(ts); err != nil {
		return nil, fmt.Errorf("svt threshold noise: %w", err)
	}
	if s.qnoise, err = noise.NewDiscreteLaplace(qs); err != nil {
		return nil, fmt.Errorf("svt query noise: %w", err)
	}
	return s, nil
}

// distanceToInstability returns the released majority (the first argmax)
// and its distance to instability: the number of votes that must move
// before the first argmax changes, minus one. Moving one vote from the top
// class to class j closes their gap g by 2; with ties going to the lower
// index, a class j before the top overtakes it after ⌈g/2⌉ moves, a class
// after it after ⌊g/2⌋+1. A neighbouring dataset moves at most one vote,
// so the distance has sensitivity 1, and a distance ≥ 1 means the majority
// is the same on every neighbour.
func distanceToInstability(counts []int32) (top int, dist int64) {
	for j, c := range counts {
		if c > counts[top] {
			top = j
		}
	}
	k := int64(math.MaxInt64)
	for j, c := range counts {
		if j == top {
			continue
		}
		g := int64(counts[top]) - int64(c)
		var m int64
		if j < top {
			m = (g + 1) / 2
		} else {
			m = g/2 + 1
		}
		k = min(k, m)
	}
	if k == math.MaxInt64 { // one class: nothing can change it
		return top, math.MaxInt32
	}
	return top, k - 1
}

// query handles one histogram: it starts (and charges) an instance when
// none is running, then compares the noisy distance with the noisy
// threshold. Unstable: dist + ν ≤ w + η (AboveThreshold's "above" for the
// query −dist against the threshold −w).
func (s *svtState) query(a *aggregator, counts []int32, b budget) (int, outcome) {
	if !s.active {
		if !b.Fits(s.rho) {
			return -1, outStopped
		}
		_ = b.Charge(s.rho)
		s.eta = s.threshold.Sample(s.src)
		s.active = true
		s.instances++
	}
	top, dist := distanceToInstability(counts)
	nu := s.qnoise.Sample(s.src)
	if dist+nu <= s.w+s.eta {
		s.active = false
		s.unstable++
		return -1, outAbstained
	}
	a.argmaxes++
	return top, outAnswered
}

// dlapTailGE is Pr[X ≥ k] for X discrete Laplace of scale t
// (Pr[x] ∝ e^{−|x|/t}): p^k/(1+p) for k ≥ 1 with p = e^{−1/t}. Accounting
// only (float64 is fine off the noise path).
func dlapTailGE(t float64, k int64) float64 {
	p := math.Exp(-1 / t)
	if k >= 1 {
		return math.Exp(-float64(k)/t) / (1 + p)
	}
	return 1 - math.Exp(-float64(1-k)/t)/(1+p)
}

// svtFailureDelta bounds the probability that some query of distance 0 is
// reported stable, over at most queries queries and instances instances:
// min over 1 ≤ a ≤ w of instances·Pr[η ≤ −a] + queries·Pr[ν ≥ w − a + 1],
// rounded up by a relative 1e-9.
func svtFailureDelta(p MechanismParams, queries, instances int64) (float64, error) {
	ts, qs, err := svtScales(p.SVTEpsilon0)
	if err != nil {
		return math.Inf(1), err
	}
	t, _ := ts.Float64()
	q, _ := qs.Float64()
	return svtFailure(t, q, p.SVTThreshold, queries, instances), nil
}

func svtFailure(t, q float64, w, queries, instances int64) float64 {
	best := math.Inf(1)
	for a := int64(1); a <= w; a++ {
		v := float64(instances)*dlapTailGE(t, a) + float64(queries)*dlapTailGE(q, w-a+1)
		best = math.Min(best, v)
	}
	return best * (1 + 1e-9)
}

// svtPlanThreshold returns the smallest threshold w whose failure δ is at
// most delta.
func svtPlanThreshold(p MechanismParams, queries, instances int64, delta float64) (int64, error) {
	ts, qs, err := svtScales(p.SVTEpsilon0)
	if err != nil {
		return 0, err
	}
	t, _ := ts.Float64()
	q, _ := qs.Float64()
	hi := int64(1)
	for svtFailure(t, q, hi, queries, instances) > delta {
		hi *= 2
		if hi > 1<<24 {
			return 0, fmt.Errorf("no threshold keeps the stable-release failure below δ %g", delta)
		}
	}
	lo := hi / 2 // fails (or 0)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if svtFailure(t, q, mid, queries, instances) <= delta {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// FailureDelta is the part of the run's δ that is a failure probability
// rather than the zCDP conversion's share: the class discovery's (when the
// classes are not public) and svt's stable-release failure. The ledger adds
// these up across runs and converts the composed ρ at what is left of the
// summed δ.
func (l *Labeler) FailureDelta() float64 {
	cfg := &l.cfg
	fd := DiscoveryDelta(cfg.Delta, !l.discoversClasses())
	if m, ok := pureEvents(cfg.Mechanism); ok {
		fd += cfg.Delta * m.failureShare()
	}
	return fd
}

// PureMax describes the maximum of a run of pure ε-DP events with nothing
// else (no class discovery): its cap on events pays either by basic
// composition (Σ εᵢ ≤ ε) or by zCDP (ρ ≤ ρ_B = RhoForEps(ε, δ), at least the
// cap's; rdp.PureEventsThatFit), so its RDP curve is at most
// max(λρ_B, min(ε, λε²/2)) at every order λ. ok is false for other runs.
func (l *Labeler) PureMax() (eps, rhoB float64, ok bool) {
	cfg := &l.cfg
	if _, pure := pureEvents(cfg.Mechanism); !pure || !(cfg.Epsilon > 0) || l.discoversClasses() {
		return 0, 0, false
	}
	return cfg.Epsilon, rdp.RhoForEps(cfg.Epsilon, cfg.Delta), true
}

// discoversClasses reports whether the run releases its class set privately:
// a labelling run without --classes (pate aggregate's classes are the
// public vote indices).
func (l *Labeler) discoversClasses() bool {
	return l.cfg.Classes == nil && l.cfg.VotesFormat == ""
}

// svtMechanism is svt (above): each sparse-vector instance is one pure
// ε0-DP event; stable answers are free. It plans ε0 from the budget for
// the planned number of instances (--svt-cutoff) and the threshold w so
// that a query whose majority is not stable passes with probability at
// most its share of δ.
type svtMechanism struct{}

func (svtMechanism) Name() string { return MechanismSVT }

func (svtMechanism) Noise() string {
	return "discrete Laplace (Canonne, Kamath, Steinke 2020) on the sparse vector's threshold and queries, sampled exactly with integer arithmetic"
}

func (svtMechanism) validate(cfg *Config) error { return validatePure(cfg) }

func (m svtMechanism) build(a *aggregator, p MechanismParams) error {
	eps0, err := m.eventEps(a.classes, p)
	if err != nil {
		return err
	}
	a.epsAnswer = eps0
	a.svt, err = newSVT(p, eps0)
	return err
}

func (svtMechanism) eventEps(_ int, p MechanismParams) (float64, error) {
	_, e, err := parsePositive("svt-epsilon0", p.SVTEpsilon0)
	return e, err
}

func (svtMechanism) planEvents(l *Labeler, td *teacherData, f *pureFilter, p *MechanismParams, queries int64) error {
	cfg := &l.cfg
	if queries < 0 {
		return invalid("the number of public rows is not known in advance (a stream): give --max-queries to plan svt for")
	}
	if td.discovery != nil {
		cfg.warn("svt without --classes: the private class discovery is Gaussian, so only the zCDP reading of the instances applies (their ε0 is much smaller); declare the classes with --classes if they are public")
	}
	f.extraDelta = cfg.Delta * svtDeltaShare
	f.deltaZ -= f.extraDelta
	if p.SVTEpsilon0 == "" {
		c := p.SVTCutoff
		if c == 0 {
			c = DefaultSVTCutoff
		}
		e, err := rdp.PlanPureEps(cfg.Epsilon, f.deltaZ, c, f.rho0)
		if err != nil {
			return fmt.Errorf("%w: planning svt: %v", ErrBudgetRefused, err)
		}
		p.SVTEpsilon0 = decimal(e)
	}
	f.event = "one sparse-vector instance (AboveThreshold, ended by an unstable query)"
	return nil
}

// capEvents plans for as many instances as the cap allows, and checks the
// threshold against its share of δ.
func (svtMechanism) capEvents(f *pureFilter, p *MechanismParams, queries int64) error {
	capByQueries(f, queries)
	p.SVTCutoff = f.max
	if p.SVTThreshold == 0 {
		w, err := svtPlanThreshold(*p, queries, f.max, f.extraDelta)
		if err != nil {
			return invalid("planning svt: %w", err)
		}
		p.SVTThreshold = w
	}
	if bad, err := svtFailureDelta(*p, queries, f.max); err != nil || bad > f.extraDelta {
		return paramError("svt-threshold", " %d: a query whose majority is not stable passes with probability up to %.3g, more than δ·%g = %.3g (use a larger threshold or leave it to the planner)", p.SVTThreshold, bad, svtDeltaShare, f.extraDelta)
	}
	return nil
}

func (svtMechanism) describe(pr *PureDPReport, p MechanismParams, agg *aggregator) {
	pr.Unstable = agg.svt.unstable
	pr.Note = fmt.Sprintf("distance-to-instability threshold w = %d; discrete Laplace noise of scale 2/ε0 on the threshold, 4/ε0 on each query; "+
		"an unstable query abstains and ends its instance", p.SVTThreshold)
}

func (svtMechanism) failureShare() float64 { return svtDeltaShare }

func (svtMechanism) auditEvents(rep *Report) error {
	sp, q, pr := rep.Spent, rep.Queries, rep.PureDP
	if pr.Unstable+q.Answered != q.Seen {
		return invalid("report: svt: %d unstable + %d answered ≠ %d queries", pr.Unstable, q.Answered, q.Seen)
	}
	if sp.PureEvents < pr.Unstable || sp.PureEvents > pr.Unstable+1 || (q.Seen > 0 && sp.PureEvents == 0) {
		return invalid("report: svt: %d instances for %d unstable queries", sp.PureEvents, pr.Unstable)
	}
	return nil
}

func (svtMechanism) auditParams(*Report, *AuditResult) error { return nil }

// auditFailure re-derives the stable-release failure δ for the planned
// queries.
func (svtMechanism) auditFailure(rep *Report, res *AuditResult, extra float64) error {
	pr, q := rep.PureDP, rep.Queries
	m := rep.PlannedQueries
	addCheck(res, "queries within the plan", float64(m), float64(q.Seen), q.Seen <= m, "the failure δ is computed for the planned number of queries")
	bad, err := svtFailureDelta(rep.Params, m, pr.MaxEvents)
	if err != nil {
		return invalid("report parameters: %w", err)
	}
	addCheck(res, "recorded stable-release δ", float64(pr.StableDelta), extra, math.Abs(float64(pr.StableDelta)-extra) <= relTol*extra,
		"svt's share of δ for a query reported stable whose majority could change")
	addCheck(res, "stable-release failure δ", extra, bad, bad <= extra,
		fmt.Sprintf("Pr[a query of distance 0 reported stable] ≤ min over a of cap·Pr[η ≤ −a] + queries·Pr[ν ≥ w − a + 1], w = %d", rep.Params.SVTThreshold))
	return nil
}

func (svtMechanism) explainFailure(extra float64) string {
	return fmt.Sprintf("A query reported stable releases the teachers' majority at no further cost; the probability that any query whose majority could change is reported stable is at most %g, and is part of δ.",
		extra)
}
