package label

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/pate-tool/pate/label/rdp"
)

// syntheticReport builds a consistent report of a filtered run (eps > 0) or
// of a run without a filter (eps == 0), with the spend recomputed by
// RecomputeSpend, as a run would write it.
func syntheticReport(t *testing.T, mech string, eps float64, discovery bool) *Report {
	t.Helper()
	const delta = 1e-5
	p := map[string]MechanismParams{
		MechanismConfidentGNMax: {Threshold: 200, Sigma1: "622.6", Sigma2: "311.3"},
		MechanismGNMax:          {Sigma: "300"},
		MechanismLNMax:          {LaplaceScale: "200"},
	}[mech]
	checks, argmaxes, seen := int64(0), int64(900), int64(1000)
	if mech == MechanismConfidentGNMax {
		checks, argmaxes = seen, 600
	} else {
		argmaxes = seen
	}
	rep := &Report{SchemaVersion: ReportSchemaVersion, Tool: "pate", Command: "label", Mechanism: mech, Params: p,
		Classes: []string{"0", "1"}, PrivacyUnit: "row", Neighbouring: "add or remove one row",
		Queries:  Queries{PublicRows: 1200, Seen: seen, Answered: argmaxes, Abstained: 1200 - argmaxes, NotAsked: 200},
		Released: map[string]int64{"0": argmaxes / 2, "1": argmaxes - argmaxes/2}}
	sigma, dd := "", 0.0
	if discovery {
		sigma, dd = "15.3", DiscoveryDelta(delta, false)
		rep.ClassDiscovery = &ClassDiscovery{Sigma: sigma, Threshold: 1 + discreteGaussianTailPoint(15.3, dd), Rho: Float(1 / (2 * 15.3 * 15.3)), Delta: Float(dd)}
	}
	sp, err := RecomputeSpend(mech, 2, p, checks, argmaxes, sigma, dd, delta)
	if err != nil {
		t.Fatal(err)
	}
	rep.Spent = sp
	rc, ra, err := EventRho(mech, 2, p)
	if err != nil {
		t.Fatal(err)
	}
	if eps > 0 {
		rho := rdp.RhoForEps(eps, delta-dd)
		rep.Guarantee = Guarantee{Epsilon: Float(eps), Delta: delta, Rho: Float(rho)}
		rep.Budget = BudgetReport{Epsilon: Float(eps), Delta: delta, Filter: true, RhoForQueries: Float(rho)}
	} else {
		worst := float64(sp.Rho) - float64(checks)*rc - float64(argmaxes)*ra + float64(seen)*(rc+ra)
		rep.Guarantee = Guarantee{Epsilon: Float(rdp.RoundUp(rdp.ZCDPEps(worst, delta-dd), 6)), Delta: delta, Rho: Float(worst)}
	}
	return rep
}

// setBudget makes r the honest report of the same run under a filter of
// budget eps (written with as many decimals as the user gave it): ρ is
// derived from eps as a run derives it.
func setBudget(r *Report, eps float64) {
	delta := float64(r.Guarantee.Delta)
	dd := 0.0
	if r.ClassDiscovery != nil {
		dd = float64(r.ClassDiscovery.Delta)
	}
	rho := rdp.RhoForEps(eps, delta-dd)
	r.Guarantee.Epsilon, r.Guarantee.Rho = Float(eps), Float(rho)
	r.Budget = BudgetReport{Epsilon: Float(eps), Delta: Float(delta), Filter: true, RhoForQueries: Float(rho)}
}

// TestAuditDiscoveryThresholdPinned: the threshold audit re-derives is the one
// pate's class discovery uses (a real run with σ = 28.8 and δ = 1e-6
// released classes at 139).
func TestAuditDiscoveryThresholdPinned(t *testing.T) {
	tests := []struct {
		sigma string
		delta float64
		want  int64
	}{
		{"28.8", 1e-6, 139},
		{"15.3", 1e-6, 1 + discreteGaussianTailPoint(15.3, 1e-6)},
	}
	for _, tc := range tests {
		res := &AuditResult{}
		d := &ClassDiscovery{Sigma: tc.sigma, Threshold: tc.want, Rho: 1, Delta: Float(tc.delta)}
		if _, err := checkDiscovery(res, "", d, 2, tc.delta); err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Checks {
			if c.Name == "class discovery threshold" && (c.Recomputed != float64(tc.want) || !c.OK) {
				t.Errorf("σ %s, δ %g: threshold recomputed %v, want %d", tc.sigma, tc.delta, c.Recomputed, tc.want)
			}
		}
	}
}

