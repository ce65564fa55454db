package learners

import (
	"math"
	"strings"
	"testing"
	"time"
)

// Reference accuracies of scikit-learn on the SAME encoded matrices.
//
// How they were obtained: a throwaway Go program encoded the data exactly as
// loadBreastCancer and loadAdult do (this package's Encoder, default
// options), wrote the matrices to CSV with float32 round-trip precision
// (strconv.FormatFloat(v, 'g', -1, 32)), and /tmp/skref.py ran, with
// scikit-learn 1.2.1 and numpy 1.24.2 (Debian python3-sklearn, Python 3),
// on X.astype(np.float32):
//
//	LogisticRegression(C=1.0, max_iter=1000).fit(Xtr, ytr).score(Xte, yte)
//	GaussianNB().fit(Xtr, ytr).score(Xte, yte)
//	DecisionTreeClassifier(max_depth=8, min_samples_leaf=1, random_state=0).fit(Xtr, ytr).score(Xte, yte)
//
// breast_cancer: train rows 0–399, test rows 400–568 (encoder fitted on the
// training features). Adult: train adult_train (32561 rows), test adult_test
// (16281 rows), label income, encoder fitted on adult_test's features
// (112 encoded columns). sklearn's lbfgs took 32 iterations on
// breast_cancer and 314 on Adult.
const (
	skBreastCancerLogReg = 0.970414
	skBreastCancerNB     = 0.934911
	skBreastCancerTree   = 0.905325
	skAdultLogReg        = 0.853080
	skAdultNB            = 0.597076
	skAdultTree          = 0.856950
)

func accuracy(m Model, x *Matrix, y []int32) float64 {
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

func TestLearnersMatchScikitLearn(t *testing.T) {
	tests := []struct {
		name    string
		data    func(testing.TB) dataset
		learner string
		sklearn float64
		tol     float64 // accuracy points (fraction)
	}{
		{"breast_cancer/logreg", loadBreastCancer, "logreg", skBreastCancerLogReg, 0.005},
		{"breast_cancer/nb", loadBreastCancer, "nb", skBreastCancerNB, 0.005},
		{"breast_cancer/tree", loadBreastCancer, "tree", skBreastCancerTree, 0.03},
		{"adult/logreg", loadAdult, "logreg", skAdultLogReg, 0.005},
		{"adult/nb", loadAdult, "nb", skAdultNB, 0.005},
		{"adult/tree", loadAdult, "tree", skAdultTree, 0.01},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.data(t)
			l, err := NewLearner(tc.learner, LearnerOptions{C: 1, MaxIter: 1000})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			m, err := l.Fit(d.xtr, d.ytr, 2)
			if err != nil {
				t.Fatal(err)
			}
			fit := time.Since(start)
			acc := accuracy(m, d.xte, d.yte)
			t.Logf("%s: accuracy %.6f, scikit-learn %.6f (diff %+.4f), fit %v on %d×%d", tc.name, acc, tc.sklearn, acc-tc.sklearn, fit, d.xtr.Rows, d.xtr.Cols)
			if math.Abs(acc-tc.sklearn) > tc.tol {
				t.Errorf("accuracy %.6f, scikit-learn %.6f: differs by more than %.3f", acc, tc.sklearn, tc.tol)
			}
		})
	}
}

// TestLogRegObjective checks that the fitted weights are a stationary point
// of Σ logloss + ||W||²/(2C): the gradient at the float32 solution is small.
func TestLogRegObjective(t *testing.T) {
	d := loadBreastCancer(t)
	for _, C := range []float64{0.1, 1, 10} {
		l := &LogReg{C: C, MaxIter: 1000, Tol: 1e-6}
		m, err := l.Fit(d.xtr, d.ytr, 2)
		if err != nil {
			t.Fatal(err)
		}
		w, b := m.(LinearModel).Linear()
		dim := d.xtr.Cols
		for j := 0; j < dim; j++ {
			if w[j] != 0 {
				t.Fatalf("C=%v: class 0 weights must be zero in the binary model", C)
			}
		}
		if b[0] != 0 {
			t.Fatalf("C=%v: b0 = %v, want 0", C, b[0])
		}
		theta := make([]float64, dim+1)
		for j := range dim {
			theta[j] = float64(w[dim+j])
		}
		theta[dim] = float64(b[1])
		tt := make([]float64, len(d.ytr))
		for i, c := range d.ytr {
			tt[i] = float64(c)
		}
		p := &binaryProblem{x: toSparse(d.xtr), t: tt, lambda: 1 / C, z: make([]float64, d.xtr.Rows)}
		g := make([]float64, dim+1)
		p.eval(theta, g)
		if gm := maxAbs(g); gm > 1e-2 {
			t.Errorf("C=%v: gradient %.3g at the solution", C, gm)
		}
	}
}

