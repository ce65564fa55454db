package label

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// The mechanisms whose events are pure ε-DP — private-learner (one
// exponential-mechanism draw), svt (sparse-vector instances) and stable-em
// (one ε-private prediction per query). Every event of such a run costs the
// same ε0, so the budget is a cap on the number of events fixed before the
// run (rdp.PureEventsThatFit), and the run claims the smaller of the two
// readings of that cap: basic composition (cap·ε0, δ = 0) or zCDP
// (cap·ε0²/2, converted at δ).

// Noise streams of the new mechanisms (see run.go).
const (
	streamPrivateLearner = 6
	streamSVT            = 7
	streamStableEM       = 8 // + first row << 8, like streamAggregate
)

// Defaults of the new mechanisms' parameters.
const (
	DefaultBins  = 32
	DefaultGamma = "0.5"
	// DefaultSVTCutoff is the number of sparse-vector instances (the run
	// stops at the DefaultSVTCutoff-th unstable query) planned for when
	// neither --svt-cutoff nor --svt-epsilon0 is given.
	DefaultSVTCutoff = 1
	// svtDeltaShare is the share of δ given to the event that a query whose
	// majority is not stable is reported stable (svt.go).
	svtDeltaShare = 0.5
)

// validatePure checks the settings the new mechanisms need.
func validatePure(cfg *Config) error {
	if len(cfg.Labels) > 1 {
		return paramError("mechanism", " %s labels one %v column for now, got %d", cfg.Mechanism, ParamName("label"), len(cfg.Labels))
	}
	if cfg.Replicable != nil {
		return paramError("replicable", " works with confident-gnmax, gnmax and lnmax, not %v %s", ParamName("mechanism"), cfg.Mechanism)
	}
	if cfg.Epsilon <= 0 {
		return paramError("mechanism", " %s needs %v: its budget is a cap on pure ε-DP events fixed before the run", cfg.Mechanism, ParamName("epsilon"))
	}
	p := &cfg.Params
	if p.Bins < 0 {
		return paramError("bins", " must be positive, got %d", p.Bins)
	}
	if p.SVTCutoff < 0 || p.SVTThreshold < 0 {
		return paramError("svt-cutoff", " and %v must not be negative", ParamName("svt-threshold"))
	}
	for _, f := range []struct{ name, v string }{
		{"em-epsilon", p.EMEpsilon}, {"subset-rate", p.SubsetRate}, {"gamma", p.Gamma}, {"svt-epsilon0", p.SVTEpsilon0},
	} {
		if f.v != "" {
			if _, _, err := parsePositive(f.name, f.v); err != nil {
				return invalid("%w", err)
			}
		}
	}
	if needsTeachers(cfg.Mechanism) {
		return nil
	}
	if cfg.Classes == nil {
		return paramError("mechanism", " %s needs %v: its guarantee is pure ε-DP and a private class discovery would add a δ", cfg.Mechanism, ParamName("classes"))
	}
	if cfg.PrivacyUnit != "" {
		return paramError("mechanism", " %s scores errors per row (sensitivity 1): %v is not supported with it", cfg.Mechanism, ParamName("privacy-unit"))
	}
	if cfg.Select == SelectUncertain {
		return paramError("select", " uncertain is not supported with %v %s", ParamName("mechanism"), cfg.Mechanism)
	}
	return nil
}

// voter counts votes (or one-hot predictions) for a matrix of encoded rows.
type voter interface {
	Votes(x *learners.Matrix, counts []int32)
}

// sensitiveRows encodes the sensitive rows and their labels for the
// mechanisms that work on the rows themselves (no teachers): y is the class
// index of each row, -1 when the label is null or not a declared class.
// With a privacy unit, units is each row's unit, numbered 0, 1, ... in the
// order of the units' first rows (-1 for a row dropped because its unit is
// null, said by a diagnostic only; its y is -1 too); without one, units is
// nil and every row is its own unit.
func (l *Labeler) sensitiveRows(ctx context.Context, recs []arrow.Record, enc *learners.Encoder) (_ *learners.Matrix, y, units []int32, _ *teacherData, err error) {
	s, err := l.ingestRecords(recs, enc)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer s.close()
	return l.spilledRows(ctx, s)
}

