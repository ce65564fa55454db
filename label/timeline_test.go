package label

import "testing"

// TestRunningTimeline: each point of the timeline gets the spend of the
// events up to it, rising from the charges made before any query to the
// report's own spend at the last point; a run stopped on the budget, which
// charged one threshold check more than it put queries, gets it too; and
// a timeline whose counts do not follow the events is kept as recorded.
func TestRunningTimeline(t *testing.T) {
	const delta = 1e-5
	params := MechanismParams{Threshold: 200, Sigma1: "231.2", Sigma2: "115.6"}
	tl := []TimePoint{{Rows: 100, Queries: 4, Answered: 2}, {Rows: 200, Queries: 300, Answered: 150},
		{Rows: 300, Queries: 590, Answered: 300}, {Rows: 400, Queries: 591, Answered: 301}}
	for i := range tl {
		tl[i].Rho = 0.03 // as recorded after rounds of queries: the final ρ everywhere
	}
	tests := []struct {
		name             string
		checks, argmaxes int64
		running          bool
	}{
		{"every event counted", 591, 301, true},
		{"stopped on the budget: one check more", 592, 301, true},
		{"counts that follow nothing", 700, 301, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := LabelEvents{Classes: 2, Params: params, Checks: tc.checks, Argmaxes: tc.argmaxes, ModelRho: 0.0015}
			spent, err := RecomputeSpendLabels(MechanismConfidentGNMax, []LabelEvents{ev}, 0, delta)
			if err != nil {
				t.Fatal(err)
			}
			got := runningTimeline(tl, MechanismConfidentGNMax, ev, 591, 301, 0, delta, spent)
			if !tc.running {
				if got[0].Rho != 0.03 || got[0].Epsilon != 0 {
					t.Errorf("a timeline whose counts follow no event was rewritten: %+v", got[0])
				}
				return
			}
			for i := 1; i < len(got); i++ {
				if !(got[i].Rho > got[i-1].Rho) || !(got[i].Epsilon > got[i-1].Epsilon) {
					t.Errorf("point %d: ρ %v ε %v after ρ %v ε %v: not rising", i, got[i].Rho, got[i].Epsilon, got[i-1].Rho, got[i-1].Epsilon)
				}
			}
			if got[0].Rho <= 0.0015 {
				t.Errorf("the first point's ρ %v leaves out its queries", got[0].Rho)
			}
			last := got[len(got)-1]
			if last.Rho != spent.Rho || last.Epsilon != spent.EpsilonImproved {
				t.Errorf("last point ρ %v ε %v, the report's spend ρ %v ε %v", last.Rho, last.Epsilon, spent.Rho, spent.EpsilonImproved)
			}
			if tl[0].Rho != 0.03 {
				t.Errorf("the recorded timeline was modified in place")
			}
		})
	}
}
