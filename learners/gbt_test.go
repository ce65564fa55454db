package learners

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// xorData is a clearly non-linear problem: two informative features whose
// signs' XOR is the class (with 5% of labels flipped), plus noise
// features. No linear model does better than chance on it.
func xorData(seed uint64, rows, noiseCols int) (*Matrix, []int32) {
	r := rand.New(rand.NewPCG(seed, 7))
	x := NewMatrix(rows, 2+noiseCols)
	y := make([]int32, rows)
	for i := range rows {
		row := x.Row(i)
		for j := range row {
			row[j] = float32(r.NormFloat64())
		}
		if (row[0] > 0) != (row[1] > 0) {
			y[i] = 1
		}
		if r.Float64() < 0.05 {
			y[i] = 1 - y[i]
		}
	}
	return x, y
}

func TestGBTBeatsLogRegOnXOR(t *testing.T) {
	xtr, ytr := xorData(1, 2000, 4)
	xte, yte := xorData(2, 2000, 4)
	bins := PublicBins(xte, 64) // the "public" rows: features only
	lr, err := (&LogReg{C: 1, MaxIter: 200}).Fit(xtr, ytr, 2)
	if err != nil {
		t.Fatal(err)
	}
	gm, err := (&GBT{Bins: bins}).Fit(xtr, ytr, 2)
	if err != nil {
		t.Fatal(err)
	}
	accLR, accGBT := accuracy(lr, xte, yte), accuracy(gm, xte, yte)
	t.Logf("XOR: logistic regression %.3f, boosted trees %.3f", accLR, accGBT)
	if accLR > 0.6 {
		t.Errorf("logistic regression %.3f on XOR: the data is not the non-linear problem intended", accLR)
	}
	if accGBT < 0.9 || accGBT < accLR+0.25 {
		t.Errorf("boosted trees %.3f, logistic regression %.3f: want ≥ 0.9 and 0.25 above", accGBT, accLR)
	}
}

// TestGBTMulticlass checks softmax boosting on four classes (quadrants),
// one of which the training rows never hold: it is never predicted and
// gets probability 0.
func TestGBTMulticlass(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	mk := func(n int, skip int32) (*Matrix, []int32) {
		x := NewMatrix(0, 3)
		var y []int32
		for len(y) < n {
			a, b := r.NormFloat64(), r.NormFloat64()
			c := int32(0)
			if a > 0 {
				c++
			}
			if b > 0 {
				c += 2
			}
			if c == skip {
				continue
			}
			x.Data = append(x.Data, float32(a), float32(b), float32(r.NormFloat64()))
			x.Rows++
			y = append(y, c)
		}
		return x, y
	}
	const classes = 5 // class 4 is never seen, class 3 is left out of training
	xtr, ytr := mk(1500, 3)
	xte, yte := mk(1000, 3)
	m, err := (&GBT{Bins: PublicBins(xte, 32)}).Fit(xtr, ytr, classes)
	if err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(m, xte, yte); acc < 0.95 {
		t.Errorf("accuracy %.3f on separable quadrants, want ≥ 0.95", acc)
	}
	out := make([]int32, xte.Rows)
	m.Predict(xte, out)
	proba := make([]float32, xte.Rows*classes)
	m.(ProbModel).PredictProba(xte, proba)
	for i, c := range out {
		if c == 3 || c == 4 {
			t.Fatalf("row %d predicted class %d, which no training row holds", i, c)
		}
		p := proba[i*classes : (i+1)*classes]
		if p[3] != 0 || p[4] != 0 {
			t.Fatalf("row %d: probabilities %v give an unseen class mass", i, p)
		}
		sum := float32(0)
		for _, v := range p {
			sum += v
		}
		if math.Abs(float64(sum)-1) > 1e-5 || slices.Index(p, slices.Max(p)) != int(c) {
			t.Fatalf("row %d: probabilities %v (sum %v) disagree with class %d", i, p, sum, c)
		}
	}
}

