package label

import (
	"fmt"
	"math"
	"math/big"
	"testing"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/learners"
)

func matrix(rows [][]float32) *learners.Matrix {
	m := learners.NewMatrix(len(rows), len(rows[0]))
	for i, r := range rows {
		copy(m.Row(i), r)
	}
	return m
}

// pfProbabilities is the exact permute-and-flip distribution, by
// enumerating every order of the candidates (small n only).
func pfProbabilities(errs []int64, eps float64) []float64 {
	n := len(errs)
	best := errs[0]
	for _, e := range errs {
		best = min(best, e)
	}
	acc := make([]float64, n)
	for i, e := range errs {
		acc[i] = math.Exp(-eps * float64(e-best) / 2)
	}
	out := make([]float64, n)
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	var count float64
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			count++
			reach := 1.0
			for _, h := range perm {
				out[h] += reach * acc[h]
				reach *= 1 - acc[h]
			}
			return
		}
		for i := k; i < n; i++ {
			perm[k], perm[i] = perm[i], perm[k]
			rec(k + 1)
			perm[k], perm[i] = perm[i], perm[k]
		}
	}
	rec(0)
	for i := range out {
		out[i] /= count
	}
	return out
}

// TestPermuteAndFlipDistribution compares the exact sampler's frequencies
// with the distribution computed by enumeration (fixed seed, 5σ bands).
func TestPermuteAndFlipDistribution(t *testing.T) {
	tests := []struct {
		name string
		errs []int64
		eps  string
	}{
		{"three candidates", []int64{3, 4, 6}, "1"},
		{"ties", []int64{2, 2, 3, 5}, "0.5"},
		{"rational eps", []int64{10, 11, 12, 13}, "1.37"},
	}
	const n = 100000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := noise.ParseRat(tc.eps)
			e, _ := r.Float64()
			want := pfProbabilities(tc.errs, e)
			src := noise.NewSeededSource(7, 1)
			got := make([]int, len(tc.errs))
			for range n {
				i, err := permuteAndFlip(src, tc.errs, r)
				if err != nil {
					t.Fatal(err)
				}
				got[i]++
			}
			for i := range got {
				p := float64(got[i]) / n
				sd := math.Sqrt(want[i] * (1 - want[i]) / n)
				if math.Abs(p-want[i]) > 5*sd+1e-9 {
					t.Errorf("candidate %d: frequency %.4f, exact %.4f", i, p, want[i])
				}
			}
			t.Logf("frequencies %v, exact %v", got, want)
		})
	}
	if _, err := permuteAndFlip(noise.NewSeededSource(1, 1), nil, big.NewRat(1, 1)); err == nil {
		t.Error("empty class accepted")
	}
}

// TestEmpiricalPrivacyPrivateLearner: neighbouring sensitive datasets (one
// row added) that move the exponential mechanism's choice as much as one row
// can, the whole learner (class from public data, errors, exact sampling)
// run many times; the best event's Clopper–Pearson lower bound on ε must
// stay below the claimed ε (δ = 0).
func TestEmpiricalPrivacyPrivateLearner(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 50000
	}
	// One feature, public values 0 and 1: one split (x ≤ 0), two stumps:
	// h0 = (left 0, right 1), h1 = (left 1, right 0). Many candidates make
	// the worst case visible, so use a second feature with the same split
	// duplicated at other thresholds: every extra stump is as bad as h1.
	xPub := matrix([][]float32{{0, 0}, {1, 1}, {0, 2}, {1, 3}})
	D := matrix([][]float32{{0, 0}, {1, 3}})
	yD := []int32{0, 1}
	// D′ adds a row that h0 gets wrong and every other stump right or wrong
	// alike: x = (0, 3), label 1.
	D1 := matrix([][]float32{{0, 0}, {1, 3}, {0, 3}})
	yD1 := []int32{0, 1, 1}
	for _, eps := range []string{"0.5", "1", "2"} {
		t.Run("eps "+eps, func(t *testing.T) {
			r, _ := noise.ParseRat(eps)
			claim, _ := r.Float64()
			tally := func(X *learners.Matrix, y []int32, seed uint64) []int {
				p, err := newPrivateLearner(xPub, X, y, 2, 4)
				if err != nil {
					t.Fatal(err)
				}
				errs := append([]int64(nil), p.errs...)
				src := noise.NewSeededSource(seed, 5)
				out := make([]int, len(p.hyps))
				for range n {
					i, err := permuteAndFlip(src, errs, r)
					if err != nil {
						t.Fatal(err)
					}
					out[i]++
				}
				return out
			}
			t0, t1 := tally(D, yD, 1), tally(D1, yD1, 2)
			lb, event := bestEventBound(t0, t1, n, 0)
			t.Logf("ε = %s: D → %v, D′ → %v; empirical ε ≥ %.3f (event %s), ratio %.2f", eps, t0, t1, lb, event, lb/claim)
			if lb > claim {
				t.Errorf("empirical lower bound %.4f exceeds the claimed ε %g", lb, claim)
			}
		})
	}
}

// bestEventBound is the best Clopper–Pearson ε lower bound over the events
// that are single outputs or their complements (Bonferroni over them).
func bestEventBound(t0, t1 []int, n int, delta float64) (float64, string) {
	alpha := 0.05 / float64(4*len(t0))
	best, event := 0.0, ""
	for j := range t0 {
		for _, comp := range []bool{false, true} {
			x0, x1 := t0[j], t1[j]
			if comp {
				x0, x1 = n-x0, n-x1
			}
			if b := epsLowerBound(x1, x0, n, alpha, delta); b > best {
				best = b
				event = fmt.Sprintf("output %d", j)
				if comp {
					event = "not " + event
				}
			}
		}
	}
	return best, event
}
