package label

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/pate-tool/pate/learners"
)

// readParquet reads every batch of a testdata Parquet file.
func readParquet(t *testing.T, name string, mem memory.Allocator) (*arrow.Schema, []arrow.Record) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pf, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 14}, mem)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var recs []arrow.Record
	for rr.Next() {
		r := rr.Record()
		r.Retain()
		recs = append(recs, r)
	}
	schema, err := fr.Schema()
	if err != nil {
		t.Fatal(err)
	}
	return schema, recs
}

// TestSVTDistanceQuantiles is the local, NOT PRIVATE measurement behind the
// README's explanation of svt on Adult: the distribution of the teachers'
// distance to instability over adult_public (250 logistic-regression
// teachers, partition seed 1), and the thresholds the planner sets for 1, 2
// and 4 instances within ε = 2. It checks the figures the README quotes
// (fixed seed, so they are exact). Run with PATE_UTILITY_TABLE=1.
func TestSVTDistanceQuantiles(t *testing.T) {
	if os.Getenv("PATE_UTILITY_TABLE") == "" {
		t.Skip("set PATE_UTILITY_TABLE=1 (trains 250 teachers)")
	}
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	ss, sens := readParquet(t, "adult_train.parquet", mem)
	defer releaseAll(sens)
	ps, pub := readParquet(t, "adult_public.parquet", mem)
	defer releaseAll(pub)
	seed := uint64(1)
	l, err := New(Config{Label: "income", Classes: []string{"0", "1"}, Teachers: 250, Learner: "logreg", Delta: 1e-5, Epsilon: 2,
		BatchSize: 1 << 14, Seed: &seed, Allocator: mem}, ss, ps)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := learners.FitEncoder(ps, l.features, pub, l.cfg.EncoderOptions)
	if err != nil {
		t.Fatal(err)
	}
	ens, _, err := l.trainTeachers(context.Background(), sens, enc)
	if err != nil {
		t.Fatal(err)
	}
	var dists []int64
	x := learners.NewMatrix(0, enc.Dim())
	for _, r := range pub {
		if err := enc.Encode(r, x); err != nil {
			t.Fatal(err)
		}
		c := make([]int32, x.Rows*2)
		ens.Votes(x, c)
		for i := 0; i < x.Rows; i++ {
			_, d := distanceToInstability(c[2*i : 2*i+2])
			dists = append(dists, d)
		}
	}
	slices.Sort(dists)
	for _, q := range []struct {
		q    float64
		want int64 // the README's figure; -1: logged only
	}{{0.01, -1}, {0.05, 23}, {0.1, 43}, {0.2, 77}, {0.3, 100}, {0.5, 121}} {
		got := dists[int(q.q*float64(len(dists)))]
		t.Logf("quantile %.2f of the distance to instability: %d", q.q, got)
		if q.want >= 0 && got != q.want {
			t.Errorf("quantile %.2f is %d; the README says %d", q.q, got, q.want)
		}
	}
	for _, c := range []struct {
		eps0    string
		n       int64
		w       int64  // the README's thresholds
		atOrBel string // and the share of rows at or below them
	}{{"2", 1, 56, "13.5"}, {"1", 2, 113, "39.4"}, {"0.5", 4, 229, "100.0"}} {
		w, err := svtPlanThreshold(MechanismParams{SVTEpsilon0: c.eps0}, int64(len(dists)), c.n, 5e-6)
		if err != nil {
			t.Fatal(err)
		}
		below, _ := slices.BinarySearch(dists, w+1)
		share := fmt.Sprintf("%.1f", 100*float64(below)/float64(len(dists)))
		t.Logf("%d instance(s) of ε0 = %s: w = %d; %s%% of the rows have distance ≤ w", c.n, c.eps0, w, share)
		if w != c.w || share != c.atOrBel {
			t.Errorf("%d instance(s) of ε0 = %s: w = %d with %s%% of the rows at or below; the README says %d and %s%%", c.n, c.eps0, w, share, c.w, c.atOrBel)
		}
	}
}
