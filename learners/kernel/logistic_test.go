package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refLogistic is the float64 reference of LogisticEval: one log1p per row and
// compensated (Neumaier) sums, so its own error is far below the tolerances.
// mag[j] is Σ_i |(σ(z_i) − t_i)·x_ij|, the scale of gradient component j.
func refLogistic(x, t []float64, rows, dim int, theta []float64) (f float64, grad, mag []float64) {
	grad = make([]float64, dim+1)
	mag = make([]float64, dim+1)
	comp := make([]float64, dim+2) // Neumaier compensations: grad, then f
	add := func(s *float64, c *float64, v float64) {
		n := *s + v
		if math.Abs(*s) >= math.Abs(v) {
			*c += (*s - n) + v
		} else {
			*c += (v - n) + *s
		}
		*s = n
	}
	for i := 0; i < rows; i++ {
		row := x[i*dim : (i+1)*dim]
		z, zc := theta[dim], 0.0
		for j, v := range row {
			add(&z, &zc, theta[j]*v)
		}
		z += zc
		// log(1+e^z) − t·z, with the linear part first so t = 1, z > 0
		// cancels exactly.
		var loss, sig float64
		if z >= 0 {
			loss = (z - t[i]*z) + math.Log1p(math.Exp(-z))
			sig = 1 / (1 + math.Exp(-z))
		} else {
			loss = math.Log1p(math.Exp(z)) - t[i]*z
			sig = math.Exp(z) / (1 + math.Exp(z))
		}
		add(&f, &comp[dim+1], loss)
		r := sig - t[i]
		for j, v := range row {
			add(&grad[j], &comp[j], r*v)
			mag[j] += math.Abs(r * v)
		}
		add(&grad[dim], &comp[dim], r)
		mag[dim] += math.Abs(r)
	}
	for j := range grad {
		grad[j] += comp[j]
	}
	return f + comp[dim+1], grad, mag
}

func TestLogisticEvalMatchesReference(t *testing.T) {
	type tc struct {
		rows, dim int
		scale     float64 // magnitude of w·x; "saturated" reaches |z| of about 40
		bias      float64
	}
	var cases []tc
	for _, dim := range []int{1, 3, 8, 13, 64, 65, 112} {
		for _, rows := range []int{1, 7, 400, 1500} {
			for _, s := range []struct{ scale, bias float64 }{{0.3, 0}, {3, -1}, {20, 20}, {40, -40}} {
				cases = append(cases, tc{rows, dim, s.scale, s.bias})
			}
		}
	}
	cases = append(cases, tc{33, 5, 1000, 0}) // |z| beyond the exp's range: e^−|z| is 0 or subnormal
	for _, c := range cases {
		r := rand.New(rand.NewPCG(uint64(c.rows), uint64(c.dim)))
		x := make([]float64, c.rows*c.dim)
		for i := range x {
			x[i] = r.NormFloat64()
		}
		lab := make([]float64, c.rows)
		for i := range lab {
			lab[i] = float64(r.IntN(2))
		}
		theta := make([]float64, c.dim+1)
		for j := range theta[:c.dim] {
			theta[j] = c.scale * r.NormFloat64() / math.Sqrt(float64(c.dim))
		}
		theta[c.dim] = c.bias
		fRef, gRef, mag := refLogistic(x, lab, c.rows, c.dim, theta)
		name := fmt.Sprintf("rows=%d/dim=%d/scale=%g/bias=%g", c.rows, c.dim, c.scale, c.bias)
		t.Run(name, func(t *testing.T) {
			paths(t, func(t *testing.T) {
				grad := make([]float64, c.dim+2)
				for j := range grad {
					grad[j] = math.NaN() // must be overwritten
				}
				grad[c.dim+1] = 7 // past dim+1: must be left alone
				f := LogisticEval(x, lab, c.rows, c.dim, theta, grad)
				// The loss is a sum of non-negative terms; the product of
				// the softplus factors adds about rows·2⁻⁵³ absolute.
				if d := math.Abs(f - fRef); d > 1e-12*math.Max(1, fRef) {
					t.Errorf("loss %.17g, reference %.17g (|Δ| = %.3g)", f, fRef, d)
				}
				for j := range gRef {
					if d := math.Abs(grad[j] - gRef[j]); !(d <= 1e-12*math.Max(1, mag[j])) {
						t.Errorf("grad[%d] = %.17g, reference %.17g (|Δ| = %.3g, Σ|terms| = %.3g)", j, grad[j], gRef[j], d, mag[j])
					}
				}
				if grad[c.dim+1] != 7 {
					t.Errorf("grad[dim+1] overwritten: %g", grad[c.dim+1])
				}
			})
		})
	}
}

