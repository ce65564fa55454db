package label

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/internal/fdp"
	"github.com/pate-tool/pate/label/noise"
)

// Trade-off audits (f-DP, Dong–Roth–Su; Nasr et al. 2023): each runs the
// real mechanism code, seeded, many times on a worst-case pair of
// neighbouring inputs, counts the errors of a test fixed in advance (at
// moderate rates, where 10⁵–10⁶ runs give tight intervals), and fails when
// the Clopper–Pearson upper point (FPR, FNR) lies strictly below the
// trade-off curve implied by the privacy the accountant claims. The claim is
// read from the accountant's own fields (aggregator.rhoAnswer, rhoCheck,
// epsAnswer, svtState.rho, labelData.discoveryRho, svtFailureDelta):
// understate one of them, or shrink the noise, and the audit fails
// (.ci/mutation.sh lists the few understatements no audit can see, and why).
//
// A zCDP claim ρ is checked against the curve every ρ-zCDP mechanism obeys
// (fdp.ZCDP: the binary Rényi bound at every order), not against the
// Gaussian-DP curve G_√(2ρ): the discrete Gaussian's integer threshold tests
// fall slightly below G_{Δ/σ} (by about 1/(24σ²) in μ), so μ = √(2ρ) is not
// a valid reading of a discrete Gaussian's ρ at small σ.

// tradeoffFamilyError is the chance, over every check of one test, that an
// honest mechanism fails (Bonferroni over the checks and the two bounds of
// each).
const tradeoffFamilyError = 1e-6

// tradeoffRuns is the number of runs on each neighbour: PATE_AUDIT_RUNS
// when set (the mutation check's short mode sets 100,000); 10⁶ when
// PATE_AUDIT_FULL=1 (.ci/run and .ci/mutation.sh set it: the count that
// catches a halved ρ); else 40,000, enough for an honest run to pass and to
// catch a gross error in the time a newcomer waits for `go test ./...`; or
// 20,000 under the race detector.
func tradeoffRuns() int {
	if s := os.Getenv("PATE_AUDIT_RUNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	if raceEnabled {
		return 20_000
	}
	if os.Getenv("PATE_AUDIT_FULL") == "1" && !testing.Short() {
		return 1_000_000
	}
	return 40_000
}