// spilledRows is sensitiveRows on the rows of a spill: every row, in the
// order of the sensitive file, in memory.
func (l *Labeler) spilledRows(ctx context.Context, s *spill) (_ *learners.Matrix, y, units []int32, _ *teacherData, err error) {
	cfg := &l.cfg
	td := l.chosen // the class sets the chooser fixed, declared or discovered
	discovered := false
	switch {
	case td != nil:
	case cfg.Classes == nil:
		// No --classes: the private class discovery releases them (charged
		// with the run's budget, as for PATE), and the model is shaped by
		// the released set.
		if td, err = l.classSets(ctx, s); err != nil {
			return nil, nil, nil, nil, err
		}
		discovered = true
		rho := td.discoveryRho
		defer func() { // a failure from here on comes after the discovery
			if err != nil {
				err = spentBefore(err, rho)
			}
		}()
	default:
		cs, err := newClassSet(l.labelField.Type, cfg.Classes)
		if err != nil {
			return nil, nil, nil, nil, paramError("classes", ": %v", err)
		}
		td = &teacherData{classes: cs, classesSource: "declared with --classes"}
	}
	cs := td.classes
	classOf := make([]int32, len(s.dicts[0].values)+1)
	classOf[0] = -1
	for c, v := range s.dicts[0].values {
		ci, ok := cs.index[v]
		if !ok {
			ci = -1
		}
		classOf[c+1] = int32(ci)
	}
	dim := s.dim
	X := learners.NewMatrix(s.total, dim)
	y = make([]int32, s.total)
	var ids [][32]byte
	var kept []bool
	if cfg.PrivacyUnit != "" {
		ids, kept = make([][32]byte, s.total), make([]bool, s.total)
	}
	usable := 0
	var buf, scratch []byte
	for b := range spillBuckets {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, nil, err
		}
		if buf, err = s.bucket(b, &scratch); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%s: %w", cfg.sens(), err)
		}
		for o := 0; o < len(buf); o += s.recSize {
			r := spillRec(buf[o : o+s.recSize])
			i := r.row()
			r.x(s.nl, X.Row(i))
			c := classOf[r.code(0)] // -1 for a dropped row
			if y[i] = c; c >= 0 {
				usable++
			}
			if ids != nil && !r.dropped() {
				ids[i] = r.id()
				// A unit is numbered by its first row; with the class
				// discovery, by its first row with a label.
				kept[i] = !discovered || r.code(0) != 0
			}
		}
	}
	if ids != nil {
		units = unitNumbers(ids, kept)
		if s.dropped > 0 {
			cfg.diagnose("%s: %d rows with a null privacy unit (%q) were dropped", cfg.sens(), s.dropped, cfg.PrivacyUnit)
		}
	}
	if usable == 0 {
		// Not an error: refusing would reveal it. The mechanisms score
		// every candidate alike on no rows and stay private.
		cfg.diagnose("%s: no row of the label column %q holds one of the --classes", cfg.sens(), cfg.Label)
	}
	return X, y, units, td, nil
}

// unitNumbers numbers the privacy units of the rows whose identity is
// ids[i] (kept[i] false: the row is dropped, -1) 0, 1, ... in the order of
// their first rows.
func unitNumbers(ids [][32]byte, kept []bool) []int32 {
	units := make([]int32, len(ids))
	seen := make(map[[32]byte]int32)
	for i, id := range ids {
		if !kept[i] {
			units[i] = -1
			continue
		}
		u, ok := seen[id]
		if !ok {
			u = int32(len(seen))
			seen[id] = u
		}
		units[i] = u
	}
	return units
}

// encodeHead encodes the public head batches (public data: the hypothesis
// class of the stump learners is fixed from it).
func encodeHead(enc *learners.Encoder, head []arrow.Record) (*learners.Matrix, error) {
	rows := 0
	for _, r := range head {
		rows += int(r.NumRows())
	}
	dim := enc.Dim()
	x := learners.NewMatrix(rows, dim)
	tmp := learners.NewMatrix(0, dim)
	off := 0
	for _, r := range head {
		if err := enc.Encode(r, tmp); err != nil {
			return nil, err
		}
		copy(x.Data[off*dim:], tmp.Data[:tmp.Rows*dim])
		off += tmp.Rows
	}
	return x, nil
}

// pureFilter is the budget of a pure run: at most max events of ε0 each
// (rdp.PureEventsThatFit), fixed before the run. Events of ρ = 0 (the
// answers of private-learner, the stable answers of svt) are free.
type pureFilter struct {
	eps, delta float64 // the budget the user gave
	deltaZ     float64 // δ at which the zCDP reading converts
	extraDelta float64 // svt: δ of the stable-release failure
	eps0, rho0 float64 // one event; the class discovery's ρ
	max, used  int64
	event      string // what one event is, for the report
}

func (f *pureFilter) Fits(rho float64) bool { return rho == 0 || f.used < f.max }

func (f *pureFilter) Charge(rho float64) error {
	if rho == 0 {
		return nil
	}
	if f.used >= f.max {
		return fmt.Errorf("%w: all %d events of ε %g spent", rdp.ErrBudgetExceeded, f.max, f.eps0)
	}
	f.used++
	return nil
}

