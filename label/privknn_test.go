package label

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// knnFixture is n rows of d features around classes centres, and their
// classes (every fifth row of class -1: no declared class).
func knnFixture(n, d, classes int, seed uint64) (*learners.Matrix, []int32) {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := learners.NewMatrix(n, d)
	y := make([]int32, n)
	for i := range y {
		c := i % classes
		y[i] = int32(c)
		for j := 0; j < d; j++ {
			x.Data[i*d+j] = float32(rng.NormFloat64())
			if j == c%d {
				x.Data[i*d+j] += 3
			}
		}
		if i%5 == 4 {
			y[i] = -1
		}
	}
	return x, y
}

// bruteKNN is the histogram of the k nearest usable rows among those keep
// says, by exact float64 distance (ties to the lower index).
func bruteKNN(x *learners.Matrix, y []int32, q []float32, k, classes int, keep func(i int) bool) []int32 {
	type nb struct {
		d float64
		i int
	}
	var nbs []nb
	for i := 0; i < x.Rows; i++ {
		if y[i] < 0 || !keep(i) {
			continue
		}
		var d float64
		for j, v := range x.Row(i) {
			t := float64(v) - float64(q[j])
			d += t * t
		}
		nbs = append(nbs, nb{d, i})
	}
	sort.Slice(nbs, func(a, b int) bool { return nbs[a].d < nbs[b].d || nbs[a].d == nbs[b].d && nbs[a].i < nbs[b].i })
	h := make([]int32, classes)
	for _, n := range nbs[:min(k, len(nbs))] {
		h[y[n.i]]++
	}
	return h
}

