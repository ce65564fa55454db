package label

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// twoLabelData is a synthetic private set with two label columns — "a"
// (int64, two classes) and "b" (string, three classes), each the argmax of
// its own linear function of the same 8 features plus noise — and a public
// set with the same features and the true labels in columns "a" and "b"
// (left out of the output with Keep). Batches of 500 rows.
func twoLabelData(mem memory.Allocator, nPriv, nPub int) (priv, pub *memReader, truthA []int64, truthB []string) {
	rng := rand.New(rand.NewPCG(6, 1))
	const d = 8
	wa, wb := make([]float64, d*2), make([]float64, d*3)
	for i := range wa {
		wa[i] = rng.NormFloat64() / math.Sqrt(d)
	}
	for i := range wb {
		wb[i] = rng.NormFloat64() / math.Sqrt(d)
	}
	fields := make([]arrow.Field, 0, d+2)
	for j := 0; j < d; j++ {
		fields = append(fields, arrow.Field{Name: fmt.Sprintf("x%d", j), Type: arrow.PrimitiveTypes.Float64})
	}
	fields = append(fields, arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String})
	schema := arrow.NewSchema(fields, nil)
	argmax := func(x, w []float64, k int) int {
		best, bestV := 0, math.Inf(-1)
		for c := 0; c < k; c++ {
			v := 0.3 * rng.NormFloat64()
			for j := range x {
				v += x[j] * w[j*k+c]
			}
			if v > bestV {
				best, bestV = c, v
			}
		}
		return best
	}
	make1 := func(n int, keep bool) *memReader {
		r := &memReader{schema: schema}
		x := make([]float64, d)
		for start := 0; start < n; start += 500 {
			b := array.NewRecordBuilder(mem, schema)
			for i := 0; i < min(500, n-start); i++ {
				for j := range x {
					x[j] = rng.NormFloat64()
					b.Field(j).(*array.Float64Builder).Append(x[j])
				}
				a, c := int64(argmax(x, wa, 2)), []string{"p", "q", "r"}[argmax(x, wb, 3)]
				b.Field(d).(*array.Int64Builder).Append(a)
				b.Field(d + 1).(*array.StringBuilder).Append(c)
				if keep {
					truthA = append(truthA, a)
					truthB = append(truthB, c)
				}
			}
			r.recs = append(r.recs, b.NewRecord())
			b.Release()
		}
		return r
	}
	priv = make1(nPriv, false)
	pub = make1(nPub, true)
	return priv, pub, truthA, truthB
}

func twoLabelConfig(seed uint64) Config {
	return Config{Labels: []string{"a", "b"}, Features: []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"},
		Keep: []string{"x0"}, Teachers: 50, Learner: "logreg", Epsilon: 8, Delta: 1e-5, MaxQueries: 300,
		PublicRows: 2000, Seed: &seed, BatchSize: 500, Mechanism: MechanismConfidentGNMax,
		Params: MechanismParams{Threshold: 35}}
}

// multiOut collects a two-label run's output: a (int64), b (string), source.
type multiOut struct {
	a       []int64
	b       []string
	sources []string
	schema  *arrow.Schema
}

func (c *multiOut) Write(rec arrow.Record) error {
	c.schema = rec.Schema()
	a := rec.Column(1).(*array.Int64)
	b := rec.Column(2).(*array.String)
	s := rec.Column(3).(*array.String)
	for i := 0; i < int(rec.NumRows()); i++ {
		if a.IsNull(i) {
			c.a = append(c.a, -1)
		} else {
			c.a = append(c.a, a.Value(i))
		}
		if b.IsNull(i) {
			c.b = append(c.b, "")
		} else {
			c.b = append(c.b, b.Value(i))
		}
		c.sources = append(c.sources, s.Value(i))
	}
	return nil
}