// countRuns runs n trials on GOMAXPROCS goroutines and returns how many
// returned true. newTrial builds one goroutine's state (its own aggregator:
// they are not safe for concurrent use) and returns the trial, which gets a
// distinct seed each time; base keeps the seeds of different inputs apart.
func countRuns(n int, base uint64, newTrial func() func(seed uint64) bool) int {
	workers := max(1, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	counts := make([]int, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			trial := newTrial()
			for i := w; i < n; i += workers {
				if trial(base<<40 | uint64(i)) {
					counts[w]++
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, c := range counts {
		total += c
	}
	return total
}

// tradeoffCheck is one audited test: FP false positives among n runs on d0
// (the test says "d1"), FN false negatives among n runs on d1.
type tradeoffCheck struct {
	mechanism string
	claim     string                         // the claim, for the log and the table
	curve     fdp.Curve                      // the trade-off curve it implies
	claimed   float64                        // the claimed parameter (ρ, ε or δ)
	lower     func(fpr, fnr float64) float64 // the least parameter consistent with a test
	point     fdp.Point
}

// verify fails t when the check's upper point is below the claimed curve,
// and logs one "fdp-audit" line (read by .ci/mutation.sh).
func (c tradeoffCheck) verify(t *testing.T, checks int) {
	t.Helper()
	level := tradeoffFamilyError / float64(2*checks)
	fpr, fnr := c.point.Upper(level)
	lb := c.lower(fpr, fnr)
	pass := !c.point.Violates(c.curve, level)
	t.Logf("fdp-audit | %s | %s = %.4g | %.4g | %v | FPR ≤ %.4f, FNR ≤ %.4f (%d/%d, %d/%d), curve there %.4f",
		c.mechanism, c.claim, c.claimed, lb, pass, fpr, fnr, c.point.FP, c.point.N0, c.point.FN, c.point.N1, c.curve(fpr))
	if !pass {
		t.Errorf("%s: the test does better than %s = %g allows: FNR ≤ %.4f below the claimed curve %.4f at FPR ≤ %.4f (audited lower bound %.4g)",
			c.mechanism, c.claim, c.claimed, fnr, c.curve(fpr), fpr, lb)
	}
}

func zcdpCheck(mech string, rho float64, p fdp.Point) tradeoffCheck {
	return tradeoffCheck{mechanism: mech, claim: "ρ", curve: fdp.ZCDP(rho), claimed: rho, lower: fdp.RhoLowerBound, point: p}
}

func pureCheck(mech string, eps float64, p fdp.Point) tradeoffCheck {
	return tradeoffCheck{mechanism: mech, claim: "ε", curve: fdp.Pure(eps), claimed: eps,
		lower: func(a, b float64) float64 { return fdp.EpsLowerBound(a, b, 0) }, point: p}
}

// aggregatorTrial returns a trial that runs one query of a fresh copy of
// the mechanism on counts, noise seeded by the trial's seed, and reports
// whether pred holds of the outcome. width > 0 makes the query replicable
// (replicable rounding on that grid, drawn after the noise as a run does):
// post-processing, so the plain mechanism's claim must still hold.
func aggregatorTrial(t *testing.T, kind string, classes int, p MechanismParams, width float64, counts []int32, pred func(label int, o outcome) bool) func() func(uint64) bool {
	return func() func(uint64) bool {
		a, err := newAggregator(kind, classes, p)
		if err == nil && width > 0 {
			a.round, err = newRounding(a, p, width, nil)
		}
		if err != nil {
			t.Error(err)
			return func(uint64) bool { return false }
		}
		check, answer := make([]int64, 1), make([]int64, classes)
		var b unlimited
		return func(seed uint64) bool {
			src := noise.NewSeededSource(seed, 99)
			if a.svt != nil {
				a.svt.src, a.svt.active = src, false
			}
			a.noiseFor(src, check, answer)
			var rd *roundDraw
			if a.round != nil {
				d := a.round.draw(src)
				rd = &d
			}
			j, o := a.query(counts, check[0], answer, rd, &b)
			return pred(j, o)
		}
	}
}

func replicable(width float64) string {
	if width > 0 {
		return fmt.Sprintf(", replicable grid %g", width)
	}
	return ""
}

// claimOf builds the mechanism as a run would and returns it: its fields
// are the accountant's claim.
func claimOf(t *testing.T, kind string, classes int, p MechanismParams) *aggregator {
	t.Helper()
	a, err := newAggregator(kind, classes, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// runPair counts the false positives of reject on d0 and its false
// negatives on d1.
func runPair(t *testing.T, n int, kind string, classes int, p MechanismParams, width float64, d0, d1 []int32, reject func(int, outcome) bool) fdp.Point {
	fp := countRuns(n, 1, aggregatorTrial(t, kind, classes, p, width, d0, reject))
	accept := func(j int, o outcome) bool { return !reject(j, o) }
	fn := countRuns(n, 2, aggregatorTrial(t, kind, classes, p, width, d1, accept))
	return fdp.Point{FP: fp, N0: n, FN: fn, N1: n}
}

// TestTradeoffGNMax: two top classes tied (d0) against one vote moved from
// the first to the second (d1); the test says d1 when the second class is
// released. Its point lies on the noisy argmax's exact trade-off curve
// (the statistic is Z₁ − Z₀, shifted by 2), at FPR about 0.4 and 0.3.
func TestTradeoffGNMax(t *testing.T) {
	cases := []struct {
		name    string
		classes int
		sigma   string
		width   float64
		d0, d1  []int32
	}{
		{"two classes", 2, "1.5", 0, []int32{40, 40}, []int32{39, 41}},
		{"three classes, third far below", 3, "2", 0, []int32{40, 40, 0}, []int32{39, 41, 0}},
		{"replicable, two classes", 2, "1.5", 2, []int32{40, 40}, []int32{39, 41}},
	}
	n := tradeoffRuns()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := MechanismParams{Sigma: tc.sigma}
			a := claimOf(t, MechanismGNMax, tc.classes, p)
			pt := runPair(t, n, MechanismGNMax, tc.classes, p, tc.width, tc.d0, tc.d1,
				func(j int, o outcome) bool { return o == outAnswered && j == 1 })
			zcdpCheck("gnmax σ="+tc.sigma+replicable(tc.width), a.rhoAnswer, pt).verify(t, 1)
		})
	}
}

// TestTradeoffThreshold audits confident-GNMax's threshold step: the top
// vote sits one and two below the threshold T (d0) against one more vote
// (d1); the test says d1 when the query is answered. The argmax noise is
// large (σ₂ = 10σ₁) so the claim, ρ_check + ρ_answer of the whole query,
// is mostly the threshold's, and halving ρ_check shows.
func TestTradeoffThreshold(t *testing.T) {
	n := tradeoffRuns()
	p := MechanismParams{Threshold: 60, Sigma1: "1.5", Sigma2: "15"}
	a := claimOf(t, MechanismConfidentGNMax, 2, p)
	for _, tc := range []struct {
		below int32
		width float64
	}{{1, 0}, {2, 0}, {1, 1}} {
		t.Run(fmt.Sprintf("top %d below T, replicable grid %g", tc.below, tc.width), func(t *testing.T) {
			top := int32(p.Threshold) - tc.below
			pt := runPair(t, n, MechanismConfidentGNMax, 2, p, tc.width, []int32{top, 1}, []int32{top + 1, 0},
				func(_ int, o outcome) bool { return o == outAnswered })
			zcdpCheck("confident-gnmax threshold σ1=1.5"+replicable(tc.width), a.rhoPerQuery(), pt).verify(t, 3)
		})
	}
}

// TestTradeoffLNMax: as for GNMax, with the discrete Laplace; the test
// sits two and three steps into the tail of L₁ − L₀, where the argmax's
// privacy loss approaches the claimed 2/b.
func TestTradeoffLNMax(t *testing.T) {
	n := tradeoffRuns()
	p := MechanismParams{LaplaceScale: "1"}
	a := claimOf(t, MechanismLNMax, 2, p)
	for _, tc := range []struct {
		gap   int32
		width float64
	}{{2, 0}, {3, 0}, {2, 1}} {
		t.Run(fmt.Sprintf("gap %d, replicable grid %g", tc.gap, tc.width), func(t *testing.T) {
			d0 := []int32{40 + tc.gap, 40}
			d1 := []int32{40 + tc.gap - 1, 41}
			pt := runPair(t, n, MechanismLNMax, 2, p, tc.width, d0, d1,
				func(j int, o outcome) bool { return o == outAnswered && j == 1 })
			pureCheck("lnmax b=1"+replicable(tc.width), a.epsAnswer, pt).verify(t, 3)
		})
	}
}

// TestTradeoffSVTFailure audits svt's distance-0 failure: a histogram of
// distance 0 whose majority is class 0 (d0) against its neighbour whose
// majority is class 1 (d1). Releasing class 0 never happens on d1, so the
// test "class 0 released" has FPR 0 and its FNR bounds the failure
// probability from below; the claim of one query in one instance is
// (ε0, δ) with δ = svtFailureDelta(1 query, 1 instance). That δ is a union
// bound, min over a of Pr[η ≤ −a] + Pr[ν ≥ w − a + 1], against the true
// Pr[ν − η ≥ w + 1]: at ε0 = 0.5, w = 2 it is about twice the truth (a
// quartered claim is caught, a halved one is not); the ratio is largest
// when the noise is wide against w (w·ε0 ≈ 0.9): at ε0 = 0.02, w = 45 the
// truth is 0.4253 against the claimed 0.8192, so a halved claim (0.4096)
// falls 0.0157 below what the runs show, about six standard errors at
// 10⁶ runs (two at 10⁵, -short).
func TestTradeoffSVTFailure(t *testing.T) {
	n := tradeoffRuns()
	cases := []MechanismParams{
		{SVTEpsilon0: "0.5", SVTThreshold: 2},
		{SVTEpsilon0: "0.02", SVTThreshold: 45},
	}
	d0, d1 := []int32{41, 40}, []int32{40, 41}
	for _, h := range [][]int32{d0, d1} {
		if _, d := distanceToInstability(h); d != 0 {
			t.Fatalf("%v has distance %d, want 0", h, d)
		}
	}
	for _, p := range cases {
		t.Run(fmt.Sprintf("ε0 %s, w %d", p.SVTEpsilon0, p.SVTThreshold), func(t *testing.T) {
			a := claimOf(t, MechanismSVT, 2, p)
			delta, err := svtFailureDelta(p, 1, 1)
			if err != nil {
				t.Fatal(err)
			}
			pt := runPair(t, n, MechanismSVT, 2, p, 0, d1, d0, func(j int, o outcome) bool { return o == outAnswered && j == 0 })
			eps := a.epsAnswer
			c := tradeoffCheck{mechanism: fmt.Sprintf("svt failure δ (ε0=%s, w=%d)", p.SVTEpsilon0, p.SVTThreshold), claim: "δ",
				curve: fdp.Approx(eps, delta), claimed: delta,
				lower: func(fpr, fnr float64) float64 { return math.Max(0, 1-fnr-math.Exp(eps)*fpr) }, point: pt}
			c.verify(t, len(cases))
		})
	}
}

// svtStopTrial returns a trial that puts the histograms to one fresh
// sparse-vector instance, in order, and reports whether pred holds of the
// position of the query that ended it (len(hists) when none did).
func svtStopTrial(t *testing.T, p MechanismParams, hists [][]int32, pred func(stop int) bool) func() func(uint64) bool {
	return func() func(uint64) bool {
		a, err := newAggregator(MechanismSVT, 2, p)
		if err != nil {
			t.Error(err)
			return func(uint64) bool { return false }
		}
		var b unlimited
		return func(seed uint64) bool {
			a.svt.src, a.svt.active = noise.NewSeededSource(seed, 99), false
			for i, h := range hists {
				if _, o := a.query(h, 0, nil, nil, &b); o != outAnswered {
					return pred(i)
				}
			}
			return pred(len(hists))
		}
	}
}

// TestTradeoffSVTInstance audits one sparse-vector instance (AboveThreshold,
// ε0-DP). One query cannot show much of ε0 (its distance moves by one
// against query noise of scale 4/ε0: at most ε0/4), so the instance gets k
// queries: on d0 each has distance w; on d1 the first k − 1 have distance
// w + 1 and the last w − 1 (one teacher's vote moved on each: [42 40]
// against [43 39] and [41 41], w = 1). The test says d1 when the instance
// ends exactly at the last query: the earlier queries pass more easily on d1
// whatever the threshold noise η, and the last fails more easily, which is
// the proof's worst case (shift η by one, the last query by two). Exact
// rates at ε0 = 2, k = 5: FPR 0.0234, FNR 0.888, a privacy loss of 1.57 of
// the claimed 2; at ε0 = 1, k = 6: 0.0185, 0.956, 0.87 of 1.
//
// The same point is checked against the instance's zCDP charge ρ = ε0²/2
// (svtState.rho), for soundness only: the exact rates above allow ρ ≥ 0.214
// (ε0 = 2) and 0.054 (ε0 = 1), and no test on the instances searched does
// much better: over every instance of up to 8 queries (d0: one distance
// within 3 of w, w = 1, 2, 4; d1: each moved by ±1), and structured ones of
// up to 20, the largest Rényi divergence of the whole stopping time, per
// order, is 0.23 at ε0 = 2 and 0.056 at ε0 = 1 — below even a halved
// charge (1.0 and 0.25). An understated ρ of that size is beyond any sample
// size; an understated ε0 is not.
func TestTradeoffSVTInstance(t *testing.T) {
	n := tradeoffRuns()
	cases := []struct {
		eps0 string
		k    int
	}{{"2", 5}, {"1", 6}}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("ε0 %s, %d queries", tc.eps0, tc.k), func(t *testing.T) {
			p := MechanismParams{SVTEpsilon0: tc.eps0, SVTThreshold: 1}
			a := claimOf(t, MechanismSVT, 2, p)
			var d0, d1 [][]int32
			for i := range tc.k {
				d0 = append(d0, []int32{42, 40})
				if i < tc.k-1 {
					d1 = append(d1, []int32{43, 39})
				} else {
					d1 = append(d1, []int32{41, 41})
				}
			}
			for i := range d0 {
				_, x0 := distanceToInstability(d0[i])
				_, x1 := distanceToInstability(d1[i])
				if x0 != p.SVTThreshold || x1-x0 != map[bool]int64{true: 1, false: -1}[i < tc.k-1] {
					t.Fatalf("query %d: distances %d, %d", i, x0, x1)
				}
			}
			last := func(stop int) bool { return stop == tc.k-1 }
			fp := countRuns(n, 1, svtStopTrial(t, p, d0, last))
			fn := n - countRuns(n, 2, svtStopTrial(t, p, d1, last))
			pt := fdp.Point{FP: fp, N0: n, FN: fn, N1: n}
			name := fmt.Sprintf("svt instance ε0=%s, %d queries", tc.eps0, tc.k)
			pureCheck(name, a.epsAnswer, pt).verify(t, 2*len(cases))
			zcdpCheck(name, a.svt.rho, pt).verify(t, 2*len(cases))
		})
	}
}

// TestTradeoffClassDiscovery runs the real private class discovery. Each
// of its runs releases many values at once, each with its own noise draw
// compared with a threshold fixed by σ and δ alone: the values "v000",
// "v001", … are all held by τ − 1 (or τ − 2) units in d0 and by one unit
// more in d1, so each value's release is an independent copy of the
// experiment "one unit more holds this value" (its marginal is the same as
// on the true neighbour that moves only that value), and one run gives
// edgeValues samples; the runs are few because each run plans its σ from
// the budget. The test says d1 when the value is released; the claim is the
// run's discovery ρ (labelData.discoveryRho).
func TestTradeoffClassDiscovery(t *testing.T) {
	const edgeValues = 1000
	runs := tradeoffRuns() / edgeValues
	cfg := Config{Epsilon: 25, Delta: 1e-5}
	field := arrow.Field{Name: "y", Type: arrow.BinaryTypes.String}
	discover := func(count int, seed uint64) (*labelData, error) {
		counts := make(map[string]int64, edgeValues) // every unit holds one value
		for v := range edgeValues {
			counts[fmt.Sprintf("v%03d", v)] = int64(count)
		}
		c := cfg
		c.Seed = &seed
		l := &Labeler{cfg: c, labelFields: []arrow.Field{field}}
		ld := &labelData{name: field.Name, field: field}
		return ld, l.discoverClasses(ld, 0, counts)
	}
	probe, err := discover(1000, 1)
	if err != nil {
		t.Fatal(err)
	}
	tau := int(probe.discovery.Threshold)
	for _, below := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d below the threshold", below), func(t *testing.T) {
			// kept counts the released values of runs with count units per value.
			kept := func(count int, base uint64) int {
				var mu sync.Mutex
				total := 0
				countRuns(runs, base, func() func(uint64) bool {
					return func(seed uint64) bool {
						ld, err := discover(count, seed)
						if err != nil {
							t.Error(err)
							return false
						}
						mu.Lock()
						total += len(ld.classes.values)
						mu.Unlock()
						return true
					}
				})
				return total
			}
			n := runs * edgeValues
			fp := kept(tau-below, 1)
			fn := n - kept(tau-below+1, 2)
			zcdpCheck(fmt.Sprintf("class discovery σ=%s", probe.discovery.Sigma), probe.discoveryRho,
				fdp.Point{FP: fp, N0: n, FN: fn, N1: n}).verify(t, 2)
		})
	}
}

