package label

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pate-tool/pate/label/rdp"
)

// TestRegistry: every listed name maps to the mechanism of that name, and
// every mechanism charges in exactly one way: a zCDP filter (the noisy
// argmax of the votes) or a cap on pure ε-DP events.
func TestRegistry(t *testing.T) {
	if Mechanisms[0] != MechanismConfidentGNMax {
		t.Errorf("default mechanism %q, want %q", Mechanisms[0], MechanismConfidentGNMax)
	}
	for _, name := range Mechanisms {
		t.Run(name, func(t *testing.T) {
			m, err := lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			if m.Name() != name {
				t.Errorf("lookup(%q) is %q", name, m.Name())
			}
			if m.Noise() == "" {
				t.Error("no description of the noise")
			}
			_, argmax := m.(argmaxMechanism)
			_, events := m.(eventMechanism)
			_, model := m.(modelMechanism)
			if n := btoi(argmax) + btoi(events) + btoi(model); n != 1 {
				t.Errorf("argmax mechanism %v, pure events %v, one model %v: want exactly one", argmax, events, model)
			}
			if _, rows := m.(rowMechanism); rows && !events && !model && !argmax {
				t.Error("learns from the rows but charges neither pure events, one model nor noisy argmaxes")
			}
		})
	}
	if _, err := lookup("nonesuch"); err == nil {
		t.Error("lookup of an unknown name succeeded")
	}
}

// TestNoSwitchOnMechanismName: outside the registry, the package, the
// accountant (rdp) and the commands (the main package) ask a mechanism what
// it can do and never compare its name (a comparison or a case on a
// Mechanism* name constant, or on one of the names as a string).
func TestNoSwitchOnMechanismName(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*.go", "rdp/*.go", "../*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	names := map[string]bool{}
	for _, n := range Mechanisms {
		names[n] = true
	}
	isName := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.Ident:
			return strings.HasPrefix(e.Name, "Mechanism") && e.Name != "MechanismParams"
		case *ast.SelectorExpr: // label.MechanismX, in the main package
			x, ok := e.X.(*ast.Ident)
			return ok && x.Name == "label" && strings.HasPrefix(e.Sel.Name, "Mechanism") && e.Sel.Name != "MechanismParams"
		case *ast.BasicLit:
			s, err := strconv.Unquote(e.Value)
			return err == nil && names[s]
		}
		return false
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isName(n.X) || isName(n.Y)) {
					t.Errorf("%s: compares a mechanism's name", fset.Position(n.Pos()))
				}
			case *ast.CaseClause:
				if slices.ContainsFunc(n.List, isName) {
					t.Errorf("%s: a case on a mechanism's name", fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}

// TestAnalyzeAccounting: pate analyze and pate plan learn from the registry
// how each argmax mechanism is charged, and refuse the others.
func TestAnalyzeAccounting(t *testing.T) {
	tests := []struct {
		name string
		want rdp.Accounting
		ok   bool
	}{
		{MechanismConfidentGNMax, rdp.ThresholdGaussian, true},
		{MechanismGNMax, rdp.Gaussian, true},
		{MechanismLNMax, rdp.Laplace, true},
		{MechanismSVT, rdp.NoAccounting, false},
		{MechanismPrivateLearner, rdp.NoAccounting, false},
		{MechanismStableEM, rdp.NoAccounting, false},
		{MechanismDPLogReg, rdp.NoAccounting, false},
		{"no-such-mechanism", rdp.NoAccounting, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := AnalyzeAccounting(tc.name)
			if got != tc.want || ok != tc.ok {
				t.Errorf("AnalyzeAccounting = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
			if PlansNoise(tc.name) != tc.ok {
				t.Errorf("PlansNoise = %v, want %v", !tc.ok, tc.ok)
			}
			if ChecksThreshold(tc.name) != (tc.want == rdp.ThresholdGaussian) {
				t.Errorf("ChecksThreshold = %v", ChecksThreshold(tc.name))
			}
		})
	}
	want := []string{MechanismConfidentGNMax, MechanismGNMax, MechanismLNMax}
	if got := AnalyzableMechanisms(); !slices.Equal(got, want) {
		t.Errorf("AnalyzableMechanisms = %v, want %v", got, want)
	}
}
