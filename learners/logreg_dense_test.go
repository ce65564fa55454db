package learners

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBinaryEvalDenseMatchesSparse checks the dense loss and gradient (one
// logarithm of a product per evaluation) against the CSR path (a logarithm
// per row) on the same data, including rows far enough from the boundary
// that e^−|z| underflows the product's precision and sizes that cross the
// Frexp renormalisation.
func TestBinaryEvalDenseMatchesSparse(t *testing.T) {
	cases := []struct {
		name       string
		rows, cols int
		scale      float64 // magnitude of the parameters
	}{
		{"small", 7, 3, 0.5},
		{"workload", 400, 64, 0.3},
		{"renormalised", 1500, 8, 1},
		{"saturated", 300, 16, 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(3, uint64(c.rows)))
			x := NewMatrix(c.rows, c.cols)
			for i := range x.Data {
				x.Data[i] = float32(r.NormFloat64())
			}
			tt := make([]float64, c.rows)
			for i := range tt {
				tt[i] = float64(r.IntN(2))
			}
			theta := make([]float64, c.cols+1)
			for j := range theta {
				theta[j] = c.scale * r.NormFloat64()
			}
			sp := &binaryProblem{x: toSparse(x), t: tt, lambda: 0.7}
			dn := &binaryProblem{x: &sparse{rows: c.rows, cols: c.cols}, dense: toDense(x, nil), t: tt, lambda: 0.7}
			gs, gd := make([]float64, c.cols+1), make([]float64, c.cols+1)
			fs, fd := sp.eval(theta, gs), dn.eval(theta, gd)
			if math.Abs(fs-fd) > 1e-12*math.Max(1, math.Abs(fs)) {
				t.Errorf("loss: sparse %.17g, dense %.17g", fs, fd)
			}
			for j := range gs {
				if math.Abs(gs[j]-gd[j]) > 1e-10*math.Max(1, math.Abs(gs[j])) {
					t.Errorf("gradient[%d]: sparse %.17g, dense %.17g", j, gs[j], gd[j])
				}
			}
		})
	}
}

// TestMostlyNonZero checks the early-stopping density test against a full
// count, on both sides of one half and at it.
func TestMostlyNonZero(t *testing.T) {
	for _, c := range []struct {
		name string
		data []float32
	}{
		{"empty", nil},
		{"all zero", []float32{0, 0, 0, 0}},
		{"all non-zero", []float32{1, 2, 3, 4}},
		{"exactly half", []float32{1, 0, 2, 0}},
		{"half plus one", []float32{1, 0, 2, 3}},
		{"half minus one", []float32{0, 0, 2, 0, 5, 0}},
		{"zeros first", []float32{0, 0, 1, 1, 1}},
		{"non-zeros first", []float32{1, 1, 0, 0, 0}},
	} {
		x := &Matrix{Rows: 1, Cols: len(c.data), Data: c.data}
		if got, want := mostlyNonZero(x), 2*nonZeros(x) > len(c.data); got != want {
			t.Errorf("%s: mostlyNonZero = %v, want %v", c.name, got, want)
		}
	}
}