func TestAudit(t *testing.T) {
	tests := []struct {
		name    string
		mech    string
		eps     float64
		disc    bool
		edit    func(*Report)
		wantErr error
	}{
		{name: "confident filter", mech: MechanismConfidentGNMax, eps: 8, disc: true},
		{name: "gnmax filter", mech: MechanismGNMax, eps: 8},
		{name: "lnmax filter", mech: MechanismLNMax, eps: 40, disc: true},
		{name: "confident no filter", mech: MechanismConfidentGNMax, disc: true},
		{name: "gnmax no filter", mech: MechanismGNMax},
		{name: "lnmax no filter", mech: MechanismLNMax},
		{name: "epsilon edited down", mech: MechanismConfidentGNMax, eps: 8, disc: true,
			edit: func(r *Report) { r.Guarantee.Epsilon = 7.9 }, wantErr: ErrClaimExceeded},
		{name: "worst case edited down", mech: MechanismGNMax,
			edit: func(r *Report) { r.Guarantee.Epsilon *= 0.9 }, wantErr: ErrClaimExceeded},
		{name: "budget too small for the counts", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Guarantee.Rho = r.Spent.Rho / 2; r.Budget.RhoForQueries = r.Guarantee.Rho }, wantErr: ErrClaimExceeded},
		{name: "spend understated", mech: MechanismConfidentGNMax, eps: 8,
			edit: func(r *Report) { r.Spent.EpsilonClassic -= 0.01 }, wantErr: ErrClaimExceeded},
		{name: "sigma edited", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Params.Sigma = "100" }, wantErr: ErrClaimExceeded},
		{name: "unknown mechanism", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Mechanism = "svt" }, wantErr: ErrInvalidInput},
		{name: "answers and argmaxes disagree", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Queries.Answered-- }, wantErr: ErrInvalidInput},
		{name: "released labels disagree", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Released["0"]++ }, wantErr: ErrInvalidInput},
		{name: "bad delta", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Guarantee.Delta = 0 }, wantErr: ErrInvalidInput},
		{name: "bad sigma", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Params.Sigma = "-3" }, wantErr: ErrInvalidInput},
		{name: "discovery delta tampered", mech: MechanismConfidentGNMax, eps: 8, disc: true,
			edit: func(r *Report) { r.ClassDiscovery.Delta /= 10 }, wantErr: ErrInvalidInput},
		{name: "discovery threshold edited down", mech: MechanismConfidentGNMax, eps: 8, disc: true,
			edit: func(r *Report) { r.ClassDiscovery.Threshold = 1 }, wantErr: ErrClaimExceeded},
		{name: "discovery threshold one below pate's", mech: MechanismGNMax, disc: true,
			edit: func(r *Report) { r.ClassDiscovery.Threshold-- }, wantErr: ErrClaimExceeded},
		{name: "discovery threshold above pate's", mech: MechanismLNMax, eps: 40, disc: true,
			edit: func(r *Report) { r.ClassDiscovery.Threshold += 5 }},
		{name: "discovery rho understated", mech: MechanismConfidentGNMax, eps: 8, disc: true,
			edit: func(r *Report) { r.ClassDiscovery.Rho /= 2 }, wantErr: ErrClaimExceeded},
		{name: "seven-decimal epsilon", mech: MechanismConfidentGNMax, eps: 8, disc: true,
			edit: func(r *Report) { setBudget(r, 8.0000001) }},
		{name: "eight-decimal epsilon, gnmax", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { setBudget(r, 7.99999999) }},
		{name: "epsilon edited a hair down", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) {
				setBudget(r, 7.9999999)
				r.Guarantee.Epsilon = 7.9999998
				r.Budget.Epsilon = 7.9999998
			}, wantErr: ErrClaimExceeded},
		{name: "budget epsilon is not the claim", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Budget.Epsilon = 9 }, wantErr: ErrClaimExceeded},
		{name: "spend delta edited", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Spent.Delta = 1e-3 }, wantErr: ErrClaimExceeded},
		{name: "released labels of a class not listed", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Released["2"], r.Released["0"] = r.Released["0"], 0 }, wantErr: ErrInvalidInput},
		{name: "abstained count inconsistent", mech: MechanismGNMax, eps: 8,
			edit: func(r *Report) { r.Queries.Abstained++ }, wantErr: ErrInvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := syntheticReport(t, tc.mech, tc.eps, tc.disc)
			if tc.edit != nil {
				tc.edit(rep)
			}
			res, err := Audit(rep)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("Audit: %v", err)
				}
				if !res.Holds || res.Epsilon > float64(rep.Guarantee.Epsilon) {
					t.Fatalf("claim %v, recomputed %v, holds %v", rep.Guarantee.Epsilon, res.Epsilon, res.Holds)
				}
				if tc.eps == 0 && res.Epsilon != float64(rep.Guarantee.Epsilon) {
					t.Errorf("no filter: recomputed ε %v, report %v", res.Epsilon, rep.Guarantee.Epsilon)
				}
				if len(res.Explanation) < 5 {
					t.Errorf("explanation too short: %q", res.Explanation)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Audit error %v, want %v", err, tc.wantErr)
			}
			if errors.Is(err, ErrClaimExceeded) && (res == nil || res.Holds) {
				t.Fatalf("a failed claim must come with its result, holds = false")
			}
			if errors.Is(err, ErrInvalidInput) && res != nil {
				t.Fatalf("a malformed report gives no result")
			}
		})
	}
}

func TestParseReport(t *testing.T) {
	good, err := json.Marshal(syntheticReport(t, MechanismGNMax, 8, false))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   string
		ok   bool
	}{
		{"good", string(good), true},
		{"truncated", string(good[:len(good)/2]), false},
		{"empty", "", false},
		{"trailing", string(good) + "{}", false},
		{"unknown version", `{"schema_version": 99, "tool": "pate", "command": "label"}`, false},
		{"other tool", `{"schema_version": 1, "tool": "other", "command": "label"}`, false},
		{"not label", `{"schema_version": 1, "tool": "pate", "command": "plan"}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseReport([]byte(tc.in))
			if tc.ok != (err == nil) {
				t.Fatalf("ParseReport: %v, want ok = %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v does not wrap ErrInvalidInput", err)
			}
		})
	}
}
