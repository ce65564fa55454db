package label

import (
	"fmt"
	"math"
	"testing"

	"github.com/pate-tool/pate/label/internal/fdp"
	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/learners"
)

// TestTradeoffDPLogReg audits one gradient release of dp-logreg (the style
// of tradeoff_test.go): the real learner (clipping, integer scaling,
// randomized rounding, the exact sum) with the noise and the claim of the
// real planner (dplrSteps: σ planned from a budget, its exact discrete
// Gaussian sampler, the ρ charged), one step, on a worst-case pair of
// neighbours: one row (d0) against one row more (d1) whose clipped gradient has
// the full norm Clip, so that its rounded vector r has ‖r‖² within 1% of
// SensSq. The released noisy sum S is projected on r; the test says d1 when
// the projection passes τ·σ. Its point must lie on or above the trade-off
// curve of the claimed ρ. Halve the claim, or shrink the noise, and it
// fails (.ci/mutation.sh).
func TestTradeoffDPLogReg(t *testing.T) {
	const budget = 0.5 // one step's ρ: μ = ‖r‖/σ ≈ 1, moderate error rates
	p, err := learners.PlanDPLogReg(1, 2, 1, budget)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps, p.Rows = 1, 1
	dims := learners.ParamCount(1, 2)
	sigma, g, rho, err := dplrSteps(budget, p, dims)
	if err != nil {
		t.Fatal(err)
	}
	// d0 is one row (the learner needs one), d1 adds a second: feature 1
	// (row norm 1), the other class. At θ = 0 a row's gradient is ±½ on
	// each of the four parameters: norm 1 = Clip, scaled to ±256 (integers:
	// the rounding is exact).
	x0 := &learners.Matrix{Rows: 1, Cols: 1, Data: []float32{1}}
	y0 := []int32{1}
	x1 := &learners.Matrix{Rows: 2, Cols: 1, Data: []float32{1, 1}}
	y1 := []int32{1, 0}
	fit := func(x *learners.Matrix, y []int32, nz learners.IntNoise, src noise.Source) []int64 {
		var s []int64
		capture := learners.IntNoiseFunc(func(v []int64) error {
			if err := nz.AddNoise(v); err != nil {
				return err
			}
			s = append(s[:0], v...)
			return nil
		})
		l := &learners.DPLogReg{Params: p, Noise: capture, Rand: src}
		if _, err := l.Fit(x, y, 2); err != nil {
			t.Error(err)
		}
		return s
	}
	none := learners.IntNoiseFunc(func([]int64) error { return nil })
	base := fit(x0, y0, none, noise.NewSeededSource(1, 1))
	r := fit(x1, y1, none, noise.NewSeededSource(1, 1))
	if len(r) != dims || len(base) != dims {
		t.Fatalf("released %d and %d coordinates, want %d", len(base), len(r), dims)
	}
	for i := range r {
		r[i] -= base[i] // the added row's rounded gradient
	}
	var rr float64
	for _, v := range r {
		rr += float64(v) * float64(v)
	}
	if !(rr <= float64(p.SensSq)) || rr < 0.98*float64(p.SensSq) {
		t.Fatalf("the row's rounded gradient has ‖r‖² = %g, want within 2%% below SensSq = %d", rr, p.SensSq)
	}
	norm := math.Sqrt(rr)
	t.Logf("σ = %g, ‖r‖ = %g, SensSq = %d, claimed ρ = %.4g, ‖r‖²/(2σ²) = %.4g", sigma, norm, p.SensSq, rho, rr/(2*sigma*sigma))

	n := tradeoffRuns()
	taus := []float64{0.5, 1}
	for _, tau := range taus {
		t.Run(fmt.Sprintf("τ = %gσ", tau), func(t *testing.T) {
			trial := func(x *learners.Matrix, y []int32, says1 bool) func() func(uint64) bool {
				return func() func(uint64) bool {
					return func(seed uint64) bool {
						s := fit(x, y, dplrNoise{g: g, src: noise.NewSeededSource(seed, 99)}, noise.NewSeededSource(seed, 98))
						var proj float64
						for i, v := range s {
							proj += float64(v-base[i]) * float64(r[i])
						}
						return (proj/norm >= tau*sigma) == says1
					}
				}
			}
			pt := fdp.Point{FP: countRuns(n, 1, trial(x0, y0, true)), N0: n, FN: countRuns(n, 2, trial(x1, y1, false)), N1: n}
			zcdpCheck("dp-logreg one step", rho, pt).verify(t, len(taus))
		})
	}
}

// TestTradeoffDPLogRegCount audits dp-logreg's other charge, the noisy row
// count, with the real planner's σc, sampler and claim (dplrCount): n rows
// (d0) against n + 1 (d1), the test says d1 when the released count
// reaches n + k. The budget is large so that σc ≈ 1 and the rates are
// moderate.
func TestTradeoffDPLogRegCount(t *testing.T) {
	sigma, g, rho, err := dplrCount(10)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("σc = %g, claimed ρ = %.4g", sigma, rho)
	const rows = 100
	n := tradeoffRuns()
	ks := []int64{1, 2}
	for _, k := range ks {
		t.Run(fmt.Sprintf("count ≥ n+%d", k), func(t *testing.T) {
			trial := func(count int64, says1 bool) func() func(uint64) bool {
				return func() func(uint64) bool {
					return func(seed uint64) bool {
						released := count + g.Sample(noise.NewSeededSource(seed, 97))
						return (released >= rows+k) == says1
					}
				}
			}
			pt := fdp.Point{FP: countRuns(n, 1, trial(rows, true)), N0: n, FN: countRuns(n, 2, trial(rows+1, false)), N1: n}
			zcdpCheck(fmt.Sprintf("dp-logreg row count σc=%g", sigma), rho, pt).verify(t, len(ks))
		})
	}
}
