package label

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// dplrBlobs returns n rows of dim features in classes Gaussian clusters
// (class i%classes), the same centres for every seed of the rows.
func dplrBlobs(n, dim, classes int, seed uint64) (*learners.Matrix, []int32) {
	centres := rand.New(rand.NewPCG(42, 0))
	c := make([]float64, classes*dim)
	for i := range c {
		c[i] = 2.5 * centres.NormFloat64()
	}
	r := rand.New(rand.NewPCG(seed, 1))
	x := learners.NewMatrix(n, dim)
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		k := i % classes
		y[i] = int32(k)
		for j := 0; j < dim; j++ {
			x.Data[i*dim+j] = float32(c[k*dim+j] + r.NormFloat64())
		}
	}
	return x, y
}

func dplrAccuracy(m learners.Model, x *learners.Matrix, y []int32) float64 {
	out := make([]int32, x.Rows)
	m.Predict(x, out)
	ok := 0
	for i := range out {
		if out[i] == y[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(out))
}

// TestFitDPLogRegSpendsItsFilter runs DP logistic regression with the exact
// discrete Gaussian sampler under a zCDP filter: the run charges the whole
// budget (count and steps) and no more, its (ε, δ) is at most the target,
// the same seeds give the same model, and it learns separable classes.
func TestFitDPLogRegSpendsItsFilter(t *testing.T) {
	x, y := dplrBlobs(900, 6, 3, 1)
	xt, yt := dplrBlobs(600, 6, 3, 2)
	for _, c := range []struct {
		eps    float64
		minAcc float64
	}{{0.5, 0.8}, {1, 0.85}, {4, 0.9}} {
		const delta = 1e-5
		fit := func() (learners.Model, *DPLogRegRelease, *rdp.Filter) {
			f, err := rdp.NewFilter(c.eps, delta)
			if err != nil {
				t.Fatal(err)
			}
			m, rel, err := FitDPLogReg(f, x, y, 3, noise.NewSeededSource(7, 0), noise.NewSeededSource(7, 1), DPLogRegOptions{})
			if err != nil {
				t.Fatalf("ε=%v: %v", c.eps, err)
			}
			return m, rel, f
		}
		m, rel, f := fit()
		if f.Charges() != 2 {
			t.Errorf("ε=%v: %d charges, want 2 (count, steps)", c.eps, f.Charges())
		}
		if got := f.Spent(); math.Abs(got-rel.Rho) > 1e-12*rel.Rho || got > f.Budget() || got < 0.999*f.Budget() {
			t.Errorf("ε=%v: spent ρ %v, reported %v, budget %v", c.eps, got, rel.Rho, f.Budget())
		}
		if e := rdp.ZCDPEps(rel.Rho, delta); e > c.eps {
			t.Errorf("ε=%v: the run's ρ converts to ε %v", c.eps, e)
		}
		if want := rdp.DGaussStepsRho(float64(rel.Params.SensSq), rel.Sigma, 21, 1, rel.Params.Steps) + 1/(2*rel.CountSigma*rel.CountSigma); math.Abs(want-rel.Rho) > 1e-12*want {
			t.Errorf("ε=%v: reported ρ %v, recomputed %v", c.eps, rel.Rho, want)
		}
		if acc := dplrAccuracy(m, xt, yt); acc < c.minAcc {
			t.Errorf("ε=%v: accuracy %.3f, want ≥ %.2f", c.eps, acc, c.minAcc)
		}
		m2, _, _ := fit()
		a, b := make([]int32, xt.Rows), make([]int32, xt.Rows)
		m.Predict(xt, a)
		m2.Predict(xt, b)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("ε=%v: same seeds, different predictions at row %d", c.eps, i)
			}
		}
	}
}

// TestDPLogRegNoiseIsTheDiscreteGaussian checks the wiring of the sampler:
// the noise the learner receives has the planned σ (empirical variance
// within 10% over 20,000 draws; the discrete Gaussian's variance is
// slightly below σ²) and mean near 0.
func TestDPLogRegNoiseIsTheDiscreteGaussian(t *testing.T) {
	const sigma = 27350.0
	g, err := dplrSampler(sigma)
	if err != nil {
		t.Fatal(err)
	}
	var n learners.IntNoise = dplrNoise{g: g, src: noise.NewSeededSource(3, 0)}
	v := make([]int64, 20000)
	if err := n.AddNoise(v); err != nil {
		t.Fatal(err)
	}
	var s, s2 float64
	for _, a := range v {
		s += float64(a)
		s2 += float64(a) * float64(a)
	}
	mean, vr := s/float64(len(v)), s2/float64(len(v))
	if math.Abs(mean) > 5*sigma/math.Sqrt(float64(len(v))) {
		t.Errorf("noise mean %v", mean)
	}
	if r := vr / (sigma * sigma); r < 0.9 || r > 1.1 {
		t.Errorf("noise variance / σ² = %v", r)
	}
}

func TestFitDPLogRegErrors(t *testing.T) {
	x, y := dplrBlobs(50, 2, 2, 1)
	src := func() noise.Source { return noise.NewSeededSource(1, 0) }
	spent, _ := rdp.NewFilter(1, 1e-5)
	if err := spent.Charge(spent.Budget()); err != nil {
		t.Fatal(err)
	}
	fresh := func() *rdp.Filter { f, _ := rdp.NewFilter(1, 1e-5); return f }
	if _, _, err := FitDPLogReg(spent, x, y, 2, src(), src(), DPLogRegOptions{}); !errors.Is(err, rdp.ErrBudgetExceeded) {
		t.Errorf("spent filter: %v, want ErrBudgetExceeded", err)
	}
	if _, _, err := FitDPLogReg(nil, x, y, 2, src(), src(), DPLogRegOptions{}); err == nil {
		t.Error("nil filter: no error")
	}
	if _, _, err := FitDPLogReg(fresh(), x, y, 2, src(), nil, DPLogRegOptions{}); err == nil {
		t.Error("nil rounding source: no error")
	}
	f := fresh()
	if _, _, err := FitDPLogReg(f, x, y, 1, src(), src(), DPLogRegOptions{}); err == nil {
		t.Error("one class: no error")
	}
	if _, _, err := FitDPLogReg(f, x, y[:10], 2, src(), src(), DPLogRegOptions{}); err == nil {
		t.Error("10 labels for 50 rows: no error")
	}
	if f.Charges() != 0 {
		t.Errorf("invalid runs charged the filter %d times", f.Charges())
	}
}
