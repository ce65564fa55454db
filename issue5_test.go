package main

import (
	"path/filepath"
	"strings"
	"testing"
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
