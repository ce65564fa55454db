package ledger

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
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

// TestComposedTotal: the total is a valid (ε, δ) statement at the summed δ
// of the runs: their ρ add, their failure δs (class discovery, svt's
// stable release) add, and ρ converts at what is left.
func TestComposedTotal(t *testing.T) {
	// The README's run: ε = 2, δ = 1e-5, classes discovered (δ/10).
	readme := BeginRequest{Mechanism: "confident-gnmax", MaxRho: rdp.RhoForEps(2, 0.9e-5), Delta: 1e-5,
		DiscoveryDelta: 1e-6, FailureDelta: 1e-6, Epsilon: 2}
	svt := BeginRequest{Mechanism: "svt", MaxRho: 2, Delta: 1e-5, FailureDelta: 0.5e-5, Epsilon: 2}
	type step struct {
		req BeginRequest
		end float64 // realized ρ; <0: no end entry (aborted: charged its maximum)
	}
	repeat := func(s step, n int) []step {
		var out []step
		for i := 0; i < n; i++ {
			out = append(out, s)
		}
		return out
	}
	tests := []struct {
		name               string
		steps              []step
		wantRho, wantDelta float64
		wantFailure        float64
		admitted, refused  float64 // lifetimes that admit, refuse one more README run
	}{
		{"ten README runs", repeat(step{readme, readme.MaxRho}, 10), 10 * readme.MaxRho, 1e-4, 1e-5, 50, 2},
		{"an svt run's stable-release δ is composed", []step{{svt, 0.3}}, 0.3, 1e-5, 0.5e-5, 50, 1},
		{"a run that released nothing charges no δ", []step{{readme, readme.MaxRho}, {readme, 0}}, readme.MaxRho, 1e-5, 1e-6, 50, 0.5},
		{"an aborted run is charged its maximum and its δ", []step{{readme, -1}, {svt, -1}}, readme.MaxRho + 2, 2e-5, 0.6e-5, 50, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			id := testID(t, tc.name)
			for _, s := range tc.steps {
				s.req.Dataset = id
				run, err := l.Begin(s.req, 0)
				if err != nil {
					t.Fatal(err)
				}
				if s.end >= 0 {
					if err := run.End(s.end); err != nil {
						t.Fatal(err)
					}
				}
			}
			d, err := l.Dataset(id)
			if err != nil {
				t.Fatal(err)
			}
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
			if !near(d.Rho, tc.wantRho) || !near(d.Delta, tc.wantDelta) || !near(d.FailureDelta, tc.wantFailure) {
				t.Fatalf("ρ %g δ %g failure δ %g, want %g %g %g", d.Rho, d.Delta, d.FailureDelta, tc.wantRho, tc.wantDelta, tc.wantFailure)
			}
			// The smaller of the zCDP reading and basic composition: each
			// run alone is (min(its claim, its ρ at its δ), δ_i)-DP.
			want := rdp.RoundUp(rdp.ZCDPEps(tc.wantRho, tc.wantDelta-tc.wantFailure), 6)
			basic := 0.0
			for _, s := range tc.steps {
				charged := s.end
				if charged < 0 {
					charged = s.req.MaxRho
				}
				if charged > 0 {
					basic += math.Min(s.req.Epsilon, Total(charged, s.req.Delta, s.req.FailureDelta))
				}
			}
			want = math.Min(want, rdp.RoundUp(basic, 6))
			if math.IsInf(d.Epsilon, 0) || !near(d.Epsilon, want) {
				t.Fatalf("total ε %g at δ %g, want %g", d.Epsilon, d.Delta, want)
			}
			// Each run alone claimed (ε_i, δ_i): the total at the summed δ
			// is at least the largest claim.
			for _, s := range tc.steps {
				if s.end != 0 && d.Epsilon < s.req.Epsilon {
					t.Fatalf("total ε %g below a run's claim %g", d.Epsilon, s.req.Epsilon)
				}
			}
			next := readme
			next.Dataset = id
			if _, err := l.Begin(next, tc.refused); !errors.Is(err, ErrLifetimeExceeded) {
				t.Fatalf("lifetime %g: %v, want a refusal", tc.refused, err)
			}
			if _, err := l.Begin(next, tc.admitted); err != nil {
				t.Fatalf("lifetime %g: %v", tc.admitted, err)
			}
		})
	}
}

