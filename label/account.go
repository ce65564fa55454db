package label

import (
	"math"

	"github.com/pate-tool/pate/label/rdp"
)

// Reported ε is rounded up to this many decimals, never down.
const epsDecimals = 6

func (l *Labeler) newReport(td *teacherData) *Report {
	cfg := &l.cfg
	unit, nb := "row", "add or remove one row of the sensitive data"
	if cfg.PrivacyUnit != "" {
		unit = "column " + cfg.PrivacyUnit
		nb = "add or remove one privacy unit: all rows of the sensitive data that share one value of " + cfg.PrivacyUnit
	}
	noiseKind := "discrete Gaussian (Canonne, Kamath, Steinke 2020), sampled exactly with integer arithmetic"
	if cfg.Mechanism == MechanismLNMax {
		noiseKind = "discrete Laplace (Canonne, Kamath, Steinke 2020), sampled exactly with integer arithmetic"
	}
	if cfg.Seed != nil {
		noiseKind += "; SEEDED: the noise is reproducible by anyone who knows the seed"
	} else {
		noiseKind += " from crypto/rand"
	}
	return &Report{
		SchemaVersion:   ReportSchemaVersion,
		Tool:            "pate",
		Version:         cfg.Version,
		Command:         "label",
		Mechanism:       cfg.Mechanism,
		Noise:           noiseKind,
		Seeded:          cfg.Seed != nil,
		Teachers:        cfg.Teachers,
		Learner:         cfg.Learner,
		Label:           cfg.Label,
		Classes:         td.classes.values,
		ClassesSource:   td.classesSource,
		ClassDiscovery:  td.discovery,
		PrivacyUnit:     unit,
		Neighbouring:    nb,
		PlannedFraction: plannedFraction(cfg),
	}
}

func plannedFraction(cfg *Config) float64 {
	if cfg.Mechanism == MechanismConfidentGNMax && cfg.Epsilon > 0 {
		return cfg.AnsweredFraction
	}
	return 0
}

