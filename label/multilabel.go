package label

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
)

// Several label columns at once, after Bun, Nissim and Stemmer,
// "Simultaneous private learning of multiple concepts": one partition of the
// sensitive data; each teacher learns one model per label column; each
// public row is one query that returns a label (or an abstention) per
// column, each column's aggregation deciding on its own.
//
// Joint accounting. One privacy unit changes one teacher, so it moves one
// vote in each of the L histograms of a query: the concatenated histograms
// have L2 sensitivity √(2L) (√L for the threshold checks' top votes), and
// with independent discrete Gaussian noise per column the zCDP ρ of the
// query is the sum of the columns' ρ. The budget filter is asked once per
// query for the most the whole query can cost (every column's check and
// argmax); if it does not fit, the run stops and every later row abstains on
// every column. The events that happen are then charged one by one, as in
// a single-label run. The noise of column i is planned for the fraction
// wᵢ/Σw of the budget (--label-weights; equal shares by default) with the
// accountant's planners.

// labelVotes are one label column's votes and noise for a batch's queries.
type labelVotes struct {
	counts []int32 // queryN × classes votes
	zCheck []int64 // queryN threshold draws (Confident-GNMax)
	zArg   []int64 // queryN × classes argmax draws
}

// labelRun is one label column during the stream.
type labelRun struct {
	*labelData
	released []int64 // answers per class
	answered int64
}

// prepareLabels plans every label column's noise for its share of rho and
// builds its aggregator. It returns the first column's aggregator.
func (l *Labeler) prepareLabels(td *teacherData, rho float64, queries int64, filter budget) (*aggregator, error) {
	cfg := &l.cfg
	weights := cfg.LabelWeights
	if weights == nil {
		weights = make([]float64, len(td.labels))
		for i := range weights {
			weights[i] = 1
		}
	}
	var sum float64
	for _, w := range weights {
		sum += w
	}
	var perQuery float64
	for j, ld := range td.labels {
		ld.weight = weights[j] / sum
		ld.params = cfg.Params
		ld.rhoPlanned = ld.weight * rho
		agg, err := l.planAggregator(len(ld.classes.values), ld.rhoPlanned, queries, &ld.params)
		if err != nil {
			return nil, fmt.Errorf("label %q: %w", ld.name, err)
		}
		ld.agg = agg
		perQuery += agg.rhoPerQuery()
	}
	if cfg.Epsilon > 0 && !filter.Fits(roundUpRho(perQuery)) {
		return nil, fmt.Errorf("%w: ε = %g, δ = %g cannot pay for a single query of %d labels with this noise", ErrBudgetRefused, cfg.Epsilon, cfg.Delta, len(td.labels))
	}
	return td.labels[0].agg, nil
}

// roundUpRho is a float64 sum of a few positive ρ values moved up past its
// rounding error, so that a filter that admits it admits their exact sum.
func roundUpRho(rho float64) float64 { return rho * (1 + 1e-12) }

// initLabels sets up the per-column state of a multi-label stream.
func (st *runState) initLabels(td *teacherData) {
	var perQuery float64
	for _, ld := range td.labels {
		st.labels = append(st.labels, &labelRun{labelData: ld, released: make([]int64, len(ld.classes.values))})
		perQuery += ld.agg.rhoPerQuery()
	}
	st.rhoQuery = roundUpRho(perQuery)
}

// perQueryRho is the most one query costs (exact sum in label order, as
// pate audit recomputes it).
func (st *runState) perQueryRho() float64 {
	if st.labels == nil {
		return st.agg.rhoPerQuery()
	}
	var r float64
	for _, lr := range st.labels {
		r += lr.agg.rhoPerQuery()
	}
	return r
}

// sizeMore sizes the vote buffers of the label columns after the first.
func (st *runState) sizeMore(b *batch) {
	if cap(b.more) < len(st.labels)-1 {
		b.more = make([]labelVotes, len(st.labels)-1)
	}
	b.more = b.more[:len(st.labels)-1]
	for j := range b.more {
		need := b.queryN * len(st.labels[j+1].classes.values)
		if cap(b.more[j].counts) < need {
			b.more[j].counts = make([]int32, need)
		}
		b.more[j].counts = b.more[j].counts[:need]
	}
}

