package label

import (
	"fmt"
	"math"

	"github.com/pate-tool/pate/label/rdp"
)

// auditPure re-derives the guarantee of a private-learner, svt or
// stable-em report from its budget, its exact parameters and its counts:
// the ε of one event, the cap on events the budget allows, the smaller of
// the basic-composition and zCDP readings of that cap, svt's stable-release
// failure δ, and the realized spend.
func auditPure(rep *Report, m eventMechanism) (*AuditResult, error) {
	pr, g, b := rep.PureDP, rep.Guarantee, rep.Budget
	if pr == nil {
		return nil, invalid("report: a %s run without its pure_dp section", rep.Mechanism)
	}
	eps, delta := float64(b.Epsilon), float64(b.Delta)
	if !(eps > 0) || math.IsInf(eps, 0) || !(delta > 0 && delta < 1) || !b.Filter {
		return nil, invalid("report: a %s run needs its budget (ε > 0, δ in (0, 1)), got (%g, %g)", rep.Mechanism, eps, delta)
	}
	classes := len(rep.Classes)
	if classes < 2 {
		return nil, invalid("report: %d classes", classes)
	}
	sp, q := rep.Spent, rep.Queries
	if sp.PureEvents < 0 || q.Seen < 0 || q.Answered < 0 || q.PublicRows < 0 || pr.MaxEvents < 0 || pr.Unstable < 0 {
		return nil, invalid("report: negative counts")
	}
	if q.Answered != sp.NoisyArgmaxes {
		return nil, invalid("report: %d answered queries but %d answers counted in the spend", q.Answered, sp.NoisyArgmaxes)
	}
	if err := checkQueryCounts(rep); err != nil {
		return nil, err
	}
	if err := m.auditEvents(rep); err != nil {
		return nil, err
	}

	eps0, err := m.eventEps(classes, rep.Params)
	if err != nil {
		return nil, invalid("report parameters: %w", err)
	}
	res := &AuditResult{
		Mechanism: rep.Mechanism, Filter: true, Seeded: rep.Seeded,
		RhoAnswer: rdp.PureDPRho(eps0), NoisyArgmaxes: sp.NoisyArgmaxes, Queries: q.Seen,
		ClaimedEpsilon: float64(g.Epsilon), Delta: float64(g.Delta),
	}
	if d := rep.ClassDiscovery; d != nil {
		if res.DiscoveryRho, err = checkDiscovery(res, "", d, classes, DiscoveryDelta(delta, false)); err != nil {
			return nil, err
		}
		res.DiscoveryDelta = DiscoveryDelta(delta, false)
	}
	if pr.Events != sp.PureEvents {
		return nil, invalid("report: pure_dp counts %d events, the spend %d", pr.Events, sp.PureEvents)
	}
	extra := delta * m.failureShare()
	deltaZ := delta - res.DiscoveryDelta - extra
	add := func(name string, claimed, recomputed float64, ok bool, detail string) {
		addCheck(res, name, claimed, recomputed, ok, detail)
	}
	maxEvents, err := rdp.PureEventsThatFit(eps, deltaZ, eps0, res.DiscoveryRho)
	if err != nil {
		return nil, invalid("report: %w", err)
	}
	add("event cap", float64(pr.MaxEvents), float64(maxEvents), pr.MaxEvents <= maxEvents,
		fmt.Sprintf("events of ε %.6g that the budget (ε %g, δ %g) pays for, by basic composition or zCDP", eps0, eps, delta))
	add("events within the cap", float64(pr.MaxEvents), float64(sp.PureEvents), sp.PureEvents <= pr.MaxEvents,
		"the events charged must not exceed the cap")
	claim := rdp.PureComposition(pr.MaxEvents, eps0, res.DiscoveryRho, deltaZ)
	e, d, basic := claim.Claim(deltaZ)
	if basic {
		d = extra
	} else {
		d = delta
	}
	res.ClaimRho = claim.Rho
	var ok bool
	res.Epsilon, ok = epsWithinClaim(e, float64(g.Epsilon))
	reading := "zCDP reading (ε0²/2 per event) at δ " + fmt.Sprint(deltaZ)
	if basic {
		reading = "basic composition (cap × ε0, δ = 0)"
	}
	add("claimed ε", float64(g.Epsilon), res.Epsilon, ok, "the smaller reading of the cap: "+reading+", must not exceed the claim")
	// The figures of the pure_dp section, re-derived.
	add("event ε", float64(pr.EventEpsilon), eps0, leq(eps0, float64(pr.EventEpsilon)),
		"ε of one event, from the mechanism's exact parameters; the report must not understate it")
	if !math.IsInf(claim.Basic, 1) {
		b := rdp.RoundUp(claim.Basic, epsDecimals)
		add("basic-composition reading", float64(pr.BasicEpsilon), b, b <= float64(pr.BasicEpsilon), "cap × ε0, rounded up")
	} else {
		add("basic-composition reading", float64(pr.BasicEpsilon), claim.Basic, math.IsInf(float64(pr.BasicEpsilon), 1),
			"no basic-composition reading with a Gaussian class discovery in the run")
	}
	if err := m.auditParams(rep, res); err != nil {
		return nil, err
	}
	z := rdp.RoundUp(claim.ZCDP, epsDecimals)
	add("zCDP reading", float64(pr.ZCDPEpsilon), z, z <= float64(pr.ZCDPEpsilon), "ρ of the cap converted at the zCDP δ, rounded up")
	add("zCDP reading δ", float64(pr.ZCDPDelta), deltaZ, math.Abs(float64(pr.ZCDPDelta)-deltaZ) <= relTol*deltaZ,
		"δ − discovery δ − svt's stable-release δ")
	add("claimed δ", float64(g.Delta), d, d <= float64(g.Delta)*(1+1e-12), "δ of the reading claimed (plus svt's stable-release failure δ)")
	if err := m.auditFailure(rep, res, extra); err != nil {
		return nil, err
	}
	res.Spent = pureSpend(sp.PureEvents, eps0, res.DiscoveryRho, deltaZ)
	res.Spent.NoisyArgmaxes = sp.NoisyArgmaxes
	realRho := float64(res.Spent.Rho)
	add("recorded realized ρ", float64(sp.Rho), realRho, leq(realRho, float64(sp.Rho)), "the report must not understate the realized ρ")
	checkRecordedSpend(res, sp, true)
	res.Explanation = explainPure(rep, m, res, eps0, pr.MaxEvents, basic, extra)
	if err := verdict(res); err != nil {
		return res, err
	}
	return res, nil
}

