package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/replicate"
)

// TestReplicate: shared randomness couples the runs on two halves of the
// sensitive data, so their labels differ far less often than with
// independent randomness; on Adult (income, ε = 2) --replicable lowers the
// shared-seed disagreement further (fixed seeds); breast_cancer and digits
// (10 classes) run too, with --replicable. The logged figures are the
// README's.
func TestReplicate(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("trains teachers 8 times per case")
	}
	tests := []struct {
		name          string
		args          []string
		wantReplicate bool // --replicable must lower the shared-seed disagreement
	}{
		{"adult", []string{"--private", "testdata/adult_train.parquet", "--label", "income", "--public", "testdata/adult_test.parquet", "--truth", "income",
			"--epsilon", "2", "--delta", "1e-5", "--classes", "0,1", "--max-queries", "1500"}, true},
		{"breast_cancer", []string{"--private", "testdata/breast_cancer.parquet", "--label", "label", "--public", "testdata/breast_cancer.parquet", "--truth", "label",
			"--features", "mean_radius,mean_texture,mean_perimeter,mean_area,worst_radius,worst_concave_points", "--teachers", "10",
			"--epsilon", "2", "--delta", "1e-5", "--classes", "0,1"}, false},
		{"digits", []string{"--private", "testdata/digits.parquet", "--label", "label", "--public", "testdata/digits.parquet", "--truth", "label",
			"--teachers", "20", "--epsilon", "4", "--delta", "1e-5", "--classes", "0,1,2,3,4,5,6,7,8,9", "--learner", "nb"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := pate(t, append([]string{"replicate", "--json", "--repeats", "2", "--replicable"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var r replicate.Result
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatal(err)
			}
			for _, arm := range []struct {
				name string
				a    replicate.Agreement
			}{{"shared", r.Shared}, {"independent", r.Independent}, {"replicable shared", r.Replicable.Shared}, {"replicable independent", r.Replicable.Independent}} {
				a := arm.a
				t.Logf("%s %s: %.4f [%.4f, %.4f] of %d row pairs differ (%d answer vs abstention, %d label vs label); answered %.4f, accuracy %.4f",
					tc.name, arm.name, a.Rate, a.Low, a.High, a.Compared, a.AnswerVsAbstain, a.LabelVsLabel, a.AnsweredFrac, a.Accuracy)
				if a.Compared == 0 || a.Differ != a.AnswerVsAbstain+a.LabelVsLabel || a.Queries == 0 || a.Checked != a.Answered {
					t.Errorf("%s: inconsistent %+v", arm.name, a)
				}
			}
			if tc.wantReplicate && r.Replicable.Shared.Rate >= r.Shared.Rate {
				t.Errorf("--replicable does not lower the shared-seed disagreement: %.4f, without it %.4f", r.Replicable.Shared.Rate, r.Shared.Rate)
			}
			if r.Private || r.Note == "" {
				t.Error("the result is not marked as not private")
			}
			if r.Shared.Compared == 0 || !(r.Shared.Low <= r.Shared.Rate && r.Shared.Rate <= r.Shared.High) {
				t.Errorf("shared: %+v", r.Shared)
			}
			if r.Shared.Rate >= r.Independent.Rate {
				t.Errorf("shared randomness (%.4f) does not lower the disagreement (%.4f)", r.Shared.Rate, r.Independent.Rate)
			}
		})
	}
}

// TestReportCalibration checks the noise of --private-report: the
// sensitivity of a disagreement count, the discrete Laplace scale that makes
// each count ε/2-DP, the bound printed for the noise, and (empirically, with
// a fixed seed) that the sampler has the calibrated spread.
func TestReportCalibration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                     string
		repeats, splits, queried int
		eps                      float64
		wantSens                 int64
		wantScale                string
	}{
		// One row is in one part per repeat; each pair with that part may
		// change by every queried row.
		{"adult 2 halves", 2, 2, 1500, 0.5, 3000, "6000"},
		{"3 parts", 1, 3, 569, 1, 1138, "1138"},
		{"5 repeats 4 parts", 5, 4, 100, 2, 1500, "750"},
		{"binary ε", 1, 2, 10, 0.25, 10, "40"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sens := replicate.Sensitivity(tc.repeats, tc.splits, tc.queried)
			if sens != tc.wantSens {
				t.Fatalf("sensitivity %d, want %d", sens, tc.wantSens)
			}
			scale, err := replicate.LaplaceFor(sens, tc.eps)
			if err != nil {
				t.Fatal(err)
			}
			if scale.RatString() != tc.wantScale {
				t.Fatalf("scale %s, want %s", scale.RatString(), tc.wantScale)
			}
			// Neighbouring counts differ by at most sens: the log-ratio of
			// the discrete Laplace pmf at any output is at most sens/scale.
			f, _ := scale.Float64()
			if got := float64(sens) / f; math.Abs(got-tc.eps) > 1e-12 {
				t.Errorf("privacy loss %g, want ε = %g", got, tc.eps)
			}
		})
	}
	if _, err := replicate.LaplaceFor(10, 0); err == nil {
		t.Error("ε = 0 accepted")
	}

	// The printed bound: P(|Z| > u) ≤ 2.5% < P(|Z| > u−1), checked on
	// 200,000 seeded draws, and E|Z| = 2p/((1−p)(1+p)) with p = exp(−1/t).
	for _, ts := range []string{"3", "40"} {
		scale, _ := noise.ParseRat(ts)
		lap, err := noise.NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		u := replicate.LaplaceBound(scale, 0.025)
		tf, _ := scale.Float64()
		p := math.Exp(-1 / tf)
		if tail := 2 * math.Pow(p, float64(u+1)) / (1 + p); tail > 0.025 {
			t.Errorf("t = %s: bound %d leaves %.4f outside", ts, u, tail)
		}
		if tail := 2 * math.Pow(p, float64(u)) / (1 + p); u > 0 && tail <= 0.025 {
			t.Errorf("t = %s: bound %d is not the smallest", ts, u)
		}
		src := noise.NewSeededSource(7, 1)
		const draws = 200_000
		outside, sumAbs := 0, 0.0
		for i := 0; i < draws; i++ {
			z := lap.Sample(src)
			if z > u || z < -u {
				outside++
			}
			sumAbs += math.Abs(float64(z))
		}
		if frac := float64(outside) / draws; frac > 0.0275 {
			t.Errorf("t = %s: %.4f of the draws outside ±%d", ts, frac, u)
		}
		want := 2 * p / ((1 - p) * (1 + p))
		if got := sumAbs / draws; math.Abs(got-want)/want > 0.02 {
			t.Errorf("t = %s: E|Z| = %.3f, want %.3f", ts, got, want)
		}
	}
}

