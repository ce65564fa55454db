package ledger

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label/rdp"
)

// TestBasicCompositionMinimum: the total is never above basic composition
// (Σεᵢ at Σδᵢ, each run at the smaller of its claim and its ρ at its own
// δ). A label run at ε = 1 and a replicate --private-report at ε = 1,
// recorded as the report was (ρ = ε²/2 = 0.5, no pure events), composed to
// ε ≈ 4.73 by their zCDP ρ; basic composition says 2. Where the RDP
// reading is the smaller (many small runs) it stays the total.
func TestBasicCompositionMinimum(t *testing.T) {
	rho1 := rdp.RhoForEps(1, 1e-5)
	label := BeginRequest{Mechanism: "confident-gnmax", MaxRho: rho1, Delta: 1e-5, Epsilon: 1}
	report := BeginRequest{Mechanism: "replicate-report", MaxRho: 0.5, Delta: 1e-5, Epsilon: 1}
	noClaim := BeginRequest{Mechanism: "gnmax", MaxRho: rho1, Delta: 1e-5} // explicit noise, no budget
	type step struct {
		req BeginRequest
		end float64
	}
	tests := []struct {
		name      string
		steps     []step
		wantBasic bool // the total is basic composition's, below the RDP reading
	}{
		{"label run and private report: basic composition", []step{{label, rho1}, {report, 0.5}}, true},
		{"a run without a claim: its ρ at its δ", []step{{noClaim, rho1}, {report, 0.5}}, true},
		{"ten label runs: the RDP reading", []step{{label, rho1}, {label, rho1}, {label, rho1}, {label, rho1}, {label, rho1},
			{label, rho1}, {label, rho1}, {label, rho1}, {label, rho1}, {label, rho1}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := Open(t.TempDir())
			id := testID(t, tc.name)
			rho, delta, basic := 0.0, 0.0, 0.0
			for _, s := range tc.steps {
				s.req.Dataset = id
				run, err := l.Begin(s.req, 0)
				if err != nil {
					t.Fatal(err)
				}
				if err := run.End(s.end); err != nil {
					t.Fatal(err)
				}
				rho, delta = rho+s.end, delta+s.req.Delta
				own := Total(s.end, s.req.Delta, 0)
				if s.req.Epsilon > 0 {
					own = math.Min(own, s.req.Epsilon)
				}
				basic += own
			}
			d, err := l.Dataset(id)
			if err != nil {
				t.Fatal(err)
			}
			zcdp := Total(rho, delta, 0)
			t.Logf("total ε %g at δ %g: zCDP reading %g, basic composition %g", d.Epsilon, d.Delta, zcdp, basic)
			if d.Epsilon > rdp.RoundUp(basic, 6) || d.Epsilon > zcdp {
				t.Fatalf("total ε %g above basic composition %g or the zCDP reading %g", d.Epsilon, basic, zcdp)
			}
			if tc.wantBasic != (basic < zcdp) {
				t.Fatalf("basic %g, zCDP reading %g: the case does not test what it says", basic, zcdp)
			}
		})
	}
}

