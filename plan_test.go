package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

// TestPlanRoundTrip: the planned noise, fed back, spends at most ε over the
// queries; 1% less noise spends more.
func TestPlanRoundTrip(t *testing.T) {
	t.Parallel()
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