// finishReport fills in the guarantee, the realized spend and the counts.
func (l *Labeler) finishReport(rep *Report, st *runState, agg *aggregator, filter budget, td *teacherData) {
	cfg := &l.cfg
	deltaConv := cfg.Delta - td.discoveryDelta

	var spentRho float64
	switch f := filter.(type) {
	case *rdp.Filter:
		spentRho = f.Spent()
		rep.Guarantee = Guarantee{
			Epsilon:    Float(cfg.Epsilon),
			Delta:      Float(cfg.Delta),
			Rho:        Float(f.Budget()),
			Conversion: "improved (Canonne, Kamath, Steinke 2020; Balle et al. 2020), best order",
			Basis: "budget of a zCDP filter fixed before the run (Feldman & Zrnic 2021): no event was charged " +
				"that would have taken the spend past rho; rho converts to epsilon at delta minus the class discovery's delta",
		}
		rep.Budget = BudgetReport{Epsilon: Float(cfg.Epsilon), Delta: Float(cfg.Delta), Filter: true,
			StoppedOn: st.stopped.Load(), RhoForQueries: Float(f.Budget())}
		if st.stopped.Load() {
			rep.Budget.StoppedAtRow = st.stopRow
		}
	case *unlimited:
		spentRho = f.spent
		// Without a filter the claim is the worst case of the queries put:
		// their number is a count of public rows, not a function of the votes.
		worst := td.discoveryRho + float64(st.seen)*agg.rhoPerQuery()
		eps := rdp.RoundUp(rdp.ZCDPEps(worst, deltaConv), epsDecimals)
		rep.Guarantee = Guarantee{
			Epsilon:    Float(eps),
			Delta:      Float(cfg.Delta),
			Rho:        Float(worst),
			Conversion: "improved (Canonne, Kamath, Steinke 2020; Balle et al. 2020), best order",
			Basis:      "no budget filter: worst case of the queries put (every query charged as if answered)",
		}
		rep.Budget = BudgetReport{Filter: false}
	}
	rep.Budget.MaxQueries = cfg.MaxQueries

	orders := rdp.DefaultOrders()
	curve := make([]float64, len(orders))
	gaussRho := spentRho
	if agg.kind == MechanismLNMax {
		gaussRho = td.discoveryRho
		pure := rdp.PureDP(agg.epsAnswer, orders)
		for i := range curve {
			curve[i] = float64(agg.argmaxes) * pure[i]
		}
	}
	for i, o := range orders {
		curve[i] += gaussRho * o
	}
	// The improved conversion: the better of the best real order for the
	// zCDP bound and the order list for the exact RDP curve (both valid).
	ei, oi := rdp.EpsImproved(orders, curve, deltaConv)
	if z := rdp.ZCDPEps(spentRho, deltaConv); z < ei {
		ei, oi = z, zcdpOrder(spentRho, deltaConv)
	}
	ec, oc := rdp.EpsClassic(orders, curve, deltaConv)
	rep.Spent = Spend{
		Rho:             Float(spentRho),
		EpsilonImproved: Float(rdp.RoundUp(ei, epsDecimals)),
		OrderImproved:   Float(oi),
		EpsilonClassic:  Float(rdp.RoundUp(ec, epsDecimals)),
		OrderClassic:    Float(oc),
		Delta:           Float(cfg.Delta),
		ThresholdChecks: agg.checks,
		NoisyArgmaxes:   agg.argmaxes,
	}
	if agg.kind != MechanismLNMax {
		// Gaussian differential privacy of the same events, for comparison
		// (Dong, Roth, Su 2019): μ² adds up over the compositions.
		mu2 := float64(agg.argmaxes) * 2 / (sigmaOf(rep.Params, agg.kind) * sigmaOf(rep.Params, agg.kind))
		if agg.kind == MechanismConfidentGNMax {
			s1 := floatOf(rep.Params.Sigma1)
			mu2 += float64(agg.checks) / (s1 * s1)
		}
		if td.discovery != nil {
			sc := floatOf(td.discovery.Sigma)
			mu2 += 1 / (sc * sc)
		}
		g := Float(rdp.RoundUp(rdp.GDPEps(math.Sqrt(mu2), deltaConv), epsDecimals))
		rep.Spent.EpsilonGDP = &g
	}
	rep.Timeline = st.timeline
	rep.Released = make(map[string]int64, len(st.released))
	for c, n := range st.released {
		rep.Released[st.classes.values[c]] = n
	}
	sources := st.sources
	rep.Sources = &sources
	if st.l.cfg.Select != "" {
		rep.Selection = st.l.cfg.Select
	}
	if st.student != nil {
		info := st.student.info
		rep.Student = &info
	}
	rep.Queries = Queries{
		PublicRows: st.rows,
		Seen:       st.seen,
		Answered:   st.answered,
		Abstained:  st.rows - st.answered,
		NotAsked:   st.notAsked(),
	}
}

func sigmaOf(p MechanismParams, kind string) float64 {
	if kind == MechanismGNMax {
		return floatOf(p.Sigma)
	}
	return floatOf(p.Sigma2)
}

func floatOf(s string) float64 {
	r, _, err := parsePositive("", s)
	if err != nil {
		return math.NaN()
	}
	f, _ := r.Float64()
	return f
}

// zcdpOrder is the order λ > 1 at which the improved conversion of ρ-zCDP,
// ρλ + ln(1−1/λ) − (ln δ + ln λ)/(λ−1), is smallest (golden-section search;
// the function is unimodal in λ). It only labels the report's figure.
func zcdpOrder(rho, delta float64) float64 {
	f := func(l float64) float64 {
		return rho*l + math.Log1p(-1/l) - (math.Log(delta)+math.Log(l))/(l-1)
	}
	lo, hi := math.Log(1.0001), math.Log(1e6) // search in log λ
	g := (math.Sqrt(5) - 1) / 2
	for i := 0; i < 200; i++ {
		a, b := hi-g*(hi-lo), lo+g*(hi-lo)
		if f(math.Exp(a)) < f(math.Exp(b)) {
			hi = b
		} else {
			lo = a
		}
	}
	return math.Round(100*math.Exp((lo+hi)/2)) / 100
}