// TestLogisticEvalEdges covers no rows, no features and NaN on every path.
func TestLogisticEvalEdges(t *testing.T) {
	paths(t, func(t *testing.T) {
		// No rows: zero loss and gradient.
		grad := []float64{5, 5, 5}
		if f := LogisticEval(nil, nil, 0, 2, []float64{1, 2, 3}, grad); f != 0 || grad[0] != 0 || grad[1] != 0 || grad[2] != 0 {
			t.Errorf("no rows: f = %g, grad = %v", f, grad)
		}
		// No features: the intercept-only model, z = b for every row.
		grad = []float64{5}
		f := LogisticEval(nil, []float64{1, 0, 1}, 3, 0, []float64{0}, grad)
		if want := 3 * math.Ln2; math.Abs(f-want) > 1e-15 || math.Abs(grad[0]-(-0.5)) > 1e-15 {
			t.Errorf("dim 0: f = %.17g (want %.17g), grad = %v (want [-0.5])", f, want, grad)
		}
		// A NaN feature makes the loss NaN, as in the pure-Go path.
		grad = make([]float64, 3)
		if f := LogisticEval([]float64{1, math.NaN()}, []float64{1}, 1, 2, []float64{1, 1, 0}, grad); !math.IsNaN(f) {
			t.Errorf("NaN feature: f = %g, want NaN", f)
		}
	})
}

// TestExpAccuracy bounds the C kernels' vector exponential against math.Exp
// on x <= 0: within 2 ulp down to −708, the clamp below (e^−708 instead of a
// smaller or subnormal value, which 1 + e cannot tell apart), NaN kept.
func TestExpAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var x []float64
	for _, v := range []float64{0, math.Copysign(0, -1), -1e-300, -1e-17, -0x1p-30, -0.5 * math.Ln2, -math.Ln2, -1, -40, -707.9, -708, -708.5, -745, -1000, math.Inf(-1)} {
		x = append(x, v)
	}
	for range 20000 {
		x = append(x, -r.Float64()*50)
	}
	for range 5000 {
		x = append(x, -r.Float64()*710)
	}
	for range 1000 {
		x = append(x, -math.Ldexp(r.Float64(), -r.IntN(60)))
	}
	x = append(x, math.NaN())
	for _, isa := range supportedISAs() {
		if isa == isaGeneric {
			continue
		}
		t.Run(isa.String(), func(t *testing.T) {
			old := activeISA
			activeISA = isa
			defer func() { activeISA = old }()
			out := make([]float64, len(x))
			expNonPos(x, out)
			worst := 0.0
			for i, v := range x {
				want := math.Exp(v)
				switch {
				case math.IsNaN(v):
					if !math.IsNaN(out[i]) {
						t.Errorf("exp(NaN) = %g", out[i])
					}
				case v < -708:
					if !(out[i] >= 0 && out[i] <= math.Exp(-708)*(1+1e-15)) {
						t.Errorf("exp(%g) = %g, want in [0, e^-708]", v, out[i])
					}
				default:
					ulps := math.Abs(out[i]-want) / (math.Nextafter(want, math.Inf(1)) - want)
					worst = math.Max(worst, ulps)
					if ulps > 2 {
						t.Errorf("exp(%.17g) = %.17g, math.Exp %.17g (%.2f ulp)", v, out[i], want, ulps)
					}
				}
			}
			t.Logf("worst error %.2f ulp over %d values", worst, len(x))
		})
	}
}
