package label

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

// studentData is a synthetic private set and a public set that carries its
// true labels (left out of the output with Keep), in batches of 500 rows.
func studentData(mem memory.Allocator) (priv, pub *memReader, truth []int64) {
	rng := rand.New(rand.NewPCG(4, 2))
	const d, k = 8, 2
	w := make([]float64, d*k)
	for i := range w {
		w[i] = rng.NormFloat64() / math.Sqrt(d)
	}
	priv = synthetic(mem, 6000, d, k, 500, true, rng, w)
	pub = synthetic(mem, 5000, d, k, 500, true, rng, w)
	for _, rec := range pub.recs {
		col := rec.Column(d).(*array.Int64)
		truth = append(truth, col.Int64Values()...)
	}
	return priv, pub, truth
}

// studentFixture is studentData on a checked allocator, released at the
// end of the test, which then checks that nothing is left allocated.
func studentFixture(t *testing.T) (mem *memory.CheckedAllocator, priv, pub *memReader, truth []int64) {
	t.Helper()
	mem = memory.NewCheckedAllocator(memory.DefaultAllocator)
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	priv, pub, truth = studentData(mem)
	t.Cleanup(priv.release)
	t.Cleanup(pub.release)
	return mem, priv, pub, truth
}

func studentConfig(seed *uint64) Config {
	return Config{Label: "label", Classes: []string{"0", "1"}, Features: []string{"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"},
		Keep: []string{"x0"}, Teachers: 20, Learner: "logreg", Epsilon: 4, Delta: 1e-5, MaxQueries: 400,
		PublicRows: 5000, Seed: seed, BatchSize: 500}
}

// failAfter fails its n-th write.
type failAfter struct {
	collect
	n int
}

func (f *failAfter) Write(rec arrow.Record) error {
	if f.n--; f.n < 0 {
		return errors.New("disk full")
	}
	return f.collect.Write(rec)
}

func TestStudentLabelsEveryRow(t *testing.T) {
	tests := []struct {
		name, student, sel string
		selfTrain          bool
		minAcc             float64 // of the student's labels
	}{
		{"no student", "", SelectFirst, false, 0},
		{"logreg first", "logreg", SelectFirst, false, 0.7},
		{"logreg random", "logreg", SelectRandom, false, 0.7},
		{"logreg uncertain", "logreg", SelectUncertain, false, 0.7},
		{"nb random self-train", "nb", SelectRandom, true, 0.7},
		{"tree first self-train", "tree", SelectFirst, true, 0.55},
		{"tree uncertain", "tree", SelectUncertain, false, 0.55},
		{"gbt uncertain", "gbt", SelectUncertain, false, 0.7},
		{"gbt first self-train", "gbt", SelectFirst, true, 0.7},
		{"knn random", "knn", SelectRandom, false, 0.65},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir()) // the spool goes to os.TempDir()
			mem, priv, pub, truth := studentFixture(t)
			seed := uint64(11)
			cfg := studentConfig(&seed)
			cfg.Allocator, cfg.Student, cfg.Select, cfg.SelfTrain = mem, tc.student, tc.sel, tc.selfTrain
			rep, out := runCollect(t, cfg, priv, pub)
			if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
				t.Errorf("spool left behind: %v", left)
			}
			if len(out.labels) != 5000 {
				t.Fatalf("%d rows out, want 5000", len(out.labels))
			}
			var teachers, student, abstained int64
			var hit int
			var lastTeacherRow int
			for i, s := range out.sources {
				switch s {
				case SourceTeachers:
					teachers++
					lastTeacherRow = i
				case SourceStudent:
					student++
					if out.labels[i] == truth[i] {
						hit++
					}
				case SourceAbstained:
					abstained++
					if out.labels[i] != -1 {
						t.Fatalf("row %d abstained with label %d", i, out.labels[i])
					}
				}
				if s != SourceAbstained && out.labels[i] < 0 {
					t.Fatalf("row %d (%s) has no label", i, s)
				}
			}
			got := SourceCounts{Teachers: teachers, Student: student, Abstained: abstained}
			if rep.Sources == nil || *rep.Sources != got {
				t.Errorf("report sources %+v, output %+v", rep.Sources, got)
			}
			if teachers != rep.Queries.Answered || rep.Queries.Seen > cfg.MaxQueries || teachers < 50 {
				t.Errorf("queries %+v, %d teacher rows", rep.Queries, teachers)
			}
			if float64(rep.Spent.EpsilonImproved) > cfg.Epsilon {
				t.Errorf("spent ε = %g > %g", rep.Spent.EpsilonImproved, cfg.Epsilon)
			}
			if tc.student == "" {
				if student != 0 || rep.Student != nil {
					t.Errorf("no student asked, got %d student rows, report %+v", student, rep.Student)
				}
				return
			}
			if abstained != 0 {
				t.Errorf("%d rows abstained with a student", abstained)
			}
			if rep.Student == nil || rep.Student.TrainedOn != teachers || rep.Student.Learner != tc.student {
				t.Errorf("student report %+v, %d answers", rep.Student, teachers)
			}
			if tc.selfTrain && (rep.Student.SelfTraining == nil || rep.Student.SelfTraining.Pool == 0) {
				t.Errorf("self-training report %+v", rep.Student.SelfTraining)
			}
			if acc := float64(hit) / float64(student); acc < tc.minAcc {
				t.Errorf("student accuracy %.3f < %.2f", acc, tc.minAcc)
			}
			switch tc.sel {
			case SelectFirst:
				if lastTeacherRow >= int(cfg.MaxQueries) {
					t.Errorf("--select first answered row %d, past the first %d", lastTeacherRow, cfg.MaxQueries)
				}
			case SelectRandom:
				if lastTeacherRow < 2500 {
					t.Errorf("--select random: last answered row %d, want queries spread over 5000 rows", lastTeacherRow)
				}
			}
		})
	}
}

