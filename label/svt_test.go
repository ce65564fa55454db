package label

import (
	"math"
	"math/big"
	"testing"

	"github.com/pate-tool/pate/label/noise"
)

func TestDistanceToInstability(t *testing.T) {
	tests := [][]int32{{5, 5}, {6, 4}, {4, 6}, {10, 0, 0}, {0, 10, 3}, {3, 3, 3}, {2, 9, 9, 1}, {7}}
	// Brute force: move votes one at a time from the top class to each other
	// class until the first argmax changes.
	brute := func(counts []int32) (int, int64) {
		top := 0
		for j, c := range counts {
			if c > counts[top] {
				top = j
			}
		}
		if len(counts) == 1 {
			return top, math.MaxInt32
		}
		best := int64(math.MaxInt64)
		for j := range counts {
			if j == top {
				continue
			}
			c := append([]int32(nil), counts...)
			for k := int64(1); ; k++ {
				c[top]--
				c[j]++
				nt := 0
				for i, v := range c {
					if v > c[nt] {
						nt = i
					}
				}
				if nt != top {
					best = min(best, k)
					break
				}
			}
		}
		return top, best - 1
	}
	for _, c := range tests {
		top, dist := distanceToInstability(c)
		bt, bd := brute(c)
		if top != bt || dist != bd {
			t.Errorf("%v: (%d, %d), brute force (%d, %d)", c, top, dist, bt, bd)
		}
	}
	// Hand-checked values.
	for _, tc := range []struct {
		counts []int32
		dist   int64
	}{{[]int32{5, 5}, 0}, {[]int32{6, 4}, 1}, {[]int32{4, 6}, 0}, {[]int32{10, 0, 0}, 5}, {[]int32{0, 10, 3}, 3}} {
		if _, d := distanceToInstability(tc.counts); d != tc.dist {
			t.Errorf("%v: distance %d, want %d", tc.counts, d, tc.dist)
		}
	}
	// Sensitivity 1: moving one vote changes the distance by at most 1.
	src := noise.NewSeededSource(3, 3)
	for range 2000 {
		c := make([]int32, 2+noise.UniformUint64(src, 3))
		for i := range 20 {
			_ = i
			c[noise.UniformUint64(src, uint64(len(c)))]++
		}
		_, d0 := distanceToInstability(c)
		from, to := int(noise.UniformUint64(src, uint64(len(c)))), int(noise.UniformUint64(src, uint64(len(c))))
		if c[from] == 0 {
			continue
		}
		c[from]--
		c[to]++
		if _, d1 := distanceToInstability(c); d1-d0 > 1 || d0-d1 > 1 {
			t.Fatalf("one moved vote changed the distance from %d to %d (%v)", d0, d1, c)
		}
	}
}

func TestSVTFailureDelta(t *testing.T) {
	// Reference values from an independent Python evaluation of
	// min_a c·Pr[η ≤ −a] + m·Pr[ν ≥ w−a+1], Pr[X ≥ k] = p^k/(1+p), p = e^{−1/t}.
	tests := []struct {
		t, q    float64
		w, m, c int64
		want    float64
	}{
		{1, 2, 56, 16281, 1, 4.479352798559179e-06},
		{1, 2, 55, 16281, 1, 6.313235670431003e-06},
		{4, 8, 100, 1000, 3, 0.03264680792344232},
	}
	for _, tc := range tests {
		got := svtFailure(tc.t, tc.q, tc.w, tc.m, tc.c)
		if math.Abs(got-tc.want) > 1e-8*tc.want {
			t.Errorf("failure(t %g, q %g, w %d, m %d, c %d) = %.15g, want %.15g", tc.t, tc.q, tc.w, tc.m, tc.c, got, tc.want)
		}
	}
	for _, tc := range []struct {
		t    float64
		k    int64
		want float64
	}{{2, 3, 0.13888945025695432}, {2, 0, 0.6224593312018545}, {2, -2, 0.8611105497430457}} {
		if got := dlapTailGE(tc.t, tc.k); math.Abs(got-tc.want) > 1e-14 {
			t.Errorf("Pr[X ≥ %d], scale %g = %.17g, want %.17g", tc.k, tc.t, got, tc.want)
		}
	}
	// The planner picks the smallest threshold that fits: ε0 = 2 gives
	// scales 1 and 2, and 16,281 queries at δ/2 = 5e-6 need w = 56.
	p := MechanismParams{SVTEpsilon0: "2"}
	w, err := svtPlanThreshold(p, 16281, 1, 5e-6)
	if err != nil || w != 56 {
		t.Errorf("planned w = %d (%v), want 56", w, err)
	}
}

