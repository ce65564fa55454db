package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label"
)

// TestPureMechanismsBudgetAndUsage: the issue-5 mechanisms refuse a run
// whose budget cannot pay for one event (exit 3) and name the missing or
// conflicting flag (exit 2).
func TestPureMechanismsBudgetAndUsage(t *testing.T) {
	base := []string{"label", "--private", "testdata/breast_cancer.parquet", "--label", "label", "--keep", "mean_radius",
		"--public", "testdata/breast_cancer.parquet", "--delta", "1e-5", "--seed", "1", "-q", "--no-ledger"}
	tests := []struct {
		name string
		args []string
		want int
		msg  string
	}{
		{"private-learner needs classes", []string{"--mechanism", "private-learner", "--epsilon", "1"}, exitUsage, "--classes"},
		{"stable-em needs epsilon", []string{"--mechanism", "stable-em", "--classes", "0,1"}, exitUsage, "--epsilon"},
		{"private-learner refuses a privacy unit", []string{"--mechanism", "private-learner", "--epsilon", "1", "--classes", "0,1", "--privacy-unit", "mean_radius"}, exitUsage, "--privacy-unit"},
		{"em epsilon above the budget", []string{"--mechanism", "private-learner", "--epsilon", "1", "--classes", "0,1", "--em-epsilon", "1.5"}, exitBudget, "cannot pay"},
		{"svt instance above the budget", []string{"--mechanism", "svt", "--epsilon", "1", "--classes", "0,1", "--svt-epsilon0", "3"}, exitBudget, "cannot pay"},
		{"svt threshold too small", []string{"--mechanism", "svt", "--epsilon", "2", "--classes", "0,1", "--svt-threshold", "2"}, exitUsage, "--svt-threshold"},
		{"bad gamma", []string{"--mechanism", "stable-em", "--epsilon", "1", "--classes", "0,1", "--gamma", "-1"}, exitUsage, "--gamma"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "o.arrow")
			code, _, stderr := pate(t, append(append(append([]string{}, base...), tc.args...), "-o", out)...)
			if code != tc.want || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d (want %d): %s", code, tc.want, stderr)
			}
		})
	}
}

// TestPureMechanismsStopAtTheCap: when the budget's cap on events is
// smaller than the queries, the run stops at the cap, every later row
// abstains, the report says so, and pate audit agrees.
func TestPureMechanismsStopAtTheCap(t *testing.T) {
	base := []string{"label", "--private", "testdata/breast_cancer.parquet", "--label", "label", "--keep", "mean_radius",
		"--public", "testdata/breast_cancer.parquet", "--delta", "1e-5", "--seed", "4", "-q", "--no-ledger", "--classes", "0,1"}
	tests := []struct {
		name      string
		args      []string
		maxEvents int64
	}{
		// ε per query ln(1 + 2·β/0.5), β = 0.1 + 0.9·tanh(0.25) ≈ 0.320: ≈ 0.878; ε = 2 pays for 2.
		{"stable-em", []string{"--mechanism", "stable-em", "--epsilon", "2", "--subset-rate", "0.1", "--em-epsilon", "0.5", "--gamma", "0.5"}, 2},
		// Instances of ε0 = 0.5 within ε = 1.5: 3.
		{"svt", []string{"--mechanism", "svt", "--epsilon", "1.5", "--svt-epsilon0", "0.5", "--teachers", "20"}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out, rp := filepath.Join(dir, "o.arrow"), filepath.Join(dir, "r.json")
			code, _, stderr := pate(t, append(append(append([]string{}, base...), tc.args...), "-o", out, "--report", rp)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(rp)
			if err != nil {
				t.Fatal(err)
			}
			var r label.Report
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			pd := r.PureDP
			if pd == nil || pd.MaxEvents != tc.maxEvents || pd.Events != tc.maxEvents || r.Spent.PureEvents != tc.maxEvents {
				t.Fatalf("pure_dp %+v, spent %+v: want %d events, the cap", pd, r.Spent, tc.maxEvents)
			}
			if !r.Budget.StoppedOn || r.Queries.Seen >= r.Queries.PublicRows || r.Budget.StoppedAtRow != r.Queries.Seen {
				t.Errorf("budget %+v, queries %+v: the run should stop at the cap", r.Budget, r.Queries)
			}
			if float64(r.Guarantee.Epsilon) > 2 {
				t.Errorf("guarantee ε %v above the budget", r.Guarantee.Epsilon)
			}
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			_, recs := readAll(t, out, mem)
			defer release(recs)
			src := stringColumn(t, recs, label.SourceColumn)
			for i := int(r.Budget.StoppedAtRow); i < len(src); i++ {
				if src[i] != label.SourceAbstained {
					t.Fatalf("row %d after the stop: %s", i, src[i])
				}
			}
			if code, stdout, stderr := pate(t, "audit", rp); code != 0 || !strings.Contains(stdout, "HOLDS") {
				t.Errorf("audit exit %d: %s %s", code, stdout, stderr)
			}
		})
	}
}

// TestPrivateLearnerClaimsItsOneEvent: a private-learner run makes one
// event, so a budget larger than its ε is not claimed: --em-epsilon 0.5
// within --epsilon 2 guarantees (0.5, 0).
func TestPrivateLearnerClaimsItsOneEvent(t *testing.T) {
	dir := t.TempDir()
	out, rp := filepath.Join(dir, "o.arrow"), filepath.Join(dir, "r.json")
	code, _, stderr := pate(t, "label", "--private", "testdata/breast_cancer.parquet", "--label", "label", "--keep", "mean_radius",
		"--public", "testdata/breast_cancer.parquet", "--delta", "1e-5", "--seed", "4", "-q", "--no-ledger", "--classes", "0,1",
		"--mechanism", "private-learner", "--epsilon", "2", "--em-epsilon", "0.5", "-o", out, "--report", rp)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	var r label.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if r.Guarantee.Epsilon != 0.5 || r.Guarantee.Delta != 0 || r.PureDP == nil || r.PureDP.MaxEvents != 1 || r.Queries.Answered != r.Queries.PublicRows {
		t.Errorf("guarantee %+v, pure_dp %+v, queries %+v", r.Guarantee, r.PureDP, r.Queries)
	}
	if code, stdout, _ := pate(t, "audit", rp); code != 0 || !strings.Contains(stdout, "HOLDS") {
		t.Errorf("audit exit %d: %s", code, stdout)
	}
}

// TestPureMechanismsRefuseCombinations: the pure ε-DP mechanisms label one
// column and do not take --replicable (their events are not the noisy
// votes --replicable keys by row).
func TestPureMechanismsRefuseCombinations(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "shared.seed")
	if err := os.WriteFile(seed, []byte("0123456789abcdef-two-curators"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"label", "--private", "testdata/adult_train.parquet", "--label", "income",
		"--public", "testdata/adult_public.parquet", "--epsilon", "2", "--delta", "1e-5", "--classes", "<=50K,>50K", "-q", "--no-ledger"}
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"svt with two labels", []string{"--mechanism", "svt", "--label", "sex", "--keep", "age"}, "one --label column"},
		{"private-learner replicable", []string{"--mechanism", "private-learner", "--replicable", "--shared-seed-file", seed}, "--replicable works with"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := pate(t, append(append(append([]string{}, base...), tc.args...), "-o", filepath.Join(dir, "o.arrow"))...)
			if code != exitUsage || !strings.Contains(stderr, tc.msg) {
				t.Errorf("exit %d (want %d): %s", code, exitUsage, stderr)
			}
		})
	}
}