// votesOf returns label column j's votes and noise for query q of b.
func (b *batch) votesOf(j, q, classes int) (counts []int32, zCheck int64, zArg []int64) {
	if j == 0 {
		counts, zArg = b.counts, b.zArg
		if len(b.zCheck) > 0 {
			zCheck = b.zCheck[q]
		}
	} else {
		lv := &b.more[j-1]
		counts, zArg = lv.counts, lv.zArg
		if len(lv.zCheck) > 0 {
			zCheck = lv.zCheck[q]
		}
	}
	return counts[q*classes : (q+1)*classes], zCheck, zArg[q*classes : (q+1)*classes]
}

// queryLabels puts query q of b to every label column, writing each
// column's class (-1: abstained) to out. It returns false, charging
// nothing, when the filter cannot pay for the whole query.
func (st *runState) queryLabels(b *batch, q int, out []int) bool {
	if !st.filter.Fits(st.rhoQuery) {
		return false
	}
	for j, lr := range st.labels {
		counts, zc, za := b.votesOf(j, q, len(lr.classes.values))
		c, o := lr.agg.query(counts, zc, za, nil, st.filter)
		out[j] = -1
		if o == outAnswered {
			out[j] = c
			lr.released[c]++
			lr.answered++
		}
	}
	return true
}

// aggregateLabels aggregates the rows of one batch of a multi-label run and
// returns the label columns and the source column. A row's source is
// teachers when at least one of its labels was released, abstained when
// none was.
func (st *runState) aggregateLabels(b *batch, lbs []array.Builder, sb *array.StringBuilder) (first arrow.Array, more []arrow.Array, src arrow.Array) {
	n := int(b.rec.NumRows())
	for _, lb := range lbs {
		lb.Reserve(n)
	}
	sb.Reserve(n)
	out := make([]int, len(st.labels))
	k := 0 // the batch's next query
	for i := 0; i < n; i++ {
		q := -1
		if k < b.queryN && (b.sel == nil || int(b.sel[k]) == i) {
			q, k = k, k+1
		}
		for j := range out {
			out[j] = -1
		}
		source := SourceAbstained
		row := b.first + int64(i)
		if q >= 0 && !st.stopped.Load() {
			if st.queryLabels(b, q, out) {
				st.seen++
				answered := false
				for _, c := range out {
					answered = answered || c >= 0
				}
				if answered {
					source = SourceTeachers
					st.answered++
				} else {
					st.abstained++
				}
			} else {
				st.stopped.Store(true)
				st.stopRow = row
			}
		}
		if source == SourceTeachers {
			st.sources.Teachers++
		} else {
			st.sources.Abstained++
		}
		for j, lr := range st.labels {
			lr.classes.appendClass(lbs[j], out[j])
		}
		sb.Append(source)
		if (row+1)%st.step == 0 {
			st.mark(row + 1)
		}
	}
	first = lbs[0].NewArray()
	for _, lb := range lbs[1:] {
		more = append(more, lb.NewArray())
	}
	return first, more, sb.NewArray()
}

// labelEvents lists the events of every label column, for RecomputeSpendLabels.
func (st *runState) labelEvents() []LabelEvents {
	ev := make([]LabelEvents, len(st.labels))
	for j, lr := range st.labels {
		ev[j] = LabelEvents{Classes: len(lr.classes.values), Params: lr.params,
			Checks: lr.agg.checks, Argmaxes: lr.agg.argmaxes}
		if lr.discovery != nil {
			ev[j].DiscoverySigma = lr.discovery.Sigma
		}
	}
	return ev
}

