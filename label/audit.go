package label

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/label/report"
)

// ErrClaimExceeded is returned by Audit when the ε recomputed from a report's
// mechanism, parameters and event counts is larger than the ε it claims (or
// than the spend it reports): the claim does not hold.
var ErrClaimExceeded = errors.New("claimed privacy guarantee exceeded")

// ParseReport decodes a JSON report and checks that it is one this version
// of pate can audit: a well-formed pate report of a known schema version.
// Errors wrap ErrInvalidInput.
func ParseReport(b []byte) (*Report, error) {
	rep, err := report.Parse(b)
	if err != nil {
		return nil, invalid("%w", err)
	}
	return rep, nil
}

// EventRho returns the zCDP ρ of one threshold check and of one noisy argmax
// of the mechanism with the noise parameters p, over the given number of
// classes: the per-event costs a run charges to its budget.
func EventRho(mechanism string, classes int, p MechanismParams) (check, answer float64, err error) {
	a, err := newAggregator(mechanism, max(classes, 1), p)
	if err != nil {
		return 0, 0, invalid("%w", err)
	}
	return a.rhoCheck, a.rhoAnswer, nil
}

// RecomputeSpend is the realized spend of checks threshold checks and
// argmaxes noisy argmaxes of the mechanism with noise p, plus the class
// discovery (discSigma "" when the classes were public), converted at
// δ − discDelta: ρ, the improved and classic RDP conversions and, for the
// Gaussian mechanisms, Gaussian DP. ε values are rounded up to 6 decimals,
// as in reports.
func RecomputeSpend(mechanism string, classes int, p MechanismParams, checks, argmaxes int64,
	discSigma string, discDelta, delta float64) (Spend, error) {
	return RecomputeSpendLabels(mechanism, []LabelEvents{{Classes: classes, Params: p, Checks: checks,
		Argmaxes: argmaxes, DiscoverySigma: discSigma}}, discDelta, delta)
}

// LabelEvents are the events one label column of a run was charged: its
// number of classes, its noise, its threshold checks and noisy argmaxes,
// and the σ of its class discovery ("" when its classes were public).
type LabelEvents struct {
	Classes          int
	Params           MechanismParams
	Checks, Argmaxes int64
	DiscoverySigma   string
	// ModelRho is what training a model mechanism's model charged (zCDP,
	// Gaussian); 0 for the others.
	ModelRho float64
}

// RecomputeSpendLabels is RecomputeSpend for the events of several label
// columns of one run (a multi-label run: every column's events on the same
// queries). Rényi DP and zCDP compose by addition, at every order, whether
// the events are of one column or of several: the curves add up and the
// sum is converted once at δ − discDelta (discDelta: the discoveries' δ,
// all columns together). The event counts of the result are the totals.
func RecomputeSpendLabels(mechanism string, labels []LabelEvents, discDelta, delta float64) (Spend, error) {
	return recomputeSpend(mechanism, labels, discDelta, delta, false)
}