func runTwoLabels(t *testing.T, cfg Config, mem memory.Allocator) (*Report, *multiOut, []int64, []string) {
	t.Helper()
	priv, pub, ta, tb := twoLabelData(mem, 10000, int(cfg.PublicRows))
	defer releaseAll(priv.recs)
	defer releaseAll(pub.recs)
	cfg.Allocator = mem
	l, err := New(cfg, priv.schema, pub.schema)
	if err != nil {
		t.Fatal(err)
	}
	out := &multiOut{}
	rep, err := l.Run(context.Background(), priv, pub, out)
	if err != nil {
		t.Fatal(err)
	}
	return rep, out, ta, tb
}

// TestMultiLabelRun checks a two-label run end to end: the output's columns,
// that each column abstains on its own, that pate_source says teachers
// exactly when at least one label was released, that the report's counts
// match the output, that its spend is the composition of both columns'
// events (recomputed by hand from the recorded noise), and that pate
// audit's check holds.
func TestMultiLabelRun(t *testing.T) {
	tests := []struct {
		name    string
		eps     float64
		weights []float64
		mech    string
	}{
		{"confident equal weights", 8, nil, MechanismConfidentGNMax},
		{"confident weighted 3:1", 8, []float64{3, 1}, MechanismConfidentGNMax},
		{"gnmax, budget stops the run", 1, nil, MechanismGNMax},
		{"lnmax", 8, []float64{1, 2}, MechanismLNMax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			cfg := twoLabelConfig(11)
			cfg.Epsilon, cfg.LabelWeights, cfg.Mechanism = tc.eps, tc.weights, tc.mech
			if tc.mech != MechanismConfidentGNMax {
				cfg.Params = MechanismParams{}
			}
			if tc.mech == MechanismGNMax {
				cfg.MaxQueries = 0 // plan for every row, then stop early: the budget must stop it
				cfg.Params.Sigma = "30"
			}
			rep, out, ta, tb := runTwoLabels(t, cfg, mem)
			t.Logf("parameters %+v, %+v", rep.Labels[0].Params, rep.Labels[1].Params)

			names := columnNames(out.schema)
			if want := []string{"x0", "a", "b", SourceColumn}; fmt.Sprint(names) != fmt.Sprint(want) {
				t.Fatalf("output columns %v, want %v", names, want)
			}
			if len(rep.Labels) != 2 || rep.Label != "a,b" {
				t.Fatalf("report labels %q, %d sections", rep.Label, len(rep.Labels))
			}
			var ansA, ansB, rows, onlyOne int64
			for i, s := range out.sources {
				hasA, hasB := out.a[i] >= 0, out.b[i] != ""
				if (s == SourceTeachers) != (hasA || hasB) {
					t.Fatalf("row %d: source %s with labels %d %q", i, s, out.a[i], out.b[i])
				}
				if hasA {
					ansA++
				}
				if hasB {
					ansB++
				}
				if hasA || hasB {
					rows++
				}
				if hasA != hasB {
					onlyOne++
				}
			}
			if rep.Labels[0].Answered != ansA || rep.Labels[1].Answered != ansB || rep.Queries.Answered != rows {
				t.Errorf("report answered a=%d b=%d rows=%d, output has %d %d %d",
					rep.Labels[0].Answered, rep.Labels[1].Answered, rep.Queries.Answered, ansA, ansB, rows)
			}
			if tc.mech == MechanismConfidentGNMax && onlyOne == 0 {
				t.Errorf("no row with one label released and the other abstained: the columns do not abstain on their own")
			}

			// The joint spend, by hand: ρ adds up over the events of both
			// columns and the two class discoveries.
			rho := jointRho(t, rep, tc.mech)
			if math.Abs(rho-float64(rep.Spent.Rho)) > 1e-12*rho {
				t.Errorf("spent ρ %.15g, composition of both columns' events %.15g", float64(rep.Spent.Rho), rho)
			}
			if float64(rep.Spent.Rho) > float64(rep.Guarantee.Rho) || float64(rep.Guarantee.Epsilon) > tc.eps {
				t.Errorf("spent ρ %g over the budget %g, or claim %g over ε %g", float64(rep.Spent.Rho), float64(rep.Guarantee.Rho), float64(rep.Guarantee.Epsilon), tc.eps)
			}
			if tc.mech == MechanismGNMax && !rep.Budget.StoppedOn {
				t.Errorf("ε = %g with σ = 30 over 2,000 rows: the filter should have stopped the run", tc.eps)
			}
			if rep.Budget.StoppedOn {
				for i := rep.Budget.StoppedAtRow; i < int64(len(out.sources)); i++ {
					if out.sources[i] != SourceAbstained {
						t.Fatalf("row %d after the stop at %d: source %s", i, rep.Budget.StoppedAtRow, out.sources[i])
					}
				}
			}
			// Weights: each column's noise is planned for its share.
			w := tc.weights
			if w == nil {
				w = []float64{1, 1}
			}
			for j, lr := range rep.Labels {
				if want := w[j] / (w[0] + w[1]); math.Abs(lr.Weight-want) > 1e-12 {
					t.Errorf("%s: weight %g, want %g", lr.Label, lr.Weight, want)
				}
			}
			if tc.mech != MechanismGNMax {
				if r := float64(rep.Labels[0].RhoPlanned) / float64(rep.Labels[1].RhoPlanned); math.Abs(r-w[0]/w[1]) > 1e-9 {
					t.Errorf("planned ρ ratio %g, weights ratio %g", r, w[0]/w[1])
				}
			}
			res, err := Audit(rep)
			if err != nil || !res.Holds {
				t.Fatalf("audit: %v", err)
			}
			// Accuracy on answered rows, for the record.
			var okA, okB int
			for i := range out.a {
				if out.a[i] >= 0 && out.a[i] == ta[i] {
					okA++
				}
				if out.b[i] != "" && out.b[i] == tb[i] {
					okB++
				}
			}
			t.Logf("answered a %d (%.1f%% correct), b %d (%.1f%% correct), rows %d of %d queries; ε spent %g",
				ansA, 100*float64(okA)/math.Max(1, float64(ansA)), ansB, 100*float64(okB)/math.Max(1, float64(ansB)),
				rows, rep.Queries.Seen, float64(rep.Spent.EpsilonImproved))
			if tc.mech == MechanismConfidentGNMax && (float64(okA) < 0.8*float64(ansA) || float64(okB) < 0.7*float64(ansB)) {
				t.Errorf("answered-row accuracy a %d/%d, b %d/%d: too low for this easy data", okA, ansA, okB, ansB)
			}
		})
	}
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	_, f, err := parsePositive("test", s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMultiLabelSeededRepeats: a seeded two-label run gives the same
// labels twice, and its second column's noise differs from the first's.
func TestMultiLabelSeededRepeats(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	_, o1, _, _ := runTwoLabels(t, twoLabelConfig(5), mem)
	_, o2, _, _ := runTwoLabels(t, twoLabelConfig(5), mem)
	if fmt.Sprint(o1.a, o1.b, o1.sources) != fmt.Sprint(o2.a, o2.b, o2.sources) {
		t.Fatal("two runs with the same seed released different labels")
	}
}

// TestRecomputeSpendLabels checks the joint accounting against hand-derived
// values: the events of several columns compose by adding ρ, and one
// column gives RecomputeSpend's figures exactly.
func TestRecomputeSpendLabels(t *testing.T) {
	pa := MechanismParams{Threshold: 200, Sigma1: "150", Sigma2: "40"}
	pb := MechanismParams{Threshold: 200, Sigma1: "100", Sigma2: "25"}
	a := LabelEvents{Classes: 2, Params: pa, Checks: 1000, Argmaxes: 400, DiscoverySigma: "20"}
	b := LabelEvents{Classes: 3, Params: pb, Checks: 1000, Argmaxes: 250, DiscoverySigma: "20"}
	const delta, discDelta = 1e-5, 1e-6
	one, err := RecomputeSpendLabels(MechanismConfidentGNMax, []LabelEvents{a}, discDelta/2, delta)
	if err != nil {
		t.Fatal(err)
	}
	single, err := RecomputeSpend(MechanismConfidentGNMax, 2, pa, 1000, 400, "20", discDelta/2, delta)
	if err != nil {
		t.Fatal(err)
	}
	if one.EpsilonGDP == nil || single.EpsilonGDP == nil || *one.EpsilonGDP != *single.EpsilonGDP {
		t.Fatalf("Gaussian-DP ε missing or different")
	}
	one.EpsilonGDP, single.EpsilonGDP = nil, nil
	if one != single {
		t.Errorf("one column %+v, RecomputeSpend %+v", one, single)
	}
	both, err := RecomputeSpendLabels(MechanismConfidentGNMax, []LabelEvents{a, b}, discDelta, delta)
	if err != nil {
		t.Fatal(err)
	}
	// Hand-derived: 1000/(2·150²) + 400/40² + 1/(2·20²) + 1000/(2·100²) + 250/25² + 1/(2·20²).
	want := 1000.0/45000 + 400.0/1600 + 1.0/800 + 1000.0/20000 + 250.0/625 + 1.0/800
	if math.Abs(float64(both.Rho)-want) > 1e-13 {
		t.Errorf("joint ρ %.15g, want %.15g", float64(both.Rho), want)
	}
	if both.ThresholdChecks != 2000 || both.NoisyArgmaxes != 650 {
		t.Errorf("counts %d, %d", both.ThresholdChecks, both.NoisyArgmaxes)
	}
	// ε from the accountant: the RDP curves of every event, added.
	orders := rdp.DefaultOrders()
	acc := rdp.NewAccountant(orders)
	acc.AddScaled(rdp.ThresholdRDP(150, orders), 1000)
	acc.AddScaled(rdp.GaussianRDP(40, orders), 400)
	acc.AddScaled(rdp.ThresholdRDP(100, orders), 1000)
	acc.AddScaled(rdp.GaussianRDP(25, orders), 250)
	acc.AddScaled(rdp.ThresholdRDP(20, orders), 2) // the discoveries: sensitivity 1, σ 20
	ei, _ := acc.EpsImproved(delta - discDelta)
	ei = math.Min(ei, rdp.ZCDPEps(want, delta-discDelta))
	if got := float64(both.EpsilonImproved); math.Abs(got-rdp.RoundUp(ei, epsDecimals)) > 1.5e-6 {
		t.Errorf("joint ε %v, accountant's composition %v", got, rdp.RoundUp(ei, epsDecimals))
	}
	if float64(both.EpsilonImproved) <= float64(one.EpsilonImproved) {
		t.Errorf("two columns cost ε %g, not more than one (%g)", float64(both.EpsilonImproved), float64(one.EpsilonImproved))
	}
}

// TestAuditMultiLabel: pate audit re-derives a multi-label report's claim
// and catches reports whose columns' counts or noise do not add up.
func TestAuditMultiLabel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	rep, _, _, _ := runTwoLabels(t, twoLabelConfig(3), mem)
	if _, err := Audit(rep); err != nil {
		t.Fatalf("genuine report: %v", err)
	}
	clone := func() *Report {
		r := *rep
		r.Labels = append([]LabelReport(nil), rep.Labels...)
		return &r
	}
	tests := []struct {
		name   string
		tamper func(r *Report)
		want   error
	}{
		{"second column's noise understated", func(r *Report) { r.Labels[1].Params.Sigma2 = "0.5" }, ErrClaimExceeded},
		{"argmaxes moved between columns' totals", func(r *Report) { r.Labels[1].NoisyArgmaxes++ }, ErrInvalidInput},
		{"run total disagrees", func(r *Report) { r.Spent.NoisyArgmaxes-- }, ErrInvalidInput},
		{"more checks than queries", func(r *Report) {
			r.Labels[0].ThresholdChecks = r.Queries.Seen + 1
			r.Spent.ThresholdChecks++
		}, ErrInvalidInput},
		{"rows answered above the columns' sum", func(r *Report) { r.Queries.Answered = r.Labels[0].Answered + r.Labels[1].Answered + 1 }, ErrInvalidInput},
		{"column without classes", func(r *Report) { r.Labels[0].Classes = nil }, ErrInvalidInput},
		{"column's ρ understated", func(r *Report) { r.Labels[1].Rho /= 2 }, ErrClaimExceeded},
		{"column's ε understated", func(r *Report) { r.Labels[0].Epsilon -= 0.01 }, ErrClaimExceeded},
		{"column's discovery threshold edited down", func(r *Report) {
			d := *r.Labels[1].ClassDiscovery
			d.Threshold = 1
			r.Labels[1].ClassDiscovery = &d
		}, ErrClaimExceeded},
		{"released labels of a class not listed", func(r *Report) {
			m := map[string]int64{}
			for c, n := range r.Labels[0].Released {
				m[c+"x"] = n
			}
			r.Labels[0].Released = m
		}, ErrInvalidInput},
		{"discovery δ not pate's share", func(r *Report) {
			d := *r.Labels[0].ClassDiscovery
			d.Delta *= 2
			r.Labels[0].ClassDiscovery = &d
		}, ErrInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := clone()
			tc.tamper(r)
			if _, err := Audit(r); !errors.Is(err, tc.want) {
				t.Fatalf("audit error %v, want %v", err, tc.want)
			}
		})
	}
}

