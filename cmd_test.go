package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

// TestAnalyzeTable2 reproduces the PATE 2018 Table 2 analysis of the
// published vote files through the command line.
func TestAnalyzeTable2(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"mnist", []string{"--votes", "testdata/votes/mnist_250_teachers.parquet", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--queries", "640", "--delta", "1e-5", "--conversion", "classic"},
			[]string{"NOT PRIVATE", "E[answered]:           282.72", "data-dependent ε:      1.998817 at order 14", "data-independent ε:    3.157421 at order 9"}},
		{"mnist smooth sensitivity", []string{"--votes", "testdata/votes/mnist_250_teachers.parquet", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--queries", "640", "--delta", "1e-5", "--conversion", "classic", "--optimize-ss"},
			[]string{"smooth-sensitivity ε:  2.516 ± 0.385"}},
		{"mnist smooth sensitivity, rounded β and σ_SS", []string{"--votes", "testdata/votes/mnist_250_teachers.parquet", "--threshold", "200", "--sigma1", "150", "--sigma2", "40", "--queries", "640", "--delta", "1e-5", "--conversion", "classic", "--beta", "0.0329", "--sigma-ss", "6.23"},
			[]string{"smooth-sensitivity ε:  2.517 ± 0.384"}},
		{"svhn", []string{"--votes", "testdata/votes/svhn_250_teachers.parquet", "--threshold", "300", "--sigma1", "200", "--sigma2", "40", "--queries", "8500", "--delta", "1e-6", "--conversion", "classic", "--optimize-ss"},
			[]string{"E[answered]:           2969.09", "4.915203 at order 7.5", "12.392967 at order 3.5", "5.450 ± 0.350"}},
		{"adult", []string{"--votes", "testdata/votes/adult_250_teachers.parquet", "--threshold", "300", "--sigma1", "200", "--sigma2", "40", "--queries", "1500", "--delta", "1e-5", "--conversion", "classic", "--optimize-ss"},
			[]string{"E[answered]:           538.26", "1.678180 at order 15.5", "4.401821 at order 6.5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := pate(t, append([]string{"analyze"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestAnalyzeJSONAndErrors(t *testing.T) {
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
	for _, args := range [][]string{
		{"analyze", "--votes", "testdata/adult_train.parquet", "--sigma", "40", "--mechanism", "gnmax", "--delta", "1e-5"}, // string columns
		{"analyze", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--mechanism", "gnmax", "--delta", "1e-5"},     // no sigma
		{"analyze", "--votes", "testdata/votes/mnist_250_teachers.parquet", "--sigma", "40", "--mechanism", "gnmax", "--delta", "2"},
	} {
		if code, _, stderr := pate(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
}

// TestPlanRoundTrip: the planned noise, fed back, spends at most ε over the
// queries; 1% less noise spends more.
func TestPlanRoundTrip(t *testing.T) {
	type plan struct {
		Params  label.MechanismParams `json:"parameters"`
		Queries int64                 `json:"queries"`
		Spent   float64               `json:"epsilon_spent"`
	}
	runPlan := func(t *testing.T, args ...string) plan {
		t.Helper()
		code, out, stderr := pate(t, append([]string{"plan", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var p plan
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return p
	}
	shrink := func(s string) string {
		v, _ := strconv.ParseFloat(s, 64)
		return strconv.FormatFloat(v*0.99, 'f', -1, 64)
	}
	for _, mech := range []string{"gnmax", "lnmax", "confident-gnmax"} {
		for _, eps := range []float64{0.5, 2, 8} {
			for _, n := range []int64{100, 1500, 100000} {
				name := fmt.Sprintf("%s/eps=%g/n=%d", mech, eps, n)
				t.Run(name, func(t *testing.T) {
					e := strconv.FormatFloat(eps, 'g', -1, 64)
					p := runPlan(t, "--mechanism", mech, "--epsilon", e, "--delta", "1e-5", "--queries", strconv.FormatInt(n, 10))
					if p.Spent > eps {
						t.Fatalf("planned noise %+v spends ε = %g > %g", p.Params, p.Spent, eps)
					}
					var back, smaller plan
					switch mech {
					case "gnmax":
						back = runPlan(t, "--mechanism", mech, "--epsilon", e, "--delta", "1e-5", "--sigma", p.Params.Sigma)
						smaller = runPlan(t, "--mechanism", mech, "--epsilon", e, "--delta", "1e-5", "--sigma", shrink(p.Params.Sigma))
					case "lnmax":
						back = runPlan(t, "--mechanism", mech, "--epsilon", e, "--delta", "1e-5", "--laplace-scale", p.Params.LaplaceScale)
						smaller = runPlan(t, "--mechanism", mech, "--epsilon", e, "--delta", "1e-5", "--laplace-scale", shrink(p.Params.LaplaceScale))
					default:
						back = runPlan(t, "--mechanism", mech, "--epsilon", e, "--delta", "1e-5", "--sigma1", p.Params.Sigma1, "--sigma2", p.Params.Sigma2)
						smaller = runPlan(t, "--mechanism", mech, "--epsilon", e, "--delta", "1e-5", "--sigma1", shrink(p.Params.Sigma1), "--sigma2", shrink(p.Params.Sigma2))
					}
					if back.Queries < n {
						t.Errorf("fed back, %+v fits %d queries < %d", p.Params, back.Queries, n)
					}
					if smaller.Queries >= n {
						t.Errorf("1%% less noise still fits %d ≥ %d queries", smaller.Queries, n)
					}
					// The same through the accountant directly.
					rho, err := label.PlannedRho(mech, 2, n, p.Params, label.DefaultAnsweredFraction)
					if err != nil {
						t.Fatal(err)
					}
					if got := rdp.ZCDPEps(rho, 1e-5); got > eps {
						t.Errorf("accountant: ε = %g > %g", got, eps)
					}
				})
			}
		}
	}
}

// TestUsageErrors: urfave/cli's own usage errors exit 2 like ours.
func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"label"},                             // required flags missing
		{"label", "--private", "x.parquet"},   // some missing
		{"nosuch"},                            // unknown command
		{"plan", "--epsilon", "1"},            // --delta missing
		{"analyze", "--votes", "v.parquet"},   // --delta missing
		{"aggregate", "--votes", "v.parquet"}, // -o and --delta missing
	} {
		if code, _, stderr := pate(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, exitUsage, stderr)
		}
	}
}
