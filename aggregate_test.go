package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pate-tool/pate/label"
)

// TestAggregateAdultVotes is the acceptance figure of `pate aggregate`: the
// PATE 2018 Adult votes with the paper's parameters answer, on average over
// 20 seeds, within 5% of the 538 queries the analysis expects, and each
// report's ε is what the accountant recomputes (label.Audit).
func TestAggregateAdultVotes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const want = 538.26 // E[answered] of `pate analyze` on the same votes and parameters
	sum := 0.0
	for seed := 1; seed <= 20; seed++ {
		code, stdout, stderr := pate(t, "aggregate", "--votes", "testdata/votes/adult_250_teachers.parquet", "--teachers", "250",
			"--public", "testdata/adult_public.parquet", "--mechanism", "confident-gnmax", "--threshold", "300", "--sigma1", "200",
			"--sigma2", "40", "--max-queries", "1500", "--delta", "1e-5", "--seed", strconv.Itoa(seed),
			"-o", filepath.Join(dir, "out.arrow"), "--json")
		if code != 0 {
			t.Fatalf("seed %d: exit %d: %s", seed, code, stderr)
		}
		var rep label.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Queries.Seen != 1500 || rep.Queries.PublicRows != 16281 {
			t.Fatalf("queries %+v", rep.Queries)
		}
		sum += float64(rep.Queries.Answered)
		res, err := label.Audit(&rep)
		if err != nil {
			t.Fatalf("seed %d: audit: %v", seed, err)
		}
		if !res.Holds || math.Abs(res.Epsilon-float64(rep.Guarantee.Epsilon)) > 1e-6 {
			t.Errorf("seed %d: report claims ε = %g, the accountant recomputes %g", seed, rep.Guarantee.Epsilon, res.Epsilon)
		}
	}
	mean := sum / 20
	t.Logf("mean answered over 20 seeds: %.1f (analysis expects %.2f; %+.1f%%)", mean, want, 100*(mean-want)/want)
	if math.Abs(mean-want)/want > 0.05 {
		t.Errorf("mean answered %.1f is not within 5%% of %.2f", mean, want)
	}
}
