package learners

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// intLinear returns a linear model with small integer weights, so that every
// score is an exact float32 integer whatever the summation order, and ties
// really happen (and must go to the lowest class).
func intLinear(r *rand.Rand, classes, dim int) *linearModel {
	m := &linearModel{classes: classes, dim: dim, w: make([]float32, classes*dim), b: make([]float32, classes)}
	for i := range m.w {
		m.w[i] = float32(r.IntN(5) - 2)
	}
	for i := range m.b {
		m.b[i] = float32(r.IntN(5) - 2)
	}
	return m
}

func intMatrix(r *rand.Rand, rows, cols int) *Matrix {
	x := NewMatrix(rows, cols)
	for i := range x.Data {
		x.Data[i] = float32(r.IntN(7) - 3)
	}
	return x
}

// naiveVotes is the reference: each model predicts, each prediction is a vote.
func naiveVotes(models []Model, classes int, x *Matrix) []int32 {
	counts := make([]int32, x.Rows*classes)
	out := make([]int32, x.Rows)
	for _, m := range models {
		m.Predict(x, out)
		for i, c := range out {
			counts[i*classes+int(c)]++
		}
	}
	return counts
}

func TestEnsembleVotes(t *testing.T) {
	const dim = 23
	r := rand.New(rand.NewPCG(7, 11))
	// Non-linear teachers fitted on random data.
	fitted := func(name string, classes int) Model {
		x := intMatrix(r, 60, dim)
		y := make([]int32, x.Rows)
		for i := range y {
			y[i] = int32(r.IntN(classes))
		}
		l, err := NewLearner(name, LearnerOptions{MaxDepth: 4})
		if err != nil {
			t.Fatal(err)
		}
		m, err := l.Fit(x, y, classes)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	tests := []struct {
		name    string
		classes int
		k       int
		mixed   bool
	}{
		{"linear/2 classes", 2, 37, false},
		{"linear/10 classes", 10, 41, false},
		{"mixed/2 classes", 2, 9, true},
		{"mixed/10 classes", 10, 9, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			models := make([]Model, tc.k)
			for i := range models {
				switch {
				case tc.mixed && i%3 == 1:
					models[i] = fitted("tree", tc.classes)
				case tc.mixed && i%3 == 2:
					models[i] = fitted("nb", tc.classes)
				default:
					models[i] = intLinear(r, tc.classes, dim)
				}
			}
			e, err := NewEnsemble(models, tc.classes)
			if err != nil {
				t.Fatal(err)
			}
			if e.Teachers() != tc.k {
				t.Fatalf("Teachers() = %d, want %d", e.Teachers(), tc.k)
			}
			if (e.linear != nil) == tc.mixed {
				t.Fatalf("kernel path used = %v, want %v", e.linear != nil, !tc.mixed)
			}
			for _, rows := range []int{1, 50, 3*parallelRows + 17} {
				x := intMatrix(r, rows, dim)
				want := naiveVotes(models, tc.classes, x)
				got := make([]int32, rows*tc.classes)
				for i := range got {
					got[i] = -99 // must be overwritten
				}
				e.Votes(x, got)
				for i := 0; i < rows; i++ {
					sum := int32(0)
					for c := 0; c < tc.classes; c++ {
						j := i*tc.classes + c
						if got[j] != want[j] {
							t.Fatalf("%d rows, row %d: votes %v, naive %v", rows, i, got[i*tc.classes:(i+1)*tc.classes], want[i*tc.classes:(i+1)*tc.classes])
						}
						sum += got[j]
					}
					if sum != int32(tc.k) {
						t.Fatalf("row %d: %d votes, want one per teacher (%d)", i, sum, tc.k)
					}
				}
			}
		})
	}
}

// TestEnsembleVotesUnseenClasses stacks linear teachers that never predict
// some classes (absent from their partitions): class 0, the last class, two
// classes, or all but one. The kernel's votes must be each teacher's own
// prediction, which never is a class it does not predict, on every row.
// Fitted logistic regressions on partitions that lack classes are stacked
// too.
func TestEnsembleVotesUnseenClasses(t *testing.T) {
	const dim = 17
	r := rand.New(rand.NewPCG(3, 19))
	for _, classes := range []int{2, 3, 7} {
		models := make([]Model, 0, 40)
		for i := 0; i < 30; i++ {
			m := intLinear(r, classes, dim)
			var drop []int
			switch i % 5 {
			case 0:
				drop = []int{0}
			case 1:
				drop = []int{classes - 1}
			case 2:
				drop = []int{0, classes - 1}
			case 3:
				for c := 0; c < classes; c++ {
					if c != i%classes {
						drop = append(drop, c)
					}
				}
			}
			for _, c := range drop {
				if len(drop) < classes {
					m.b[c] = absentBias
					clear(m.w[c*dim : (c+1)*dim])
				}
			}
			models = append(models, m)
		}
		// Logistic regressions fitted on rows of two or three classes,
		// never class 0.
		for i := 0; i < 6; i++ {
			x := intMatrix(r, 40, dim)
			y := make([]int32, x.Rows)
			for j := range y {
				y[j] = int32(1 + (j+i)%min(classes-1, 2+i%2))
			}
			m, err := (&LogReg{C: 1, MaxIter: 30, Tol: 1e-4}).Fit(x, y, classes)
			if err != nil {
				t.Fatal(err)
			}
			models = append(models, m)
		}
		e, err := NewEnsemble(models, classes)
		if err != nil {
			t.Fatal(err)
		}
		if e.linear == nil {
			t.Fatal("the linear teachers were not stacked")
		}
		for _, rows := range []int{1, 50, 3*parallelRows + 17} {
			x := intMatrix(r, rows, dim)
			want := naiveVotes(models, classes, x)
			got := make([]int32, rows*classes)
			e.Votes(x, got)
			for i := 0; i < rows; i++ {
				for c := 0; c < classes; c++ {
					if j := i*classes + c; got[j] != want[j] {
						t.Fatalf("%d classes, %d rows, row %d: votes %v, naive %v", classes, rows, i,
							got[i*classes:(i+1)*classes], want[i*classes:(i+1)*classes])
					}
				}
			}
			// Each model's own prediction never is a class it does not
			// predict.
			out := make([]int32, rows)
			for ti, m := range models {
				m.Predict(x, out)
				_, b := m.(LinearModel).Linear()
				for i, c := range out {
					if absent(b[c]) {
						t.Fatalf("%d classes: teacher %d predicts class %d on row %d, which it never predicts", classes, ti, c, i)
					}
				}
			}
		}
	}
}

func TestEnsembleConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	models := []Model{intLinear(r, 3, 8), intLinear(r, 3, 8)}
	x := intMatrix(r, 500, 8)
	for i := range 4 {
		if i%2 == 1 {
			models = append(models, &nbModel{classes: 3, dim: 8, theta: make([]float64, 24), invVar: make([]float64, 24), konst: []float64{0, 1, 0}})
		}
	}
	e, err := NewEnsemble(models, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := naiveVotes(models, 3, x)
	var wg sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := make([]int32, len(want))
			e.Votes(x, got)
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("concurrent Votes differs at %d", i)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestNewEnsembleErrors(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name    string
		models  []Model
		classes int
	}{
		{"no teachers", nil, 2},
		{"nil teacher", []Model{nil}, 2},
		{"class mismatch", []Model{intLinear(r, 3, 4)}, 2},
		{"dim mismatch", []Model{intLinear(r, 2, 4), intLinear(r, 2, 5)}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewEnsemble(tc.models, tc.classes); err == nil {
				t.Fatal("no error")
			}
		})
	}
}