func TestLearnerEdgeCases(t *testing.T) {
	x := &Matrix{Rows: 6, Cols: 2, Data: []float32{0, 0, 1, 0, 0, 1, 1, 1, 2, 2, -1, 0}}
	for _, name := range LearnerNames {
		t.Run(name+"/one class", func(t *testing.T) {
			l, err := NewLearner(name, LearnerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			m, err := l.Fit(x, []int32{2, 2, 2, 2, 2, 2}, 3)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]int32, x.Rows)
			m.Predict(x, out)
			for i, c := range out {
				if c != 2 {
					t.Fatalf("row %d: predicted %d, want the only class 2", i, c)
				}
			}
		})
		t.Run(name+"/absent class never predicted", func(t *testing.T) {
			l, _ := NewLearner(name, LearnerOptions{})
			// Classes 0 and 2 of 5 for the binary path, and 0, 2, 3 of 5 for
			// the multinomial path; the same without class 0 (the first
			// class absent), and with the last class. Some probe rows hold
			// NaN: they too get a class the model predicts.
			for _, y := range [][]int32{{0, 2, 0, 2, 2, 0}, {0, 2, 3, 2, 3, 0}, {1, 2, 1, 2, 2, 1},
				{1, 2, 3, 2, 3, 1}, {4, 2, 3, 2, 3, 4}} {
				m, err := l.Fit(x, y, 5)
				if err != nil {
					t.Fatal(err)
				}
				probe := NewMatrix(200, 2)
				for i := range probe.Data {
					probe.Data[i] = float32(i%17) - 8
					if i%23 == 5 {
						probe.Data[i] = float32(math.NaN())
					}
				}
				out := make([]int32, probe.Rows)
				m.Predict(probe, out)
				present := map[int32]bool{}
				for _, c := range y {
					present[c] = true
				}
				for i, c := range out {
					if !present[c] {
						t.Fatalf("labels %v: row %d predicted absent class %d", y, i, c)
					}
				}
				if pm, ok := m.(ProbModel); ok {
					pr := make([]float32, probe.Rows*5)
					pm.PredictProba(probe, pr)
					for i := 0; i < probe.Rows; i++ {
						if math.IsNaN(float64(probe.Data[2*i])) || math.IsNaN(float64(probe.Data[2*i+1])) {
							continue
						}
						s := float32(0)
						for c, v := range pr[i*5 : i*5+5] {
							s += v
							if !present[int32(c)] && v > 1e-6 {
								t.Fatalf("labels %v: row %d: probabilities %v", y, i, pr[i*5:i*5+5])
							}
						}
						if math.Abs(float64(s-1)) > 1e-4 {
							t.Fatalf("labels %v: row %d: probabilities %v", y, i, pr[i*5:i*5+5])
						}
					}
				}
			}
		})
		t.Run(name+"/bad input", func(t *testing.T) {
			l, _ := NewLearner(name, LearnerOptions{})
			if _, err := l.Fit(x, []int32{0, 1, 5, 0, 1, 0}, 2); err == nil || !strings.Contains(err.Error(), "outside") {
				t.Errorf("label out of range: err = %v", err)
			}
			if _, err := l.Fit(x, []int32{0, 1}, 2); err == nil {
				t.Error("label count mismatch: no error")
			}
			if _, err := l.Fit(NewMatrix(0, 2), nil, 2); err == nil {
				t.Error("no rows: no error")
			}
		})
	}
}

func TestNewLearner(t *testing.T) {
	tests := []struct {
		name    string
		opts    LearnerOptions
		wantErr string
	}{
		{"logreg", LearnerOptions{}, ""},
		{"nb", LearnerOptions{}, ""},
		{"tree", LearnerOptions{MaxDepth: 3, MinLeaf: 5}, ""},
		{"svm", LearnerOptions{}, "logreg, nb, tree"},
		{"logreg", LearnerOptions{C: -1}, "C must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := NewLearner(tc.name, tc.opts)
			if tc.wantErr == "" {
				if err != nil || l == nil {
					t.Fatalf("NewLearner: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
			}
		})
	}
}

// TestTreeDepthAndLeaves checks MaxDepth and MinLeaf on Adult's first rows.
func TestTreeDepthAndLeaves(t *testing.T) {
	d := loadAdult(t)
	x, y := subMatrix(d.xtr, 0, 2000), d.ytr[:2000]
	for _, tc := range []struct{ depth, leaf int }{{1, 1}, {3, 50}, {6, 10}} {
		m, err := (&Tree{MaxDepth: tc.depth, MinLeaf: tc.leaf}).Fit(x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		tm := m.(*treeModel)
		var walk func(i int32, depth int) int
		walk = func(i int32, depth int) int {
			nd := tm.nodes[i]
			if depth > tc.depth {
				t.Fatalf("depth %d > %d", depth, tc.depth)
			}
			if nd.feature < 0 {
				return 1
			}
			return walk(nd.left, depth+1) + walk(nd.right, depth+1)
		}
		leaves := walk(0, 0)
		// Every leaf holds at least MinLeaf training rows.
		cnt := make(map[int32]int)
		for i := 0; i < x.Rows; i++ {
			cnt[tm.leaf(x.Row(i))]++
		}
		for l, n := range cnt {
			if n < tc.leaf {
				t.Errorf("depth %d leaf %d: node %d holds %d rows", tc.depth, tc.leaf, l, n)
			}
		}
		t.Logf("max depth %d, min leaf %d: %d leaves", tc.depth, tc.leaf, leaves)
	}
}
