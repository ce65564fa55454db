package learners

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// teacherSplits cuts Adult's training rows into k disjoint partitions of
// rows rows each (Adult-like teacher data).
func teacherSplits(tb testing.TB, k, rows int) ([]*Matrix, [][]int32) {
	d := loadAdult(tb)
	if k*rows > d.xtr.Rows {
		tb.Fatalf("need %d rows, Adult has %d", k*rows, d.xtr.Rows)
	}
	xs := make([]*Matrix, k)
	ys := make([][]int32, k)
	for t := range k {
		xs[t] = subMatrix(d.xtr, t*rows, (t+1)*rows)
		ys[t] = d.ytr[t*rows : (t+1)*rows]
	}
	return xs, ys
}

// fitAll fits one model per partition on GOMAXPROCS goroutines, as the
// engine does.
func fitAll(tb testing.TB, name string, xs []*Matrix, ys [][]int32) []Model {
	models := make([]Model, len(xs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, _ := NewLearner(name, LearnerOptions{})
			for t := range next {
				m, err := l.Fit(xs[t], ys[t], 2)
				if err != nil {
					tb.Error(err)
					return
				}
				models[t] = m
			}
		}()
	}
	for t := range xs {
		next <- t
	}
	close(next)
	wg.Wait()
	return models
}

// BenchmarkFitLogreg250 fits 250 logistic-regression teachers on 130 Adult
// rows each (112 encoded features) per operation.
func BenchmarkFitLogreg250(b *testing.B) {
	for _, rows := range []int{130, 400} {
		b.Run(map[int]string{130: "rows=130", 400: "rows=400"}[rows], func(b *testing.B) {
			k := 250
			if k*rows > 32561 {
				k = 32561 / rows
			}
			xs, ys := teacherSplits(b, k, rows)
			for b.Loop() {
				fitAll(b, "logreg", xs, ys)
			}
			b.ReportMetric(float64(k)*float64(b.N)/b.Elapsed().Seconds(), "teachers/s")
		})
	}
}

// BenchmarkEnsembleVotes counts the votes of 250 teachers on the 16281 rows
// of adult_test per operation.
func BenchmarkEnsembleVotes(b *testing.B) {
	d := loadAdult(b)
	xs, ys := teacherSplits(b, 250, 130)
	for _, name := range []string{"logreg", "tree"} {
		b.Run(name, func(b *testing.B) {
			e, err := NewEnsemble(fitAll(b, name, xs, ys), 2)
			if err != nil {
				b.Fatal(err)
			}
			counts := make([]int32, d.xte.Rows*2)
			b.ReportAllocs()
			for b.Loop() {
				e.Votes(d.xte, counts)
			}
			b.ReportMetric(float64(d.xte.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// TestTeacherAccuracy is a sanity check of the ensemble on Adult: the
// plurality vote of 250 logreg teachers trained on 130 rows each labels
// adult_test about as well as one model trained on everything.
func TestTeacherAccuracy(t *testing.T) {
	d := loadAdult(t)
	xs, ys := teacherSplits(t, 250, 130)
	e, err := NewEnsemble(fitAll(t, "logreg", xs, ys), 2)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]int32, d.xte.Rows*2)
	e.Votes(d.xte, counts)
	ok := 0
	for i := 0; i < d.xte.Rows; i++ {
		pred := int32(0)
		if counts[2*i+1] > counts[2*i] {
			pred = 1
		}
		if pred == d.yte[i] {
			ok++
		}
	}
	acc := float64(ok) / float64(d.xte.Rows)
	t.Logf("plurality of 250 teachers × 130 rows: accuracy %.4f on adult_test", acc)
	if acc < 0.80 {
		t.Errorf("plurality accuracy %.4f, want at least 0.80", acc)
	}
}

// denseSplits makes k partitions of rows rows of dense synthetic data shaped
// like the speed workload (shared/peers/sklearn_pate.py): dim N(0,1)
// features, label = argmax over two classes of x·W + N(0, 0.5²).
func denseSplits(k, rows, dim int) ([]*Matrix, [][]int32) {
	r := rand.New(rand.NewPCG(1, 2))
	w := make([]float64, 2*dim)
	for i := range w {
		w[i] = r.NormFloat64() / math.Sqrt(float64(dim))
	}
	xs := make([]*Matrix, k)
	ys := make([][]int32, k)
	for t := range k {
		m := NewMatrix(rows, dim)
		y := make([]int32, rows)
		for i := range rows {
			row := m.Row(i)
			s0, s1 := r.NormFloat64()*0.5, r.NormFloat64()*0.5
			for j := range row {
				v := r.NormFloat64()
				row[j] = float32(v)
				s0 += v * w[j]
				s1 += v * w[dim+j]
			}
			if s1 > s0 {
				y[i] = 1
			}
		}
		xs[t], ys[t] = m, y
	}
	return xs, ys
}

// BenchmarkFitLogregDense fits 250 logistic-regression teachers on 400
// dense rows of 64 features each per operation (the training phase of the
// speed workload: 100,000 sensitive rows, 250 teachers).
func BenchmarkFitLogregDense(b *testing.B) {
	xs, ys := denseSplits(250, 400, 64)
	for b.Loop() {
		fitAll(b, "logreg", xs, ys)
	}
	b.ReportMetric(250*float64(b.N)/b.Elapsed().Seconds(), "teachers/s")
}
