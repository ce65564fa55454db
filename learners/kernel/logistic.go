package kernel

import (
	"fmt"
	"math"
)

// LogisticEval returns the binary logistic loss of the rows of x (rows × dim,
// row-major, float64) with labels t (0 or 1) at theta = (w, b), len dim+1:
//
//	f = Σ_i [log(1 + e^{z_i}) − t_i·z_i],  z_i = w·x_i + b,
//
// and overwrites grad (len dim+1) with its gradient: Σ_i (σ(z_i) − t_i)·x_i,
// then the intercept component Σ_i (σ(z_i) − t_i). No regularisation term is
// added.
//
// The softplus terms are summed as the logarithm of their product (one log
// per call, the product renormalised as it goes), which is as exact as a sum
// of logarithms. With cgo on amd64 it runs one C call (AVX-512 or AVX2+FMA,
// see doc.go); the result then differs from the pure-Go path's in the last
// bits (summation order, a vector exp within about 2 ulp of math.Exp).
//
// It is single-threaded and safe for concurrent use on different grad. It
// panics if x, t, theta or grad are shorter than the shapes need (a
// programming error).
func LogisticEval(x, t []float64, rows, dim int, theta, grad []float64) float64 {
	if rows < 0 || dim < 0 || len(x) < rows*dim || len(t) < rows || len(theta) < dim+1 || len(grad) < dim+1 {
		panic(fmt.Sprintf("kernel: LogisticEval on %d rows × %d features needs len(x) >= %d, len(t) >= %d, len(theta), len(grad) >= %d; got %d, %d, %d, %d",
			rows, dim, rows*dim, rows, dim+1, len(x), len(t), len(theta), len(grad)))
	}
	if rows > 0 && dim > 0 && activeISA != isaGeneric {
		return logisticFast(x, t, rows, dim, theta, grad)
	}
	return logisticGeneric(x, t, rows, dim, theta, grad)
}

// logisticGeneric is the pure-Go LogisticEval: one row at a time, math.Exp
// per row, the product of the (1 + e^−|z|) factors renormalised with Frexp
// every 512 rows (512 factors in [1, 2] stay below 2^512).
func logisticGeneric(x, t []float64, rows, dim int, theta, grad []float64) float64 {
	w, b := theta[:dim], theta[dim]
	gw := grad[:dim]
	clear(gw)
	f, gb := 0.0, 0.0
	prod, exp2 := 1.0, 0
	for i, ti := range t[:rows] {
		row := x[i*dim : (i+1)*dim]
		z := b + Dot(w, row)
		var sig float64
		if z >= 0 {
			e := math.Exp(-z)
			f += z
			prod *= 1 + e
			sig = 1 / (1 + e)
		} else {
			e := math.Exp(z)
			prod *= 1 + e
			sig = e / (1 + e)
		}
		if i&511 == 511 {
			fr, ex := math.Frexp(prod)
			prod, exp2 = fr, exp2+ex
		}
		f -= ti * z
		r := sig - ti
		gb += r
		gw = gw[:len(row)]
		for j, v := range row {
			gw[j] += r * v
		}
	}
	grad[dim] = gb
	return f + math.Log(prod) + float64(exp2)*math.Ln2
}