// recomputeSpend is RecomputeSpendLabels; with improvedOnly it leaves the
// classic and Gaussian-DP readings out (a timeline point states ρ and the
// improved ε only).
func recomputeSpend(mechanism string, labels []LabelEvents, discDelta, delta float64, improvedOnly bool) (Spend, error) {
	if len(labels) == 0 {
		return Spend{}, invalid("no label column")
	}
	deltaConv := delta - discDelta
	if !(deltaConv > 0 && deltaConv < 1) {
		return Spend{}, invalid("δ %g minus the class discovery's δ %g is not in (0, 1)", delta, discDelta)
	}
	orders := rdp.DefaultOrders()
	maxOrder := math.Inf(1)
	if ob, ok := orderBoundedOf(mechanism); ok { // its charges hold up to an order
		maxOrder = float64(ob.maxOrder(labels[0].Params))
		orders = slices.DeleteFunc(orders, func(o float64) bool { return o > maxOrder })
	}
	curve := make([]float64, len(orders))
	var rho, gaussRho, mu2, pureEps float64
	var checks, argmaxes int64
	classesPublic := true
	for _, lab := range labels {
		a, err := eventCostsOf(mechanism, max(lab.Classes, 1), lab.Params)
		if err != nil {
			return Spend{}, invalid("%w", err)
		}
		rc, ra := a.rhoCheck, a.rhoAnswer
		var discRho, discMu2 float64
		if lab.DiscoverySigma != "" {
			_, s, err := parsePositive("class discovery sigma", lab.DiscoverySigma)
			if err != nil {
				return Spend{}, invalid("%w", err)
			}
			discRho = rdp.DiscreteGaussianRho(1, s, max(lab.Classes, 1))
			discMu2 = 1 / (s * s)
		}
		r := float64(lab.Checks)*rc + float64(lab.Argmaxes)*ra + discRho + lab.ModelRho
		rho += r
		if lab.DiscoverySigma != "" {
			classesPublic = false
		}
		if pureAnswers(mechanism) {
			gaussRho += discRho
			pureEps += float64(lab.Argmaxes) * a.epsAnswer
			pure := rdp.PureDP(a.epsAnswer, orders)
			for i := range curve {
				curve[i] += float64(lab.Argmaxes) * pure[i]
			}
		} else {
			gaussRho += r
			// ρ = μ²/2 for every Gaussian event here.
			mu2 += 2*float64(lab.Checks)*rc + 2*float64(lab.Argmaxes)*ra + discMu2 + 2*lab.ModelRho
		}
		checks += lab.Checks
		argmaxes += lab.Argmaxes
	}
	for i, o := range orders {
		curve[i] += gaussRho * o
	}
	ei, oi := rdp.EpsImproved(orders, curve, deltaConv)
	// On the orders 2..maxOrder only when the charges are bounded there
	// (never below 2, however large ρ); every order > 1 otherwise.
	if z, o := rdp.ZCDPEpsWithin(rho, deltaConv, maxOrder); z < ei {
		if math.IsNaN(o) && !improvedOnly { // unbounded: ZCDPEps does not say its order
			o = zcdpOrder(rho, deltaConv)
		}
		ei, oi = z, math.Round(100*o)/100
	}
	var ec, oc float64
	if !improvedOnly {
		ec, oc = rdp.EpsClassic(orders, curve, deltaConv)
	}
	sp := Spend{
		Rho:             Float(rho),
		EpsilonImproved: Float(rdp.RoundUp(ei, epsDecimals)),
		OrderImproved:   Float(oi),
		EpsilonClassic:  Float(rdp.RoundUp(ec, epsDecimals)),
		OrderClassic:    Float(oc),
		Delta:           Float(delta),
		ThresholdChecks: checks,
		NoisyArgmaxes:   argmaxes,
	}
	if pureAnswers(mechanism) && classesPublic {
		// Every event is pure: basic composition, δ = 0.
		v := Float(rdp.RoundUp(pureEps, epsDecimals))
		sp.EpsilonPure, sp.PureEvents = &v, argmaxes
	}
	if !pureAnswers(mechanism) && math.IsInf(maxOrder, 1) && !improvedOnly { // Gaussian DP needs every order
		g := Float(rdp.RoundUp(rdp.GDPEps(math.Sqrt(mu2), deltaConv), epsDecimals))
		sp.EpsilonGDP = &g
	}
	return sp, nil
}

// eventCost is what one event of a mechanism with given parameters costs:
// the ρ of a threshold check and of an answer, and an answer's pure ε.
type eventCost struct{ rhoCheck, rhoAnswer, epsAnswer float64 }

type eventCostKey struct {
	mechanism string
	classes   int
	params    MechanismParams
}

// eventCosts remembers the costs of the settings recomputed last: a
// report's timeline recomputes the spend at every one of its points (about
// 200) with the same settings, and building the aggregator builds its
// exact sampler's tables, half the time of a recomputation.
var eventCosts struct {
	sync.Mutex
	m map[eventCostKey]eventCost
}

// eventCostsMax bounds the settings remembered.
const eventCostsMax = 64

