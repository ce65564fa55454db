package ledger

import (
	"errors"
	"math"
	"os"
	"sync"
	"testing"

	"github.com/pate-tool/pate/label/rdp"
)

func testID(t *testing.T, s string) string {
	t.Helper()
	return NamedID(s)
}

func TestBeginEndTotal(t *testing.T) {
	l, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	id := testID(t, "x")
	rho1 := rdp.RhoForEps(1, 1e-5)
	tests := []struct {
		name     string
		maxRho   float64
		lifetime float64
		end      float64 // <0: no end entry
		wantErr  error
		wantRho  float64 // dataset total after the step
	}{
		{"first run ends below its max", rho1, 1.5, rho1 / 2, nil, rho1 / 2},
		{"second run crashes (no end)", rho1, 1.5, -1, nil, rho1/2 + rho1},
		{"third run refused", rho1, 1.5, 0, ErrLifetimeExceeded, rho1/2 + rho1},
		{"no lifetime: always recorded", rho1, 0, rho1, nil, rho1/2 + 2*rho1},
		{"unbounded run refused under a lifetime", math.Inf(1), 100, 0, ErrLifetimeExceeded, rho1/2 + 2*rho1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run, err := l.Begin(BeginRequest{Dataset: id, Labels: []string{"y"}, Mechanism: "gnmax", MaxRho: tc.maxRho, Delta: 1e-5}, tc.lifetime)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Begin: %v, want %v", err, tc.wantErr)
			}
			if err == nil && tc.end >= 0 {
				if err := run.End(tc.end); err != nil {
					t.Fatal(err)
				}
			}
			d, err := l.Dataset(id)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(d.Rho-tc.wantRho) > 1e-12 {
				t.Fatalf("total ρ %g, want %g", d.Rho, tc.wantRho)
			}
			if d.Epsilon != Total(d.Rho, d.Delta, 0) {
				t.Fatalf("total ε %g", d.Epsilon)
			}
		})
	}
}

func TestTornLastLine(t *testing.T) {
	dir := t.TempDir()
	l, _ := Open(dir)
	id := testID(t, "torn")
	if _, err := l.Begin(BeginRequest{Dataset: id, MaxRho: 0.1, Delta: 1e-5}, 0); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(l.path(id), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"kind":"begin","run":"ab`) // a crash mid-write
	f.Close()
	if _, err := l.Begin(BeginRequest{Dataset: id, MaxRho: 0.2, Delta: 1e-5}, 0); err != nil {
		t.Fatalf("Begin after a torn line: %v", err)
	}
	d, err := l.Dataset(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Runs) != 2 || math.Abs(d.Rho-0.3) > 1e-12 {
		t.Fatalf("runs %d, ρ %g", len(d.Runs), d.Rho)
	}
	// A corrupt line in the middle is an error, not silently skipped.
	b, _ := os.ReadFile(l.path(id))
	os.WriteFile(l.path(id), append([]byte("garbage\n"), b...), 0o600)
	if _, err := l.Dataset(id); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt ledger: %v", err)
	}
}

// TestConcurrentBegin: goroutines racing for the last of a lifetime budget
// (each Begin takes its own flock on its own descriptor): exactly one wins.
func TestConcurrentBegin(t *testing.T) {
	l, _ := Open(t.TempDir())
	id := testID(t, "race")
	rho := rdp.RhoForEps(1, 1e-5)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = l.Begin(BeginRequest{Dataset: id, MaxRho: rho, Delta: 1e-5}, 1.2)
		}(i)
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ErrLifetimeExceeded):
			t.Fatal(err)
		}
	}
	if won != 1 {
		t.Fatalf("%d runs admitted, want 1", won)
	}
}