// e2eData is a tiny sensitive file (one feature, equal to 0 on every row;
// label 0 on zeros rows, label 1 on ones rows) and a public file of one row
// with the same feature.
func e2eData(mem memory.Allocator, zeros, ones int) (priv, pub *memReader) {
	ps := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "label", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(mem, ps)
	defer b.Release()
	for i := range zeros + ones {
		b.Field(0).(*array.Float64Builder).Append(0)
		b.Field(1).(*array.Int64Builder).Append(int64(btoi(i >= zeros)))
	}
	priv = &memReader{schema: ps, recs: []arrow.Record{b.NewRecord()}}
	us := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	ub := array.NewRecordBuilder(mem, us)
	defer ub.Release()
	ub.Field(0).(*array.Float64Builder).Append(0)
	pub = &memReader{schema: us, recs: []arrow.Record{ub.NewRecord()}}
	return priv, pub
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTradeoffEndToEnd runs the whole labelling pipeline (New, Run: read,
// partition, train, vote, noise, release) on two neighbouring sensitive
// files: D0 has k rows labelled 0 and k labelled 1, D1 one more row
// labelled 1. One teacher (naive Bayes; every row has the same feature)
// votes the majority, so the one row moves the histogram from (1, 0) to
// (0, 1); GNMax with σ = 1.5 releases the label of one public row. The test
// says D1 when the released label is 1. The claim is the run's own report:
// its spent ρ (the whole run: one query, public classes). This checks the
// report's figure against the released column for a one-query run; it
// cannot see accounting that is only wrong over many queries.
//
// Each run costs milliseconds, so the default sample (5,000 runs a side)
// catches a fourfold error only; PATE_AUDIT_E2E_RUNS raises it (the
// mutation check uses 30,000, enough for a twofold error in ρ).
func TestTradeoffEndToEnd(t *testing.T) {
	n := tradeoffRuns() / 200
	if v := os.Getenv("PATE_AUDIT_E2E_RUNS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("PATE_AUDIT_E2E_RUNS=%q: want a positive integer", v)
		}
	}
	const k = 3
	cfg := Config{Label: "label", Classes: []string{"0", "1"}, Features: []string{"x"}, Teachers: 1, Learner: "nb",
		Mechanism: MechanismGNMax, Params: MechanismParams{Sigma: "1.5"}, Delta: 1e-5, PublicRows: 1, BatchSize: 64}
	var (
		mu  sync.Mutex
		rho float64
	)
	run := func(ones int) func() func(uint64) bool {
		return func() func(uint64) bool {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			priv, pub := e2eData(mem, k, ones)
			t.Cleanup(func() {
				priv.release()
				pub.release()
				mem.AssertSize(t, 0)
			})
			return func(seed uint64) bool {
				if t.Failed() {
					return false
				}
				c := cfg
				c.Seed, c.Allocator = &seed, mem
				priv.next, pub.next = 0, 0
				l, err := New(c, priv.schema, pub.schema)
				if err != nil {
					t.Error(err)
					return false
				}
				var out collect
				rep, err := l.Run(context.Background(), priv, pub, &out)
				if err != nil || len(out.labels) != 1 {
					t.Errorf("run: %v (%d labels)", err, len(out.labels))
					return false
				}
				mu.Lock()
				rho = max(rho, float64(rep.Spent.Rho))
				mu.Unlock()
				return out.labels[0] == 1
			}
		}
	}
	fp := countRuns(n, 1, run(k))
	fn := n - countRuns(n, 2, run(k+1))
	if t.Failed() {
		return
	}
	zcdpCheck("end to end: gnmax σ=1.5, one query", rho, fdp.Point{FP: fp, N0: n, FN: fn, N1: n}).verify(t, 1)
}

// TestTradeoffAuditHasPower is the in-suite negative control (the full one
// is .ci/mutation.sh): the audits above, with the claim read from a
// mechanism whose ρ is half the sampled one's (ε half, for LNMax), must
// fail.
func TestTradeoffAuditHasPower(t *testing.T) {
	n := tradeoffRuns()
	gnmaxWins := func(j int, o outcome) bool { return o == outAnswered && j == 1 }
	cases := []struct {
		name           string
		kind           string
		claim, sampled MechanismParams
		d0, d1         []int32
		reject         func(int, outcome) bool
		check          func(a *aggregator, p fdp.Point) tradeoffCheck
	}{
		{"gnmax, ρ halved", MechanismGNMax, MechanismParams{Sigma: "2.13"}, MechanismParams{Sigma: "1.5"},
			[]int32{40, 40}, []int32{39, 41}, gnmaxWins,
			func(a *aggregator, p fdp.Point) tradeoffCheck { return zcdpCheck("gnmax", a.rhoAnswer, p) }},
		{"threshold, ρ halved", MechanismConfidentGNMax,
			MechanismParams{Threshold: 60, Sigma1: "2.13", Sigma2: "15"}, MechanismParams{Threshold: 60, Sigma1: "1.5", Sigma2: "15"},
			[]int32{59, 1}, []int32{60, 0}, func(_ int, o outcome) bool { return o == outAnswered },
			func(a *aggregator, p fdp.Point) tradeoffCheck {
				return zcdpCheck("threshold", a.rhoPerQuery(), p)
			}},
		{"lnmax, ε halved", MechanismLNMax, MechanismParams{LaplaceScale: "2"}, MechanismParams{LaplaceScale: "1"},
			[]int32{42, 40}, []int32{41, 41}, gnmaxWins,
			func(a *aggregator, p fdp.Point) tradeoffCheck { return pureCheck("lnmax", a.epsAnswer, p) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pt := runPair(t, n, tc.kind, 2, tc.sampled, 0, tc.d0, tc.d1, tc.reject)
			c := tc.check(claimOf(t, tc.kind, 2, tc.claim), pt)
			level := tradeoffFamilyError / 2
			fpr, fnr := pt.Upper(level)
			t.Logf("%s: claim %g, audited lower bound %.4g", tc.name, c.claimed, c.lower(fpr, fnr))
			if !pt.Violates(c.curve, level) {
				t.Errorf("the audit missed %s: FPR ≤ %.4f, FNR ≤ %.4f, curve %.4f", tc.name, fpr, fnr, c.curve(fpr))
			}
		})
	}
}