// TestMultiLabelConfigErrors: bad label lists and combinations pate does
// not support with several labels are refused before any data is read.
func TestMultiLabelConfigErrors(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	priv, pub, _, _ := twoLabelData(mem, 500, 500)
	defer releaseAll(priv.recs)
	defer releaseAll(pub.recs)
	tests := []struct {
		name string
		edit func(c *Config)
	}{
		{"label twice", func(c *Config) { c.Labels = []string{"a", "a"} }},
		{"unknown label", func(c *Config) { c.Labels = []string{"a", "zz"} }},
		{"weights count", func(c *Config) { c.LabelWeights = []float64{1} }},
		{"zero weight", func(c *Config) { c.LabelWeights = []float64{1, 0} }},
		{"weights without a budget", func(c *Config) {
			c.Epsilon, c.LabelWeights = 0, []float64{1, 2}
			c.Params = MechanismParams{Sigma1: "10", Sigma2: "5"}
		}},
		{"classes with two labels", func(c *Config) { c.Classes = []string{"0", "1"} }},
		{"student with two labels", func(c *Config) { c.Student = "logreg" }},
		{"privacy unit is a label", func(c *Config) { c.PrivacyUnit = "b" }},
		{"feature is a label", func(c *Config) { c.Features = []string{"x0", "b"} }},
		{"public column named like a label", func(c *Config) { c.Keep = nil }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := twoLabelConfig(1)
			tc.edit(&cfg)
			if _, err := New(cfg, priv.schema, pub.schema); !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v, want invalid input", err)
			}
		})
	}
}

