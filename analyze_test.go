package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAnalyzeSmoothSensitivityNotReleasable: pate analyze draws no noise, so
// its smooth-sensitivity figure is an exact function of the votes. The text
// and the JSON output must say so beside the figure, and never call it
// releasable; two runs print the same figure, which is why.
func TestAnalyzeSmoothSensitivityNotReleasable(t *testing.T) {
	t.Parallel()
	base := []string{"analyze", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--threshold", "200",
		"--sigma1", "150", "--sigma2", "40", "--queries", "64", "--delta", "1e-5", "--conversion", "classic"}
	tests := []struct {
		name string
		args []string
	}{
		{"fixed beta and sigma_ss", []string{"--beta", "0.0329", "--sigma-ss", "6.23"}},
		{"optimize-ss", []string{"--optimize-ss"}},
	}
	const label = "not private: exact function of the votes"
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, base...), tc.args...)
			var outs []string
			for i := 0; i < 2; i++ {
				code, out, stderr := pate(t, args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				outs = append(outs, out)
			}
			out := outs[0]
			line := ""
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "smooth-sensitivity ε:") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no smooth-sensitivity line:\n%s", out)
			}
			if strings.Contains(strings.ToLower(out), "releasable") {
				t.Errorf("the output calls a figure releasable:\n%s", out)
			}
			if !strings.Contains(out, label) {
				t.Errorf("the output does not say %q:\n%s", label, out)
			}
			// Deterministic: the label is true.
			if outs[0] != outs[1] {
				t.Errorf("two runs differ, yet no noise is drawn:\n%s\n%s", outs[0], outs[1])
			}

			code, js, stderr := pate(t, append(args, "--json")...)
			if code != 0 {
				t.Fatalf("--json exit %d: %s", code, stderr)
			}
			var v struct {
				Private bool   `json:"private"`
				Note    string `json:"note"`
				SS      *struct {
					Private    *bool  `json:"private"`
					Releasable *bool  `json:"releasable"`
					Note       string `json:"note"`
				} `json:"smooth_sensitivity"`
			}
			if err := json.Unmarshal([]byte(js), &v); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, js)
			}
			if v.Private || v.SS == nil || v.SS.Private == nil || *v.SS.Private || v.SS.Releasable == nil || *v.SS.Releasable ||
				!strings.Contains(v.SS.Note, label) || strings.Contains(v.Note, "except the smooth-sensitivity") {
				t.Errorf("JSON does not label the smooth-sensitivity figure as not private: %s", js)
			}
		})
	}
}

// TestAnalyzeReleaseSS: --release-ss draws a fresh noisy sample each run
// (two runs differ), states the cost of the release, which depends on the
// fixed parameters alone, and includes it; it prints none of the analysis's
// other figures. (Parameters chosen from the votes, or not fixed, are
// refused: testdata/script/analyze_release_ss_usage_*.txtar.)
func TestAnalyzeReleaseSS(t *testing.T) {
	t.Parallel()
	base := []string{"analyze", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--mechanism", "gnmax", "--sigma", "40",
		"--queries", "200", "--delta", "1e-5", "--release-ss"}
	fixed := []string{"--beta", "0.0329", "--sigma-ss", "6.23", "--ss-order", "8"}
	type release struct {
		Release bool `json:"release"`
		Result  struct {
			Cost, RDP, Eps, Order float64
		} `json:"result"`
	}
	var got []release
	for i := 0; i < 2; i++ {
		code, out, stderr := pate(t, append(append(append([]string{}, base...), fixed...), "--json")...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var r release
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, out)
		}
		if strings.Contains(out, "EpsDataDependent") || strings.Contains(out, "ExpectedAnswered") {
			t.Errorf("the release prints the analysis's figures:\n%s", out)
		}
		got = append(got, r)
	}
	a, b := got[0].Result, got[1].Result
	if !got[0].Release || a.RDP == b.RDP || a.Eps == b.Eps {
		t.Errorf("two releases %+v and %+v: want two different samples", a, b)
	}
	if !(a.Cost > 0) || a.Cost != b.Cost || a.Order != 8 || a.RDP < a.Cost {
		t.Errorf("release %+v: the cost must be positive, fixed and included", a)
	}
	code, out, stderr := pate(t, append(append([]string{}, base...), fixed...)...)
	if code != 0 || !strings.Contains(out, "SMOOTH-SENSITIVITY RELEASE") || !strings.Contains(out, "cost of the release") ||
		strings.Contains(out, "data-dependent ε:") {
		t.Errorf("text release: exit %d\n%s%s", code, out, stderr)
	}
}

// TestAnalyzeJSON: --json prints the analysis as JSON.
func TestAnalyzeJSON(t *testing.T) {
	t.Parallel()
	code, out, stderr := pate(t, "analyze", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--mechanism", "gnmax",
		"--sigma", "40", "--queries", "100", "--delta", "1e-5", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var v struct {
		Private bool `json:"private"`
		Result  struct {
			EpsDataIndependent float64
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if v.Private || v.Result.EpsDataIndependent <= 0 {
		t.Errorf("JSON result %+v", v)
	}
}