// TestStudentSeededRunsRepeat checks that a seeded run with a student and a
// random or uncertain selection gives the same labels twice.
func TestStudentSeededRunsRepeat(t *testing.T) {
	for _, sel := range []string{SelectRandom, SelectUncertain} {
		t.Run(sel, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
			defer mem.AssertSize(t, 0)
			var runs [2]*collect
			for i := range runs {
				priv, pub, _ := studentData(mem)
				seed := uint64(5)
				cfg := studentConfig(&seed)
				cfg.Allocator, cfg.Student, cfg.Select = mem, "logreg", sel
				l, err := New(cfg, priv.schema, pub.schema)
				if err != nil {
					t.Fatal(err)
				}
				runs[i] = &collect{}
				if _, err := l.Run(context.Background(), priv, pub, runs[i]); err != nil {
					t.Fatal(err)
				}
				priv.release()
				pub.release()
			}
			if !slices.Equal(runs[0].labels, runs[1].labels) || !slices.Equal(runs[0].sources, runs[1].sources) {
				t.Error("two seeded runs differ")
			}
		})
	}
}

func TestStudentErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
	}{
		{"unknown student", func(c *Config) { c.Student = "svm" }},
		{"unknown selection", func(c *Config) { c.Select = "best" }},
		{"self-train without student", func(c *Config) { c.SelfTrain = true }},
		{"uncertain without student", func(c *Config) { c.Select = SelectUncertain }},
		{"random on a stream", func(c *Config) { c.Select, c.PublicRows = SelectRandom, -1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem, priv, pub, _ := studentFixture(t)
			cfg := studentConfig(nil)
			cfg.Allocator = mem
			tc.change(&cfg)
			l, err := New(cfg, priv.schema, pub.schema)
			if err == nil {
				_, err = l.Run(context.Background(), priv, pub, &collect{})
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error %v, want ErrInvalidInput", err)
			}
		})
	}
}

// TestStudentSpoolRemovedOnError checks that a failing writer leaves no
// spool and no leak, whether it fails during the replay or after it.
func TestStudentSpoolRemovedOnError(t *testing.T) {
	for _, n := range []int{0, 3, 9} {
		t.Run("", func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			mem, priv, pub, _ := studentFixture(t)
			seed := uint64(1)
			cfg := studentConfig(&seed)
			cfg.Allocator, cfg.Student, cfg.Select = mem, "logreg", SelectRandom
			l, err := New(cfg, priv.schema, pub.schema)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Run(context.Background(), priv, pub, &failAfter{n: n}); err == nil {
				t.Fatal("no error from a failing writer")
			}
			if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
				t.Errorf("spool left behind: %v", left)
			}
		})
	}
}

