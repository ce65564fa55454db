package label

import (
	"fmt"
	"math"
	"math/big"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// stable-em: the uniformly stable learner of Dagan & Feldman
// ("PAC learning with stable and private predictions", COLT 2020, Theorem 1)
// turned into ε-private prediction by label mixing (Corollary 1). For each
// query x:
//  1. draw a random subset S1 of the sensitive rows — each row
//     independently with probability q (Poisson sampling; see below);
//  2. form one decision stump per distinct labelling of S1 by the class of
//     stumps (every encoded feature, a threshold between each two
//     consecutive distinct S1 values, or beyond them all, and every ordered
//     pair of classes);
//  3. pick one with the exponential mechanism (permute-and-flip, ε_EM),
//     scored by its errors on all the sensitive rows (sensitivity 1);
//  4. predict x with it, and with probability γ output a uniformly random
//     label instead.
//
// Stability: neighbours differ in one row z. It lands in S1 with
// probability q; otherwise S1 — hence the candidate set — has the same
// distribution, and the exponential mechanism, ε_EM-DP, moves the
// probability of any output by at most tanh(ε_EM/2) (total variation of two
// distributions within a factor e^ε_EM of each other). So every label's
// probability moves by at most β = q + (1−q)·tanh(ε_EM/2). After the mixing
// each label has probability ≥ γ/C, so the ratio is at most 1 + Cβ/γ:
// ε = ln(1 + Cβ/γ) per query, a pure ε-DP event (rdp.StableTV, rdp.FlipEps).
//
// Deviation from the paper: it draws S1 of a fixed size m, which makes β =
// m/n depend on the number n of sensitive rows; Poisson sampling of rate q
// gives the same β = q for every n, so the guarantee is fixed before the run
// without releasing n.

// stableEMParams parses q, γ and ε_EM.
func stableEMParams(p MechanismParams) (q, gamma, eps float64, err error) {
	var qr, gr *big.Rat
	if qr, q, err = parsePositive("subset-rate", p.SubsetRate); err != nil {
		return
	}
	if gr, gamma, err = parsePositive("gamma", p.Gamma); err != nil {
		return
	}
	if _, eps, err = parsePositive("em-epsilon", p.EMEpsilon); err != nil {
		return
	}
	one := big.NewRat(1, 1)
	if qr.Cmp(one) > 0 || gr.Cmp(one) > 0 {
		return 0, 0, 0, badParam("subset-rate", " and %v must be at most 1, got %s and %s", ParamName("gamma"), p.SubsetRate, p.Gamma)
	}
	return
}

// planStableEM fills the parameters left empty so that n queries fit the
// budget: the per-query ε0 is the largest that n events allow; γ defaults
// to DefaultGamma; the stability β = γ(e^ε0 − 1)/C is split evenly between
// the subsampling (q) and the exponential mechanism (ε_EM), or the given one
// takes its share and the other the rest.
func planStableEM(p *MechanismParams, eps, delta float64, n int64, classes int) error {
	if p.Gamma == "" {
		p.Gamma = DefaultGamma
	}
	if p.SubsetRate != "" && p.EMEpsilon != "" {
		return nil
	}
	if n <= 0 {
		return fmt.Errorf("no queries to plan for")
	}
	e0, err := rdp.PlanPureEps(eps, delta, n, 0)
	if err != nil {
		return err
	}
	_, g, err := parsePositive("gamma", p.Gamma)
	if err != nil {
		return err
	}
	beta := g * math.Expm1(e0) / float64(classes)
	switch {
	case p.SubsetRate == "" && p.EMEpsilon == "":
		p.SubsetRate = roundDownDecimal(beta/2, 4)
		_, q, _ := parsePositive("subset-rate", p.SubsetRate)
		p.EMEpsilon = roundDownDecimal(2*math.Atanh((beta-q)/(1-q)), 4)
	case p.SubsetRate == "":
		_, em, err := parsePositive("em-epsilon", p.EMEpsilon)
		if err != nil {
			return err
		}
		th := math.Tanh(em / 2)
		if th >= beta {
			return badParam("em-epsilon", " %s alone exceeds the stability β = %.4g that %d queries allow", p.EMEpsilon, beta, n)
		}
		p.SubsetRate = roundDownDecimal((beta-th)/(1-th), 4)
	default:
		_, q, err := parsePositive("subset-rate", p.SubsetRate)
		if err != nil {
			return err
		}
		if q >= beta {
			return badParam("subset-rate", " %s alone exceeds the stability β = %.4g that %d queries allow", p.SubsetRate, beta, n)
		}
		p.EMEpsilon = roundDownDecimal(2*math.Atanh((beta-q)/(1-q)), 4)
	}
	return nil
}

// stableEM holds the sensitive rows, indexed (learners.StumpIndex) so that
// a stump's errors take one binary search.
type stableEM struct {
	*learners.StumpIndex // the stump class on the usable rows, and their errors
	X                    *learners.Matrix
	y                    []int32
	classes              int
	q                    [2]uint64 // q = num/den
	gamma                [2]uint64
	eps                  *big.Rat
	src                  noise.Source // set per batch by the voter stage
}

func ratParts(r *big.Rat) ([2]uint64, error) {
	if !r.Num().IsUint64() || !r.Denom().IsUint64() {
		return [2]uint64{}, fmt.Errorf("%s has too many digits", r.RatString())
	}
	return [2]uint64{r.Num().Uint64(), r.Denom().Uint64()}, nil
}

func newStableEM(X *learners.Matrix, y []int32, classes int, p MechanismParams) (*stableEM, error) {
	s := &stableEM{X: X, y: y, classes: classes, eps: ratOf(p.EMEpsilon)}
	var err error
	if s.q, err = ratParts(ratOf(p.SubsetRate)); err != nil {
		return nil, paramError("subset-rate", ": %v", err)
	}
	if s.gamma, err = ratParts(ratOf(p.Gamma)); err != nil {
		return nil, paramError("gamma", ": %v", err)
	}
	s.StumpIndex = learners.NewStumpIndex(X, y, classes)
	return s, nil
}

// predict answers one query x (before the budget is asked: an answer the
// budget refuses is dropped unreleased).
func (s *stableEM) predict(x []float32) (int32, error) {
	src := s.src
	// 4 (drawn first, the coin does not depend on the data). Mixing.
	if noise.UniformUint64(src, s.gamma[1]) < s.gamma[0] {
		return int32(noise.UniformUint64(src, uint64(s.classes))), nil
	}
	// 1. S1, Poisson sampled.
	var s1 []int32
	for _, r := range s.Rows {
		if noise.UniformUint64(src, s.q[1]) < s.q[0] {
			s1 = append(s1, r)
		}
	}
	// 2. One stump per distinct labelling of S1.
	cands := s.Labellings(s1, src)
	// 3. The exponential mechanism over them, scored on every sensitive row.
	errs := make([]int64, len(cands))
	for i, h := range cands {
		errs[i] = s.Errors(h)
	}
	i, err := permuteAndFlip(src, errs, s.eps)
	if err != nil {
		return -1, err
	}
	return cands[i].Predict(x), nil
}

// Votes implements voter: one vote for each row's private prediction.
func (s *stableEM) Votes(x *learners.Matrix, counts []int32) {
	clear(counts[:x.Rows*s.classes])
	for i := 0; i < x.Rows; i++ {
		c, err := s.predict(x.Row(i))
		if err != nil { // cannot happen: the candidate set always has the constant stumps
			c = 0
		}
		counts[i*s.classes+int(c)] = 1
	}
}

// stableEMMechanism is stable-em (above): every answered query is one pure
// ε-DP event of ε = ln(1 + C·β/γ); it plans q, γ and ε_EM so that every
// planned query fits the budget.
type stableEMMechanism struct{}

func (stableEMMechanism) Name() string { return MechanismStableEM }

func (stableEMMechanism) Noise() string {
	return "Poisson subsets, exponential mechanism by exact permute-and-flip (Bernoulli(exp(−γ)) coins, Canonne, Kamath, Steinke 2020) and exact uniform label mixing"
}

func (stableEMMechanism) validate(cfg *Config) error { return validatePure(cfg) }

func (m stableEMMechanism) build(a *aggregator, p MechanismParams) error {
	eps0, err := m.eventEps(a.classes, p)
	if err != nil {
		return err
	}
	a.epsAnswer = eps0
	a.rhoAnswer = rdp.PureDPRho(eps0)
	return nil
}

func (stableEMMechanism) eventEps(classes int, p MechanismParams) (float64, error) {
	q, g, e, err := stableEMParams(p)
	if err != nil {
		return 0, err
	}
	return rdp.FlipEps(rdp.StableTV(q, e), g, classes), nil
}

func (stableEMMechanism) planEvents(l *Labeler, td *teacherData, f *pureFilter, p *MechanismParams, queries int64) error {
	if queries < 0 {
		return invalid("the number of public rows is not known in advance (a stream): give --max-queries to plan stable-em for")
	}
	if err := planStableEM(p, l.cfg.Epsilon, f.deltaZ, queries, len(td.classes.values)); err != nil {
		return invalid("planning stable-em: %w", err)
	}
	f.event = "one ε-private prediction of stable-em (Dagan & Feldman 2020, Corollary 1)"
	return nil
}

func (stableEMMechanism) capEvents(f *pureFilter, _ *MechanismParams, queries int64) error {
	capByQueries(f, queries)
	return nil
}

func (stableEMMechanism) describe(pr *PureDPReport, p MechanismParams, _ *aggregator) {
	q, g, e, _ := stableEMParams(p)
	pr.Beta = Float(rdp.StableTV(q, e))
	pr.Gamma = Float(g)
	pr.Note = "β = q + (1−q)·tanh(ε_EM/2) (Poisson subset S1 of rate q, exponential mechanism of ε_EM); ε per query = ln(1 + C·β/γ); every answered query is one event"
}

func (stableEMMechanism) failureShare() float64 { return 0 }

func (stableEMMechanism) learnerName() string { return "decision stumps (stable-em)" }

// learner keeps the sensitive rows: its parameters are planned later, and
// start indexes the rows with them.
func (stableEMMechanism) learner(_ *Labeler, X *learners.Matrix, y []int32, classes int, _ *learners.Encoder, _ []arrow.Record) (voter, error) {
	return &stableEM{X: X, y: y, classes: classes}, nil
}

// start indexes the sensitive rows with the planned parameters.
func (s *stableEM) start(_ *Labeler, p MechanismParams, _ *aggregator, _ budget) error {
	se, err := newStableEM(s.X, s.y, s.classes, p)
	if err != nil {
		return err
	}
	*s = *se
	return nil
}

// startBatch gives each batch's predictions their own noise stream.
func (s *stableEM) startBatch(l *Labeler, first int64) {
	s.src = l.source(streamStableEM + uint64(first)<<8)
}

func (stableEMMechanism) auditEvents(rep *Report) error {
	if sp, q := rep.Spent, rep.Queries; sp.PureEvents != q.Answered {
		return invalid("report: stable-em charges one event per answer: %d events, %d answers", sp.PureEvents, q.Answered)
	}
	return nil
}

// auditParams re-derives β and γ.
func (stableEMMechanism) auditParams(rep *Report, res *AuditResult) error {
	pr := rep.PureDP
	q, gm, e, err := stableEMParams(rep.Params)
	if err != nil {
		return invalid("report parameters: %w", err)
	}
	tv := rdp.StableTV(q, e)
	addCheck(res, "stable-em β", float64(pr.Beta), tv, math.Abs(float64(pr.Beta)-tv) <= relTol*tv, "β = q + (1−q)·tanh(ε_EM/2), from the exact parameters")
	addCheck(res, "stable-em γ", float64(pr.Gamma), gm, float64(pr.Gamma) == gm, "γ of the parameters")
	return nil
}

func (stableEMMechanism) auditFailure(*Report, *AuditResult, float64) error { return nil }

func (stableEMMechanism) explainFailure(float64) string { return "" }