// svtRun runs one sparse-vector instance over the histograms and returns
// the output pattern: the index of the first unstable query, or len(hists)
// when every query was answered.
func svtRun(s *svtState, a *aggregator, hists [][]int32) int {
	var f pureFilter
	f.max, f.eps0 = 1, 1
	s.active = false
	for i, h := range hists {
		_, o := s.query(a, h, &f)
		if o != outAnswered {
			return i
		}
	}
	return len(hists)
}

// TestEmpiricalPrivacySVT: one instance (the run's only event when the
// budget pays for one), neighbouring vote sequences in which one teacher
// moves its vote on every query — the most one privacy unit can do — so
// that every distance drops by one; many seeded runs; the best event's
// Clopper–Pearson lower bound must stay below ε0.
func TestEmpiricalPrivacySVT(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 50000
	}
	for _, tc := range []struct {
		eps0 string
		w    int64
	}{{"1", 6}, {"2", 3}} {
		t.Run("eps0 "+tc.eps0, func(t *testing.T) {
			p := MechanismParams{SVTEpsilon0: tc.eps0, SVTThreshold: tc.w}
			claim, _ := pureEventEps(MechanismSVT, 2, p)
			// D: distance w+1 on 6 queries (top 2w+4 of 2w+4+… votes); D′:
			// one teacher moved from the top to the other class on each.
			var d0, d1 [][]int32
			for range 6 {
				top := int32(20 + 2*tc.w)
				d0 = append(d0, []int32{top, 20 - 2})
				d1 = append(d1, []int32{top - 1, 20 - 1})
			}
			tally := func(h [][]int32, seed uint64) []int {
				a, err := newAggregator(MechanismSVT, 2, p)
				if err != nil {
					t.Fatal(err)
				}
				a.svt.src = noise.NewSeededSource(seed, 9)
				out := make([]int, len(h)+1)
				for range n {
					out[svtRun(a.svt, a, h)]++
				}
				return out
			}
			t0, t1 := tally(d0, 1), tally(d1, 2)
			lb, event := bestEventBound(t0, t1, n, 0)
			t.Logf("ε0 = %s, w = %d: D (distance %d) → %v, D′ → %v; empirical ε ≥ %.3f (event %s), ratio %.2f",
				tc.eps0, tc.w, func() int64 { _, d := distanceToInstability(d0[0]); return d }(), t0, t1, lb, event, lb/claim)
			if lb > claim {
				t.Errorf("empirical lower bound %.4f exceeds the claimed ε0 %g", lb, claim)
			}
		})
	}
}

// TestEmpiricalAuditHasPowerPure is the negative control of the pure
// mechanisms' empirical tests: the same harness, with noise far smaller
// than the claim assumes, must find an ε above the claim.
func TestEmpiricalAuditHasPowerPure(t *testing.T) {
	const n = 50000
	t.Run("svt noise 8x too small", func(t *testing.T) {
		claim := 0.5
		p := MechanismParams{SVTEpsilon0: "4", SVTThreshold: 3}
		var d0, d1 [][]int32
		for range 6 {
			d0 = append(d0, []int32{26, 18})
			d1 = append(d1, []int32{25, 19})
		}
		tally := func(h [][]int32, seed uint64) []int {
			a, err := newAggregator(MechanismSVT, 2, p)
			if err != nil {
				t.Fatal(err)
			}
			a.svt.src = noise.NewSeededSource(seed, 9)
			out := make([]int, len(h)+1)
			for range n {
				out[svtRun(a.svt, a, h)]++
			}
			return out
		}
		lb, event := bestEventBound(tally(d0, 1), tally(d1, 2), n, 0)
		t.Logf("empirical ε ≥ %.3f (event %s), claim %g", lb, event, claim)
		if lb <= claim {
			t.Errorf("the audit missed svt noise 8x too small: ε ≥ %.3f, claim %g", lb, claim)
		}
	})
	t.Run("exponential mechanism eps 8x too large", func(t *testing.T) {
		claim := 0.5
		r := big.NewRat(4, 1)
		tally := func(errs []int64, seed uint64) []int {
			src := noise.NewSeededSource(seed, 5)
			out := make([]int, len(errs))
			for range n {
				i, err := permuteAndFlip(src, errs, r)
				if err != nil {
					t.Fatal(err)
				}
				out[i]++
			}
			return out
		}
		// Neighbours: one added row raises the first candidate's errors by one.
		lb, event := bestEventBound(tally([]int64{0, 1, 1, 1}, 1), tally([]int64{1, 1, 1, 1}, 2), n, 0)
		t.Logf("empirical ε ≥ %.3f (event %s), claim %g", lb, event, claim)
		if lb <= claim {
			t.Errorf("the audit missed an exponential mechanism 8x too sharp: ε ≥ %.3f, claim %g", lb, claim)
		}
	})
}
