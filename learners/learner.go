package learners

import (
	"fmt"
	"math"
	"strings"

	"github.com/pate-tool/pate/learners/kernel"
)

// Learner fits a Model on labelled rows. y has x.Rows entries in
// [0, classes). A Learner may be reused for many fits but is not meant for
// concurrent use; create one per goroutine.
type Learner interface {
	Fit(x *Matrix, y []int32, classes int) (Model, error)
}

// Model predicts a class per row. Predict writes x.Rows classes into out and
// allocates nothing; ties between class scores go to the lowest class. A
// Model is safe for concurrent use.
type Model interface {
	Predict(x *Matrix, out []int32)
}

// LinearModel is a Model whose class scores are x·w_c + b_c; it predicts the
// argmax. Linear returns the classes×dim weights (row-major) and the classes
// biases; the caller must not modify them.
type LinearModel interface {
	Model
	Linear() (w []float32, b []float32)
}

// ProbModel is a Model that also estimates class probabilities: out has
// x.Rows×classes entries, each row summing to 1.
type ProbModel interface {
	Model
	PredictProba(x *Matrix, out []float32)
}

// LearnerOptions tunes the learners. Zero values select the defaults.
type LearnerOptions struct {
	// C is logistic regression's inverse L2 strength (default 1.0, as in
	// scikit-learn).
	C float64
	// MaxIter bounds the L-BFGS iterations of logistic regression (default 100).
	MaxIter int
	// MaxDepth bounds the depth of a tree (default 8).
	MaxDepth int
	// MinLeaf is the minimum number of rows in a tree leaf (default 1).
	MinLeaf int
	// Bins are the split edges of the histogram learners ("gbt"), fitted
	// on public data (PublicBins); nil: each fit bins its own rows.
	Bins *Bins
	// Neighbors is k of the k-nearest-neighbours model (default 10).
	Neighbors int
}

// Defaults of LearnerOptions.
const (
	DefaultC        = 1.0
	DefaultMaxIter  = 100
	DefaultMaxDepth = 8
	DefaultMinLeaf  = 1
)

// LearnerNames lists the names NewLearner accepts.
var LearnerNames = []string{"logreg", "nb", "tree", "gbt", "knn"}

// NewLearner returns the learner called name: "logreg" (multinomial logistic
// regression with L2), "nb" (Gaussian naive Bayes), "tree" (CART), "gbt"
// (histogram gradient-boosted trees, see GBT) or "knn" (k nearest
// neighbours, see KNN).
func NewLearner(name string, opts LearnerOptions) (Learner, error) {
	if opts.C == 0 {
		opts.C = DefaultC
	}
	if !(opts.C > 0) || math.IsInf(opts.C, 0) {
		return nil, fmt.Errorf("learners: C must be positive and finite, got %v", opts.C)
	}
	if opts.MaxIter <= 0 {
		opts.MaxIter = DefaultMaxIter
	}
	if opts.MaxDepth <= 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.MinLeaf <= 0 {
		opts.MinLeaf = DefaultMinLeaf
	}
	switch name {
	case "logreg":
		return &LogReg{C: opts.C, MaxIter: opts.MaxIter, Tol: 1e-4}, nil
	case "nb":
		return &GaussianNB{VarSmoothing: 1e-9}, nil
	case "tree":
		return &Tree{MaxDepth: opts.MaxDepth, MinLeaf: opts.MinLeaf}, nil
	case "gbt":
		return NewGBT(opts), nil
	case "knn":
		return NewKNN(opts)
	}
	return nil, fmt.Errorf("learners: unknown learner %q (valid: %s)", name, strings.Join(LearnerNames, ", "))
}

