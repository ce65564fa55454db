package label

// runningTimeline returns the report's timeline with each point's ρ and ε
// the spend of the events up to it: the events of the queries among its
// first Rows public rows, plus what was charged before any query (the
// class discovery, the chooser's count, a model's training), recomputed by
// the function that computes the report's spent from the final counts, so
// that the last point states the report's spend exactly.
//
// The points are recorded as the output is written, and a run whose
// student chose its queries in rounds has charged them all by then: their
// recorded ρ is the final one, and the chart of ε over the queries was a
// flat line. The running figure is rebuilt from the point's counts. A run
// whose events are not a function of the queries and answers so counted
// (a multi-label run, pure ε-DP events) keeps the timeline as recorded.
func runningTimeline(tl []TimePoint, kind string, final LabelEvents, seen, answered int64, discDelta, delta float64, spent Spend) []TimePoint {
	// Which count each kind of event follows: none, the queries or the
	// answers. A run stopped on the budget may have charged one event more
	// than it counts (the step that did not fit): it is counted from the
	// point where every query is put, which may be a little early, never
	// late.
	of := func(n int64) (func(TimePoint) int64, bool) {
		if n == 0 {
			return func(TimePoint) int64 { return 0 }, true
		}
		for _, c := range []struct {
			total int64
			at    func(TimePoint) int64
		}{{seen, func(p TimePoint) int64 { return p.Queries }}, {answered, func(p TimePoint) int64 { return p.Answered }}} {
			switch n - c.total {
			case 0:
				return c.at, true
			case 1:
				return func(p TimePoint) int64 {
					if p.Queries >= seen {
						return c.at(p) + 1
					}
					return c.at(p)
				}, true
			}
		}
		return nil, false
	}
	checks, ok1 := of(final.Checks)
	argmaxes, ok2 := of(final.Argmaxes)
	if !ok1 || !ok2 || len(tl) == 0 {
		return tl
	}
	out := make([]TimePoint, len(tl))
	for i, p := range tl {
		ev := final
		ev.Checks, ev.Argmaxes = checks(p), argmaxes(p)
		sp, err := recomputeSpend(kind, []LabelEvents{ev}, discDelta, delta, true)
		if err != nil {
			return tl
		}
		if ev.Checks == final.Checks && ev.Argmaxes == final.Argmaxes {
			sp = spent // the same events: the report's own figures
		}
		p.Rho, p.Epsilon = sp.Rho, sp.EpsilonImproved
		out[i] = p
	}
	return out
}

// isPure tells whether the run's events are pure ε-DP (their timeline is
// kept as recorded).
func isPure(f budget) bool {
	_, ok := f.(*pureFilter)
	return ok
}
