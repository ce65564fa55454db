package label

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pate-tool/pate/label/rdp"
)

// Planning defaults for Confident-GNMax when σ1 and σ2 are derived from a
// budget: σ1 = SigmaRatio·σ2, noise sized for AnsweredFraction of the queries
// being answered, and the threshold at ThresholdFraction of the teachers.
const (
	DefaultSigmaRatio        = 2.0
	DefaultAnsweredFraction  = 0.5
	DefaultThresholdFraction = 0.8
)

// roundUpDecimal returns x rounded up to digits significant decimal digits,
// as a string the exact samplers read without loss. Rounding up keeps the
// noise at least as large as planned.
func roundUpDecimal(x float64, digits int) string {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	e := math.Floor(math.Log10(x)) - float64(digits-1)
	scale := math.Pow(10, e)
	m := math.Ceil(x/scale - 1e-9)
	if m*scale < x { // guard against the tolerance above
		m++
	}
	prec := 0
	if e < 0 {
		prec = int(-e)
	}
	return strconv.FormatFloat(m*scale, 'f', prec, 64)
}

// decimal writes a planned noise level as the shortest decimal that reads
// back as the same float64 (the planners round to 4 significant digits, so
// this is a short exact decimal for the samplers).
func decimal(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// planNoise fills in the noise parameters left empty so that n queries fit
// into rho (zCDP) under data-independent accounting: GNMax ρ = 1/σ² per
// query; Confident-GNMax 1/(2σ1²) per query plus 1/σ2² per answer, planned
// for the fraction frac answered; LNMax (2/b)²/2 per query. Fully planned
// noise comes from the accountant's planners, which check the fit with the
// filter's exact arithmetic.
func planNoise(kind string, rho float64, n int64, p *MechanismParams, frac, ratio float64) error {
	if n <= 0 {
		return fmt.Errorf("no queries to plan the noise for")
	}
	if !(rho > 0) {
		return fmt.Errorf("no privacy budget left to plan the noise")
	}
	if m, err := lookup(kind); err == nil {
		if m, ok := m.(argmaxMechanism); ok {
			return m.plan(rho, n, p, frac, ratio)
		}
	}
	return nil
}

// CompleteParams fills in the parameters of the named mechanism that a
// budget (ε, δ) fixes before a run (private-knn: its defaults and the Rényi
// orders its charge holds on); it leaves the others' parameters unchanged.
func CompleteParams(kind string, eps, delta float64, p *MechanismParams) error {
	if ob, ok := orderBoundedOf(kind); ok {
		return ob.setOrder(p, eps, delta)
	}
	return nil
}

// Plan returns the smallest noise with which n queries of the mechanism
// spend at most eps at delta under the run's data-independent zCDP
// accounting (for Confident-GNMax, with the fraction frac of them answered
// and σ1 = ratio·σ2). Noise parameters already set in p are kept.
func Plan(kind string, eps, delta float64, n int64, p MechanismParams, frac, ratio float64) (MechanismParams, error) {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return p, invalid("%w", err)
	}
	if err := CompleteParams(kind, eps, delta, &p); err != nil {
		return p, err
	}
	if err := planNoise(kind, f.Budget(), n, &p, frac, ratio); err != nil {
		return p, invalid("%w", err)
	}
	return p, nil
}

// PlannedRho is the zCDP ρ that n queries spend with the noise p, when a
// fraction frac of them is answered (Confident-GNMax; 1 for the others).
func PlannedRho(kind string, classes int, n int64, p MechanismParams, frac float64) (float64, error) {
	a, err := newAggregator(kind, classes, p)
	if err != nil {
		return 0, invalid("%w", err)
	}
	if m, ok := mechanismOf(kind).(argmaxMechanism); !ok || !m.checksThreshold() {
		frac = 1
	}
	return float64(n) * (a.rhoCheck + frac*a.rhoAnswer), nil
}

// QueriesThatFit is how many queries the noise p lets a run put within
// (eps, delta), when a fraction frac of them is answered.
func QueriesThatFit(kind string, classes int, eps, delta float64, p MechanismParams, frac float64) (int64, error) {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return 0, invalid("%w", err)
	}
	if err := CompleteParams(kind, eps, delta, &p); err != nil {
		return 0, err
	}
	per, err := PlannedRho(kind, classes, 1, p, frac)
	if err != nil {
		return 0, err
	}
	return int64(math.Floor(f.Budget() / per)), nil
}