// eventCostsOf returns the costs of an event of mechanism with classes and
// params, as the aggregator that would run them plans them.
func eventCostsOf(mechanism string, classes int, params MechanismParams) (eventCost, error) {
	k := eventCostKey{mechanism, classes, params}
	eventCosts.Lock()
	c, ok := eventCosts.m[k]
	eventCosts.Unlock()
	if ok {
		return c, nil
	}
	a, err := newAggregator(mechanism, classes, params)
	if err != nil {
		return eventCost{}, err
	}
	c = eventCost{a.rhoCheck, a.rhoAnswer, a.epsAnswer}
	eventCosts.Lock()
	if eventCosts.m == nil || len(eventCosts.m) >= eventCostsMax {
		eventCosts.m = make(map[eventCostKey]eventCost)
	}
	eventCosts.m[k] = c
	eventCosts.Unlock()
	return c, nil
}

// DiscoveryDelta is the δ a run with these settings gives to the private
// release of its class set: 0 when the classes are public.
func DiscoveryDelta(delta float64, classesPublic bool) float64 {
	if classesPublic {
		return 0
	}
	return delta * discoveryDeltaShare
}

// relTol is the relative slack allowed between a recorded ρ and its
// recomputation (float64 sums in a different order).
const relTol = 1e-9

func leq(a, b float64) bool { return a <= b || a-b <= relTol*math.Abs(b) }