// TestMultiLabelWithoutBudget: with explicit noise and no --epsilon, every
// label column pays for every query; the claim is the worst case of the
// queries put, and MaxRho (the ledger's write-ahead bound) covers it, class
// discovery included (one label column and two).
func TestMultiLabelWithoutBudget(t *testing.T) {
	for _, labels := range [][]string{{"a"}, {"a", "b"}} {
		t.Run(fmt.Sprint(labels), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			priv, pub, _, _ := twoLabelData(mem, 10000, 2000)
			defer releaseAll(priv.recs)
			defer releaseAll(pub.recs)
			cfg := twoLabelConfig(2)
			cfg.Labels = labels
			cfg.Epsilon, cfg.Params, cfg.Allocator = 0, MechanismParams{Threshold: 35, Sigma1: "20", Sigma2: "10"}, mem
			l, err := New(cfg, priv.schema, pub.schema)
			if err != nil {
				t.Fatal(err)
			}
			maxRho, err := l.MaxRho()
			if err != nil {
				t.Fatal(err)
			}
			rep, err := l.Run(context.Background(), priv, pub, &discard{})
			if err != nil {
				t.Fatal(err)
			}
			// Worst case by hand: 300 queries × columns × (1/(2·20²) + 1/10²),
			// plus the discoveries (σ = 10·√columns rounded up, each).
			n := float64(len(labels))
			disc := rep.ClassDiscovery
			if len(labels) > 1 {
				disc = rep.Labels[0].ClassDiscovery
			}
			sd := atof(t, disc.Sigma)
			want := 300*n*(1.0/800+1.0/100) + n/(2*sd*sd)
			if math.Abs(float64(rep.Guarantee.Rho)-want) > 1e-12*want {
				t.Errorf("claimed ρ %.15g, worst case %.15g", float64(rep.Guarantee.Rho), want)
			}
			if maxRho < float64(rep.Guarantee.Rho) || float64(rep.Spent.Rho) > float64(rep.Guarantee.Rho) {
				t.Errorf("MaxRho %.12g, claim %.12g, spent %g: the write-ahead bound must cover the claim", maxRho, float64(rep.Guarantee.Rho), float64(rep.Spent.Rho))
			}
			if res, err := Audit(rep); err != nil || !res.Holds {
				t.Fatalf("audit: %v", err)
			}
		})
	}
}