func TestGBTEdgeCases(t *testing.T) {
	tests := []struct {
		name  string
		x     *Matrix
		y     []int32
		want  int32 // every prediction
		check bool
	}{
		{"one class", &Matrix{Rows: 3, Cols: 2, Data: []float32{1, 2, 3, 4, 5, 6}}, []int32{2, 2, 2}, 2, true},
		{"constant features", &Matrix{Rows: 4, Cols: 1, Data: []float32{1, 1, 1, 1}}, []int32{0, 1, 1, 1}, 1, true},
		{"no features", &Matrix{Rows: 3, Cols: 0}, []int32{1, 0, 0}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&GBT{}).Fit(tc.x, tc.y, 3)
			if err != nil {
				t.Fatal(err)
			}
			out := make([]int32, tc.x.Rows)
			m.Predict(tc.x, out)
			for i, c := range out {
				if c != tc.want {
					t.Errorf("row %d: class %d, want %d", i, c, tc.want)
				}
			}
		})
	}
	x := &Matrix{Rows: 2, Cols: 1, Data: []float32{0, 1}}
	if _, err := (&GBT{Bins: &Bins{Edges: [][]float32{{0.5}, {0.5}}}}).Fit(x, []int32{0, 1}, 2); err == nil {
		t.Error("bins for 2 columns, rows of 1: no error")
	}
	if _, err := (&GBT{}).FitWeighted(x, []int32{0, 1}, []float32{1, 0}, 2); err == nil {
		t.Error("a zero weight: no error")
	}
}

// TestGBTBinsArePublic: the split edges come from the public sample only.
// Two fits on different sensitive rows with the same public bins split
// only at those bins' edges, and leave them unchanged; and the bins depend
// on the public rows alone.
func TestGBTBinsArePublic(t *testing.T) {
	pub, _ := xorData(10, 3000, 3)
	bins := PublicBins(pub, 16)
	again := PublicBins(pub, 16)
	if !slices.EqualFunc(bins.Edges, again.Edges, slices.Equal) {
		t.Fatal("PublicBins is not a function of the public rows")
	}
	before := make([][]float32, len(bins.Edges))
	for f, e := range bins.Edges {
		before[f] = slices.Clone(e)
		if len(e) == 0 || len(e) > 15 {
			t.Fatalf("column %d: %d edges for 16 bins", f, len(e))
		}
	}
	l := &GBT{Bins: bins, Rounds: 30}
	for seed := uint64(20); seed < 23; seed++ {
		x, y := xorData(seed, 500+int(seed)*37, 3)
		m, err := l.Fit(x, y, 2)
		if err != nil {
			t.Fatal(err)
		}
		gm := m.(*gbtModel)
		splits := 0
		for i, f := range gm.feat {
			thr := gm.thr[i]
			if math.IsInf(float64(thr), 1) {
				continue // a leaf above the last depth
			}
			splits++
			if !slices.Contains(bins.Edges[f], thr) {
				t.Fatalf("sensitive set %d: split of column %d at %v, not a public edge %v", seed, f, thr, bins.Edges[f])
			}
		}
		if splits == 0 {
			t.Fatalf("sensitive set %d: no split at all", seed)
		}
	}
	if !slices.EqualFunc(bins.Edges, before, slices.Equal) {
		t.Fatal("fitting changed the public bins")
	}
	// A one-hot column (0/1) gets the one edge 0.5, even when its 1s are
	// rare (quantiles alone would miss them).
	oh := NewMatrix(1000, 1)
	for i := 0; i < 1000; i += 200 {
		oh.Data[i] = 1
	}
	if e := PublicBins(oh, 64).Edges[0]; !slices.Equal(e, []float32{0.5}) {
		t.Errorf("one-hot column: edges %v, want [0.5]", e)
	}
}

// TestGBTBalancedWeights: on a 95/5 problem, weighting each class by
// rows/(classes·its rows) finds more of the rare class than no weights.
func TestGBTBalancedWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	mk := func(n int) (*Matrix, []int32) {
		x := NewMatrix(n, 2)
		y := make([]int32, n)
		for i := range n {
			if r.Float64() < 0.05 {
				y[i] = 1
			}
			x.Data[2*i] = float32(r.NormFloat64() + 1.2*float64(y[i]))
			x.Data[2*i+1] = float32(r.NormFloat64())
		}
		return x, y
	}
	xtr, ytr := mk(2000)
	xte, yte := mk(4000)
	w := make([]float32, len(ytr))
	var n1 float32
	for _, c := range ytr {
		n1 += float32(c)
	}
	for i, c := range ytr {
		w[i] = float32(len(ytr)) / (2 * (float32(len(ytr)) - n1))
		if c == 1 {
			w[i] = float32(len(ytr)) / (2 * n1)
		}
	}
	l := &GBT{Bins: PublicBins(xte, 64)}
	plain, err := l.Fit(xtr, ytr, 2)
	if err != nil {
		t.Fatal(err)
	}
	bal, err := l.FitWeighted(xtr, ytr, w, 2)
	if err != nil {
		t.Fatal(err)
	}
	recall := func(m Model) float64 {
		out := make([]int32, xte.Rows)
		m.Predict(xte, out)
		hit, all := 0, 0
		for i, c := range yte {
			if c == 1 {
				all++
				if out[i] == 1 {
					hit++
				}
			}
		}
		return float64(hit) / float64(all)
	}
	rp, rb := recall(plain), recall(bal)
	t.Logf("rare-class recall: unweighted %.3f, balanced %.3f", rp, rb)
	if rb < rp+0.2 {
		t.Errorf("balanced recall %.3f, unweighted %.3f: want 0.2 more", rb, rp)
	}
}