// finishLabels fills in the per-column part of a multi-label report.
func (st *runState) finishLabels(rep *Report, deltaConv float64) {
	names := make([]string, len(st.labels))
	for j, lr := range st.labels {
		names[j] = lr.name
		a := lr.agg
		rho := float64(a.checks)*a.rhoCheck + float64(a.argmaxes)*a.rhoAnswer
		lrep := LabelReport{
			Label: lr.name, Weight: lr.weight, Classes: lr.classes.values, ClassesSource: lr.classesSource,
			ClassDiscovery: lr.discovery, Params: lr.params, RhoPlanned: Float(lr.rhoPlanned), Rho: Float(rho),
			ThresholdChecks: a.checks, NoisyArgmaxes: a.argmaxes,
			Answered: lr.answered, Abstained: st.rows - lr.answered,
			Released: make(map[string]int64, len(lr.released)),
		}
		if sp, err := RecomputeSpendLabels(a.kind, st.labelEvents()[j:j+1], lr.discoveryDelta, deltaConv+lr.discoveryDelta); err == nil {
			lrep.Epsilon = sp.EpsilonImproved
		} else {
			lrep.Epsilon = Float(math.Inf(1))
		}
		for c, n := range lr.released {
			lrep.Released[lr.classes.values[c]] = n
		}
		rep.Labels = append(rep.Labels, lrep)
	}
	rep.Label = strings.Join(names, ",")
	rep.Classes = nil
	rep.ClassesSource = "per label column: see labels"
	rep.ClassDiscovery = nil
	rep.Released = map[string]int64{}
}