// MaxOrder is the largest Rényi order at which the run's charges hold, on
// the orders 2..MaxOrder (private-knn's subsampled Gaussian); 0 when they
// hold at every order (zCDP). Every conversion of the run's ρ to ε — the
// report's, the ledger's, the progress bar's, the HTML report's — reads
// only those orders.
func (l *Labeler) MaxOrder() int {
	if ob, ok := orderBoundedOf(l.cfg.Mechanism); ok {
		return ob.maxOrder(l.cfg.Params)
	}
	return 0
}

// epsilonOf converts a ρ of the run's charges to ε at deltaConv on the
// orders they hold at (see MaxOrder).
func (l *Labeler) epsilonOf(rho, deltaConv float64) float64 {
	e, _ := rdp.ZCDPEpsWithin(rho, deltaConv, float64(l.MaxOrder()))
	return e
}

// MaxRho is the most the run can spend (zCDP ρ, class discovery included),
// known before it starts: the filter's budget when it has one, otherwise the
// worst case of every query it may put. A ledger records it before the first
// label is released. MaxDelta is the δ that goes with it.
func (l *Labeler) MaxRho() (float64, error) {
	cfg := &l.cfg
	deltaC := 0.0
	if cfg.Classes == nil {
		deltaC = cfg.Delta * discoveryDeltaShare
	}
	if _, pure := pureEvents(cfg.Mechanism); pure && cfg.Epsilon > 0 {
		// The cap on events pays either by zCDP (ρ ≤ ρ_B) or by basic
		// composition (ρ = Σ εᵢ²/2 ≤ (Σ εᵢ)²/2 ≤ ε²/2).
		return math.Max(rdp.RhoForEps(cfg.Epsilon, cfg.Delta-deltaC), cfg.Epsilon*cfg.Epsilon/2), nil
	}
	if cfg.Epsilon > 0 {
		return rdp.RhoForEps(cfg.Epsilon, cfg.Delta-deltaC), nil
	}
	n := cfg.PublicRows
	if cfg.MaxQueries > 0 && (n < 0 || cfg.MaxQueries < n) {
		n = cfg.MaxQueries
	}
	if n < 0 {
		return 0, invalid("the number of public rows is not known in advance: give --epsilon or --max-queries to bound the spend")
	}
	p := cfg.Params
	if p.Threshold == 0 { // a threshold check charges the same whatever T
		p.Threshold = 1
	}
	per, err := PlannedRho(cfg.Mechanism, 2, 1, p, 1)
	if err != nil {
		return 0, err
	}
	// Every label column pays for every query. The class discoveries of
	// all the columns together cost what one column's would (each column's
	// σ is discoverySigmaFree·√columns, rounded up).
	labels := float64(max(1, len(cfg.Labels)))
	rho := float64(n) * per * labels
	if cfg.Classes == nil {
		rho += 1.0 / (2 * discoverySigmaFree * discoverySigmaFree) // 1.0: untyped integer constants would divide to 0
	}
	return rho, nil
}

// The default plan: what a run that names no plan of its own does.
const (
	// DefaultStudent is the student a default run trains on the teachers'
	// answers; it labels every row the teachers did not.
	DefaultStudent = "logreg"
	// DefaultQueryScale is c in the default query count
	// n = c·k·√(ρ/r) (see DefaultQueries). Tuned once on the shared
	// benchmark datasets, never on a run's data.
	DefaultQueryScale = 11
)

// PlanInputs are the public quantities the default plan is chosen from.
// None of them is read from the sensitive rows.
type PlanInputs struct {
	Epsilon, Delta float64
	Teachers       int
	// Classes is the public class set (--classes); nil when the run
	// discovers it privately (the discovery's share of the budget is then
	// set aside). With Features, for a rule that weighs the model's size.
	Classes []string
	// Features are the declared feature columns (--features); nil: not
	// declared.
	Features []string
	// PublicRows is the number of public rows, -1 for a stream of unknown
	// length.
	PublicRows int64
	Labels     int    // number of label columns
	Mechanism  string // the mechanism asked for; "": the default one
	Replicable bool   // replicable noise: the rows queried must not depend on a student
	// TeachersOnly asks for the teacher-only stream: rows queried in order,
	// no student, the rows the teachers abstain on left unlabelled.
	TeachersOnly bool
	// Params is the explicit noise, if any: without a budget (Epsilon 0)
	// it prices a query.
	Params MechanismParams
}