// TestBinsArePublic: the boosted teachers' and student's bin edges are
// fitted on the public head alone: two runs on different sensitive data
// and the same public data split on identical edges (and other public data
// gives other edges).
func TestBinsArePublic(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	run := func(privSeed, pubSeed uint64) (*Labeler, []int64, []string) {
		rng := rand.New(rand.NewPCG(4, 2))
		const d, k = 8, 2
		w := make([]float64, d*k)
		for i := range w {
			w[i] = rng.NormFloat64() / math.Sqrt(d)
		}
		priv := synthetic(mem, 3000, d, k, 500, true, rand.New(rand.NewPCG(privSeed, 1)), w)
		defer priv.release()
		pub := synthetic(mem, 2000, d, k, 500, true, rand.New(rand.NewPCG(pubSeed, 1)), w)
		defer pub.release()
		seed := uint64(3)
		cfg := studentConfig(&seed)
		cfg.Allocator, cfg.Learner, cfg.Student, cfg.Select, cfg.PublicRows, cfg.MaxQueries = mem, "gbt", "gbt", SelectUncertain, 2000, 300
		l, err := New(cfg, priv.schema, pub.schema)
		if err != nil {
			t.Fatal(err)
		}
		out := &collect{}
		rep, err := l.Run(context.Background(), priv, pub, out)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Student == nil || rep.Student.Learner != "gbt" || rep.Learner != "gbt" {
			t.Fatalf("report: learner %q, student %+v", rep.Learner, rep.Student)
		}
		return l, out.labels, out.sources
	}
	a, labels, sources := run(100, 7)
	b, _, _ := run(200, 7)
	c, _, _ := run(100, 8)
	if a.bins == nil || a.bins.Dim() != 8 {
		t.Fatalf("bins %+v, want edges for 8 columns", a.bins)
	}
	if !slices.EqualFunc(a.bins.Edges, b.bins.Edges, slices.Equal) {
		t.Error("other sensitive rows, same public rows: the bin edges differ")
	}
	if slices.EqualFunc(a.bins.Edges, c.bins.Edges, slices.Equal) {
		t.Error("other public rows: the same bin edges")
	}
	answered := 0
	for i, s := range sources {
		if s == SourceTeachers {
			answered++
		}
		if labels[i] < 0 {
			t.Fatalf("row %d (%s) unlabelled", i, s)
		}
	}
	if answered < 50 {
		t.Errorf("%d answers from boosted teachers, want at least 50", answered)
	}
}

func TestBalanceRound(t *testing.T) {
	tests := []struct {
		name      string
		rest      []int // least sure first
		predicted []int32
		n         int
		want      []int
	}{
		{"one class predicted", []int{3, 1, 0, 2}, []int32{0, 0, 0, 0}, 2, []int{3, 1, 0, 2}},
		{"round robin", []int{0, 1, 2, 3, 4, 5}, []int32{0, 0, 0, 0, 1, 2}, 4, []int{0, 4, 5, 1, 2, 3}},
		{"a turn in margin order", []int{5, 0, 1, 2}, []int32{1, 1, 0, 0, 0, 1}, 2, []int{5, 2, 0, 1}},
		{"round larger than the candidates", []int{1, 0}, []int32{1, 0}, 5, []int{1, 0}},
		{"nothing to pick", []int{1, 0}, []int32{1, 0}, 0, []int{1, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rest := slices.Clone(tc.rest)
			balanceRound(rest, tc.n, tc.predicted, 3)
			if !slices.Equal(rest, tc.want) {
				t.Errorf("order %v, want %v", rest, tc.want)
			}
		})
	}
}

