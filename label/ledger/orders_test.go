package ledger

import (
	"math"
	"testing"

	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/label/report"
)

// orderRun is one run of TestOrderBoundedTotals: begun at a budget (ε, δ)
// with its ρ bounded to the orders 2..maxOrder (0: every order), ended at
// the realized ρ.
type orderRun struct {
	mech      string
	eps       float64
	maxOrder  int
	realized  float64
	legacyRaw bool // written as before max_order was recorded
}

// TestOrderBoundedTotals: a ρ that holds on the Rényi orders 2..A only is
// converted there, alone and composed; the composed total reads only the
// orders every run covers, never an order below 2 however large the summed
// ρ, and is at least each run alone.
func TestOrderBoundedTotals(t *testing.T) {
	const delta = 1e-5
	knnRho := 2.319e-4 // one private-knn answer at ε 8: valid on the orders 2..4
	tests := []struct {
		name      string
		runs      []orderRun
		wantOrder int
		// want: the total, to 1e-6, or 0 to check only the bounds.
		want float64
	}{
		{"one bounded run reads its own orders",
			[]orderRun{{"private-knn", 8, 4, knnRho, false}}, 4, 3.08879},
		{"an entry before max_order: the orders re-derived from its budget",
			[]orderRun{{"private-knn", 8, 0, knnRho, true}}, 4, 3.08879},
		{"bounded and unbounded: the common orders",
			[]orderRun{{"private-knn", 8, 4, knnRho, false}, {"gnmax", 1, 0, rdp.RhoForEps(1, delta), false}}, 4, 0},
		{"two bounded: the smaller range",
			[]orderRun{{"private-knn", 8, 4, knnRho, false}, {"private-knn", 1, 40, 0.005, false}}, 4, 0},
		{"a large summed ρ: order 2, not below",
			[]orderRun{{"private-knn", 60, 3, 3, false}, {"private-knn", 60, 3, 3, false}}, 2 + 1, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			id := testID(t, "orders")
			var alone []float64
			for _, r := range tc.runs {
				mo := r.maxOrder
				run, err := l.Begin(BeginRequest{Dataset: id, Labels: []string{"y"}, Mechanism: r.mech,
					MaxRho: rdp.RhoForEps(r.eps, delta), Delta: delta, Epsilon: r.eps, MaxOrder: mo}, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := run.End(r.realized); err != nil {
					t.Fatal(err)
				}
				e := TotalWithin(r.realized, delta, 0, maxOrder(Entry{Mechanism: r.mech, Epsilon: report.Float(r.eps), Delta: report.Float(delta), MaxOrder: mo}))
				alone = append(alone, math.Min(e, r.eps))
			}
			d, err := l.Dataset(id)
			if err != nil {
				t.Fatal(err)
			}
			if d.MaxOrder != tc.wantOrder {
				t.Fatalf("the total holds on the orders 2..%d, want 2..%d", d.MaxOrder, tc.wantOrder)
			}
			// The total is at least the conversion of the summed ρ at the
			// best order of the common range, or basic composition.
			within := TotalWithin(d.Rho, d.Delta, d.FailureDelta, d.MaxOrder)
			basic := 0.0
			for _, a := range alone {
				basic += a
			}
			if floor := math.Min(within, basic); d.Epsilon < floor-1e-9 {
				t.Fatalf("total ε %g below the valid readings (%g on the orders, %g basic)", d.Epsilon, within, basic)
			}
			// Never a reading at an order outside the common range: the
			// unbounded conversion of the same ρ reads less here.
			if free := Total(d.Rho, d.Delta, d.FailureDelta); tc.wantOrder > 0 && d.Epsilon < free {
				t.Fatalf("total ε %g below even the unbounded %g", d.Epsilon, free)
			}
			for i, a := range alone {
				if d.Epsilon < a {
					t.Fatalf("total ε %g below run %d alone (%g)", d.Epsilon, i, a)
				}
			}
			if tc.want > 0 && math.Abs(d.Epsilon-tc.want) > 1e-5 {
				t.Fatalf("total ε %g, want %g", d.Epsilon, tc.want)
			}
		})
	}
}

// TestBeginRefusesEmptyOrders: a charge on the orders 2..1 covers none.
func TestBeginRefusesEmptyOrders(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Begin(BeginRequest{Dataset: testID(t, "o"), Mechanism: "private-knn", MaxRho: 0.1, Delta: 1e-5, MaxOrder: 1}, 0); err == nil {
		t.Fatal("Begin took a charge on the orders 2..1")
	}
}