func explainPure(rep *Report, m eventMechanism, res *AuditResult, eps0 float64, maxEvents int64, basic bool, stableDelta float64) []string {
	nb := rep.Neighbouring
	if nb == "" {
		nb = "add or remove one " + rep.PrivacyUnit
	}
	out := []string{
		fmt.Sprintf("Privacy unit: %s. Two sensitive datasets are neighbours when they differ in one unit: %s.", rep.PrivacyUnit, nb),
		fmt.Sprintf("Guarantee: (ε = %g, δ = %g): every outcome's probability changes by a factor of at most e^ε = %.3g when one unit is added or removed, except with probability δ.",
			res.ClaimedEpsilon, res.Delta, math.Exp(res.ClaimedEpsilon)),
	}
	how := fmt.Sprintf("zCDP: %d events × ε0²/2 = ρ %.6g, converted at the best order", maxEvents, res.ClaimRho)
	if basic {
		how = fmt.Sprintf("basic composition: %d events × ε0 = %.6g, with δ = 0 for the events themselves", maxEvents, float64(maxEvents)*eps0)
	}
	out = append(out, fmt.Sprintf("Basis: %s. Each event is %.6g-DP; the budget allowed at most %d of them, a cap fixed before the run; %d were charged. The claim is the smaller of two valid readings — %s.",
		rep.PureDP.Event, eps0, maxEvents, res.Spent.PureEvents, how))
	if f := m.explainFailure(stableDelta); f != "" {
		out = append(out, f)
	}
	n := "Noise: " + rep.Noise + "."
	if res.Seeded {
		n += " The guarantee of a seeded run holds only while the seed stays secret."
	}
	out = append(out, n,
		"Covered: the released labels, which rows were answered, and every figure of the report, and anything computed from them.",
		"Not covered: other releases about the same people (see pate ledger), the public data itself, and anything that leaks the seed.")
	return out
}