// jointOutcomes runs the joint query of a multi-label run (queryLabels) n
// times on one histogram per label column and tallies the output pairs of
// two columns: index (a+1)·(classes_b+1) + (b+1), with -1 for an abstention.
func jointOutcomes(t *testing.T, aggs [2]*aggregator, counts [2][]int32, n int, seed uint64) []int {
	t.Helper()
	st := &runState{filter: &unlimited{}}
	for _, a := range aggs {
		ld := &labelData{agg: a, classes: &classSet{values: make([]string, a.classes)}}
		st.labels = append(st.labels, &labelRun{labelData: ld, released: make([]int64, a.classes)})
		st.rhoQuery += a.rhoPerQuery()
	}
	b := &batch{counts: counts[0], queryN: 1, zCheck: make([]int64, 1), zArg: make([]int64, aggs[0].classes),
		more: []labelVotes{{counts: counts[1], zCheck: make([]int64, 1), zArg: make([]int64, aggs[1].classes)}}}
	src := noise.NewSeededSource(seed, 98)
	kb := aggs[1].classes + 1
	tally := make([]int, (aggs[0].classes+1)*kb)
	out := make([]int, 2)
	for range n {
		aggs[0].noiseFor(src, b.zCheck, b.zArg)
		aggs[1].noiseFor(src, b.more[0].zCheck, b.more[0].zArg)
		if !st.queryLabels(b, 0, out) {
			t.Fatal("unlimited budget refused a query")
		}
		tally[(out[0]+1)*kb+out[1]+1]++
	}
	return tally
}

