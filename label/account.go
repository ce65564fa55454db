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
	noiseKind := mechanismOf(cfg.Mechanism).Noise()
	us, units := mechanismOf(cfg.Mechanism).(unitSampler)
	units = units && cfg.PrivacyUnit != ""
	if units {
		noiseKind = us.unitNoise()
	}
	if cfg.Replicable != nil {
		noiseKind += "; REPLICABLE: drawn per public row from a seed shared between curators (" + cfg.Replicable.Via +
			") and rounded to a grid with a shared random offset (replicable rounding, Impagliazzo et al. 2022): " +
			"reproducible by anyone who knows the seed"
	} else if cfg.Seed != nil {
		noiseKind += "; SEEDED: the noise is reproducible by anyone who knows the seed"
	} else {
		noiseKind += " from a cryptographically secure generator (AES-256-CTR keyed from crypto/rand)"
	}
	rep := &Report{
		SchemaVersion:   ReportSchemaVersion,
		Tool:            "pate",
		Version:         cfg.Version,
		Command:         "label",
		CommandLine:     cfg.CommandLine,
		Features:        l.features,
		Plan:            cfg.Plan,
		Mechanism:       cfg.Mechanism,
		Noise:           noiseKind,
		Seeded:          cfg.Seed != nil || cfg.Replicable != nil,
		Teachers:        cfg.Teachers,
		Learner:         cfg.Learner,
		Label:           cfg.Label,
		Classes:         td.classes.values,
		ClassesSource:   td.classesSource,
		ClassDiscovery:  td.discovery,
		PrivacyUnit:     unit,
		Neighbouring:    nb,
		PlannedFraction: plannedFraction(cfg),
		Build:           Build(),
	}
	if r, ok := mechanismOf(cfg.Mechanism).(rowMechanism); ok {
		rep.Teachers, rep.Learner = 0, r.learnerName()
		if units {
			rep.Learner = us.unitLearnerName()
		}
	}
	return rep
}

func plannedFraction(cfg *Config) float64 {
	if m, ok := mechanismOf(cfg.Mechanism).(argmaxMechanism); ok && m.checksThreshold() && cfg.Epsilon > 0 {
		return cfg.AnsweredFraction
	}
	return 0
}

// finishReport fills in the guarantee, the realized spend and the counts.
func (l *Labeler) finishReport(rep *Report, st *runState, agg *aggregator, filter budget, td *teacherData) {
	cfg := &l.cfg
	deltaConv := cfg.Delta - td.discoveryDelta
	rep.Warnings = l.warnings

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
		worst := td.discoveryRho + float64(st.seen)*st.perQueryRho()
		eps := rdp.RoundUp(l.epsilonOf(worst, deltaConv), epsDecimals)
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

	// The realized spend, computed from the event counts by the same
	// function pate audit uses, so that the two always agree.
	discSigma := ""
	if td.discovery != nil {
		discSigma = td.discovery.Sigma
	}
	var modelRho float64
	if mv, ok := st.ens.(modelVoter); ok { // one model spent the filter before the first label
		modelRho = mv.modelRho()
		mv.describeModel(rep)
	}
	if l.choice != nil { // the chooser's count, charged before anything else
		modelRho += l.choiceRho
		rep.Choice = l.choice
	}
	var sp Spend
	var err error
	if st.labels != nil {
		sp, err = RecomputeSpendLabels(agg.kind, st.labelEvents(), td.discoveryDelta, cfg.Delta)
	} else {
		sp, err = RecomputeSpendLabels(agg.kind, []LabelEvents{{Classes: len(td.classes.values), Params: rep.Params,
			Checks: agg.checks, Argmaxes: agg.argmaxes, DiscoverySigma: discSigma, ModelRho: modelRho}}, td.discoveryDelta, cfg.Delta)
	}
	if err != nil { // the parameters were validated before the run
		sp = Spend{Rho: Float(spentRho), EpsilonImproved: Float(math.Inf(1)), EpsilonClassic: Float(math.Inf(1)),
			Delta: Float(cfg.Delta), ThresholdChecks: agg.checks, NoisyArgmaxes: agg.argmaxes}
	}
	rep.Spent = sp
	if st.labels != nil {
		var checks, argmaxes int64
		for _, lr := range st.labels {
			checks += lr.agg.checks
			argmaxes += lr.agg.argmaxes
		}
		rep.Spent.ThresholdChecks, rep.Spent.NoisyArgmaxes = checks, argmaxes
		st.finishLabels(rep, deltaConv)
	}
	if f, ok := filter.(*pureFilter); ok { // pure ε-DP events
		m, _ := pureEvents(cfg.Mechanism)
		pureReport(rep, m, f, agg)
		rep.Budget.StoppedOn, rep.Budget.MaxQueries = st.stopped.Load(), cfg.MaxQueries
		if rep.Budget.StoppedOn {
			rep.Budget.StoppedAtRow = st.stopRow
		}
	}
	rep.Timeline = st.timeline
	if st.labels == nil && err == nil && !isPure(filter) {
		ev := LabelEvents{Classes: len(td.classes.values), Params: rep.Params, Checks: agg.checks, Argmaxes: agg.argmaxes,
			DiscoverySigma: discSigma, ModelRho: modelRho}
		rep.Timeline = runningTimeline(st.timeline, agg.kind, ev, st.seen, st.answered, td.discoveryDelta, cfg.Delta, sp)
	}
	if st.labels == nil {
		rep.Released = make(map[string]int64, len(st.released))
		for c, n := range st.released {
			rep.Released[st.classes.values[c]] = n
		}
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
