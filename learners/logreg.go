package learners

import (
	"math"
	"sync"

	"github.com/pate-tool/pate/learners/kernel"
)

// LogReg is L2-regularised logistic regression, the same model as
// scikit-learn's LogisticRegression(C=C, solver="lbfgs"): it minimises
//
//	Σ_i logloss_i + 1/(2C)·||W||²   (intercepts not penalised)
//
// with L-BFGS in float64, stopping when the largest gradient component is at
// most Tol (scikit-learn's gtol), when the objective's relative decrease falls
// under 2.2e-9 (SciPy's default ftol) or after MaxIter iterations.
//
// With two classes present it fits the binary model (as scikit-learn does) and
// returns it as two-class weights (w0 = 0, b0 = 0, w1 = w, b1 = b); with three
// or more, the multinomial (softmax) model. Only the classes present in the
// training rows can be predicted: an absent class gets zero weights and a
// bias of -1e30. Rows of a single class give a constant model.
type LogReg struct {
	C       float64
	MaxIter int
	Tol     float64
}

// Fit fits the model on x and y (labels in [0, classes)).
func (l *LogReg) Fit(x *Matrix, y []int32, classes int) (Model, error) {
	counts, err := checkFit(x, y, classes)
	if err != nil {
		return nil, err
	}
	var seen []int
	for c, n := range counts {
		if n > 0 {
			seen = append(seen, c)
		}
	}
	dim := x.Cols
	if len(seen) == 1 {
		return constantLinear(classes, dim, seen[0]), nil
	}
	C, maxIter, tol := l.C, l.MaxIter, l.Tol
	if C <= 0 {
		C = DefaultC
	}
	if maxIter <= 0 {
		maxIter = DefaultMaxIter
	}
	if tol <= 0 {
		tol = 1e-4
	}
	m := &linearModel{classes: classes, dim: dim, w: make([]float32, classes*dim), b: make([]float32, classes)}
	for c := range m.b {
		m.b[c] = absentBias
	}
	if len(seen) == 2 {
		t := make([]float64, x.Rows)
		for i, c := range y {
			if int(c) == seen[1] {
				t[i] = 1
			}
		}
		p := &binaryProblem{t: t, lambda: 1 / C, z: make([]float64, x.Rows)}
		if mostlyNonZero(x) {
			// The float64 copy is scratch: an ensemble's teachers fit one
			// after another on each core, and reuse each other's.
			bp := denseBufs.Get().(*[]float64)
			defer denseBufs.Put(bp)
			*bp = toDense(x, *bp)
			p.x, p.dense = &sparse{rows: x.Rows, cols: x.Cols}, *bp
		} else {
			p.x = toSparse(x)
		}
		theta := make([]float64, dim+1)
		lbfgs(p.eval, theta, maxIter, tol)
		m.b[seen[0]] = 0
		w1 := m.w[seen[1]*dim : (seen[1]+1)*dim]
		for j := range w1 {
			w1[j] = float32(theta[j])
		}
		m.b[seen[1]] = float32(theta[dim])
		return m, nil
	}
	k := len(seen)
	idx := make([]int, classes)
	for j, c := range seen {
		idx[c] = j
	}
	yy := make([]int, x.Rows)
	for i, c := range y {
		yy[i] = idx[c]
	}
	p := &softmaxProblem{x: toSparse(x), y: yy, k: k, lambda: 1 / C, z: make([]float64, x.Rows*k)}
	theta := make([]float64, k*dim+k)
	lbfgs(p.eval, theta, maxIter, tol)
	for j, c := range seen {
		wc := m.w[c*dim : (c+1)*dim]
		for f := range wc {
			wc[f] = float32(theta[j*dim+f])
		}
		m.b[c] = float32(theta[k*dim+j])
	}
	return m, nil
}

// sparse is a CSR copy of a Matrix in float64: the encoded rows are mostly
// zeros (one-hot blocks), so products over the non-zeros are several times
// faster than dense ones.
type sparse struct {
	rows, cols int
	ptr        []int32
	ind        []int32
	val        []float64
}

// mostlyNonZero reports whether more than half the entries of x are
// non-zero (numeric features, where the dense products beat the CSR ones),
// stopping as soon as the answer is known.
func mostlyNonZero(x *Matrix) bool {
	n := x.Rows * x.Cols
	nnz, zeros := 0, 0
	for _, v := range x.Data[:n] {
		if v != 0 {
			if nnz++; 2*nnz > n {
				return true
			}
		} else if zeros++; 2*zeros >= n {
			return false
		}
	}
	return false
}