// TestEmpiricalJointAudit is the empirical privacy audit of one joint query
// of two label columns: one privacy unit moves one teacher, hence one vote
// in each column's histogram; the best output event (a set of output
// pairs) must not tell the neighbours apart beyond the ε claimed for the
// sum of both columns' ρ. The negative control samples the second column
// with noise 8× smaller than its claim: the same harness must catch it.
func TestEmpiricalJointAudit(t *testing.T) {
	n := 1000000
	if testing.Short() {
		n = 100000
	}
	cs := MechanismParams{Threshold: 51, Sigma1: "1.5", Sigma2: "1.5"}
	tests := []struct {
		name    string
		claim   [2]MechanismParams
		sample  [2]MechanismParams
		d0, d1  [2][]int32
		caught  bool // the control: the lower bound must exceed the claim
		samples int
	}{
		{name: "confident-gnmax × confident-gnmax", claim: [2]MechanismParams{cs, cs}, sample: [2]MechanismParams{cs, cs},
			d0: [2][]int32{{50, 50}, {50, 50}}, d1: [2][]int32{{51, 49}, {51, 49}}, samples: n},
		{name: "second column's noise 8x too small", claim: [2]MechanismParams{{Sigma: "8"}, {Sigma: "8"}},
			sample: [2]MechanismParams{{Sigma: "8"}, {Sigma: "0.5"}},
			d0:     [2][]int32{{50, 50}, {50, 50}}, d1: [2][]int32{{51, 49}, {51, 49}}, caught: true, samples: 40000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kind := MechanismConfidentGNMax
			if tc.claim[0].Sigma != "" {
				kind = MechanismGNMax
			}
			mk := func(p MechanismParams) *aggregator {
				a, err := newAggregator(kind, 2, p)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}
			claim := rdp.ZCDPEps(mk(tc.claim[0]).rhoPerQuery()+mk(tc.claim[1]).rhoPerQuery(), auditDelta)
			t0 := jointOutcomes(t, [2]*aggregator{mk(tc.sample[0]), mk(tc.sample[1])}, tc.d0, tc.samples, 1)
			t1 := jointOutcomes(t, [2]*aggregator{mk(tc.sample[0]), mk(tc.sample[1])}, tc.d1, tc.samples, 2)
			// Events: every non-trivial set of the output pairs that occur.
			var seen []int
			for j := range t0 {
				if t0[j]+t1[j] > 0 {
					seen = append(seen, j)
				}
			}
			events := 1<<len(seen) - 2
			alpha := 0.05 / float64(2*events)
			lb := 0.0
			for set := 1; set < 1<<len(seen)-1; set++ {
				var x0, x1 int
				for i, j := range seen {
					if set&(1<<i) != 0 {
						x0 += t0[j]
						x1 += t1[j]
					}
				}
				lb = math.Max(lb, epsLowerBound(x1, x0, tc.samples, alpha, auditDelta))
			}
			t.Logf("%s: %d output pairs, empirical ε ≥ %.3f, claimed ε = %.3f for the joint query", tc.name, len(seen), lb, claim)
			if !tc.caught && lb > claim {
				t.Errorf("empirical lower bound ε ≥ %.4f exceeds the joint claim %.4f", lb, claim)
			}
			if tc.caught && lb <= claim {
				t.Errorf("the audit missed a second column with too little noise: ε ≥ %.4f, claim %.4f", lb, claim)
			}
		})
	}
}

// jointRho composes by hand the ρ of both label columns' events and their
// class discoveries, as the report's spend must.
func jointRho(t *testing.T, rep *Report, mech string) float64 {
	t.Helper()
	var rho float64
	for _, lr := range rep.Labels {
		p := lr.Params
		switch mech {
		case MechanismConfidentGNMax:
			s1, s2 := atof(t, p.Sigma1), atof(t, p.Sigma2)
			rho += float64(lr.ThresholdChecks)/(2*s1*s1) + float64(lr.NoisyArgmaxes)/(s2*s2)
			if lr.ThresholdChecks != rep.Queries.Seen {
				t.Errorf("%s: %d threshold checks for %d queries", lr.Label, lr.ThresholdChecks, rep.Queries.Seen)
			}
		case MechanismGNMax:
			s := atof(t, p.Sigma)
			rho += float64(lr.NoisyArgmaxes) / (s * s)
		case MechanismLNMax:
			e := 2 / atof(t, p.LaplaceScale)
			rho += float64(lr.NoisyArgmaxes) * e * e / 2
		}
		if d := lr.ClassDiscovery; d != nil {
			s := atof(t, d.Sigma)
			rho += 1 / (2 * s * s)
		}
	}
	return rho
}