// TestKNNVotesExact: with γ = 1 every usable row is in the subsample, and
// the histogram is that of the exact k nearest; with γ < 1 each query votes
// min(k, |S|) times and S holds about γ of the rows.
func TestKNNVotesExact(t *testing.T) {
	const d, classes = 6, 3
	x, y := knnFixture(400, d, classes, 1)
	q, _ := knnFixture(37, d, classes, 2) // not a multiple of the chunk
	for _, k := range []int{1, 5, 40} {
		seed := uint64(3)
		l := &Labeler{cfg: Config{Seed: &seed, Params: MechanismParams{KNNK: k, SampleRate: "1"}}}
		v, err := privateKNNMechanism{}.learner(l, x, y, classes, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		v.(batchStarter).startBatch(l, 0)
		counts := make([]int32, q.Rows*classes)
		v.Votes(q, counts)
		for i := 0; i < q.Rows; i++ {
			want := bruteKNN(x, y, q.Row(i), k, classes, func(int) bool { return true })
			if got := counts[i*classes : (i+1)*classes]; !slices.Equal(got, want) {
				t.Fatalf("k=%d row %d: votes %v, exact %v", k, i, got, want)
			}
		}
	}

	seed := uint64(5)
	l := &Labeler{cfg: Config{Seed: &seed, Params: MechanismParams{KNNK: 400, SampleRate: "0.25"}}}
	v, err := privateKNNMechanism{}.learner(l, x, y, classes, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v.(batchStarter).startBatch(l, 0)
	counts := make([]int32, q.Rows*classes)
	v.Votes(q, counts)
	var total int
	for _, c := range counts {
		total += int(c)
	}
	// 320 usable rows, rate 1/4: 80 a query, k above it: every one votes.
	mean := float64(total) / float64(q.Rows)
	if sd := math.Sqrt(320 * 0.25 * 0.75 / float64(q.Rows)); math.Abs(mean-80) > 5*sd {
		t.Errorf("%.1f votes per query, want about 80 (sd %.2f)", mean, sd)
	}
	// A seeded run draws the same subsamples again.
	v.(batchStarter).startBatch(l, 0)
	again := make([]int32, len(counts))
	v.Votes(q, again)
	if !slices.Equal(counts, again) {
		t.Error("the same seed and batch drew different subsamples")
	}
}

// TestKNNSensitivity: adding one row to the sensitive data moves the votes
// of a fixed subsample by at most √2 in ℓ2 (one vote from one class to
// another, or one vote more while S has fewer than k rows).
func TestKNNSensitivity(t *testing.T) {
	const d, classes = 4, 3
	x, y := knnFixture(60, d, classes, 7)
	q, _ := knnFixture(50, d, classes, 8)
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 200; trial++ {
		k := 1 + rng.IntN(12)
		keep := make([]bool, x.Rows+1)
		for i := range keep {
			keep[i] = rng.Float64() < 0.3
		}
		keep[x.Rows] = true // the added row is in the subsample
		extra := learners.NewMatrix(x.Rows+1, d)
		copy(extra.Data, x.Data)
		for j := 0; j < d; j++ {
			extra.Data[x.Rows*d+j] = float32(rng.NormFloat64() * 2)
		}
		ye := append(slices.Clone(y), int32(rng.IntN(classes)))
		qi := q.Row(trial % q.Rows)
		a := bruteKNN(x, y, qi, k, classes, func(i int) bool { return keep[i] })
		b := bruteKNN(extra, ye, qi, k, classes, func(i int) bool { return keep[i] })
		var l2 float64
		for c := range a {
			t := float64(a[c] - b[c])
			l2 += t * t
		}
		if l2 > knnSens2 {
			t.Fatalf("trial %d: ‖Δvotes‖² = %g > %d", trial, l2, knnSens2)
		}
	}
}

// TestPrivateKNNValidate: the settings private-knn cannot honour are
// refused before any data is read, and its defaults are filled in.
func TestPrivateKNNValidate(t *testing.T) {
	ok := func() Config {
		return Config{Mechanism: MechanismPrivateKNN, Epsilon: 1, Delta: 1e-5, Classes: []string{"0", "1"}}
	}
	tests := []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"valid", func(*Config) {}, true},
		{"explicit sigma", func(c *Config) { c.Params.Sigma = "30" }, true},
		{"student", func(c *Config) { c.Student = "logreg" }, true},
		{"no epsilon", func(c *Config) { c.Epsilon = 0 }, false},
		{"epsilon beyond the orders", func(c *Config) { c.Epsilon = 200 }, false},
		{"no classes", func(c *Config) { c.Classes = nil }, false},
		{"privacy unit: units sampled, one row each", func(c *Config) { c.PrivacyUnit = "user" }, true},
		{"two labels", func(c *Config) { c.Labels = []string{"a", "b"} }, false},
		{"replicable", func(c *Config) { c.Replicable = &Replicable{} }, false},
		{"select uncertain", func(c *Config) { c.Select = SelectUncertain }, false},
		{"another mechanism's noise", func(c *Config) { c.Params.Sigma2 = "30" }, false},
		{"k negative", func(c *Config) { c.Params.KNNK = -1 }, false},
		{"rate above 1", func(c *Config) { c.Params.SampleRate = "1.5" }, false},
		{"rate zero", func(c *Config) { c.Params.SampleRate = "0" }, false},
		{"rate not a number", func(c *Config) { c.Params.SampleRate = "x" }, false},
		{"sigma negative", func(c *Config) { c.Params.Sigma = "-2" }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok()
			tc.edit(&cfg)
			err := privateKNNMechanism{}.validate(&cfg)
			if tc.ok != (err == nil) {
				t.Fatalf("validate: %v, want ok = %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error %v is not an invalid input", err)
			}
			if err == nil {
				p := cfg.Params
				want := int(math.Ceil(rdp.ZCDPOrder(rdp.RhoForEps(cfg.Epsilon, cfg.Delta), cfg.Delta)))
				if p.KNNK != DefaultKNNK || p.SampleRate != DefaultSampleRate || p.MaxOrder != want {
					t.Errorf("completed params %+v, want k %d, γ %s, max order %d", p, DefaultKNNK, DefaultSampleRate, want)
				}
			}
		})
	}
}

