package learners

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// naiveNearest is the reference search: every distance in float64, sorted
// by (distance, index).
func naiveNearest(base, q *Matrix, i, k int) []int32 {
	type nd struct {
		d float64
		j int32
	}
	all := make([]nd, base.Rows)
	for j := range all {
		s := 0.0
		for f, v := range q.Row(i) {
			e := float64(v) - float64(base.Row(j)[f])
			s += e * e
		}
		all[j] = nd{s, int32(j)}
	}
	slices.SortFunc(all, func(a, b nd) int {
		switch {
		case a.d < b.d:
			return -1
		case a.d > b.d:
			return 1
		}
		return int(a.j - b.j)
	})
	out := make([]int32, k)
	for t := range out {
		out[t] = all[t].j
	}
	return out
}

func TestNearestKMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	tests := []struct {
		name             string
		base, query, dim int
		k                int
	}{
		{"one row", 1, 5, 3, 1},
		{"k = rows", 12, 40, 4, 12},
		{"several blocks", 700, 90, 13, 10},
		{"parallel", 2100, 600, 9, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, q := NewMatrix(tc.base, tc.dim), NewMatrix(tc.query, tc.dim)
			// Integer grid values: many exact ties, whose order is by index.
			for i := range base.Data {
				base.Data[i] = float32(r.IntN(4))
			}
			for i := range q.Data {
				q.Data[i] = float32(r.IntN(4))
			}
			idx := make([]int32, tc.query*tc.k)
			dist := make([]float32, tc.query*tc.k)
			if err := NearestK(base, q, tc.k, idx, dist); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < tc.query; i++ {
				want := naiveNearest(base, q, i, tc.k)
				if got := idx[i*tc.k : (i+1)*tc.k]; !slices.Equal(got, want) {
					t.Fatalf("query %d: neighbours %v, want %v", i, got, want)
				}
				if !slices.IsSorted(dist[i*tc.k : (i+1)*tc.k]) {
					t.Fatalf("query %d: distances %v not ascending", i, dist[i*tc.k:(i+1)*tc.k])
				}
			}
		})
	}
	x := NewMatrix(3, 2)
	if err := NearestK(x, NewMatrix(1, 3), 1, make([]int32, 1), make([]float32, 1)); err == nil {
		t.Error("queries of another width: no error")
	}
	if err := NearestK(x, NewMatrix(1, 2), 4, make([]int32, 4), make([]float32, 4)); err == nil {
		t.Error("k above the rows: no error")
	}
}

// TestKNNLearner: on two separated blobs 10-NN is right everywhere but at
// the noise, and its probabilities are neighbour shares.
func TestKNNLearner(t *testing.T) {
	all, ys := blobs(900, 4, 3, 5)
	x, y := subMatrix(all, 0, 600), ys[:600]
	xte, yte := subMatrix(all, 600, 900), ys[600:]
	l, err := NewLearner("knn", LearnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := l.Fit(x, y, 3)
	if err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(m, xte, yte); acc < 0.9 {
		t.Errorf("10-NN accuracy %.3f on blobs, want ≥ 0.9", acc)
	}
	p := make([]float32, xte.Rows*3)
	m.(ProbModel).PredictProba(xte, p)
	for i := 0; i < xte.Rows; i++ {
		for _, v := range p[i*3 : (i+1)*3] {
			if n := v * DefaultNeighbors; n-float32(int(n+0.5)) > 1e-4 || n-float32(int(n+0.5)) < -1e-4 {
				t.Fatalf("row %d: probability %v is not a share of %d neighbours", i, v, DefaultNeighbors)
			}
		}
	}
	if _, err := NewLearner("knn", LearnerOptions{Neighbors: -1}); err == nil {
		t.Error("k = −1: no error")
	}
	// Fewer rows than k: every row votes.
	small, err := l.Fit(subMatrix(x, 0, 3), y[:3], 3)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int32, 5)
	small.Predict(subMatrix(xte, 0, 5), out)
}