// RunPlan is how a run labels: the mechanism, whether a student labels
// the rows the teachers did not, which rows are queries and how many.
type RunPlan struct {
	Mechanism  string
	Student    string // "": no student (the teacher-only stream)
	Select     string
	MaxQueries int64  // 0: every public row may be a query
	Why        string // one line: why this plan
}

// ChoosePlan is the default plan of a run, from public quantities only.
// Every choice between ways of labelling that a run does not make
// explicitly is made here, so that a new way (another mechanism) is one
// more case of this function.
//
// PATE with a student is the default: the teachers answer
// DefaultQueries(in) rows the student is least sure of (active learning),
// and the student, trained on those answers, labels every other row. The
// teacher-only stream (every row a query, in order, until the budget
// ends) is what TeachersOnly asks for and what a public stream of unknown
// length, several label columns, replicable noise or a mechanism that is
// not a noisy argmax of the votes get.
func ChoosePlan(in PlanInputs) RunPlan {
	mech := in.Mechanism
	if mech == "" {
		mech = Mechanisms[0]
	}
	stream := RunPlan{Mechanism: mech, Select: SelectFirst}
	switch m, err := lookup(mech); {
	case err != nil:
		return stream // validate names the mistake
	case in.TeachersOnly:
		stream.Why = "teacher-only stream (--teachers-only)"
		return stream
	case in.PublicRows < 0:
		stream.Why = "teacher-only stream: the public rows are a stream of unknown length"
		return stream
	case in.Labels > 1:
		stream.Why = "teacher-only stream: several label columns"
		return stream
	case in.Replicable:
		stream.Why = "teacher-only stream: replicable noise queries every row in order"
		return stream
	default:
		if _, ok := m.(argmaxMechanism); !ok {
			stream.Why = "teacher-only stream: " + mech + " is not a noisy argmax of the votes"
			return stream
		}
	}
	if qp, ok := mechanismOf(mech).(queryPlanner); ok {
		return qp.defaultPlan(in, stream)
	}
	n := DefaultQueries(in)
	if n <= 0 {
		stream.Why = "teacher-only stream: no budget or noise to plan the queries from"
		return stream
	}
	rule := fmt.Sprintf("%d·k·√(ρ/r)", DefaultQueryScale)
	if !(in.Epsilon > 0) {
		rule = fmt.Sprintf("%d·k²/σ² for the explicit noise", DefaultQueryScale*DefaultQueryScale)
	}
	return RunPlan{
		Mechanism:  mech,
		Student:    DefaultStudent,
		Select:     SelectUncertain,
		MaxQueries: n,
		Why: fmt.Sprintf("default: the teachers answer %d queries (n = %s, at most half the public rows; "+
			"k = %d teachers), chosen where a %s student is least sure; the student labels every other row",
			n, rule, in.Teachers, DefaultStudent),
	}
}

// queryPlanner is a mechanism whose default plan is its own rather than
// DefaultQueries' (its charge per query is not a Gaussian argmax's).
type queryPlanner interface {
	// defaultPlan is the plan for in; stream is the teacher-only stream,
	// returned when there is nothing to plan from.
	defaultPlan(in PlanInputs, stream RunPlan) RunPlan
}

// queryCap is the most queries a default plan puts: half the public rows
// (a selection of them all chooses nothing) and the rows an uncertain
// selection chooses from.
func queryCap(in PlanInputs) int64 {
	n := int64(uncertainPool)
	if in.PublicRows >= 0 {
		n = min(n, (in.PublicRows+1)/2)
	}
	return n
}

