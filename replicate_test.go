package main

import (
	"encoding/json"
	"testing"
)

// TestReplicate: shared randomness couples the runs on two halves of the
// sensitive data, so their labels differ far less often than with
// independent randomness; breast_cancer and digits (10 classes) run too.
func TestReplicate(t *testing.T) {
	if testing.Short() {
		t.Skip("trains teachers 8 times per case")
	}
	tests := []struct {
		name string
		args []string
	}{
		{"adult", []string{"--private", "testdata/adult_train.parquet", "--label", "income", "--public", "testdata/adult_public.parquet",
			"--epsilon", "2", "--delta", "1e-5", "--classes", "0,1", "--max-queries", "1500"}},
		{"breast_cancer", []string{"--private", "testdata/breast_cancer.parquet", "--label", "label", "--public", "testdata/breast_cancer.parquet",
			"--features", "mean_radius,mean_texture,mean_perimeter,mean_area,worst_radius,worst_concave_points", "--teachers", "10",
			"--epsilon", "2", "--delta", "1e-5", "--classes", "0,1"}},
		{"digits", []string{"--private", "testdata/digits.parquet", "--label", "label", "--public", "testdata/digits.parquet",
			"--teachers", "20", "--epsilon", "4", "--delta", "1e-5", "--classes", "0,1,2,3,4,5,6,7,8,9", "--learner", "nb"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := pate(t, append([]string{"replicate", "--json", "--repeats", "2"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var r replicateResult
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: shared %.4f [%.4f, %.4f], independent %.4f [%.4f, %.4f] over %d row pairs",
				tc.name, r.Shared.Rate, r.Shared.Low, r.Shared.High, r.Independent.Rate, r.Independent.Low, r.Independent.High, r.Shared.Compared)
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
