package label

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/rdp"
)

func TestDiscoveryShare(t *testing.T) {
	rho := rdp.RhoForEps(1, 1e-5*(1-discoveryDeltaShare))
	tests := []struct {
		name  string
		noisy int64
		rho   float64
		want  float64 // 0: computed from the formula, strictly inside the clamp
	}{
		{"an empty file's count", 0, rho, DiscoveryMaxShare},
		{"a few hundred rows", 300, rho, DiscoveryMaxShare},
		{"a thousand rows", 1000, rho, 0},
		{"many rows: the fixed share", 100_000, rho, discoveryRhoShare},
		{"a large ε on few rows", 1000, 50 * rho, discoveryRhoShare},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DiscoveryShare(tc.noisy, tc.rho)
			want := tc.want
			if want == 0 {
				sigma := float64(tc.noisy) / DiscoveryRowsPerSigma
				want = 1 / (2 * tc.rho * sigma * sigma)
				if !(want > discoveryRhoShare && want < DiscoveryMaxShare) {
					t.Fatalf("case %q is not inside the clamp (%g)", tc.name, want)
				}
			}
			if math.Abs(got-want) > 1e-12 {
				t.Errorf("DiscoveryShare(%d, %g) = %g, want %g", tc.noisy, tc.rho, got, want)
			}
		})
	}
	// Never less discovery for fewer rows.
	prev := math.Inf(1)
	for n := int64(0); n <= 20_000; n += 50 {
		s := DiscoveryShare(n, rho)
		if s > prev {
			t.Fatalf("the share grows from %g to %g at n̂ = %d", prev, s, n)
		}
		prev = s
	}
}

// TestSmallFileDiscoversItsClasses: a run that leaves the plan and the
// classes to pate on 300 sensitive rows at ε = 0.5 sizes its class
// discovery on the chooser's count, releases both classes (the fixed 2%
// share needed about 262 rows a class and refused), labels every public
// row, states the share and its rule, and its report audits.
func TestSmallFileDiscoversItsClasses(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	const d, k, nPriv, nPub = 4, 2, 300, 200
	w := make([]float64, d*k)
	wr := rand.New(rand.NewPCG(3, 9))
	for i := range w {
		w[i] = 2 * wr.NormFloat64()
	}
	seed := uint64(5)
	for _, choose := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(11, 4))
		priv := synthetic(mem, nPriv, d, k, 100, true, rng, w)
		pub := synthetic(mem, nPub, d, k, 100, false, rng, w)
		cfg := Config{Label: "label", Features: []string{"x0", "x1", "x2", "x3"}, Keep: []string{"x0"},
			Teachers: 250, Epsilon: 0.5, Delta: 1e-5, PublicRows: nPub, Seed: &seed, BatchSize: 100, Allocator: mem}
		if choose {
			cfg.Choose, cfg.Student, cfg.Select = true, "logreg", SelectUncertain
		} else {
			cfg.Mechanism = Mechanisms[0] // named: the fixed share
		}
		rep, out, err := runCollectErr(t, cfg, priv, pub)
		priv.release()
		pub.release()
		if !choose {
			if err == nil {
				t.Fatalf("the fixed share released %d classes from %d rows at ε = 0.5; the test's premise is gone", len(rep.Classes), nPriv)
			}
			continue
		}
		if err != nil {
			t.Fatalf("the sized discovery: %v", err)
		}
		if len(rep.Classes) != k {
			t.Fatalf("released classes %v, want %d", rep.Classes, k)
		}
		disc := rep.ClassDiscovery
		if disc == nil || disc.Rule == "" || float64(disc.Share) <= discoveryRhoShare {
			t.Fatalf("the report's discovery %+v does not state a share above the fixed one and its rule", disc)
		}
		if got := int64(len(out.labels)); got != nPub {
			t.Errorf("%d labels, want %d", got, nPub)
		}
		if res, err := Audit(rep); err != nil || !res.Holds || !allPass(res) {
			t.Errorf("audit: %v", err)
		}
	}
}