// TestMixedUnits: runs that protect different privacy units (rows, or all
// rows of one patient) are composed apart: the dataset has no one figure
// (ε = ∞) and a total per unit; under a lifetime a run of another unit
// than the recorded runs' is refused and writes nothing.
func TestMixedUnits(t *testing.T) {
	l, _ := Open(t.TempDir())
	id := testID(t, "mixed")
	rho := rdp.RhoForEps(1, 1e-5)
	rows := BeginRequest{Dataset: id, Mechanism: "gnmax", MaxRho: rho, Delta: 1e-5, Epsilon: 1}
	patients := rows
	patients.PrivacyUnit = "patient_id"

	if _, err := l.Begin(rows, 3); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(l.path(id))
	if _, err := l.Begin(patients, 3); !errors.Is(err, ErrMixedUnits) {
		t.Fatalf("a run of another unit under a lifetime: %v, want ErrMixedUnits", err)
	}
	if after, _ := os.ReadFile(l.path(id)); !bytes.Equal(before, after) {
		t.Fatalf("the refused run wrote to the ledger")
	}
	if _, err := l.Begin(rows, 3); err != nil {
		t.Fatalf("a run of the same unit: %v", err)
	}
	d, _ := l.Dataset(id)
	if d.Units != nil || math.IsInf(d.Epsilon, 0) {
		t.Fatalf("one unit: units %+v, ε %g", d.Units, d.Epsilon)
	}
	// Without a lifetime the run is recorded, and reported apart.
	if _, err := l.Begin(patients, 0); err != nil {
		t.Fatal(err)
	}
	d, _ = l.Dataset(id)
	if !math.IsInf(d.Epsilon, 1) || len(d.Units) != 2 {
		t.Fatalf("mixed units composed into one figure: ε %g, units %+v", d.Epsilon, d.Units)
	}
	for _, u := range d.Units {
		want := map[string]int{"": 2, "patient_id": 1}[u.PrivacyUnit]
		if u.Runs != want || math.IsInf(u.Epsilon, 0) || !(u.Epsilon >= 1) {
			t.Errorf("unit %q: %d runs, ε %g; want %d runs and a finite ε ≥ 1", u.PrivacyUnit, u.Runs, u.Epsilon, want)
		}
	}
	if d.Runs[2].PrivacyUnit != "patient_id" {
		t.Errorf("the unit is not in the run's summary: %+v", d.Runs[2])
	}
	// A lifetime is then refused for either unit.
	for _, req := range []BeginRequest{rows, patients} {
		if _, err := l.Begin(req, 100); !errors.Is(err, ErrMixedUnits) {
			t.Errorf("unit %q on a mixed dataset under a lifetime: %v, want ErrMixedUnits", req.PrivacyUnit, err)
		}
	}
}

// TestNamedDatasetContentCheck: under a dataset name, a run whose rows
// differ from those of the earlier runs is composed with them and warned
// about; the same rows are not. A lifetime needs a name.
func TestNamedDatasetContentCheck(t *testing.T) {
	l, _ := Open(t.TempDir())
	var warnings []string
	warn := func(s string) { warnings = append(warnings, s) }
	begin := func(content string) {
		t.Helper()
		s := l.Session("adult", func() (string, error) { return content, nil }, "--private")
		req := BeginRequest{Mechanism: "gnmax", MaxRho: 0.01, Delta: 1e-5, Epsilon: 0.5, Warn: warn}
		run, err := s.Begin(req, 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := run.End(0.01); err != nil {
			t.Fatal(err)
		}
	}
	begin(NamedID("rows A"))
	begin(NamedID("rows A"))
	if len(warnings) != 0 {
		t.Fatalf("warned about the same rows: %q", warnings)
	}
	begin(NamedID("rows A less one"))
	if len(warnings) != 1 || !strings.Contains(warnings[0], "2 earlier run(s)") {
		t.Fatalf("warnings %q, want one about the 2 earlier runs", warnings)
	}
	ds, _ := l.Datasets()
	if len(ds) != 1 || len(ds[0].Runs) != 3 || !ds[0].Named {
		t.Fatalf("the runs under one name are not one dataset: %d datasets", len(ds))
	}

	unnamed := l.Session("", func() (string, error) { return NamedID("rows B"), nil }, "--private")
	if _, err := unnamed.Begin(BeginRequest{Mechanism: "gnmax", MaxRho: 0.01, Delta: 1e-5}, 10); !errors.Is(err, ErrLifetimeNeedsName) {
		t.Fatalf("a lifetime on an unnamed dataset: %v, want ErrLifetimeNeedsName", err)
	}
	if _, err := unnamed.Begin(BeginRequest{Mechanism: "gnmax", MaxRho: 0.01, Delta: 1e-5}, 0); err != nil {
		t.Fatalf("an unnamed run without a lifetime: %v", err)
	}
}