// TestOldEntries: a ledger written before failure δs were recorded still
// charges svt's stable-release δ.
func TestOldEntries(t *testing.T) {
	l, _ := Open(t.TempDir())
	id := testID(t, "old")
	old := `{"kind":"begin","run":"a1","time":"2026-01-01T00:00:00Z","dataset":"` + id + `","mechanism":"svt","max_rho":0.5,"delta":1e-05,"discovery_delta":1e-06}
{"kind":"begin","run":"a2","time":"2026-01-01T00:00:00Z","dataset":"` + id + `","mechanism":"gnmax","max_rho":0.5,"delta":1e-05,"discovery_delta":1e-06}
`
	if err := os.WriteFile(l.path(id), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := l.Dataset(id)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1e-6 + 0.5e-5 + 1e-6; math.Abs(d.FailureDelta-want) > 1e-18 || d.Delta != 2e-5 {
		t.Fatalf("failure δ %g (want %g), δ %g", d.FailureDelta, want, d.Delta)
	}
}

// TestSeedReuse: a seed is used once per ledger directory, whatever the
// dataset (D and D plus one row are two identities, and that pair is the
// attack); the ledger keeps a keyed commitment, never the seed.
func TestSeedReuse(t *testing.T) {
	l, _ := Open(t.TempDir())
	seed := []byte("seed\x00123456789")
	req := func(dataset string, seed []byte) BeginRequest {
		return BeginRequest{Dataset: testID(t, dataset), Mechanism: "gnmax", MaxRho: 0.1, Delta: 1e-5, Seed: seed}
	}
	tests := []struct {
		name     string
		req      BeginRequest
		lifetime float64
		want     error
	}{
		{"first use", req("D", seed), 0, nil},
		{"the same seed on D plus one row", req("D+1", seed), 0, ErrSeedReused},
		{"the same seed on the same data", req("D", seed), 0, ErrSeedReused},
		{"another seed", req("D+1", []byte("seed\x00123456780")), 0, nil},
		{"a refused run does not spend its seed", req("E", []byte("seed\x0042")), 0.01, ErrLifetimeExceeded},
		{"so it can be used", req("E", []byte("seed\x0042")), 0, nil},
		{"a --replicable key", req("F", []byte("replicable\x00k")), 0, nil},
		{"reused", req("G", []byte("replicable\x00k")), 0, ErrSeedReused},
		{"unseeded runs are never refused", req("D", nil), 0, nil},
		{"twice", req("D", nil), 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(l.path(tc.req.Dataset))
			_, err := l.Begin(tc.req, tc.lifetime)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Begin: %v, want %v", err, tc.want)
			}
			after, _ := os.ReadFile(l.path(tc.req.Dataset))
			if (err != nil) != (len(after) == len(before)) {
				t.Fatalf("ledger file grew by %d bytes, error %v", len(after)-len(before), err)
			}
		})
	}
	seeds, err := os.ReadFile(filepath.Join(l.Dir(), seedsFile))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(seeds), "\n"); n != 4 {
		t.Errorf("%d seed commitments, want 4", n)
	}
	if strings.Contains(string(seeds), "123456789") || strings.Contains(string(seeds), "seed") {
		t.Error("the seeds file holds a seed")
	}
	entries, err := l.Entries(testID(t, "D"))
	if err != nil {
		t.Fatal(err)
	}
	if !entries[0].Seeded || len(entries[0].SeedCommit) != 64 || entries[1].Seeded {
		t.Errorf("entries: %+v", entries)
	}
	if fi, err := os.Stat(filepath.Join(l.Dir(), keyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("seed key: %v", err)
	}
	if ds, err := l.Datasets(); err != nil || len(ds) != 4 {
		t.Errorf("datasets: %d, %v", len(ds), err)
	}
}