// checkFit validates the arguments of Fit and returns the class counts.
func checkFit(x *Matrix, y []int32, classes int) ([]int, error) {
	if classes < 1 {
		return nil, fmt.Errorf("learners: need at least one class, got %d", classes)
	}
	if x.Rows == 0 {
		return nil, fmt.Errorf("learners: no rows to fit")
	}
	if len(y) != x.Rows {
		return nil, fmt.Errorf("learners: %d labels for %d rows", len(y), x.Rows)
	}
	if len(x.Data) < x.Rows*x.Cols {
		return nil, fmt.Errorf("learners: matrix holds %d values, want %d×%d", len(x.Data), x.Rows, x.Cols)
	}
	counts := make([]int, classes)
	for i, c := range y {
		if c < 0 || int(c) >= classes {
			return nil, fmt.Errorf("learners: label %d of row %d is outside [0, %d)", c, i, classes)
		}
		counts[c]++
	}
	return counts, nil
}

// absentBias is the bias that marks a class a linear model never predicts
// (absent from its training rows; its weights are zero). The mark is what
// a stored model keeps; every scorer reads it with absent and leaves such a
// class out of the argmax altogether, so that its bias never enters a
// score, a difference of scores or a sum: subtracting it from the others
// would round them all to one value in float32.
const absentBias = -1e30

// absent reports whether a linear model's class with bias b is one it never
// predicts.
func absent(b float32) bool { return b <= absentBias }

// seenClasses appends to seen, per class, whether a linear model with
// biases b may predict it.
func seenClasses(seen []bool, b []float32) []bool {
	for _, v := range b {
		seen = append(seen, !absent(v))
	}
	return seen
}

// linearModel is the LinearModel every linear learner returns.
type linearModel struct {
	classes, dim int
	w, b         []float32
}

func (m *linearModel) Linear() ([]float32, []float32) { return m.w, m.b }

// Predict gives each row the class of highest score among those the model
// may predict (ties → lowest); a row whose scores are all NaN gets the
// first of them.
func (m *linearModel) Predict(x *Matrix, out []int32) {
	first := 0
	for first < m.classes-1 && absent(m.b[first]) {
		first++
	}
	for i := 0; i < x.Rows; i++ {
		row := x.Row(i)
		best, bs := first, float32(math.Inf(-1))
		for c := first; c < m.classes; c++ {
			if absent(m.b[c]) {
				continue
			}
			s := m.b[c] + kernel.Dot(m.w[c*m.dim:(c+1)*m.dim], row)
			if s > bs {
				best, bs = c, s
			}
		}
		out[i] = int32(best)
	}
}

// PredictProba gives the softmax of the scores over the classes the model
// may predict; the others have probability 0.
func (m *linearModel) PredictProba(x *Matrix, out []float32) {
	k := m.classes
	for i := 0; i < x.Rows; i++ {
		row := x.Row(i)
		p := out[i*k : (i+1)*k]
		mx := math.Inf(-1)
		for c := 0; c < k; c++ {
			if absent(m.b[c]) {
				p[c] = float32(math.Inf(-1))
				continue
			}
			s := float64(m.b[c]) + float64(kernel.Dot(m.w[c*m.dim:(c+1)*m.dim], row))
			p[c] = float32(s)
			mx = math.Max(mx, s)
		}
		softmaxInPlace(p, mx)
	}
}

// softmaxInPlace overwrites the scores p (−Inf for a class never predicted,
// which gets 0) with their softmax, given their largest value mx.
func softmaxInPlace(p []float32, mx float64) {
	sum := 0.0
	for c := range p {
		e := math.Exp(float64(p[c]) - mx)
		p[c] = float32(e)
		sum += e
	}
	for c := range p {
		p[c] = float32(float64(p[c]) / sum)
	}
}

// constantLinear is the linear model that always predicts class c.
func constantLinear(classes, dim, c int) *linearModel {
	m := &linearModel{classes: classes, dim: dim, w: make([]float32, classes*dim), b: make([]float32, classes)}
	for k := range m.b {
		if k != c {
			m.b[k] = absentBias
		}
	}
	return m
}