func TestImbalanced(t *testing.T) {
	tests := []struct {
		name string
		y    []int32
		want bool
	}{
		{"balanced", []int32{0, 1, 2, 0, 1, 2}, false},
		{"four to one", []int32{0, 0, 0, 0, 1}, false},
		{"five to one", []int32{0, 0, 0, 0, 0, 1}, true},
		{"absent classes ignored", []int32{2, 2, 1}, false},
		{"one class", []int32{1, 1, 1}, false},
	}
	for _, tc := range tests {
		if got := imbalanced(tc.y, 3); got != tc.want {
			t.Errorf("%s: imbalanced = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestReplicate(t *testing.T) {
	x := &learners.Matrix{Rows: 4, Cols: 1, Data: []float32{10, 11, 12, 13}}
	y := []int32{0, 0, 0, 1}
	xr, yr := replicate(x, y, []float32{0.5, 0.5, 0.5, 1.6})
	if want := []float32{10, 11, 12, 13, 13, 13}; !slices.Equal(xr.Data, want) || xr.Rows != 6 {
		t.Errorf("rows %v (%d), want %v", xr.Data, xr.Rows, want)
	}
	if want := []int32{0, 0, 0, 1, 1, 1}; !slices.Equal(yr, want) {
		t.Errorf("labels %v, want %v", yr, want)
	}
	// A weight ratio of 100 is capped at four times the rows in all.
	xr, _ = replicate(x, y, []float32{1, 1, 1, 100})
	if xr.Rows > 4*x.Rows || xr.Rows < x.Rows+2 {
		t.Errorf("%d rows after the cap, want between %d and %d", xr.Rows, x.Rows+2, 4*x.Rows)
	}
}

func TestClassWeights(t *testing.T) {
	y := []int32{0, 0, 0, 0, 0, 0, 1, 1, 3, 3} // class 2 absent
	tests := []struct {
		alpha float64
		want  [4]float64 // per class
	}{
		{0, [4]float64{1, 1, 0, 1}},
		{1, [4]float64{10.0 / 18, 10.0 / 6, 0, 10.0 / 6}},
		{0.5, [4]float64{math.Sqrt(10.0 / 18), math.Sqrt(10.0 / 6), 0, math.Sqrt(10.0 / 6)}},
	}
	for _, tc := range tests {
		w := classWeights(y, 4, tc.alpha)
		var total float64
		for i, c := range y {
			if math.Abs(float64(w[i])-tc.want[c]) > 1e-6 {
				t.Errorf("alpha %g: row %d (class %d) weight %g, want %g", tc.alpha, i, c, w[i], tc.want[c])
			}
			total += float64(w[i])
		}
		if tc.alpha == 1 && math.Abs(total-float64(len(y))) > 1e-5 {
			t.Errorf("balanced weights sum to %g, want %d", total, len(y))
		}
	}
}

// TestStudentFitDoesNotCollapse: on answers 19 to 1 where the rare class
// overlaps the majority, a student fitted as the answers are predicts the
// rare class on few rows; the balanced fit (weights for gbt, repeated
// rows for logreg) finds more of the rare class.
func TestStudentFitDoesNotCollapse(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	n := 2000
	x := learners.NewMatrix(n, 2)
	y := make([]int32, n)
	for i := range n {
		if i%20 == 0 {
			y[i] = 1
		}
		x.Data[2*i] = float32(rng.NormFloat64() + 1.5*float64(y[i]))
		x.Data[2*i+1] = float32(rng.NormFloat64())
	}
	for _, name := range []string{"logreg", "gbt"} {
		t.Run(name, func(t *testing.T) {
			lr, err := learners.NewLearner(name, learners.LearnerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			s := &student{learner: lr, classes: 2}
			rare := func(m learners.Model) int {
				out := make([]int32, n)
				m.Predict(x, out)
				k := 0
				for i, c := range out {
					if c == 1 && y[i] == 1 {
						k++
					}
				}
				return k
			}
			plain, err := lr.Fit(x, y, 2)
			if err != nil {
				t.Fatal(err)
			}
			bal, err := s.fit(x, y)
			if err != nil {
				t.Fatal(err)
			}
			p, b := rare(plain), rare(bal)
			t.Logf("rare rows found: %d as answered, %d balanced (of %d)", p, b, n/20)
			if b < p+10 {
				t.Errorf("balanced fit finds %d rare rows, plain %d: want 10 more", b, p)
			}
		})
	}
}

// TestStudentFewAnswersWarned: a student that learns from fewer than
// StudentFewAnswers answers a class, or from answers that miss a class, is
// warned of on stderr (the answers are released labels, so the warning is
// public); one with answers enough is not.
func TestStudentFewAnswersWarned(t *testing.T) {
	tests := []struct {
		name       string
		maxQueries int64
		want       bool
	}{
		{"three queries", 3, true},
		{"four hundred queries", 400, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem, priv, pub, _ := studentFixture(t)
			seed := uint64(11)
			cfg := studentConfig(&seed)
			var warned []string
			cfg.Allocator, cfg.Student, cfg.Select, cfg.MaxQueries = mem, "logreg", SelectFirst, tc.maxQueries
			cfg.Warn = func(m string) { warned = append(warned, m) }
			rep, _ := runCollect(t, cfg, priv, pub)
			got := slices.ContainsFunc(warned, func(m string) bool { return strings.Contains(m, "few answers") })
			if got != tc.want {
				t.Errorf("few-answers warning %v, want %v (%d answers; warnings %q)", got, tc.want, rep.Queries.Answered, warned)
			}
		})
	}
}