// What Audit does with every field of a report. A figure is either
// recomputed from the mechanism, the exact parameters and the event counts
// (and the report refused when it understates the recomputation), checked
// for consistency with the other counts (and the report refused as
// malformed), or not read at all: a field not read is not part of the claim
// the audit confirms, and the audit prints its own figures, not the
// report's.
//
//	field                              what the audit does
//	schema_version, tool, command      refused unless this pate's label report
//	mechanism                          refused unless known; selects the accountant
//	parameters.*                       exact decimals; every per-event cost recomputed from them
//	classes                            distinct; their number enters the per-event costs;
//	                                   released_labels may only count these
//	guarantee.epsilon                  recomputed ε of the claim's ρ at δ − discovery δ must not
//	                                   exceed it (unrounded, relative slack relTol: an honest
//	                                   --epsilon 1.0000001 passes); pure: the smaller reading of the cap
//	guarantee.delta                    the claim's δ; pure: recomputed (δ − ... or svt's share)
//	guarantee.rho                      filter: = budget.rho_budget, realized ρ within it;
//	                                   no filter: ≥ the recomputed worst case of the queries put
//	guarantee.conversion, .basis       text, not read
//	budget.filter                      selects the basis of the claim
//	budget.epsilon, budget.delta       filter: must be the claim; pure: the budget the cap is recomputed from
//	budget.rho_budget                  must be guarantee.rho
//	budget.stopped_on_budget           allows the one extra threshold check of the stopping query
//	budget.stopped_at_row, max_queries not read
//	spent.rho                          must not understate the ρ recomputed from the counts
//	spent.epsilon_improved, _classic,  must not understate their recomputation (6 decimals, rounded up)
//	  _gdp, _pure
//	spent.delta                        must be the δ of the recomputed spend
//	spent.order_improved, _classic     not read (the audit prints its own)
//	spent.threshold_checks,            the events; consistent with queries and (multi-label) the columns;
//	  noisy_argmaxes, pure_events        pure: within the recomputed cap
//	queries.*                          answered ≤ queries ≤ public rows; abstained = rows − answered;
//	                                   not_queried = rows − queries (single label); answered = argmaxes
//	released_labels                    sum = answered; classes listed
//	class_discovery.sigma              ρ = 1/(2σ²) recomputed, included in the realized ρ and the claim
//	class_discovery.delta              must be the share of δ pate gives it (recomputed from guarantee.delta)
//	class_discovery.threshold          must be ≥ 1 + the (1−δ) point of N_Z(0, σ²), recomputed from σ and δ
//	class_discovery.rho                must not understate the recomputed ρ
//	labels[].label, classes,           as the single-label fields, per column; every column's
//	  class_discovery, parameters,       discovery gets share·δ / columns
//	  counts, released_labels
//	labels[].rho, labels[].epsilon     must not understate their recomputation
//	labels[].weight, rho_planned,      not read
//	  abstained, classes_source
//	planned_queries                    svt: queries ≤ it; the stable-release failure δ recomputed for it
//	pure_dp.event_epsilon              must not understate ε0 recomputed from the parameters
//	pure_dp.max_events                 must not exceed the cap recomputed from the budget
//	pure_dp.events                     must be spent.pure_events
//	pure_dp.basic_composition_epsilon, must not understate their recomputation;
//	  zcdp_epsilon, zcdp_delta           zcdp_delta must be the recomputed δ
//	pure_dp.stable_release_delta       must be svt's share of δ; its failure bound recomputed
//	pure_dp.unstable_queries           consistent with the counts (svt)
//	pure_dp.beta, gamma                recomputed from the parameters (stable-em)
//	pure_dp.event, claimed_reading,    text; event is quoted in the explanation, not verified
//	  note
//	dp_logreg.features, released_dims  dims must be classes·(features+1)
//	dp_logreg.count_sigma, sigma       must be the σ the planner gives for the budget ρ (count: its
//	                                   share; steps: what the count left, these steps, this sensitivity)
//	dp_logreg.sensitivity_sq           must be the rule's for the parameter count
//	dp_logreg.steps                    at most the rule's maximum; enters the steps' σ and ρ
//	dp_logreg.rho                      must not understate 1/(2σc²) + steps·sensitivity_sq/(2σ²),
//	                                   which is added to the realized ρ
//	dp_logreg.count_rho, steps_rho,    not read (the audit prints its own); clip, integer_scale,
//	  the hyperparameters, text          learning_rate, row_norm, rounding_beta enter no cost
//	noise, privacy_unit, neighbouring  text quoted in the explanation; not verifiable from a report
//	seeded                             quoted in the explanation (a warning); not verifiable
//	version, teachers, learner, label,
//	  classes_source, replicable*,     not read (no cost depends on them: one unit changes one
//	  timeline, selection, sources,      teacher whatever their number)
//	  student, planned_answered_fraction
//
// Audit recomputes a report's guarantee from its mechanism, its noise
// parameters (exact decimal strings), its event counts and its class
// discovery with the accountant, and compares it with the claim. A report
// that is inconsistent or incomplete gives an error wrapping
// ErrInvalidInput (and no result). When the recomputed ε exceeds the claim
// (or the recorded spend understates the recomputed one), Audit returns the
// result and an error wrapping ErrClaimExceeded.
func Audit(rep *Report) (*AuditResult, error) {
	if rep == nil {
		return nil, invalid("report: empty")
	}
	if !slices.Contains(Mechanisms, rep.Mechanism) {
		return nil, invalid("report: unknown mechanism %q", rep.Mechanism)
	}
	if m, pure := pureEvents(rep.Mechanism); pure { // pure ε-DP events (audit_pure.go)
		return auditPure(rep, m)
	}
	g := rep.Guarantee
	delta := float64(g.Delta)
	if !(delta > 0 && delta < 1) {
		return nil, invalid("report: guarantee.delta %g is not in (0, 1)", delta)
	}
	if !(g.Epsilon >= 0) || !(g.Rho >= 0) {
		return nil, invalid("report: guarantee.epsilon and guarantee.rho must be numbers ≥ 0")
	}
	var res *AuditResult
	var err error
	if len(rep.Labels) > 0 {
		res, err = auditLabels(rep)
	} else {
		res, err = auditLabel(rep)
	}
	if err != nil {
		return nil, err
	}
	sp, q := rep.Spent, rep.Queries
	deltaConv := delta - res.DiscoveryDelta
	add := func(name string, claimed, recomputed float64, ok bool, detail string) {
		addCheck(res, name, claimed, recomputed, ok, detail)
	}

	realized := float64(res.Spent.Rho)
	if rep.Budget.Filter {
		add("filter budget ε is the claim", float64(g.Epsilon), float64(rep.Budget.Epsilon), float64(rep.Budget.Epsilon) == float64(g.Epsilon),
			"a filtered run claims its budget")
		add("filter budget δ is the claim", delta, float64(rep.Budget.Delta), float64(rep.Budget.Delta) == delta,
			"a filtered run claims its budget")
		res.ClaimRho = float64(g.Rho)
		if float64(rep.Budget.RhoForQueries) != float64(g.Rho) {
			return nil, invalid("report: budget.rho_budget %g differs from guarantee.rho %g", float64(rep.Budget.RhoForQueries), float64(g.Rho))
		}
		add("realized spend within the filter's budget", float64(g.Rho), realized, leq(realized, float64(g.Rho)),
			"ρ recomputed from the counts (checks·ρ_check + argmaxes·ρ_answer + discovery ρ) must not exceed the budget ρ")
	} else {
		res.ClaimRho = res.DiscoveryRho + float64(q.Seen)*(res.RhoCheck+res.RhoAnswer)
		add("worst case of the queries put", float64(g.Rho), res.ClaimRho, leq(res.ClaimRho, float64(g.Rho)),
			"without a filter the claim is ρ = discovery ρ + queries × (ρ_check + ρ_answer)")
		add("realized spend within the worst case", res.ClaimRho, realized, leq(realized, res.ClaimRho),
			"ρ recomputed from the counts cannot exceed the worst case")
	}
	var ok bool
	res.Epsilon, ok = epsWithinClaim(rdp.ZCDPEps(res.ClaimRho, deltaConv), float64(g.Epsilon))
	add("claimed ε", float64(g.Epsilon), res.Epsilon, ok,
		fmt.Sprintf("ε of ρ = %.6g at δ − discovery δ = %.6g (improved conversion, best real order) must not exceed the claim", res.ClaimRho, deltaConv))
	add("recorded realized ρ", float64(sp.Rho), realized, leq(realized, float64(sp.Rho)),
		"the report must not understate the realized ρ")
	checkRecordedSpend(res, sp, false)
	res.Explanation = explain(rep, res)
	if err := verdict(res); err != nil {
		return res, err
	}
	return res, nil
}

