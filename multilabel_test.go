package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

// TestLabelMultiAdult is the acceptance run of several label columns:
// Adult with --label income --label sex at ε = 2, δ = 1e-5, fixed seed,
// the first 1,500 public rows queried (as in the single-label
// TestLabelAdultUtility), then the first
// 1,000 (the noise of each label grows by √2 over a single label's at the
// same number of queries; fewer queries buy it back). The run's ε must be the
// accountant's composition of both labels' recorded events (recomputed here
// from the report's noise parameters and counts with label/rdp), the total
// within the --epsilon given, and each label's accuracy on its answered rows
// is logged (true labels: adult_test.parquet row for row; sex is a public
// column, left out of the output with --keep).
func TestLabelMultiAdult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		queries string
		minAcc  float64
	}{{"1500", 0.72}, {"1000", 0.78}} {
		t.Run(tc.queries+" queries", func(t *testing.T) { multiAdult(t, tc.queries, tc.minAcc) })
	}
}

func multiAdult(t *testing.T, queries string, minAcc float64) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	pubSchema, pub := readAll(t, "testdata/adult_public.parquet", mem)
	defer release(pub)
	var keep []string
	for _, f := range pubSchema.Fields() {
		if f.Name != "sex" {
			keep = append(keep, f.Name)
		}
	}
	dir := t.TempDir()
	out, repPath := filepath.Join(dir, "labeled.arrow"), filepath.Join(dir, "report.json")
	code, _, stderr := pate(t, "label", "--private", "testdata/adult_train.parquet", "--label", "income", "--label", "sex",
		"--public", "testdata/adult_public.parquet", "--keep", strings.Join(keep, ","), "--epsilon", "2", "--delta", "1e-5", "--max-queries", queries,
		"--seed", "20261121", "-o", out, "--report", repPath, "--quiet", "--no-ledger")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(repPath)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := label.ParseReport(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Labels) != 2 || rep.Labels[0].Label != "income" || rep.Labels[1].Label != "sex" {
		t.Fatalf("report labels: %+v", rep.Labels)
	}

	checkMultiAdultSpend(t, rep)
	if res, err := label.Audit(rep); err != nil || !res.Holds {
		t.Fatalf("audit: %v", err)
	}
	if code, stdout, stderr := pate(t, "audit", repPath); code != 0 || !strings.Contains(stdout, "label sex:") || !strings.Contains(stdout, "HOLDS") {
		t.Errorf("pate audit: exit %d\n%s%s", code, stdout, stderr)
	}

	// Each label's accuracy on its answered rows.
	schema, labelled := readAll(t, out, mem)
	defer release(labelled)
	n := schema.NumFields()
	if got := []string{schema.Field(n - 3).Name, schema.Field(n - 2).Name, schema.Field(n - 1).Name}; strings.Join(got, ",") != "income,sex,pate_source" {
		t.Fatalf("last output columns %v", got)
	}
	income := nullableInt64(t, labelled, "income")
	sex := nullableString(t, labelled, "sex")
	source := stringColumn(t, labelled, "pate_source")
	_, truthRecs := readAll(t, "testdata/adult_test.parquet", mem)
	defer release(truthRecs)
	trueIncome := int64Column(t, truthRecs, "income")
	trueSex := nullableString(t, pub, "sex")
	var ansI, okI, ansS, okS, both, highI, maleS int
	for i := range source {
		if (source[i] == label.SourceTeachers) != (income[i] != nil || sex[i] != nil) {
			t.Fatalf("row %d: pate_source %s, income %v, sex %v", i, source[i], income[i], sex[i])
		}
		if income[i] != nil {
			ansI++
			if *income[i] == trueIncome[i] {
				okI++
			}
			if trueIncome[i] == 1 {
				highI++
			}
		}
		if sex[i] != nil {
			ansS++
			if trueSex[i] != nil && *sex[i] == *trueSex[i] {
				okS++
			}
			if trueSex[i] != nil && *trueSex[i] == "Male" {
				maleS++
			}
		}
		if income[i] != nil && sex[i] != nil {
			both++
		}
	}
	if int64(ansI) != rep.Labels[0].Answered || int64(ansS) != rep.Labels[1].Answered {
		t.Errorf("answered in the output %d, %d; in the report %d, %d", ansI, ansS, rep.Labels[0].Answered, rep.Labels[1].Answered)
	}
	accI, accS := float64(okI)/float64(ansI), float64(okS)/float64(ansS)
	t.Logf("Adult income+sex, ε = 2 (spent %.6f improved, %.6f classic; ρ income %.6g + sex %.6g + discovery), %d queries put, stopped on budget %v at row %d",
		float64(rep.Spent.EpsilonImproved), float64(rep.Spent.EpsilonClassic), float64(rep.Labels[0].Rho), float64(rep.Labels[1].Rho),
		rep.Queries.Seen, rep.Budget.StoppedOn, rep.Budget.StoppedAtRow)
	// The majority class of the answered rows is what a constant guess
	// would score on them.
	majI := math.Max(float64(highI), float64(ansI-highI)) / float64(ansI)
	majS := math.Max(float64(maleS), float64(ansS-maleS)) / float64(ansS)
	t.Logf("income: σ1 %s σ2 %s T %d: %d answered, accuracy %.4f (majority class of those rows %.4f)", rep.Labels[0].Params.Sigma1, rep.Labels[0].Params.Sigma2,
		rep.Labels[0].Params.Threshold, ansI, accI, majI)
	t.Logf("sex:    σ1 %s σ2 %s T %d: %d answered, accuracy %.4f (majority class of those rows %.4f)", rep.Labels[1].Params.Sigma1, rep.Labels[1].Params.Sigma2,
		rep.Labels[1].Params.Threshold, ansS, accS, majS)
	t.Logf("rows with both labels %d, with at least one %d, of %d", both, rep.Queries.Answered, len(source))
	if accI < minAcc || accS < minAcc {
		t.Errorf("answered-row accuracy income %.4f, sex %.4f: below %g", accI, accS, minAcc)
	}
}