// TestPrivateKNNRun: a seeded run labels every public row through the
// engine, spends within its budget, and pate audit re-derives its claim;
// a report edited to understate its cost (a higher γ, a lower σ or
// max order than it ran with, a lower spend) fails the audit.
func TestPrivateKNNRun(t *testing.T) {
	mem, priv, pub, truth := studentFixture(t)
	seed := uint64(11)
	cfg := studentConfig(&seed)
	cfg.Allocator, cfg.Mechanism, cfg.Epsilon = mem, MechanismPrivateKNN, 2
	cfg.Params = MechanismParams{KNNK: 30, SampleRate: "0.2"}
	rep, out := runCollect(t, cfg, priv, pub)
	if rep.Queries.Answered != 400 || rep.Spent.NoisyArgmaxes != 400 {
		t.Fatalf("answered %d (%d argmaxes), want the 400 queries", rep.Queries.Answered, rep.Spent.NoisyArgmaxes)
	}
	hit := 0
	for i, s := range out.sources[:400] {
		if s != SourceTeachers {
			t.Fatalf("row %d: source %q", i, s)
		}
		if out.labels[i] == truth[i] {
			hit++
		}
	}
	if acc := float64(hit) / 400; acc < 0.7 {
		t.Errorf("accuracy %.3f of the answered queries", acc)
	}
	if rep.Params.Sigma == "" || rep.Params.MaxOrder < 2 {
		t.Fatalf("params %+v: σ and max order not planned", rep.Params)
	}
	if res, err := Audit(rep); err != nil || !res.Holds {
		t.Fatalf("audit of the run: %v", err)
	}
	tests := []struct {
		name string
		edit func(*Report)
	}{
		{"rate edited up", func(r *Report) { r.Params.SampleRate = "0.4" }},
		{"sigma edited down", func(r *Report) { r.Params.Sigma = "1" }},
		{"spend understated", func(r *Report) { r.Spent.Rho /= 2 }},
		{"max order edited down", func(r *Report) { r.Params.MaxOrder = 2 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := *rep
			tc.edit(&r)
			if res, err := Audit(&r); err == nil && res.Holds {
				t.Fatal("the edited report passed the audit")
			}
		})
	}
}