// auditLabel checks the counts of a single-label report and recomputes its
// per-event costs, discovery and realized spend.
func auditLabel(rep *Report) (*AuditResult, error) {
	g := rep.Guarantee
	delta := float64(g.Delta)
	if len(rep.Classes) == 0 {
		return nil, invalid("report: no classes")
	}
	sp, q := rep.Spent, rep.Queries
	if sp.ThresholdChecks < 0 || sp.NoisyArgmaxes < 0 || q.Seen < 0 || q.Answered < 0 || q.PublicRows < 0 {
		return nil, invalid("report: negative counts")
	}
	// The counts must tell one story.
	if q.Answered != sp.NoisyArgmaxes {
		return nil, invalid("report: %d answered queries but %d noisy argmaxes", q.Answered, sp.NoisyArgmaxes)
	}
	// A query stopped by the filter after its threshold check was charged
	// counts one check more than the queries put.
	maxChecks := q.Seen
	if rep.Budget.StoppedOn {
		maxChecks++
	}
	if checksThreshold(rep.Mechanism) && sp.ThresholdChecks > maxChecks {
		return nil, invalid("report: %d threshold checks for %d queries", sp.ThresholdChecks, q.Seen)
	}
	if !checksThreshold(rep.Mechanism) && sp.ThresholdChecks != 0 {
		return nil, invalid("report: %s makes no threshold checks, the report counts %d", rep.Mechanism, sp.ThresholdChecks)
	}
	if err := checkQueryCounts(rep); err != nil {
		return nil, err
	}

	res := &AuditResult{
		Mechanism: rep.Mechanism, Filter: rep.Budget.Filter, Seeded: rep.Seeded,
		ThresholdChecks: sp.ThresholdChecks, NoisyArgmaxes: sp.NoisyArgmaxes, Queries: q.Seen,
		ClaimedEpsilon: float64(g.Epsilon), Delta: delta,
	}
	var err error
	if res.RhoCheck, res.RhoAnswer, err = EventRho(rep.Mechanism, len(rep.Classes), rep.Params); err != nil {
		return nil, fmt.Errorf("report parameters: %w", err)
	}
	discSigma := ""
	if d := rep.ClassDiscovery; d != nil {
		discSigma = d.Sigma
		if res.DiscoveryRho, err = checkDiscovery(res, "", d, len(rep.Classes), DiscoveryDelta(delta, false)); err != nil {
			return nil, err
		}
		res.DiscoveryDelta = DiscoveryDelta(delta, false)
	}
	if ob, ok := mechanismOf(rep.Mechanism).(orderBounded); ok && rep.Budget.Filter {
		ob.auditOrders(rep, res, delta-res.DiscoveryDelta)
	}
	var modelRho float64
	if m, ok := mechanismOf(rep.Mechanism).(modelMechanism); ok {
		if modelRho, err = m.auditModel(rep, res); err != nil {
			return nil, err
		}
	}
	choiceRho, err := choiceRhoOf(rep, res)
	if err != nil {
		return nil, err
	}
	if err := auditTeachers(rep, res); err != nil {
		return nil, err
	}
	modelRho += choiceRho
	res.Spent, err = RecomputeSpendLabels(rep.Mechanism, []LabelEvents{{Classes: len(rep.Classes), Params: rep.Params,
		Checks: sp.ThresholdChecks, Argmaxes: sp.NoisyArgmaxes, DiscoverySigma: discSigma, ModelRho: modelRho}}, res.DiscoveryDelta, delta)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return res, nil
}