// auditLabels checks the counts of a multi-label report, column by column
// and against the run's totals, and recomputes the joint spend: every
// column's events on the same queries, composed (ρ adds up). RhoCheck and
// RhoAnswer of the result are the sums over the columns (the most one query
// costs is their sum).
func auditLabels(rep *Report) (*AuditResult, error) {
	delta := float64(rep.Guarantee.Delta)
	sp, q := rep.Spent, rep.Queries
	if sp.ThresholdChecks < 0 || sp.NoisyArgmaxes < 0 || q.Seen < 0 || q.Answered < 0 || q.PublicRows < 0 {
		return nil, invalid("report: negative counts")
	}
	if q.Answered > q.Seen || q.Seen > q.PublicRows {
		return nil, invalid("report: counts out of order (answered %d, queries %d, rows %d)", q.Answered, q.Seen, q.PublicRows)
	}
	res := &AuditResult{
		Mechanism: rep.Mechanism, Filter: rep.Budget.Filter, Seeded: rep.Seeded,
		ThresholdChecks: sp.ThresholdChecks, NoisyArgmaxes: sp.NoisyArgmaxes, Queries: q.Seen,
		ClaimedEpsilon: float64(rep.Guarantee.Epsilon), Delta: delta,
	}
	events := make([]LabelEvents, len(rep.Labels))
	var checks, argmaxes, mostAnswered, sumAnswered int64
	for j, lab := range rep.Labels {
		name := fmt.Sprintf("report: label %q", lab.Label)
		if len(lab.Classes) == 0 {
			return nil, invalid("%s: no classes", name)
		}
		if lab.ThresholdChecks < 0 || lab.NoisyArgmaxes < 0 || lab.Answered < 0 {
			return nil, invalid("%s: negative counts", name)
		}
		if lab.Answered != lab.NoisyArgmaxes {
			return nil, invalid("%s: %d answered queries but %d noisy argmaxes", name, lab.Answered, lab.NoisyArgmaxes)
		}
		if lab.Answered > q.Seen {
			return nil, invalid("%s: %d answered of %d queries", name, lab.Answered, q.Seen)
		}
		// The filter is asked for the whole query before it is put, so a
		// column is never checked more often than there are queries.
		if checksThreshold(rep.Mechanism) && lab.ThresholdChecks > q.Seen {
			return nil, invalid("%s: %d threshold checks for %d queries", name, lab.ThresholdChecks, q.Seen)
		}
		if !checksThreshold(rep.Mechanism) && lab.ThresholdChecks != 0 {
			return nil, invalid("%s: %s makes no threshold checks, the report counts %d", name, rep.Mechanism, lab.ThresholdChecks)
		}
		var released int64
		for _, n := range lab.Released {
			released += n
		}
		if released != lab.Answered {
			return nil, invalid("%s: %d released labels but %d answered queries", name, released, lab.Answered)
		}
		if err := releasedAreClasses(lab.Released, lab.Classes); err != nil {
			return nil, invalid("%s: %v", name, err)
		}
		rc, ra, err := EventRho(rep.Mechanism, len(lab.Classes), lab.Params)
		if err != nil {
			return nil, fmt.Errorf("%s parameters: %w", name, err)
		}
		al := AuditLabel{Label: lab.Label, RhoCheck: rc, RhoAnswer: ra, ThresholdChecks: lab.ThresholdChecks,
			NoisyArgmaxes: lab.NoisyArgmaxes, Rho: float64(lab.ThresholdChecks)*rc + float64(lab.NoisyArgmaxes)*ra}
		events[j] = LabelEvents{Classes: len(lab.Classes), Params: lab.Params, Checks: lab.ThresholdChecks, Argmaxes: lab.NoisyArgmaxes}
		if d := lab.ClassDiscovery; d != nil {
			// Each column's discovery gets an equal part of the share.
			want := DiscoveryDelta(delta, false) / float64(len(rep.Labels))
			if al.DiscoveryRho, err = checkDiscovery(res, fmt.Sprintf(" (label %q)", lab.Label), d, len(lab.Classes), want); err != nil {
				return nil, err
			}
			events[j].DiscoverySigma = d.Sigma
			res.DiscoveryRho += al.DiscoveryRho
			res.DiscoveryDelta += want
		}
		res.RhoCheck += rc
		res.RhoAnswer += ra
		res.Labels = append(res.Labels, al)
		checks += lab.ThresholdChecks
		argmaxes += lab.NoisyArgmaxes
		mostAnswered = max(mostAnswered, lab.Answered)
		sumAnswered += lab.Answered
	}
	if checks != sp.ThresholdChecks || argmaxes != sp.NoisyArgmaxes {
		return nil, invalid("report: the label columns count %d threshold checks and %d noisy argmaxes, the run %d and %d",
			checks, argmaxes, sp.ThresholdChecks, sp.NoisyArgmaxes)
	}
	if q.Answered < mostAnswered || q.Answered > sumAnswered {
		return nil, invalid("report: %d rows answered, but the label columns answered between %d and %d each", q.Answered, mostAnswered, sumAnswered)
	}
	var err error
	if res.Spent, err = RecomputeSpendLabels(rep.Mechanism, events, res.DiscoveryDelta, delta); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	// Each column's own figures, re-derived as the run derives them: its
	// realized ρ, and that ρ with its discovery converted alone at the run's
	// conversion δ plus its discovery δ.
	deltaConv := delta - res.DiscoveryDelta
	for j, lab := range rep.Labels {
		al := res.Labels[j]
		addCheck(res, fmt.Sprintf("recorded ρ (label %q)", lab.Label), float64(lab.Rho), al.Rho, leq(al.Rho, float64(lab.Rho)),
			"checks·ρ_check + argmaxes·ρ_answer of the column; the report must not understate it")
		dd := 0.0
		if lab.ClassDiscovery != nil {
			dd = DiscoveryDelta(delta, false) / float64(len(rep.Labels))
		}
		sp, err := RecomputeSpendLabels(rep.Mechanism, events[j:j+1], dd, deltaConv+dd)
		if err != nil {
			return nil, fmt.Errorf("report: label %q: %w", lab.Label, err)
		}
		addCheck(res, fmt.Sprintf("recorded ε (label %q)", lab.Label), float64(lab.Epsilon), float64(sp.EpsilonImproved),
			float64(sp.EpsilonImproved) <= float64(lab.Epsilon)+1e-6, "the column's ρ and discovery alone, improved conversion, rounded up to 6 decimals")
	}
	return res, nil
}