// TestReplicatePrivateReport: with --private-report the output is marked
// private, carries its ε, sensitivity and noise scale, and the ε is in the
// ledger; without it the output says NOT PRIVATE. Its bad flags are
// scripts: testdata/script/replicate_usage_*.txtar.
func TestReplicatePrivateReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"replicate", "--json", "--repeats", "2", "--private", "testdata/breast_cancer.parquet", "--label", "label",
		"--public", "testdata/breast_cancer.parquet", "--features", "mean_radius,mean_texture,mean_perimeter,mean_area",
		"--teachers", "10", "--epsilon", "2", "--delta", "1e-5", "--classes", "0,1", "--max-queries", "300", "--ledger", dir}
	code, stdout, stderr := pate(t, append(args, "--private-report", "--report-epsilon", "1")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r replicate.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Private || !strings.HasPrefix(r.Note, "PRIVATE") || r.Report == nil {
		t.Fatalf("not marked private: %+v", r)
	}
	if r.Queried != 300 || r.Shared.Compared != 600 {
		t.Errorf("queried %d, compared %d: want 300 and 600", r.Queried, r.Shared.Compared)
	}
	if r.Report.Epsilon != 1 || r.Report.EpsilonPerCount != 0.5 || r.Report.Sensitivity != 600 || r.Report.LaplaceScale != "1200.000000" {
		t.Errorf("calibration %+v: want ε 1, 0.5 per count, sensitivity 2 × 1 × 300, scale 1200", r.Report)
	}
	for _, a := range []replicate.Agreement{r.Shared, r.Independent} {
		if a.Differ < 0 || a.Differ > a.Compared || !(a.Low <= a.Rate && a.Rate <= a.High) {
			t.Errorf("released %+v", a)
		}
	}
	l, err := ledger.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := l.Datasets()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || len(ds[0].Runs) != 1 || ds[0].Runs[0].Mechanism != "replicate-report" || ds[0].Runs[0].Charged != 0.5 {
		t.Fatalf("ledger: %+v", ds)
	}

	code, stdout, stderr = pate(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r = replicate.Result{}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if r.Private || !strings.HasPrefix(r.Note, "NOT PRIVATE") || r.Report != nil {
		t.Errorf("a report without --private-report is not marked NOT PRIVATE: %+v", r)
	}
	if ds, _ := l.Datasets(); len(ds[0].Runs) != 1 {
		t.Error("a NOT PRIVATE run was charged in the ledger")
	}

	// With --replicable four counts are released, ε/4 each, and nothing
	// else about the runs.
	code, stdout, stderr = pate(t, append(args, "--private-report", "--report-epsilon", "1", "--replicable", "--no-ledger")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r = replicate.Result{}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if !r.Private || r.Report == nil || r.Report.EpsilonPerCount != 0.25 || r.Report.LaplaceScale != "2400.000000" || r.Replicable == nil {
		t.Fatalf("private --replicable: %+v", r)
	}
	for _, a := range []replicate.Agreement{r.Shared, r.Independent, r.Replicable.Shared, r.Replicable.Independent} {
		if a.Queries != 0 || a.Answered != 0 || a.AnswerVsAbstain != 0 || a.LabelVsLabel != 0 || a.Differ > a.Compared {
			t.Errorf("a private report released more than its noisy count: %+v", a)
		}
	}
}

// TestLabelReplicable: pate label --replicable draws each row's noise from
// the shared seed, so the labels do not depend on the batch size; the
// report says replicable and how the seed was shared, never the seed; the
// accounting is unchanged (pate audit re-derives it). Its bad flags are
// scripts: testdata/script/label_replicable_usage_*.txtar.
func TestLabelReplicable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "shared.seed")
	const seed = "c2hhcmVkIHNlY3JldCBvZiB0d28gY3VyYXRvcnMK"
	if err := os.WriteFile(seedFile, []byte(seed+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"label", "--private", "testdata/adult_train.parquet", "--label", "income", "--public", "testdata/adult_public.parquet",
		"--epsilon", "2", "--delta", "1e-5", "--max-queries", "600", "--classes", "0,1", "--teachers", "100", "--seed", "5", "--quiet", "--no-ledger",
		"--replicable", "--shared-seed-file", seedFile}
	var labels [][]int64
	var sources [][]string
	for _, batch := range []string{"1000", "16384"} {
		out, report, html := filepath.Join(dir, batch+".arrow"), filepath.Join(dir, batch+".json"), filepath.Join(dir, batch+".html")
		if code, _, stderr := pate(t, append(args, "--batch-size", batch, "-o", out, "--report", report, "--report-html", html)...); code != 0 {
			t.Fatalf("batch %s: exit %d: %s", batch, code, stderr)
		}
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		_, recs := readAll(t, out, mem)
		labels = append(labels, int64Column(t, recs, "income"))
		sources = append(sources, stringColumn(t, recs, label.SourceColumn))
		release(recs)
		mem.AssertSize(t, 0)

		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), seed) {
			t.Fatal("the report contains the shared seed")
		}
		if h, err := os.ReadFile(html); err != nil || !strings.Contains(string(h), "<b>replicable</b>") || strings.Contains(string(h), seed) {
			t.Errorf("the HTML report does not say the run is replicable, or shows the seed (%v)", err)
		}
		var rep label.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if !rep.Replicable || !rep.Seeded || !strings.Contains(rep.ReplicableVia, "--shared-seed-file") || rep.ReplicableGrid == nil || rep.ReplicableGrid.Check <= 0 {
			t.Errorf("report: replicable %v, seeded %v, via %q, grid %+v", rep.Replicable, rep.Seeded, rep.ReplicableVia, rep.ReplicableGrid)
		}
		if rep.Queries.Answered == 0 || rep.Queries.Abstained == 0 {
			t.Errorf("answered %d, abstained %d", rep.Queries.Answered, rep.Queries.Abstained)
		}
		if code, stdout, stderr := pate(t, "audit", report); code != 0 {
			t.Errorf("audit: exit %d: %s%s", code, stdout, stderr)
		}
	}
	if !slices.Equal(labels[0], labels[1]) || !slices.Equal(sources[0], sources[1]) {
		t.Error("the labels of a replicable run depend on the batch size")
	}
}

