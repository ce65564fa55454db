package label

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

// TestVoteTilesMatchesEncodeThenVote checks the fused path of the stream
// (column-major tiles, encoded and voted on per goroutine) against encoding
// the whole batch row-major and voting on it: the vote histograms must be
// identical, for one and for two label columns, on Adult's mixed string and
// integer columns with nulls, on slices with offsets and on batches that
// are not a whole number of tiles.
func TestVoteTilesMatchesEncodeThenVote(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema, recs := readParquet(t, "adult_test.parquet", mem)
	defer releaseAll(recs)
	var features []string
	for _, f := range schema.Fields() {
		if f.Name != "income" {
			features = append(features, f.Name)
		}
	}
	enc, err := learners.FitEncoder(schema, features, recs, learners.EncoderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec := recs[0]
	x := learners.NewMatrix(0, enc.Dim())
	if err := enc.Encode(rec, x); err != nil {
		t.Fatal(err)
	}
	// Teachers trained on disjoint parts of the batch: logistic regression
	// on 2 classes (income) and on 3 (a function of the row).
	inc := rec.Column(rec.Schema().FieldIndices("income")[0])
	ensemble := func(classes, k int) *learners.Ensemble {
		return logregTeachers(t, x, classes, k, func(row int) int32 {
			if classes == 2 {
				if s, _ := valueText(inc, row); s == "1" {
					return 1
				}
				return 0
			}
			return int32(row*7%11) % int32(classes)
		})
	}
	e2, e3 := ensemble(2, 17), ensemble(3, 9)
	n := int(rec.NumRows())
	tests := []struct {
		name   string
		lo, hi int
		ens    []*learners.Ensemble
	}{
		{"whole batch", 0, n, []*learners.Ensemble{e2}},
		{"slice with offset", 5, n - 3, []*learners.Ensemble{e2}},
		{"a few rows", 100, 117, []*learners.Ensemble{e3}},
		{"one row", 7, 8, []*learners.Ensemble{e2}},
		{"two label columns", 3, 1000, []*learners.Ensemble{e2, e3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sl := rec.NewSlice(int64(tc.lo), int64(tc.hi))
			defer sl.Release()
			m := tc.hi - tc.lo
			st := &runState{enc: enc, ens: tc.ens[0]}
			st.tileBufs.New = func() any { return new([]float32) }
			for _, e := range tc.ens {
				st.labels = append(st.labels, &labelRun{labelData: &labelData{ens: e}})
			}
			if len(tc.ens) == 1 {
				st.labels = nil
			}
			if got := st.stacked(); len(got) != len(tc.ens) {
				t.Fatalf("stacked() has %d ensembles, want %d", len(got), len(tc.ens))
			}
			b := &batch{rec: sl, queryN: m, counts: make([]int32, m*tc.ens[0].Classes())}
			for _, e := range tc.ens[1:] {
				b.more = append(b.more, labelVotes{counts: make([]int32, m*e.Classes())})
			}
			for i := range b.counts {
				b.counts[i] = -1
			}
			if err := st.voteTiles(sl, st.stacked(), b); err != nil {
				t.Fatal(err)
			}
			xs := learners.NewMatrix(0, enc.Dim())
			if err := enc.Encode(sl, xs); err != nil {
				t.Fatal(err)
			}
			for j, e := range tc.ens {
				want := make([]int32, m*e.Classes())
				e.Votes(xs, want)
				got := b.counts
				if j > 0 {
					got = b.more[j-1].counts
				}
				split := 0
				for r := 0; r < m; r++ {
					if slices.Max(want[r*e.Classes():(r+1)*e.Classes()]) < int32(e.Teachers()) {
						split++
					}
				}
				if m > 100 && split < m/20 {
					t.Fatalf("label %d: only %d of %d rows have split votes: the test data are too weak", j, split, m)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("label %d: tiled votes differ from encode-then-vote (first rows %v vs %v)", j, head(got), head(want))
				}
			}
		})
	}
}

func head(v []int32) string { return fmt.Sprint(v[:min(len(v), 12)]) }

// logregTeachers trains k logistic teachers (20 iterations), each on its
// own consecutive x.Rows/k rows of x, row i labelled label(i), and stacks
// them.
func logregTeachers(t *testing.T, x *learners.Matrix, classes, k int, label func(row int) int32) *learners.Ensemble {
	t.Helper()
	lr, err := learners.NewLearner("logreg", learners.LearnerOptions{MaxIter: 20})
	if err != nil {
		t.Fatal(err)
	}
	var models []learners.Model
	part := x.Rows / k
	for i := range k {
		sub := &learners.Matrix{Rows: part, Cols: x.Cols, Data: x.Data[i*part*x.Cols : (i+1)*part*x.Cols]}
		y := make([]int32, part)
		for r := range y {
			y[r] = label(i*part + r)
		}
		m, err := lr.Fit(sub, y, classes)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	e, err := learners.NewEnsemble(models, classes)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Stacked() {
		t.Fatal("logistic teachers are not stacked")
	}
	return e
}