// nonZeros counts the non-zero entries of x.
func nonZeros(x *Matrix) int {
	nnz := 0
	for _, v := range x.Data[:x.Rows*x.Cols] {
		if v != 0 {
			nnz++
		}
	}
	return nnz
}

func toSparse(x *Matrix) *sparse {
	nnz := nonZeros(x)
	s := &sparse{rows: x.Rows, cols: x.Cols, ptr: make([]int32, x.Rows+1), ind: make([]int32, 0, nnz), val: make([]float64, 0, nnz)}
	for i := 0; i < x.Rows; i++ {
		for j, v := range x.Row(i) {
			if v != 0 {
				s.ind = append(s.ind, int32(j))
				s.val = append(s.val, float64(v))
			}
		}
		s.ptr[i+1] = int32(len(s.ind))
	}
	return s
}

// binaryProblem is the binary logistic loss with labels t ∈ {0, 1}; the
// parameters are w (cols) then the intercept.
type binaryProblem struct {
	x      *sparse
	dense  []float64 // x row-major in float64 when most entries are non-zero (then x holds only the shape), else nil
	t      []float64
	lambda float64
	z      []float64
}

// denseBufs holds the scratch float64 copies of the dense path.
var denseBufs = sync.Pool{New: func() any { return new([]float64) }}

// toDense copies x to float64, row-major, into d when it is large enough.
func toDense(x *Matrix, d []float64) []float64 {
	if n := x.Rows * x.Cols; cap(d) >= n {
		d = d[:n]
	} else {
		d = make([]float64, n)
	}
	for i, v := range x.Data[:len(d)] {
		d[i] = float64(v)
	}
	return d
}

// logLoss returns log(1+e^z) and σ(z), stably, from one exponential.
func logLoss(z float64) (loss, sig float64) {
	if z >= 0 {
		e := math.Exp(-z)
		return z + log1pSmall(e), 1 / (1 + e)
	}
	e := math.Exp(z)
	return log1pSmall(e), e / (1 + e)
}

// log1pSmall is log(1+e) for e in [0, 1]. math.Log has an assembly
// implementation on amd64 and math.Log1p has not; log(1+e) is exact to
// about 1e-16 absolute, and below 1e-4 the series e − e²/2 + e³/3 keeps the
// relative precision (its error, e⁴/4, is under 3e-17).
func log1pSmall(e float64) float64 {
	if e < 1e-4 {
		return e * (1 - e*(0.5-e/3))
	}
	return math.Log(1 + e)
}

// evalDense is eval over the dense copy of x: the loss and gradient come
// from kernel.LogisticEval (SIMD with cgo on amd64, which sums the softplus
// terms as the logarithm of their product, one log per evaluation), then the
// L2 term is added.
func (p *binaryProblem) evalDense(theta, grad []float64) float64 {
	d := p.x.cols
	f := kernel.LogisticEval(p.dense, p.t, p.x.rows, d, theta, grad)
	reg := 0.0
	for j, v := range theta[:d] {
		reg += v * v
		grad[j] += p.lambda * v
	}
	return f + 0.5*p.lambda*reg
}

func (p *binaryProblem) eval(theta, grad []float64) float64 {
	if p.dense != nil {
		return p.evalDense(theta, grad)
	}
	d := p.x.cols
	w, b := theta[:d], theta[d]
	x := p.x
	f := 0.0
	for j := range grad {
		grad[j] = 0
	}
	gb := 0.0
	for i := 0; i < x.rows; i++ {
		lo, hi := x.ptr[i], x.ptr[i+1]
		z := b
		ind, val := x.ind[lo:hi], x.val[lo:hi]
		for k, j := range ind {
			z += w[j] * val[k]
		}
		// loss = log(1+e^z) − t·z, derivative σ(z) − t.
		loss, sig := logLoss(z)
		f += loss - p.t[i]*z
		r := sig - p.t[i]
		gb += r
		for k, j := range ind {
			grad[j] += r * val[k]
		}
	}
	reg := 0.0
	for j, v := range w {
		reg += v * v
		grad[j] += p.lambda * v
	}
	grad[d] = gb
	return f + 0.5*p.lambda*reg
}

// softmaxProblem is the multinomial logistic loss over k classes; the
// parameters are W (k×cols, row-major) then the k intercepts.
type softmaxProblem struct {
	x      *sparse
	y      []int
	k      int
	lambda float64
	z      []float64
}