// TestPrivateKNNDefaultPlan: a private-knn run that names no queries puts
// as many as keep σ within k/KNNVoteMargin (the largest such count, at
// most half the public rows) and trains the default student on them; with
// an explicit σ every row is a query in order.
func TestPrivateKNNDefaultPlan(t *testing.T) {
	tests := []struct {
		name    string
		in      PlanInputs
		student bool
	}{
		{"adult at ε = 1", PlanInputs{Epsilon: 1, Delta: 1e-5, PublicRows: 16_281, Labels: 1}, true},
		{"adult at ε = 4", PlanInputs{Epsilon: 4, Delta: 1e-5, PublicRows: 16_281, Labels: 1}, true},
		{"k = 30", PlanInputs{Epsilon: 1, Delta: 1e-5, PublicRows: 16_281, Labels: 1, Params: MechanismParams{KNNK: 30}}, true},
		{"few public rows: half of them", PlanInputs{Epsilon: 8, Delta: 1e-5, PublicRows: 41, Labels: 1}, true},
		{"γ = 0.01", PlanInputs{Epsilon: 1, Delta: 1e-5, PublicRows: 100_000, Labels: 1, Params: MechanismParams{SampleRate: "0.01"}}, true},
		{"explicit σ", PlanInputs{Epsilon: 1, Delta: 1e-5, PublicRows: 16_281, Labels: 1, Params: MechanismParams{Sigma: "20"}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Mechanism, tc.in.Classes = MechanismPrivateKNN, []string{"0", "1"} // private-knn needs them declared
			plan := ChoosePlan(tc.in)
			if !tc.student {
				if plan.Student != "" || plan.MaxQueries != 0 {
					t.Fatalf("plan %+v, want the teacher-only stream", plan)
				}
				return
			}
			if plan.Student != DefaultStudent || plan.Select != SelectFirst || plan.MaxQueries < 1 {
				t.Fatalf("plan %+v, want %s student, first rows, some queries", plan, DefaultStudent)
			}
			p := tc.in.Params
			m := privateKNNMechanism{}
			if err := m.setOrder(&p, tc.in.Epsilon, tc.in.Delta); err != nil {
				t.Fatal(err)
			}
			g, _ := knnRate(p.SampleRate)
			rho := rdp.RhoForEps(tc.in.Epsilon, tc.in.Delta)
			sigma := func(n int64) float64 {
				s, err := rdp.PlanSGMRho(rho, int(n), g, knnSens2, p.MaxOrder)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			limit := float64(p.KNNK) / KNNVoteMargin
			n, capped := plan.MaxQueries, (tc.in.PublicRows+1)/2
			if n > capped {
				t.Fatalf("%d queries, more than half the %d public rows", n, tc.in.PublicRows)
			}
			if s := sigma(n); s > limit {
				t.Errorf("%d queries get σ = %g > k/%d = %g", n, s, KNNVoteMargin, limit)
			}
			if n < capped {
				if s := sigma(n + 1); s <= limit {
					t.Errorf("%d queries get σ = %g ≤ %g: the plan stopped one short", n+1, s, limit)
				}
			}
			t.Logf("%d queries, σ = %.4g", n, sigma(n))
		})
	}
}

// TestKNNUnitSampling: with a privacy unit, each query's subsample holds
// one row of each sampled unit, that row uniform among the unit's usable
// rows. 300 units of 1 to 5 rows (row j of a unit of class j, the units'
// rows interleaved in the input), plus a unit without a usable row and a
// row without a unit; k above the units, so that every sampled row votes.
// At γ = 1 every query votes once per unit with a usable row, exactly, and
// the classes' totals match the uniform choice (class c: Σ 1/size over
// the units of more than c rows); at γ = 1/4 a query votes about U/4
// times.
func TestKNNUnitSampling(t *testing.T) {
	const units, classes, d, queries = 300, 5, 3, 400
	var y, un []int32
	for round := 0; round < classes; round++ { // row `round` of every unit that has one
		for u := 0; u < units; u++ {
			if round < 1+u%classes {
				y, un = append(y, int32(round)), append(un, int32(u))
			}
		}
	}
	y, un = append(y, -1, -1, 0), append(un, units, units, -1) // no usable row; no unit
	x, _ := knnFixture(len(y), d, classes, 21)
	q, _ := knnFixture(queries, d, classes, 22)
	var want [classes]float64 // expected votes per query at γ = 1
	var variance float64
	for u := 0; u < units; u++ {
		size := 1 + u%classes
		for c := 0; c < size; c++ {
			p := 1 / float64(size)
			want[c] += p
			variance += p * (1 - p) // a bound on every class's variance
		}
	}
	tests := []struct {
		rate string
		g    float64
	}{{"1", 1}, {"0.25", 0.25}}
	for _, tc := range tests {
		t.Run("γ="+tc.rate, func(t *testing.T) {
			seed := uint64(7)
			l := &Labeler{cfg: Config{Seed: &seed, Params: MechanismParams{KNNK: 2 * units, SampleRate: tc.rate}}}
			v, err := privateKNNMechanism{}.unitLearner(l, x, y, un, classes)
			if err != nil {
				t.Fatal(err)
			}
			v.(batchStarter).startBatch(l, 0)
			counts := make([]int32, queries*classes)
			v.Votes(q, counts)
			var got [classes]float64
			var total float64
			for i := 0; i < queries; i++ {
				n := int32(0)
				for c, k := range counts[i*classes : (i+1)*classes] {
					n += k
					got[c] += float64(k)
				}
				if tc.g == 1 && n != units {
					t.Fatalf("query %d: %d votes, want one of each of the %d units with a usable row", i, n, units)
				}
				total += float64(n)
			}
			if tc.g == 1 {
				for c := range got {
					if sd := math.Sqrt(queries * variance); math.Abs(got[c]-queries*want[c]) > 5*sd {
						t.Errorf("class %d: %g votes, want about %.1f (sd ≤ %.1f): the row a unit gives is not uniform", c, got[c], queries*want[c], sd)
					}
				}
				return
			}
			mean := total / queries
			if sd := math.Sqrt(units * tc.g * (1 - tc.g) / queries); math.Abs(mean-units*tc.g) > 5*sd {
				t.Errorf("%.1f votes per query, want about %g (sd %.2f)", mean, units*tc.g, sd)
			}
			v.(batchStarter).startBatch(l, 0)
			again := make([]int32, len(counts))
			v.Votes(q, again)
			if !slices.Equal(counts, again) {
				t.Error("the same seed and batch drew different subsamples")
			}
		})
	}
}

// withUnits returns r's batches with a privacy-unit column u appended:
// unit(i) for row i ("" for null). The caller releases both readers.
func withUnits(mem memory.Allocator, r *memReader, unit func(i int) string) *memReader {
	schema := arrow.NewSchema(append(r.schema.Fields(), arrow.Field{Name: "u", Type: arrow.BinaryTypes.String, Nullable: true}), nil)
	out := &memReader{schema: schema}
	row := 0
	for _, rec := range r.recs {
		b := array.NewStringBuilder(mem)
		for i := 0; i < int(rec.NumRows()); i, row = i+1, row+1 {
			if u := unit(row); u == "" {
				b.AppendNull()
			} else {
				b.Append(u)
			}
		}
		uc := b.NewArray()
		b.Release()
		out.recs = append(out.recs, array.NewRecord(schema, append(slices.Clone(rec.Columns()), uc), rec.NumRows()))
		uc.Release()
	}
	return out
}

// TestPrivateKNNUnitRun: a seeded private-knn run with a privacy unit
// (units of 1 to 5 rows, a few rows without one) labels every public row
// (its answers, then a student trained on them), with the accuracy of the
// same run without units to within a few points; the report says units
// are sampled, one row each, charges the same ρ per answer as the row run
// (same σ, same spend), and pate audit re-derives its claim. The rows
// without a unit are said by a diagnostic only: the warnings are the row
// run's.
func TestPrivateKNNUnitRun(t *testing.T) {
	mem, priv, pub, truth := studentFixture(t)
	unit := func(i int) string {
		if i%97 == 13 {
			return ""
		}
		// Units of 1 to 5 consecutive rows: sizes 1, 2, 3, 4, 5, 1, ...
		// (15 rows every 5 units).
		b, r := i/15, i%15
		s := 0
		for size := 1; r >= size; size++ {
			r -= size
			s++
		}
		return fmt.Sprintf("patient-%d-%d", b, s)
	}
	upriv := withUnits(mem, priv, unit)
	defer releaseAll(upriv.recs)
	run := func(p *memReader, units bool) (*Report, *collect, []string, []string) {
		seed := uint64(11)
		cfg := studentConfig(&seed)
		cfg.Allocator, cfg.Mechanism, cfg.Epsilon, cfg.Student = mem, MechanismPrivateKNN, 2, "logreg"
		cfg.Params = MechanismParams{KNNK: 30, SampleRate: "0.2"}
		var warned, diagnosed []string
		cfg.Warn = func(m string) { warned = append(warned, m) }
		cfg.Diagnose = func(m string) { diagnosed = append(diagnosed, m) }
		if units {
			cfg.PrivacyUnit = "u"
		}
		t.Setenv("TMPDIR", t.TempDir()) // the student's spool
		p.next, pub.next = 0, 0
		rep, out := runCollect(t, cfg, p, pub)
		return rep, out, warned, diagnosed
	}
	rowRep, rowOut, rowWarned, _ := run(priv, false)
	rep, out, warned, diagnosed := run(upriv, true)
	if rep.Queries.Answered != 400 || rep.Spent.NoisyArgmaxes != 400 {
		t.Fatalf("answered %d (%d argmaxes), want the 400 queries", rep.Queries.Answered, rep.Spent.NoisyArgmaxes)
	}
	accuracy := func(o *collect) float64 {
		hit := 0
		for i, s := range o.sources {
			if want := SourceTeachers; i >= 400 {
				want = SourceStudent
				if s != want {
					t.Fatalf("row %d: source %q, want %q", i, s, want)
				}
			} else if s != want {
				t.Fatalf("row %d: source %q, want %q", i, s, want)
			}
			if o.labels[i] == truth[i] {
				hit++
			}
		}
		return float64(hit) / float64(len(o.sources))
	}
	if len(out.labels) != len(truth) {
		t.Fatalf("%d rows written, want %d", len(out.labels), len(truth))
	}
	acc, rowAcc := accuracy(out), accuracy(rowOut)
	t.Logf("accuracy %.4f with units, %.4f without", acc, rowAcc)
	if acc < 0.7 || acc < rowAcc-0.05 {
		t.Errorf("accuracy %.3f with units, %.3f without", acc, rowAcc)
	}
	if rep.PrivacyUnit != "column u" || !strings.Contains(rep.Noise, "subsample of the privacy units") ||
		!strings.Contains(rep.Noise, "one of its rows") || !strings.Contains(rep.Learner, "one row of each") {
		t.Errorf("the report does not say units are sampled, one row each: unit %q, noise %q, learner %q", rep.PrivacyUnit, rep.Noise, rep.Learner)
	}
	if rep.Params != rowRep.Params || rep.Spent.Rho != rowRep.Spent.Rho || rep.Guarantee != rowRep.Guarantee {
		t.Errorf("the unit run's charge differs from the row run's: params %+v spent ρ %v, row run %+v %v", rep.Params, rep.Spent.Rho, rowRep.Params, rowRep.Spent.Rho)
	}
	if res, err := Audit(rep); err != nil || !res.Holds {
		t.Fatalf("audit of the unit run: %v", err)
	}
	if !slices.Equal(warned, rowWarned) { // warnings come from public figures only
		t.Errorf("warnings %q, the row run's %q", warned, rowWarned)
	}
	if !strings.Contains(strings.Join(diagnosed, "\n"), "rows with a null privacy unit") {
		t.Errorf("diagnostics %q do not say rows without a unit were dropped", diagnosed)
	}
}

// TestPrivateKNNUnitEdgesAreDiagnosticsOnly: private-knn runs with a
// privacy unit on sensitive data whose units are null, all null, one for
// every row, or that has no rows go ahead, warn of nothing, and say what
// they dropped through Diagnose only.
func TestPrivateKNNUnitEdgesAreDiagnosticsOnly(t *testing.T) {
	byRow := func(i int) string { return fmt.Sprintf("p%d", i) }
	half := func(i int) int64 { return int64(i % 2) }
	tests := []struct {
		name string
		n    int
		unit func(int) string
		want string // in the diagnostics
	}{
		{"null privacy units", 90, func(i int) string {
			if i%10 == 0 {
				return ""
			}
			return fmt.Sprintf("p%d", i%7)
		}, "9 rows with a null privacy unit"},
		{"every unit null", 30, func(int) string { return "" }, `no row of the label column "y" holds one of the --classes`},
		{"one unit for every row", 90, func(int) string { return "everyone" }, ""},
		{"a unit per row", 90, byRow, ""},
		{"no rows", 0, byRow, `no row of the label column "y" holds one of the --classes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			priv := edgeRows(mem, tc.n, tc.unit, half)
			defer releaseAll(priv.recs)
			pub := edgeRows(mem, 20, byRow, half)
			defer releaseAll(pub.recs)
			seed := uint64(3)
			cfg := Config{Label: "y", Classes: []string{"0", "1"}, Features: []string{"x"}, Keep: []string{"x"},
				PrivacyUnit: "u", Mechanism: MechanismPrivateKNN, Teachers: 8, Epsilon: 2, Delta: 1e-5, PublicRows: 20, MaxQueries: 4,
				Params: MechanismParams{KNNK: 5, SampleRate: "0.5"}, Seed: &seed, BatchSize: 64, Allocator: mem}
			warned, diagnosed := runEdge(t, cfg, priv, pub)
			if len(warned) > 0 {
				t.Errorf("warnings: %q", warned)
			}
			if d := strings.Join(diagnosed, "\n"); !strings.Contains(d, tc.want) || tc.want == "" && strings.Contains(d, "privacy unit") {
				t.Errorf("diagnostics %q, want %q", diagnosed, tc.want)
			}
		})
	}
}

// TestPrivateKNNNoiseWarning: private-knn's run warns when its noise σ
// exceeds the k neighbours' votes (not the --teachers count, which it
// does not use), and says nothing when σ is within them.
func TestPrivateKNNNoiseWarning(t *testing.T) {
	tests := []struct {
		name       string
		k          int
		maxQueries int64
		want       bool
	}{
		{"k = 30, 400 queries", 30, 400, false},
		{"k = 3, 5000 queries", 3, 5000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem, priv, pub, _ := studentFixture(t)
			seed := uint64(11)
			cfg := studentConfig(&seed)
			cfg.Allocator, cfg.Mechanism, cfg.Epsilon, cfg.MaxQueries = mem, MechanismPrivateKNN, 1, tc.maxQueries
			cfg.Params = MechanismParams{KNNK: tc.k, SampleRate: "0.2"}
			var warned []string
			cfg.Warn = func(m string) { warned = append(warned, m) }
			rep, _ := runCollect(t, cfg, priv, pub)
			got := slices.ContainsFunc(warned, func(m string) bool { return strings.Contains(m, "neighbours' widest vote margin") })
			if got != tc.want || slices.ContainsFunc(warned, func(m string) bool { return strings.Contains(m, "teachers'") }) {
				t.Errorf("σ = %s, k = %d: warnings %q, want the neighbours' one: %v", rep.Params.Sigma, tc.k, warned, tc.want)
			}
		})
	}
}