// rhoSpent is the realized zCDP ρ (the ledger and the timeline use it).
func (f *pureFilter) rhoSpent() float64 { return f.rho0 + float64(f.used)*rdp.PureDPRho(f.eps0) }

// epsSpent is the smaller reading of the events charged so far (progress
// display).
func (f *pureFilter) epsSpent() float64 {
	e, _, _ := rdp.PureComposition(f.used, f.eps0, f.rho0, f.deltaZ).Claim(f.deltaZ)
	return e
}

// pureEventEps is the ε of one event of the named pure mechanism with
// parameters p over the given number of classes.
func pureEventEps(kind string, classes int, p MechanismParams) (float64, error) {
	m, ok := pureEvents(kind)
	if !ok {
		return 0, fmt.Errorf("%s is not a pure mechanism", kind)
	}
	return m.eventEps(classes, p)
}

// capByQueries tightens the cap on events to the queries the run puts
// (known before the run; -1 when unknown): no run has more events.
func capByQueries(f *pureFilter, queries int64) {
	if queries >= 0 {
		f.max = min(f.max, max(queries, 1))
	}
}

// preparePure plans the parameters of a pure mechanism from the budget,
// builds its filter (the cap on events) and its aggregator.
func (l *Labeler) preparePure(m eventMechanism, td *teacherData, queries int64) (*Report, *aggregator, budget, error) {
	cfg := &l.cfg
	rep := l.newReport(td)
	classes := len(td.classes.values)
	p := cfg.Params
	f := &pureFilter{eps: cfg.Epsilon, delta: cfg.Delta, rho0: td.discoveryRho}
	f.deltaZ = cfg.Delta - td.discoveryDelta
	if err := m.planEvents(l, td, f, &p, queries); err != nil {
		return nil, nil, nil, err
	}
	eps0, err := m.eventEps(classes, p)
	if err != nil {
		return nil, nil, nil, invalid("%w", err)
	}
	f.eps0 = eps0
	if f.max, err = rdp.PureEventsThatFit(cfg.Epsilon, f.deltaZ, eps0, f.rho0); err != nil {
		return nil, nil, nil, invalid("budget: %w", err)
	}
	if f.max < 1 {
		return nil, nil, nil, fmt.Errorf("%w: ε = %g, δ = %g cannot pay for one event of ε %g", ErrBudgetRefused, cfg.Epsilon, cfg.Delta, eps0)
	}
	// A smaller cap, known before the run, is a tighter claim.
	if err := m.capEvents(f, &p, queries); err != nil {
		return nil, nil, nil, err
	}
	agg, err := newAggregator(cfg.Mechanism, classes, p)
	if err != nil {
		return nil, nil, nil, invalid("%w", err)
	}
	if agg.svt != nil {
		agg.svt.src = l.source(streamSVT)
	}
	rep.Params = p
	rep.PlannedQueries = queries
	return rep, agg, f, nil
}

// pureReport fills the guarantee, the spend and the pure-DP section of a
// pure run's report: the claim is the smaller reading of the cap, fixed
// before the run; the spend is the reading of the events charged.
func pureReport(rep *Report, m eventMechanism, f *pureFilter, agg *aggregator) {
	answered := agg.argmaxes
	claim := rdp.PureComposition(f.max, f.eps0, f.rho0, f.deltaZ)
	eps, d, basic := claim.Claim(f.deltaZ)
	reading := "zCDP (ε²/2 per event; Bun & Steinke 2016, Prop. 1.4), improved conversion at the best order"
	if basic {
		reading = "basic composition of pure ε-DP events (Σ εᵢ, δ = 0)"
	}
	// The zCDP reading holds at the whole δ (its conversion's share, the
	// class discovery's, svt's stable-release failure); basic composition
	// needs only svt's failure δ (it is possible only without a discovery).
	d = f.delta
	if basic {
		d = f.extraDelta
	}
	rep.Guarantee = Guarantee{
		Epsilon: Float(rdp.RoundUp(eps, epsDecimals)), Delta: Float(d), Rho: Float(claim.Rho),
		Conversion: reading,
		Basis: fmt.Sprintf("at most %d pure ε-DP events of ε = %.6g each, a cap fixed before the run from the budget (ε %g, δ %g); "+
			"the smaller of the basic-composition and zCDP readings of the cap is claimed", f.max, f.eps0, f.eps, f.delta),
	}
	rep.Budget = BudgetReport{Epsilon: Float(f.eps), Delta: Float(f.delta), Filter: true, RhoForQueries: Float(claim.Rho)}
	rep.Spent = pureSpend(f.used, f.eps0, f.rho0, f.deltaZ)
	rep.Spent.NoisyArgmaxes = answered
	pr := &PureDPReport{
		Event: f.event, EventEpsilon: Float(f.eps0), MaxEvents: f.max, Events: f.used,
		BasicEpsilon: Float(claim.Basic), ZCDPEpsilon: Float(claim.ZCDP), ZCDPDelta: Float(f.deltaZ),
		Claimed: reading, StableDelta: Float(f.extraDelta),
	}
	if !math.IsInf(claim.Basic, 1) {
		pr.BasicEpsilon = Float(rdp.RoundUp(claim.Basic, epsDecimals))
	}
	pr.ZCDPEpsilon = Float(rdp.RoundUp(claim.ZCDP, epsDecimals))
	m.describe(pr, rep.Params, agg)
	rep.PureDP = pr
}

