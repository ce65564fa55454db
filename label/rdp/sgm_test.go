package rdp

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"testing"
)

// TestSGMReference checks the sampled Gaussian mechanism's RDP against
// 50-digit values of dp_accounting's integer-order formula
// (testdata/sgm_rdp_reference.py) to 5 significant digits and more.
func TestSGMReference(t *testing.T) {
	raw, err := os.ReadFile("testdata/sgm_rdp_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Q, Sigma, LogA, RDP string
			Alpha               int
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) < 100 {
		t.Fatalf("only %d reference cases", len(ref.Cases))
	}
	parse := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	worst := 0.0
	for _, c := range ref.Cases {
		q, z, want := parse(c.Q), parse(c.Sigma), parse(c.RDP)
		got := SGMRDP(q, z, c.Alpha)
		rel := math.Abs(got-want) / want
		worst = math.Max(worst, rel)
		if !(rel <= 1e-9) { // 5 significant digits asked; far more held
			t.Errorf("q=%s σ=%s α=%d: RDP %.12g, reference %.12g (relative error %.2g)", c.Q, c.Sigma, c.Alpha, got, want, rel)
		}
	}
	t.Logf("%d cases, worst relative error %.3g", len(ref.Cases), worst)
}

func TestSGMRho(t *testing.T) {
	tests := []struct {
		name     string
		q, z     float64
		maxOrder int
	}{
		{"small rate", 0.01, 2, 64},
		{"paper MNIST rate", 0.15, 20, 32},
		{"large noise", 0.1, 100, 256},
		{"low noise", 0.5, 1, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rho, err := SGMRho(tc.q, tc.z, tc.maxOrder)
			if err != nil {
				t.Fatal(err)
			}
			full := 1 / (2 * tc.z * tc.z)
			if !(rho > 0 && rho <= full*(1+1e-9)) {
				t.Fatalf("ρ %g not in (0, unsampled %g]", rho, full)
			}
			// The charge covers every order of the range, integer or not:
			// RDP(α) ≤ RDP(⌈α⌉) and, at integer orders, exactly.
			for a := 2; a <= tc.maxOrder; a++ {
				if r := SGMRDP(tc.q, tc.z, a); r > rho*float64(a) {
					t.Fatalf("order %d: RDP %g > ρα = %g", a, r, rho*float64(a))
				}
			}
			for x := 2.0; x <= float64(tc.maxOrder); x += 0.125 {
				// chord of ln A between the integers around x
				k := math.Floor(x)
				if int(k) == tc.maxOrder {
					break
				}
				a, b := SGMLogA(tc.q, tc.z, int(k)), SGMLogA(tc.q, tc.z, int(k)+1)
				if l := a + (x-k)*(b-a); l/(x-1) > rho*x*(1+1e-12) {
					t.Fatalf("order %g: chord bound %g > ρα = %g", x, l/(x-1), rho*x)
				}
			}
			// Amplification: well below the unsampled charge for small q.
			if tc.q <= 0.15 && tc.z >= 2 && !(rho < full/2) {
				t.Errorf("ρ %g: no amplification against %g", rho, full)
			}
		})
	}
	if _, err := SGMRho(0, 1, 10); err == nil {
		t.Error("q = 0 accepted")
	}
	if _, err := SGMRho(0.1, 1, 1); err == nil {
		t.Error("max order 1 accepted")
	}
}

func TestZCDPOrder(t *testing.T) {
	for _, tc := range []struct{ eps, delta float64 }{{1, 1e-5}, {0.5, 1e-6}, {4, 1e-5}} {
		rho := RhoForEps(tc.eps, tc.delta)
		l := ZCDPOrder(rho, tc.delta)
		if e := zcdpEpsAt(rho, tc.delta, l); math.Abs(e-tc.eps) > 1e-6*tc.eps {
			t.Errorf("ε %g: order %g converts to %g", tc.eps, l, e)
		}
	}
}

// TestPlanSGMRho: the planned σ fits the budget with the filter's exact
// arithmetic, one step below it does not, and it is below the unsampled σ.
func TestPlanSGMRho(t *testing.T) {
	for _, tc := range []struct {
		queries  int
		q        float64
		maxOrder int
	}{{100, 0.1, 18}, {599, 0.3, 18}, {10000, 0.05, 40}, {5, 1, 8}} {
		budget := RhoForEps(1, 1e-5)
		s, err := PlanSGMRho(budget, tc.queries, tc.q, 2, tc.maxOrder)
		if err != nil {
			t.Fatal(err)
		}
		charge := func(s float64) float64 {
			r, err := SGMRho(tc.q, s/math.Sqrt2, tc.maxOrder)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if !exactFits(budget, []int{tc.queries}, []float64{charge(s)}) {
			t.Errorf("%+v: σ %g does not fit", tc, s)
		}
		if below := s * (1 - 2e-3); exactFits(budget, []int{tc.queries}, []float64{charge(below)}) {
			t.Errorf("%+v: σ %g is not the smallest: %g fits", tc, s, below)
		}
		if full := math.Sqrt(float64(tc.queries) / budget); s > full*(1+1e-3) {
			t.Errorf("%+v: σ %g above the unsampled %g", tc, s, full)
		}
	}
}