// epsWithinClaim compares the ε recomputed for a claim with the claimed ε.
// The claim is the user's --epsilon, written with as many decimals as it
// was given, and the run's ρ was derived from it so that ρ converts to at
// most that ε; rounding the recomputation up to the reports' 6 decimals
// would refuse an honest claim of 1.0000001. So the unrounded recomputation
// is compared, with a relative slack of relTol for the numerical
// optimisation of the conversion (the run and the audit subtract the
// discovery δ in a different order). The ε shown is the recomputation
// rounded up to 6 decimals, or the claim itself when that rounding passes
// the claim although the recomputation is within it.
func epsWithinClaim(recomputed, claimed float64) (shown float64, ok bool) {
	ok = recomputed <= claimed || (recomputed-claimed <= relTol*math.Abs(claimed))
	shown = rdp.RoundUp(recomputed, epsDecimals)
	if ok && shown > claimed {
		shown = claimed
	}
	return shown, ok
}

// checkDiscovery re-derives the figures of a private class discovery from
// its σ and the δ pate gives it (wantDelta, computed by the caller from the
// guarantee's δ, never taken from the report): the recorded δ must be that
// δ (else the report is refused as malformed); the recorded ρ must not
// understate 1/(2σ²); and the release threshold must be at least
// 1 + the smallest t with Pr[N_Z(0, σ²) ≥ t] ≤ δ, the threshold pate
// computes, or a class held by a single unit is released with probability
// above δ (a report with a lower threshold does not hold). It returns the
// recomputed ρ. name prefixes the checks ("" for a single label column).
func checkDiscovery(res *AuditResult, name string, d *ClassDiscovery, classes int, wantDelta float64) (float64, error) {
	_, sigma, err := parsePositive("class discovery sigma", d.Sigma)
	if err != nil {
		return 0, invalid("report%s: %v", name, err)
	}
	if got := float64(d.Delta); !(math.Abs(got-wantDelta) <= 1e-9*wantDelta) {
		return 0, invalid("report%s: class discovery δ %g is not the share of the run's δ that pate gives it (%g)", name, got, wantDelta)
	}
	rho := rdp.DiscreteGaussianRho(1, sigma, max(classes, 1))
	addCheck(res, "class discovery ρ"+name, float64(d.Rho), rho, leq(rho, float64(d.Rho)),
		"ρ = 1/(2σ²) of the noisy histogram of classes; the report must not understate it")
	tau := 1 + discreteGaussianTailPoint(sigma, wantDelta)
	addCheck(res, "class discovery threshold"+name, float64(d.Threshold), float64(tau), d.Threshold >= tau,
		fmt.Sprintf("a class needs a noisy count of at least 1 + the (1 − δ) point of N_Z(0, σ²) (σ = %s, δ = %.6g) to be released", d.Sigma, wantDelta))
	return rho, nil
}