// DefaultQueries is the number of queries a default run puts to the
// teachers: n = c·k·√(ρ/r), with k the teachers, ρ the zCDP budget left
// for the queries, r the ρ one query costs when its argmax noise is σ = 1
// (so that n queries get σ = √(r·n/ρ)) and c = DefaultQueryScale; at most
// half the public rows (an uncertain selection of every row chooses
// nothing, and on the shared small datasets half did better than all)
// and the rows an uncertain selection chooses from. σ is
// the Gaussian noise of the same zCDP cost per answer (ρ = 1/σ²).
//
// Why: the student's error falls like a/√n with the number of answers
// and grows like b·σ/k with the noise relative to the widest vote margin;
// σ grows like √n, and a/√n + b·√(r·n/ρ)/k is smallest at
// n = (a/b)·k·√(ρ/r). Fewer queries starve the student, more drown the
// votes in noise. Without a budget the explicit noise prices a query
// (ρ = n·r/σ²: the same balance is n = c²·k²/σ²). It returns 0 when
// neither gives a price.
func DefaultQueries(in PlanInputs) int64 {
	mech := in.Mechanism
	if mech == "" {
		mech = Mechanisms[0]
	}
	found, err := lookup(mech)
	if err != nil {
		return 0
	}
	m, ok := found.(argmaxMechanism)
	if !ok {
		return 0
	}
	k := float64(in.Teachers)
	var n float64
	if in.Epsilon > 0 {
		p := MechanismParams{}
		if err := m.plan(1, 1, &p, DefaultAnsweredFraction, DefaultSigmaRatio); err != nil {
			return 0
		}
		r, ok := unitQueryRho(m, p, in.Teachers)
		rho := defaultQueryRho(in)
		if !ok || !(rho > 0) {
			return 0
		}
		n = DefaultQueryScale * k * math.Sqrt(rho/r)
	} else {
		p := in.Params
		m.complete(&p, in.Teachers)
		a, err := newAggregator(mech, 2, p)
		if err != nil || !(a.rhoAnswer > 0) {
			return 0
		}
		n = DefaultQueryScale * DefaultQueryScale * k * k * a.rhoAnswer
	}
	return min(int64(math.Max(1, math.Round(n))), queryCap(in))
}

// uncertainPool is the number of leading public rows an uncertain
// selection chooses its queries from (the rows the encoder is fitted on).
const uncertainPool = 100_000

// defaultQueryRho is the zCDP budget a default run has for its queries:
// the filter's, less the share of a private class discovery.
func defaultQueryRho(in PlanInputs) float64 {
	if !(in.Epsilon > 0) {
		return 0
	}
	delta := in.Delta
	if in.Classes == nil {
		delta *= 1 - discoveryDeltaShare
	}
	rho := rdp.RhoForEps(in.Epsilon, delta)
	if in.Classes == nil {
		rho *= 1 - discoveryRhoShare
	}
	return rho
}

// unitQueryRho is r, what one query of m with the noise p costs (its
// threshold check, and its answer for the planned fraction answered)
// relative to what one answer costs: the ρ of a query whose argmax noise
// is σ = 1.
func unitQueryRho(m argmaxMechanism, p MechanismParams, teachers int) (float64, bool) {
	m.complete(&p, teachers)
	a, err := newAggregator(m.Name(), 2, p)
	if err != nil || !(a.rhoAnswer > 0) {
		return 0, false
	}
	frac := 1.0
	if m.checksThreshold() {
		frac = DefaultAnsweredFraction
	}
	return (a.rhoCheck + frac*a.rhoAnswer) / a.rhoAnswer, true
}

// NoiseBeyondVotes returns the argmax noise of the mechanism with the
// parameters p, as the σ of Gaussian noise of the same zCDP cost per
// answer (ρ = 1/σ²), and whether it exceeds the number of teachers: noise
// wider than the widest possible vote margin leaves the answers close to
// guessing. It reads only public parameters.
func NoiseBeyondVotes(mech string, p MechanismParams, teachers int) (float64, bool) {
	found, err := lookup(mech)
	if err != nil {
		return 0, false
	}
	m, ok := found.(argmaxMechanism)
	if !ok {
		return 0, false
	}
	m.complete(&p, teachers)
	a, err := newAggregator(mech, 2, p)
	if err != nil {
		return 0, false
	}
	return noiseBeyondVotes(a, teachers)
}

func noiseBeyondVotes(a *aggregator, teachers int) (float64, bool) {
	if !(a.rhoAnswer > 0) {
		return 0, false
	}
	sigma := 1 / math.Sqrt(a.rhoAnswer)
	return sigma, sigma > float64(teachers)
}

// DeltaSaneBound is the largest δ a run takes without a warning: δ is the
// probability that the guarantee fails outright (a record may then be
// exposed), so it must stay well below one over the number of people.
const DeltaSaneBound = 1e-4