// pureSpend is the realized spend of n events of eps0-DP (plus the zCDP
// part rho0): ρ; the improved conversion of their RDP curve n·min(ε0,
// λε0²/2) + ρ0·λ at the best of the paper orders or of the zCDP reading;
// Mironov's classic conversion over the paper orders; and Σ εᵢ (δ = 0) when
// every event is pure. pate audit computes the same.
func pureSpend(n int64, eps0, rho0, deltaZ float64) Spend {
	r := rdp.PureComposition(n, eps0, rho0, deltaZ)
	orders := rdp.DefaultOrders()
	curve := rdp.PureDP(eps0, orders)
	for i, o := range orders {
		curve[i] = float64(n)*curve[i] + rho0*o
	}
	ei, oi := rdp.EpsImproved(orders, curve, deltaZ)
	if r.ZCDP < ei {
		ei, oi = r.ZCDP, zcdpOrder(r.Rho, deltaZ)
	}
	ec, oc := rdp.EpsClassic(orders, curve, deltaZ)
	sp := Spend{
		Rho: Float(r.Rho), EpsilonImproved: Float(rdp.RoundUp(ei, epsDecimals)), OrderImproved: Float(oi),
		EpsilonClassic: Float(rdp.RoundUp(ec, epsDecimals)), OrderClassic: Float(oc),
		Delta: Float(deltaZ), PureEvents: n,
	}
	if !math.IsInf(r.Basic, 1) {
		v := Float(rdp.RoundUp(r.Basic, epsDecimals))
		sp.EpsilonPure = &v
	}
	return sp
}

// plannedQueries is the number of queries a run puts: the public rows, or
// --max-queries when smaller; -1 when unknown.
func plannedQueries(cfg *Config) int64 {
	q := cfg.PublicRows
	if cfg.MaxQueries > 0 && (q < 0 || cfg.MaxQueries < q) {
		q = cfg.MaxQueries
	}
	return q
}

// trainRows prepares a mechanism that learns from the sensitive rows
// (instead of training teachers).
func (l *Labeler) trainRows(ctx context.Context, m rowMechanism, s *spill, enc *learners.Encoder, head []arrow.Record) (voter, *teacherData, error) {
	X, y, units, td, err := l.spilledRows(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	if units != nil {
		um, ok := m.(unitSampler)
		if !ok { // validate refuses the privacy unit first
			return nil, nil, invalid("%s does not support %v", m.Name(), ParamName("privacy-unit"))
		}
		v, err := um.unitLearner(l, X, y, units, len(td.classes.values))
		return v, td, err
	}
	v, err := m.learner(l, X, y, len(td.classes.values), enc, head)
	return v, td, err
}

// startPure runs what a voter does once the budget is set (private-learner
// draws its model, its one event; stable-em indexes the sensitive rows
// with the planned parameters).
func (l *Labeler) startPure(v voter, rep *Report, agg *aggregator, b budget) error {
	if s, ok := v.(starter); ok {
		return s.start(l, rep.Params, agg, b)
	}
	return nil
}

// roundDownDecimal rounds x > 0 down to digits significant decimal
// digits, as a short exact decimal string (the samplers read it without
// loss). Rounding down keeps an ε at most what was planned.
func roundDownDecimal(x float64, digits int) string {
	if !(x > 0) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	exact := new(big.Rat).SetFloat64(x)
	e := int(math.Floor(math.Log10(x))) - (digits - 1)
	m := int64(math.Floor(x/math.Pow(10, float64(e)))) + 1
	for ; m > 0; m-- {
		s := strconv.FormatInt(m, 10) + "e" + strconv.Itoa(e)
		r, ok := new(big.Rat).SetString(s)
		if ok && r.Cmp(exact) <= 0 {
			f, _ := r.Float64()
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return "0"
}

// ratOf parses an exact decimal parameter already validated.
func ratOf(s string) *big.Rat {
	r, err := noise.ParseRat(s)
	if err != nil {
		return new(big.Rat)
	}
	return r
}
