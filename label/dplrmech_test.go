package label

import (
	"errors"
	"strconv"
	"testing"

	"github.com/pate-tool/pate/label/rdp"
)

// dplrReport is the report of a dp-logreg run of budget eps on synthetic
// rows: the model trained by the mechanism's voter, the report filled in
// as a run fills it.
func dplrReport(t *testing.T, eps float64) *Report {
	t.Helper()
	const delta = 1e-5
	x, y := dplrBlobs(600, 5, 3, 1)
	seed := uint64(7)
	l := &Labeler{cfg: Config{Seed: &seed, Mechanism: MechanismDPLogReg, Epsilon: eps, Delta: delta}}
	v, err := dpLogRegMechanism{}.learner(l, x, y, 3, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.(starter).start(l, MechanismParams{}, nil, f); err != nil {
		t.Fatal(err)
	}
	return modelReport(t, MechanismDPLogReg, eps, delta, f, v.(modelVoter))
}

// modelReport is the report of a run of mech whose model mv was trained on
// the filter f (budget ε = eps at delta) over three classes, filled in as
// a run fills it: 300 public rows, each labelled by the model.
func modelReport(t *testing.T, mech string, eps, delta float64, f *rdp.Filter, mv modelVoter) *Report {
	t.Helper()
	const rows = 300
	rep := &Report{SchemaVersion: ReportSchemaVersion, Tool: "pate", Command: "label", Mechanism: mech,
		Classes: []string{"a", "b", "c"}, PrivacyUnit: "row", Neighbouring: "add or remove one row",
		Queries:   Queries{PublicRows: rows, Seen: rows, Answered: rows},
		Released:  map[string]int64{"a": 100, "b": 100, "c": 100},
		Guarantee: Guarantee{Epsilon: Float(eps), Delta: Float(delta), Rho: Float(f.Budget())},
		Budget:    BudgetReport{Epsilon: Float(eps), Delta: Float(delta), Filter: true, RhoForQueries: Float(f.Budget())}}
	mv.describeModel(rep)
	sp, err := RecomputeSpendLabels(mech, []LabelEvents{{Classes: 3, Argmaxes: rows, ModelRho: mv.modelRho()}}, 0, delta)
	if err != nil {
		t.Fatal(err)
	}
	rep.Spent = sp
	return rep
}

// TestAuditDPLogReg: the audit re-derives the model's σ, count σ,
// sensitivity and ρ from the budget and the public rule, so that a report
// with any of them edited fails, and an honest one holds.
func TestAuditDPLogReg(t *testing.T) {
	scale := func(s string, f float64) string {
		v, _ := strconv.ParseFloat(s, 64)
		return strconv.FormatFloat(v*f, 'g', -1, 64)
	}
	tests := []auditEdit{
		{name: "honest"},
		{name: "step sigma edited down", edit: func(r *Report) { r.DPLogReg.Sigma = scale(r.DPLogReg.Sigma, 0.5) }, wantErr: ErrClaimExceeded},
		{name: "step sigma edited up", edit: func(r *Report) { r.DPLogReg.Sigma = scale(r.DPLogReg.Sigma, 2) }, wantErr: ErrClaimExceeded},
		{name: "count sigma edited down", edit: func(r *Report) { r.DPLogReg.CountSigma = scale(r.DPLogReg.CountSigma, 0.5) }, wantErr: ErrClaimExceeded},
		{name: "steps edited up", edit: func(r *Report) { r.DPLogReg.Steps *= 2 }, wantErr: ErrClaimExceeded},
		{name: "steps edited down", edit: func(r *Report) { r.DPLogReg.Steps /= 2 }, wantErr: ErrClaimExceeded},
		{name: "sensitivity edited down", edit: func(r *Report) { r.DPLogReg.SensSq /= 4 }, wantErr: ErrClaimExceeded},
		{name: "features edited", edit: func(r *Report) { r.DPLogReg.Features++ }, wantErr: ErrClaimExceeded},
		{name: "model rho understated", edit: func(r *Report) { r.DPLogReg.Rho /= 2 }, wantErr: ErrClaimExceeded},
		{name: "spend understated", edit: func(r *Report) { r.Spent.Rho /= 2 }, wantErr: ErrClaimExceeded},
		{name: "claim edited down", edit: func(r *Report) { r.Guarantee.Epsilon /= 2; r.Budget.Epsilon /= 2 }, wantErr: ErrClaimExceeded},
		{name: "section missing", edit: func(r *Report) { r.DPLogReg = nil }, wantErr: ErrInvalidInput},
		{name: "sigma not a number", edit: func(r *Report) { r.DPLogReg.Sigma = "x" }, wantErr: ErrInvalidInput},
		{name: "no filter", edit: func(r *Report) { r.Budget = BudgetReport{} }, wantErr: ErrInvalidInput},
	}
	runAuditEdits(t, func(t *testing.T) *Report { return dplrReport(t, 1) }, tests)
}

// auditEdit is a report edit and the error pate audit must give for it
// (nil: the report holds).
type auditEdit struct {
	name    string
	edit    func(*Report)
	wantErr error
}

// runAuditEdits audits, for each edit, a fresh report from make with the
// edit applied.
func runAuditEdits(t *testing.T, make func(*testing.T) *Report, tests []auditEdit) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := make(t)
			if tc.edit != nil {
				tc.edit(rep)
			}
			res, err := Audit(rep)
			if tc.wantErr == nil {
				if err != nil || !res.Holds {
					t.Fatalf("Audit of an honest report: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Audit: %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// TestDPLogRegValidate: the settings dp-logreg cannot honour are refused
// before any data is read.
func TestDPLogRegValidate(t *testing.T) {
	ok := func() Config {
		return Config{Mechanism: MechanismDPLogReg, Epsilon: 1, Delta: 1e-5, Classes: []string{"0", "1"}}
	}
	tests := []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"valid", func(*Config) {}, true},
		{"no epsilon", func(c *Config) { c.Epsilon = 0 }, false},
		{"no classes: the private class discovery releases them", func(c *Config) { c.Classes = nil }, true},
		{"privacy unit", func(c *Config) { c.PrivacyUnit = "user" }, false},
		{"two labels", func(c *Config) { c.Labels = []string{"a", "b"} }, false},
		{"replicable", func(c *Config) { c.Replicable = &Replicable{} }, false},
		{"student", func(c *Config) { c.Student = "logreg" }, false},
		{"select uncertain", func(c *Config) { c.Select = SelectUncertain }, false},
		{"explicit noise", func(c *Config) { c.Params.Sigma = "30" }, false},
	}
	for _, tc := range tests {
		cfg := ok()
		tc.edit(&cfg)
		err := dpLogRegMechanism{}.validate(&cfg)
		if (err == nil) != tc.ok {
			t.Errorf("%s: validate = %v", tc.name, err)
		}
		if err != nil && !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: %v does not wrap ErrInvalidInput", tc.name, err)
		}
	}
}