func parseF(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

func column(t *testing.T, recs []arrow.Record, name string) []arrow.Array {
	t.Helper()
	var out []arrow.Array
	for _, rec := range recs {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("no column %q", name)
		}
		out = append(out, rec.Column(idx[0]))
	}
	return out
}

func nullableInt64(t *testing.T, recs []arrow.Record, name string) []*int64 {
	return nullable[int64, *array.Int64](t, recs, name)
}

func nullableString(t *testing.T, recs []arrow.Record, name string) []*string {
	return nullable[string, *array.String](t, recs, name)
}

// nullable returns the values of column name, nil where null.
func nullable[T any, A interface {
	arrow.Array
	Value(int) T
}](t *testing.T, recs []arrow.Record, name string) []*T {
	var out []*T
	for _, c := range column(t, recs, name) {
		a := c.(A)
		for i := 0; i < a.Len(); i++ {
			if a.IsNull(i) {
				out = append(out, nil)
			} else {
				v := a.Value(i)
				out = append(out, &v)
			}
		}
	}
	return out
}

// TestLabelSingleLabelDatasets: breast_cancer and digits (10 classes), one
// label column each, run through pate label on the single-label path: the
// report has no per-label section, the audit holds, and the answered-row
// accuracy is logged. The public rows are the sensitive file itself (the
// only copy of these data sets in testdata), so the accuracy is that of
// teachers labelling rows some of them were trained on (--teachers-only:
// the teachers' answers, not a student's).
func TestLabelSingleLabelDatasets(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		minAcc float64
	}{
		{"breast_cancer", []string{"--private", "testdata/breast_cancer.parquet", "--public", "testdata/breast_cancer.parquet",
			"--features", "mean_radius,mean_texture,mean_perimeter,mean_area,worst_radius,worst_concave_points", "--teachers", "10",
			"--epsilon", "8", "--max-queries", "100", "--classes", "0,1"}, 0.65},
		{"digits", []string{"--private", "testdata/digits.parquet", "--public", "testdata/digits.parquet",
			"--teachers", "20", "--epsilon", "8", "--max-queries", "200", "--classes", "0,1,2,3,4,5,6,7,8,9", "--learner", "nb"}, 0.4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			dir := t.TempDir()
			out, repPath := filepath.Join(dir, "out.arrow"), filepath.Join(dir, "report.json")
			args := append([]string{"label", "--label", "label", "--keep", "", "--delta", "1e-5", "--seed", "9",
				"--teachers-only", "-o", out, "--report", repPath, "--quiet", "--no-ledger"}, tc.args...)
			code, _, stderr := pate(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(repPath)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]json.RawMessage
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw["labels"]; ok {
				t.Error("a single-label report has a per-label section")
			}
			rep, err := label.ParseReport(b)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := label.Audit(rep); err != nil || !res.Holds {
				t.Fatalf("audit: %v", err)
			}
			_, labelled := readAll(t, out, mem)
			defer release(labelled)
			_, truthRecs := readAll(t, "testdata/"+tc.name+".parquet", mem)
			defer release(truthRecs)
			got, truth := nullableInt64(t, labelled, "label"), int64Column(t, truthRecs, "label")
			ans, ok := 0, 0
			for i := range got {
				if got[i] != nil {
					ans++
					if *got[i] == truth[i] {
						ok++
					}
				}
			}
			acc := float64(ok) / float64(ans)
			t.Logf("%s: %d rows, %d queries, %d answered, accuracy %.4f; ε %g (spent %g), parameters %+v",
				tc.name, len(got), rep.Queries.Seen, ans, acc, float64(rep.Guarantee.Epsilon), float64(rep.Spent.EpsilonImproved), rep.Params)
			if int64(ans) != rep.Queries.Answered || acc < tc.minAcc {
				t.Errorf("answered %d (report %d), accuracy %.4f (want ≥ %g)", ans, rep.Queries.Answered, acc, tc.minAcc)
			}
		})
	}
}