// TestLabelReplicableSmall: pate label --replicable on breast_cancer and
// digits (10 classes, GNMax and LNMax too); logs the answered rows and
// their accuracy for the README.
func TestLabelReplicableSmall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "shared.seed")
	if err := os.WriteFile(seedFile, []byte("0123456789abcdef-two-curators"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, data, keep string
		args             []string
	}{
		{"breast_cancer", "testdata/breast_cancer.parquet", "mean_radius", []string{"--teachers", "10", "--epsilon", "2", "--classes", "0,1",
			"--features", "mean_radius,mean_texture,mean_perimeter,mean_area,worst_radius,worst_concave_points"}},
		{"digits", "testdata/digits.parquet", "pixel_0_0", []string{"--teachers", "20", "--epsilon", "4", "--classes", "0,1,2,3,4,5,6,7,8,9", "--learner", "nb"}},
		{"digits gnmax", "testdata/digits.parquet", "pixel_0_0", []string{"--teachers", "20", "--epsilon", "4", "--classes", "0,1,2,3,4,5,6,7,8,9", "--learner", "nb",
			"--mechanism", "gnmax", "--max-queries", "200"}},
		{"breast_cancer lnmax", "testdata/breast_cancer.parquet", "mean_radius", []string{"--teachers", "10", "--epsilon", "2", "--classes", "0,1", "--mechanism", "lnmax", "--max-queries", "100"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, report := filepath.Join(dir, "out.arrow"), filepath.Join(dir, "r.json")
			args := append([]string{"label", "--private", tc.data, "--label", "label", "--public", tc.data, "--keep", tc.keep,
				"--delta", "1e-5", "--seed", "3", "--quiet", "--no-ledger", "--replicable", "--shared-seed-file", seedFile, "-o", out, "--report", report}, tc.args...)
			if code, _, stderr := pate(t, args...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			_, recs := readAll(t, out, mem)
			got := int64Column(t, recs, "label")
			release(recs)
			_, trecs := readAll(t, tc.data, mem)
			truth := int64Column(t, trecs, "label")
			release(trecs)
			answered, correct := 0, 0
			for i, v := range got {
				if v >= 0 {
					answered++
					if v == truth[i] {
						correct++
					}
				}
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var rep label.Report
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d queries, %d answered, %.4f of them correct; ε = %g, grid %+v", tc.name, rep.Queries.Seen, answered,
				float64(correct)/float64(max(1, answered)), float64(rep.Guarantee.Epsilon), *rep.ReplicableGrid)
			if !rep.Replicable || int64(answered) != rep.Queries.Answered || answered == 0 {
				t.Errorf("replicable %v, %d answered rows in the output, %d in the report", rep.Replicable, answered, rep.Queries.Answered)
			}
		})
	}
}
