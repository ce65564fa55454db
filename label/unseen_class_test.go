package label

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestDeclaredClassNoTeacherSaw declares, beside the three classes the
// sensitive rows hold, a class that no row holds, once sorting first and
// once last. No teacher ever saw it, so it must receive no vote and no
// label, and the other classes must keep their votes: the labels released
// must be as accurate as without the extra class. (Declaring a class that
// sorts first once flattened every teacher's scores, and nearly every row
// got that class.)
func TestDeclaredClassNoTeacherSaw(t *testing.T) {
	tests := []struct {
		name    string
		classes []string
		fake    int64
		student string
	}{
		{name: "sorts-first", classes: []string{"-5", "0", "1", "2"}, fake: -5},
		{name: "sorts-last", classes: []string{"0", "1", "2", "9"}, fake: 9},
		{name: "sorts-first-student", classes: []string{"-5", "0", "1", "2"}, fake: -5, student: "logreg"},
		{name: "none", classes: []string{"0", "1", "2"}, fake: math.MinInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir()) // the student's spool goes to os.TempDir()
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			const d, k, nPub = 6, 3, 2000
			rng := rand.New(rand.NewPCG(17, 3))
			w := make([]float64, d*k)
			for i := range w {
				w[i] = 2 * rng.NormFloat64() / math.Sqrt(d)
			}
			priv := synthetic(mem, 10000, d, k, 500, true, rng, w)
			defer priv.release()
			pub := synthetic(mem, nPub, d, k, 500, true, rng, w)
			defer pub.release()
			var truth []int64
			for _, rec := range pub.recs {
				truth = append(truth, rec.Column(d).(*array.Int64).Int64Values()...)
			}
			seed := uint64(5)
			cfg := Config{Label: "label", Classes: tc.classes, Features: []string{"x0", "x1", "x2", "x3", "x4", "x5"},
				Keep: []string{"x0"}, Teachers: 100, Learner: "logreg", Epsilon: 20, Delta: 1e-5, MaxQueries: 600,
				PublicRows: nPub, Seed: &seed, BatchSize: 500, Student: tc.student, Allocator: mem}
			l, err := New(cfg, priv.schema, pub.schema)
			if err != nil {
				t.Fatal(err)
			}
			out := &collect{}
			if _, err := l.Run(context.Background(), priv, pub, out); err != nil {
				t.Fatal(err)
			}
			hist := map[int64]int{} // label → rows, -1: abstained
			for _, lab := range out.labels {
				hist[lab]++
			}
			if len(out.labels) != nPub {
				t.Fatalf("%d rows out, want %d", len(out.labels), nPub)
			}
			var labelled, hit, fake int
			for i, lab := range out.labels {
				if out.sources[i] == SourceAbstained {
					continue
				}
				labelled++
				switch lab {
				case tc.fake:
					fake++
				case truth[i]:
					hit++
				}
			}
			if fake != 0 {
				t.Errorf("%d of %d labelled rows got the class no teacher saw (labels %v)", fake, labelled, hist)
			}
			if labelled < 300 {
				t.Fatalf("only %d rows labelled: test too weak", labelled)
			}
			if acc := float64(hit) / float64(labelled); acc < 0.7 {
				t.Errorf("accuracy %.3f on %d labelled rows, want >= 0.7 (labels %v)", acc, labelled, hist)
			}
		})
	}
}