// explain says what the guarantee means, in plain words.
func explain(rep *Report, res *AuditResult) []string {
	nb := rep.Neighbouring
	if nb == "" {
		nb = "add or remove one " + rep.PrivacyUnit
	}
	eps := res.ClaimedEpsilon
	out := []string{
		fmt.Sprintf("Privacy unit: %s. Two sensitive datasets are neighbours when they differ in one unit: %s.", rep.PrivacyUnit, nb),
		fmt.Sprintf("Guarantee: (ε = %g, δ = %g). For any one person (privacy unit), whatever anyone learns from the released labels and report "+
			"is almost as likely whether or not their records were in the sensitive data: every outcome's probability changes by a factor of at most e^ε = %.3g, "+
			"except with probability δ = %g.", eps, res.Delta, math.Exp(eps), res.Delta),
	}
	if res.Filter {
		out = append(out, fmt.Sprintf("Basis: a zCDP filter with budget ρ = %.6g, fixed before the run; the run stopped before any event would have taken it past that budget. "+
			"ρ-zCDP converts to (ε, δ) by the improved conversion (Canonne, Kamath, Steinke 2020) at the best real order; "+
			"the realized spend was ρ = %.6g (ε = %g at order %g; classic conversion %g at order %g).",
			res.ClaimRho, float64(res.Spent.Rho), float64(res.Spent.EpsilonImproved), float64(res.Spent.OrderImproved),
			float64(res.Spent.EpsilonClassic), float64(res.Spent.OrderClassic)))
	} else {
		out = append(out, fmt.Sprintf("Basis: no budget filter; the claim charges every one of the %d queries put as if it had been answered (ρ = %.6g), "+
			"converted by the improved conversion at the best real order.", res.Queries, res.ClaimRho))
	}
	if len(res.Labels) > 0 {
		names := make([]string, len(res.Labels))
		for i, l := range res.Labels {
			names[i] = l.Label
		}
		out = append(out, fmt.Sprintf("Several label columns (%s): each public row was one query answered per column, each column abstaining on its own; "+
			"the columns' events compose (zCDP ρ adds up: one unit moves one vote in each column's histogram), and the guarantee covers all of them together.",
			strings.Join(names, ", ")))
	}
	noise := "Noise: " + rep.Noise + "."
	if res.Seeded {
		noise += " The guarantee of a seeded run holds only while the seed stays secret."
	}
	out = append(out, noise)
	if len(res.Labels) > 0 && res.DiscoveryRho > 0 {
		out = append(out, fmt.Sprintf("The set of classes of each label column was itself released privately (ρ = %.6g, δ = %.6g in all), and is included.",
			res.DiscoveryRho, res.DiscoveryDelta))
	} else if rep.ClassDiscovery != nil {
		out = append(out, fmt.Sprintf("The set of classes was itself released privately (σ = %s, ρ = %.6g, δ = %.6g), and is included.",
			rep.ClassDiscovery.Sigma, res.DiscoveryRho, res.DiscoveryDelta))
	} else {
		out = append(out, "The set of classes was given as public and costs nothing.")
	}
	out = append(out,
		"Covered: the released labels, which rows were answered, and every figure of the report, and anything computed from them "+
			"(for example a student model trained on the labels).",
		"Not covered: other releases about the same people (add their budgets: see pate ledger), the public data itself, "+
			"and anything that leaks the seed, the teachers or the vote counts.")
	return out
}

// add records one check of an audit.
func addCheck(res *AuditResult, name string, claimed, recomputed float64, ok bool, detail string) {
	res.Checks = append(res.Checks, AuditCheck{Name: name, Claimed: claimed, Recomputed: recomputed, OK: ok, Detail: detail})
}