// checkMultiAdultSpend composes both labels' events by the accountant: the
// RDP curves of every threshold check, noisy argmax and class discovery,
// added, converted at δ minus the discoveries' δ (the improved conversion at
// the best order, or the zCDP conversion of the total ρ when smaller, as the
// report does), and holds the report's figures to it.
func checkMultiAdultSpend(t *testing.T, rep *label.Report) {
	t.Helper()
	const delta = 1e-5
	orders := rdp.DefaultOrders()
	acc := rdp.NewAccountant(orders)
	var rho, discDelta float64
	for _, l := range rep.Labels {
		s1, s2 := parseF(t, l.Params.Sigma1), parseF(t, l.Params.Sigma2)
		acc.AddScaled(rdp.ThresholdRDP(s1, orders), float64(l.ThresholdChecks))
		acc.AddScaled(rdp.GaussianRDP(s2, orders), float64(l.NoisyArgmaxes))
		rho += float64(l.ThresholdChecks)*rdp.ThresholdRho(s1) + float64(l.NoisyArgmaxes)*rdp.GNMaxRho(s2)
		if d := l.ClassDiscovery; d != nil {
			sd := parseF(t, d.Sigma)
			acc.AddScaled(rdp.ThresholdRDP(sd, orders), 1) // one count per unit: sensitivity 1
			rho += rdp.ThresholdRho(sd)
			discDelta += float64(d.Delta)
		}
		if l.ThresholdChecks != rep.Queries.Seen {
			t.Errorf("%s: %d threshold checks for %d queries: every query is put to every label", l.Label, l.ThresholdChecks, rep.Queries.Seen)
		}
	}
	if err := acc.Err(); err != nil {
		t.Fatal(err)
	}
	eps, _ := acc.EpsImproved(delta - discDelta)
	eps = rdp.RoundUp(math.Min(eps, rdp.ZCDPEps(rho, delta-discDelta)), 6)
	if math.Abs(rho-float64(rep.Spent.Rho)) > 1e-12*rho {
		t.Errorf("report's ρ %.15g, composition of both labels' events %.15g", float64(rep.Spent.Rho), rho)
	}
	if math.Abs(eps-float64(rep.Spent.EpsilonImproved)) > 2e-6 {
		t.Errorf("report's ε %.6f, the accountant's composition of both labels' events %.6f", float64(rep.Spent.EpsilonImproved), eps)
	}
	if g := float64(rep.Guarantee.Epsilon); g > 2 || float64(rep.Spent.EpsilonImproved) > g {
		t.Errorf("guarantee ε %g, spent %g: the total must stay within --epsilon 2", g, float64(rep.Spent.EpsilonImproved))
	}
}