// TestPureComposition: runs of pure ε-DP events compose by their RDP
// curves and, when every run is pure, by basic composition, not only as
// ε²/2-zCDP: one svt run of one ε = 2 event is (2, δ_svt)-DP, which the
// zCDP reading alone puts at ε ≈ 11.
func TestPureComposition(t *testing.T) {
	rhoB := rdp.RhoForEps(2, 1e-5)
	svt := BeginRequest{Mechanism: "svt", MaxRho: 2, Delta: 1e-5, FailureDelta: 0.5e-5, Epsilon: 2,
		PureMaxEpsilon: 2, PureMaxRho: rhoB}
	gauss := BeginRequest{Mechanism: "gnmax", MaxRho: rhoB, Delta: 1e-5, Epsilon: 2}
	type step struct {
		req    BeginRequest
		end    float64 // realized ρ; <0: no end entry
		events int64
		eps0   float64
	}
	zcdpOnly := Total(2, 1e-5, 0.5e-5)
	tests := []struct {
		name     string
		steps    []step
		low, max float64 // low ≤ total ε ≤ max
	}{
		{"one event of ε 2: basic composition", []step{{svt, 2, 1, 2}}, 2, 2},
		{"two runs of one event: 4 by basic composition", []step{{svt, 2, 1, 2}, {svt, 2, 1, 2}}, 4, 4},
		{"forty small events: the curve", []step{{svt, 40 * 0.05 * 0.05 / 2, 40, 0.05}}, 0.1, 2},
		{"an aborted pure run: the larger of its two caps' curves", []step{{svt, -1, 0, 0}}, 2, zcdpOnly - 1},
		{"pure and Gaussian: no basic reading", []step{{svt, 2, 1, 2}, {gauss, rhoB, 0, 0}}, 3, Total(2+rhoB, 2e-5, 0.5e-5) - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, _ := Open(t.TempDir())
			id := testID(t, tc.name)
			for _, s := range tc.steps {
				s.req.Dataset = id
				run, err := l.Begin(s.req, 0)
				if err != nil {
					t.Fatal(err)
				}
				if s.end >= 0 {
					if err := run.EndPure(s.end, s.events, s.eps0); err != nil {
						t.Fatal(err)
					}
				}
			}
			d, err := l.Dataset(id)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ε = %g at δ = %g (ρ %g: zCDP reading %g)", d.Epsilon, d.Delta, d.Rho, Total(d.Rho, d.Delta, d.FailureDelta))
			if !(d.Epsilon >= tc.low && d.Epsilon <= tc.max) {
				t.Fatalf("total ε %g, want in [%g, %g]", d.Epsilon, tc.low, tc.max)
			}
			if d.Epsilon > Total(d.Rho, d.Delta, d.FailureDelta) {
				t.Fatalf("total ε %g above its zCDP reading", d.Epsilon)
			}
		})
	}
	// A lifetime that one pure run fits is not refused for the zCDP reading.
	l, _ := Open(t.TempDir())
	req := svt
	req.Dataset = testID(t, "lifetime")
	if _, err := l.Begin(req, 5); err != nil {
		t.Fatalf("one svt run of ε 2 under a lifetime of 5: %v", err)
	}
}

// TestKey: a dataset's name in a ledger is a keyed hash of its identity:
// stable in one directory, unrelated across directories, and not the
// identity itself (which anyone could recompute from candidate datasets).
func TestKey(t *testing.T) {
	a, _ := Open(t.TempDir())
	b, _ := Open(t.TempDir())
	id := NamedID("adult")
	tests := []struct {
		name string
		l    *Ledger
		id   string
		same bool
	}{
		{"the same directory and identity", a, id, true},
		{"another directory", b, id, false},
		{"another identity", a, NamedID("adult2"), false},
	}
	ka, err := a.Key(id)
	if err != nil || len(ka) != 64 || ka == id {
		t.Fatalf("key %q: %v", ka, err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k, err := tc.l.Key(tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if (k == ka) != tc.same {
				t.Fatalf("same key: %v, want %v", k == ka, tc.same)
			}
		})
	}
}