// checkRecordedSpend checks that the report's recorded spend sp does not
// understate the recomputed one. A report of a pure ε-DP mechanism must
// state its basic-composition ε (requirePure); other reports may omit it
// (those written before pate recorded it).
func checkRecordedSpend(res *AuditResult, sp Spend, requirePure bool) {
	want := float64(res.Spent.Delta)
	addCheck(res, "recorded spend δ", float64(sp.Delta), want, math.Abs(float64(sp.Delta)-want) <= relTol*want,
		"the recorded spend's ε figures are stated at this δ")
	for _, c := range []struct {
		name      string
		rec, want Float
	}{
		{"recorded spend, improved conversion", sp.EpsilonImproved, res.Spent.EpsilonImproved},
		{"recorded spend, classic conversion", sp.EpsilonClassic, res.Spent.EpsilonClassic},
	} {
		addCheck(res, c.name, float64(c.rec), float64(c.want), float64(c.want) <= float64(c.rec)+1e-6,
			"the report must not understate the realized ε (reported ε is rounded up to 6 decimals)")
	}
	if res.Spent.EpsilonGDP != nil {
		rec := math.Inf(-1)
		if sp.EpsilonGDP != nil {
			rec = float64(*sp.EpsilonGDP)
		}
		addCheck(res, "recorded spend, Gaussian DP", rec, float64(*res.Spent.EpsilonGDP), float64(*res.Spent.EpsilonGDP) <= rec+1e-6,
			"the report must not understate the Gaussian-DP ε of the same events")
	}
	if res.Spent.EpsilonPure != nil && (requirePure || sp.EpsilonPure != nil) {
		rec := math.Inf(-1)
		if sp.EpsilonPure != nil {
			rec = float64(*sp.EpsilonPure)
		}
		addCheck(res, "recorded spend, basic composition", rec, float64(*res.Spent.EpsilonPure), float64(*res.Spent.EpsilonPure) <= rec+1e-6,
			"Σ εᵢ of the pure events charged (δ = 0) must not be understated")
	}
}

// verdict sets Holds from the checks; it returns ErrClaimExceeded naming
// the failed ones.
func verdict(res *AuditResult) error {
	res.Holds = true
	var failed []string
	for _, c := range res.Checks {
		if !c.OK {
			res.Holds = false
			failed = append(failed, fmt.Sprintf("%s: recomputed %.6g, report says %.6g", c.Name, c.Recomputed, c.Claimed))
		}
	}
	if !res.Holds {
		return fmt.Errorf("%w: %s", ErrClaimExceeded, strings.Join(failed, "; "))
	}
	return nil
}

// releasedAreClasses checks that a report's classes are distinct and that
// every class it counts released labels of is one of them: the number of
// classes enters the per-event costs.
func releasedAreClasses(released map[string]int64, classes []string) error {
	set := make(map[string]bool, len(classes))
	for _, c := range classes {
		if set[c] {
			return fmt.Errorf("a class is listed twice")
		}
		set[c] = true
	}
	for c, n := range released {
		if n < 0 {
			return fmt.Errorf("a negative count of released labels")
		}
		if !set[c] {
			return fmt.Errorf("released labels of a class that is not in its classes")
		}
	}
	return nil
}

// checkQueryCounts checks that a report's query counts are in order and
// that its released labels are its answered queries.
func checkQueryCounts(rep *Report) error {
	q := rep.Queries
	if q.Answered > q.Seen || q.Seen > q.PublicRows {
		return invalid("report: counts out of order (answered %d, queries %d, rows %d)", q.Answered, q.Seen, q.PublicRows)
	}
	var released int64
	for _, n := range rep.Released {
		released += n
	}
	if released != q.Answered {
		return invalid("report: %d released labels but %d answered queries", released, q.Answered)
	}
	if err := releasedAreClasses(rep.Released, rep.Classes); err != nil {
		return invalid("report: %w", err)
	}
	if q.Abstained != q.PublicRows-q.Answered || q.NotAsked != q.PublicRows-q.Seen {
		return invalid("report: %d abstained and %d not queried do not match %d rows, %d queries and %d answered",
			q.Abstained, q.NotAsked, q.PublicRows, q.Seen, q.Answered)
	}
	return nil
}