func (p *softmaxProblem) eval(theta, grad []float64) float64 {
	d, k, x := p.x.cols, p.k, p.x
	W, b := theta[:k*d], theta[k*d:]
	gW, gb := grad[:k*d], grad[k*d:]
	for j := range grad {
		grad[j] = 0
	}
	f := 0.0
	for i := 0; i < x.rows; i++ {
		lo, hi := x.ptr[i], x.ptr[i+1]
		ind, val := x.ind[lo:hi], x.val[lo:hi]
		z := p.z[i*k : (i+1)*k]
		mx := math.Inf(-1)
		for c := 0; c < k; c++ {
			s := b[c]
			wc := W[c*d : (c+1)*d]
			for q, j := range ind {
				s += wc[j] * val[q]
			}
			z[c] = s
			mx = math.Max(mx, s)
		}
		sum := 0.0
		for c := range z {
			z[c] = math.Exp(z[c] - mx)
			sum += z[c]
		}
		yi := p.y[i]
		f += math.Log(sum) + mx - (math.Log(z[yi]) + mx)
		inv := 1 / sum
		for c := range z {
			r := z[c] * inv
			if c == yi {
				r--
			}
			gb[c] += r
			gc := gW[c*d : (c+1)*d]
			for q, j := range ind {
				gc[j] += r * val[q]
			}
		}
	}
	reg := 0.0
	for j, v := range W {
		reg += v * v
		gW[j] += p.lambda * v
	}
	return f + 0.5*p.lambda*reg
}

// lbfgs minimises f (which writes its gradient into its second argument) from
// x, in place, with memory 10 and a backtracking Armijo line search. It
// returns the number of iterations.
func lbfgs(f func(x, g []float64) float64, x []float64, maxIter int, gtol float64) int {
	const (
		mem  = 10
		ftol = 2.220446049250313e-09 // SciPy's L-BFGS-B default (factr 1e7 × eps)
		c1   = 1e-4
	)
	n := len(x)
	g := make([]float64, n)
	gNew := make([]float64, n)
	xNew := make([]float64, n)
	dir := make([]float64, n)
	S := make([][]float64, mem)
	Y := make([][]float64, mem)
	for i := range S {
		S[i] = make([]float64, n)
		Y[i] = make([]float64, n)
	}
	rho := make([]float64, mem)
	alpha := make([]float64, mem)
	hist, head := 0, 0

	fx := f(x, g)
	iter := 0
	for ; iter < maxIter; iter++ {
		if maxAbs(g) <= gtol {
			break
		}
		// Two-loop recursion: dir = −H·g.
		copy(dir, g)
		for h := 0; h < hist; h++ {
			i := (head - 1 - h + mem) % mem
			alpha[i] = rho[i] * dotf(S[i], dir)
			axpy(-alpha[i], Y[i], dir)
		}
		gamma := 1.0
		if hist > 0 {
			i := (head - 1 + mem) % mem
			gamma = dotf(S[i], Y[i]) / dotf(Y[i], Y[i])
		} else {
			gamma = 1 / math.Max(1, math.Sqrt(dotf(g, g)))
		}
		for j := range dir {
			dir[j] *= gamma
		}
		for h := hist - 1; h >= 0; h-- {
			i := (head - 1 - h + mem) % mem
			beta := rho[i] * dotf(Y[i], dir)
			axpy(alpha[i]-beta, S[i], dir)
		}
		for j := range dir {
			dir[j] = -dir[j]
		}
		slope := dotf(g, dir)
		if slope >= 0 { // not a descent direction: restart from the gradient
			hist = 0
			for j := range dir {
				dir[j] = -g[j]
			}
			slope = dotf(g, dir)
		}
		step := 1.0
		var fNew float64
		ok := false
		for ls := 0; ls < 60; ls++ {
			for j := range x {
				xNew[j] = x[j] + step*dir[j]
			}
			fNew = f(xNew, gNew)
			if fNew <= fx+c1*step*slope {
				ok = true
				break
			}
			step *= 0.5
		}
		if !ok {
			break
		}
		// Update the memory.
		s, yv := S[head], Y[head]
		for j := range x {
			s[j] = xNew[j] - x[j]
			yv[j] = gNew[j] - g[j]
		}
		if sy := dotf(s, yv); sy > 1e-10*dotf(yv, yv) && sy > 0 {
			rho[head] = 1 / sy
			head = (head + 1) % mem
			hist = min(hist+1, mem)
		} else if hist == mem {
			hist-- // the slot held the oldest pair, now overwritten
		}
		copy(x, xNew)
		copy(g, gNew)
		dec := (fx - fNew) / math.Max(math.Max(math.Abs(fx), math.Abs(fNew)), 1)
		fx = fNew
		if dec <= ftol {
			iter++
			break
		}
	}
	return iter
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

func dotf(a, b []float64) float64 {
	b = b[:len(a)]
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func axpy(a float64, x, y []float64) {
	y = y[:len(x)]
	for i := range x {
		y[i] += a * x[i]
	}
}
