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

// TestPureMechanismsStopAtTheCap: when the budget's cap on events is
// smaller than the queries, the run stops at the cap, every later row
// abstains, the report says so, and pate audit agrees.
func TestPureMechanismsStopAtTheCap(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