// TestGBTAdultTeachers: the plurality of 250 boosted teachers on 130
// Adult rows each, split on bins of the public encoding, labels
// adult_test at least as well as logistic-regression teachers do (0.80).
func TestGBTAdultTeachers(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 250 teachers")
	}
	d := loadAdult(t)
	xs, ys := teacherSplits(t, 250, 130)
	opts := LearnerOptions{Bins: PublicBins(d.xte, DefaultMaxBins)}
	e, err := NewEnsemble(fitAllOpts(t, "gbt", opts, xs, ys), 2)
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
	t.Logf("plurality of 250 boosted teachers × 130 rows: accuracy %.4f on adult_test", acc)
	if acc < 0.80 {
		t.Errorf("plurality accuracy %.4f, want at least 0.80", acc)
	}
}

// fitAllOpts is fitAll with learner options.
func fitAllOpts(tb testing.TB, name string, opts LearnerOptions, xs []*Matrix, ys [][]int32) []Model {
	models := make([]Model, len(xs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := NewLearner(name, opts)
			if err != nil {
				tb.Error(err)
				return
			}
			for t := range next {
				m, err := l.Fit(xs[t], ys[t], 2)
				if err != nil {
					tb.Error(err)
					continue
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

// BenchmarkFitGBT250 fits 250 boosted teachers on 130 Adult rows each
// (the default 250 teachers of Adult's 32,561 rows), bins from the public
// encoding (adult_test), one learner per core as the engine does.
func BenchmarkFitGBT250(b *testing.B) {
	d := loadAdult(b)
	xs, ys := teacherSplits(b, 250, 130)
	opts := LearnerOptions{Bins: PublicBins(d.xte, DefaultMaxBins)}
	for b.Loop() {
		fitAllOpts(b, "gbt", opts, xs, ys)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/250teachers")
}

// BenchmarkGBTVotes counts the votes of 250 boosted teachers on the 16,281
// rows of adult_test per operation.
func BenchmarkGBTVotes(b *testing.B) {
	d := loadAdult(b)
	xs, ys := teacherSplits(b, 250, 130)
	opts := LearnerOptions{Bins: PublicBins(d.xte, DefaultMaxBins)}
	e, err := NewEnsemble(fitAllOpts(b, "gbt", opts, xs, ys), 2)
	if err != nil {
		b.Fatal(err)
	}
	counts := make([]int32, d.xte.Rows*2)
	for b.Loop() {
		e.Votes(d.xte, counts)
	}
	b.ReportMetric(float64(d.xte.Rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// TestGBTBinaryRoundTrip: a two-class model (one score) and a one-class
// model are stored and restored with the same predictions.
func TestGBTBinaryRoundTrip(t *testing.T) {
	x, y := xorData(4, 600, 2)
	for _, tc := range []struct {
		name string
		y    []int32
	}{{"two classes", y}, {"one class", make([]int32, len(y))}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := (&GBT{Bins: PublicBins(x, 32)}).Fit(x, tc.y, 3)
			if err != nil {
				t.Fatal(err)
			}
			kind, b, err := EncodeModel(m)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := DecodeModel(kind, b, 3, x.Cols)
			if err != nil {
				t.Fatal(err)
			}
			p1, p2 := make([]float32, 3*x.Rows), make([]float32, 3*x.Rows)
			m.(ProbModel).PredictProba(x, p1)
			m2.(ProbModel).PredictProba(x, p2)
			if !slices.Equal(p1, p2) {
				t.Fatal("probabilities differ after a round trip")
			}
		})
	}
}
