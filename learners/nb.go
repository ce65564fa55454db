package learners

import "math"

// GaussianNB is Gaussian naive Bayes, as scikit-learn's GaussianNB: per class
// a prior (the class frequency), and per class and feature a mean and a
// variance, to which VarSmoothing × the largest per-feature variance of all
// rows is added. Classes absent from the training rows are never predicted.
type GaussianNB struct {
	VarSmoothing float64
}

type nbModel struct {
	classes, dim int
	theta        []float64 // classes×dim
	invVar       []float64 // classes×dim, 1/σ²
	konst        []float64 // log prior − ½ Σ log(2πσ²); −Inf for absent classes
}

// Fit fits the model on x and y (labels in [0, classes)).
func (g *GaussianNB) Fit(x *Matrix, y []int32, classes int) (Model, error) {
	counts, err := checkFit(x, y, classes)
	if err != nil {
		return nil, err
	}
	d, n := x.Cols, x.Rows
	vs := g.VarSmoothing
	if vs <= 0 {
		vs = 1e-9
	}
	// Largest variance over all rows, per feature.
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x.Row(i) {
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	vmax := 0.0
	v2 := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x.Row(i) {
			e := float64(v) - mean[j]
			v2[j] += e * e
		}
	}
	for j := range v2 {
		vmax = math.Max(vmax, v2[j]/float64(n))
	}
	eps := vs * vmax
	if !(eps > 0) {
		eps = vs // every feature constant: keep the variances positive
	}
	m := &nbModel{classes: classes, dim: d, theta: make([]float64, classes*d), invVar: make([]float64, classes*d), konst: make([]float64, classes)}
	for i := 0; i < n; i++ {
		c := int(y[i])
		th := m.theta[c*d : (c+1)*d]
		for j, v := range x.Row(i) {
			th[j] += float64(v)
		}
	}
	for c := 0; c < classes; c++ {
		if counts[c] > 0 {
			th := m.theta[c*d : (c+1)*d]
			for j := range th {
				th[j] /= float64(counts[c])
			}
		}
	}
	for i := 0; i < n; i++ {
		c := int(y[i])
		th, vv := m.theta[c*d:(c+1)*d], m.invVar[c*d:(c+1)*d]
		for j, v := range x.Row(i) {
			e := float64(v) - th[j]
			vv[j] += e * e
		}
	}
	for c := 0; c < classes; c++ {
		if counts[c] == 0 {
			m.konst[c] = math.Inf(-1)
			continue
		}
		vv := m.invVar[c*d : (c+1)*d]
		k := math.Log(float64(counts[c]) / float64(n))
		for j := range vv {
			s2 := vv[j]/float64(counts[c]) + eps
			k -= 0.5 * math.Log(2*math.Pi*s2)
			vv[j] = 1 / s2
		}
		m.konst[c] = k
	}
	return m, nil
}

func (m *nbModel) jll(row []float32, c int) float64 {
	if math.IsInf(m.konst[c], -1) {
		return math.Inf(-1)
	}
	th, iv := m.theta[c*m.dim:(c+1)*m.dim], m.invVar[c*m.dim:(c+1)*m.dim]
	s := 0.0
	for j, v := range row {
		e := float64(v) - th[j]
		s += e * e * iv[j]
	}
	return m.konst[c] - 0.5*s
}

func (m *nbModel) Predict(x *Matrix, out []int32) {
	// A row whose scores are all NaN gets the first class the model
	// predicts, never an absent one.
	first := 0
	for first < m.classes-1 && math.IsInf(m.konst[first], -1) {
		first++
	}
	for i := 0; i < x.Rows; i++ {
		row := x.Row(i)
		best, bs := first, math.Inf(-1)
		for c := first; c < m.classes; c++ {
			if s := m.jll(row, c); s > bs {
				best, bs = c, s
			}
		}
		out[i] = int32(best)
	}
}

func (m *nbModel) PredictProba(x *Matrix, out []float32) {
	k := m.classes
	for i := 0; i < x.Rows; i++ {
		row := x.Row(i)
		p := out[i*k : (i+1)*k]
		mx := math.Inf(-1)
		for c := 0; c < k; c++ {
			mx = math.Max(mx, m.jll(row, c))
		}
		sum := 0.0
		for c := 0; c < k; c++ {
			e := math.Exp(m.jll(row, c) - mx)
			p[c] = float32(e)
			sum += e
		}
		for c := range p {
			p[c] = float32(float64(p[c]) / sum)
		}
	}
}
