package learners

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// pcgBits is a seeded RandomBits for tests.
type pcgBits struct{ r *rand.Rand }

func (p pcgBits) Uint64() uint64 { return p.r.Uint64() }

func newBits(seed uint64) RandomBits { return pcgBits{rand.New(rand.NewPCG(seed, 7))} }

// zeroNoise adds nothing and counts its calls.
type zeroNoise struct {
	calls int
	dims  []int
}

func (z *zeroNoise) AddNoise(v []int64) error {
	z.calls++
	z.dims = append(z.dims, len(v))
	return nil
}

// roundedNoise adds the nearest integer of N(0, σ²): a test stand-in for
// the discrete Gaussian (which lives in label/noise), seeded.
func roundedNoise(seed uint64, sigma float64) IntNoise {
	r := rand.New(rand.NewPCG(seed, 11))
	return IntNoiseFunc(func(v []int64) error {
		for i := range v {
			v[i] += int64(math.Round(sigma * r.NormFloat64()))
		}
		return nil
	})
}

func TestRoundedSensSq(t *testing.T) {
	cases := []struct {
		name   string
		c      float64
		dims   int
		beta   float64
		want   int64
		reason string
	}{
		// c² + d/4 + √(2 ln(1/β))(c + √d/2) with √(2 ln(1/β)) = 2:
		// 9 + 1 + 2·(3 + 1) = 18 < (3 + 2)² = 25.
		{"conditional bound", 3, 4, math.Exp(-2), 18, "KLS21 second term"},
		// (1 + √1)² = 4 < 1 + 1/4 + √(2·ln 1e6)·1.5 ≈ 9.14.
		{"unconditional bound", 1, 1, 1e-6, 4, "(c+√d)²"},
		// 1 + 25 + √(2 ln 1e6)·(1 + 5) = 57.54…, below (1+10)² = 121.
		{"many dimensions", 1, 100, 1e-6, 57, "floor of the second term"},
		// 6.25 + 0.25 + ~0 = 6.5 → 6, raised to ⌈c²⌉ = 7 so truncation fits.
		{"floor raised to c²", 2.5, 1, 0.999999, 7, "⌈c²⌉"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := RoundedSensSq(c.c, c.dims, c.beta)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("RoundedSensSq(%v, %d, %v) = %d, want %d (%s)", c.c, c.dims, c.beta, got, c.want, c.reason)
			}
		})
	}
	for _, bad := range []struct {
		c    float64
		d    int
		beta float64
	}{{0, 3, 0.1}, {1, 0, 0.1}, {1, 3, 0}, {1, 3, 1}, {math.Inf(1), 3, 0.1}, {1e10, 3, 0.1}} {
		if _, err := RoundedSensSq(bad.c, bad.d, bad.beta); err == nil {
			t.Errorf("RoundedSensSq(%v, %d, %v): no error", bad.c, bad.d, bad.beta)
		}
	}
}

// TestRoundingNormBound is a property test: whatever the vector (within the
// clip, or slightly beyond it by floating-point excess) and however tight
// the bound, the rounded vector added to the sum has squared norm at most
// the bound. Tight bounds (β near 1) force the redraws and the truncation
// fallback, which the test checks were exercised.
func TestRoundingNormBound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var tries, fell int
	for _, c := range []struct {
		name    string
		classes int
		feats   int
		clip    float64
		beta    float64
	}{
		{"loose", 3, 10, 50, 1e-6},
		{"tight", 2, 5, 3, 0.9},
		{"tightest", 4, 30, 1.5, 0.999999},
		{"one coordinate", 1, 0, 2.5, 0.999999},
		{"wide", 10, 64, 512, 1e-6},
	} {
		t.Run(c.name, func(t *testing.T) {
			dims := c.classes * (c.feats + 1)
			sensSq, err := RoundedSensSq(c.clip, dims, c.beta)
			if err != nil {
				t.Fatal(err)
			}
			rd := newRounder(newBits(3), sensSq)
			for trial := 0; trial < 2000; trial++ {
				z := make([]float64, c.classes)
				val := make([]float64, c.feats)
				ind := make([]int32, c.feats)
				for j := range ind {
					ind[j] = int32(j)
					val[j] = r.NormFloat64()
				}
				for k := range z {
					z[k] = r.NormFloat64()
				}
				norm := 0.0
				for _, a := range z {
					norm += a * a
				}
				xn := 1.0
				for _, v := range val {
					xn += v * v
				}
				norm = math.Sqrt(norm * xn)
				// Scale to the clip, sometimes a hair beyond it.
				f := c.clip / norm
				if trial%7 == 0 {
					f *= 1 + 1e-12
				}
				sum := make([]int64, dims)
				rd.add(sum, z, f, c.feats, ind, val)
				var n2 int64
				for _, v := range sum {
					n2 += v * v
				}
				if n2 > sensSq {
					t.Fatalf("trial %d: rounded squared norm %d > bound %d", trial, n2, sensSq)
				}
			}
			tries += rd.tries
			fell += rd.fell
		})
	}
	// 99 coordinates at ½ and a bias of 1 under the tightest bound ⌈c²⌉ = 26:
	// a draw fits only with at most 25 of the 99 rounded up, which 64 draws
	// practically never give, so the truncation must take over.
	t.Run("forced truncation", func(t *testing.T) {
		val := make([]float64, 99)
		ind := make([]int32, 99)
		for j := range val {
			val[j], ind[j] = 0.5, int32(j)
		}
		rd := newRounder(newBits(9), 26)
		sum := make([]int64, 100)
		rd.add(sum, []float64{1}, 1, 99, ind, val)
		var n2 int64
		for _, v := range sum {
			n2 += v * v
		}
		if n2 > 26 {
			t.Fatalf("rounded squared norm %d > 26", n2)
		}
		if rd.fell != 1 || sum[99] != 1 {
			t.Errorf("truncations %d, bias %d: want the vector truncated to (0, …, 0, 1)", rd.fell, sum[99])
		}
		tries += rd.tries
		fell += rd.fell
	})
	if tries == 0 || fell == 0 {
		t.Errorf("redraws %d, truncations %d: the tight cases should exercise both", tries, fell)
	}
}

// TestRoundingUnbiased checks that the randomized rounding keeps the mean:
// over many draws the average rounded value of each coordinate is within
// 5 standard errors of the scaled value.
func TestRoundingUnbiased(t *testing.T) {
	rd := newRounder(newBits(5), 1<<40)
	z := []float64{0.3, -0.7}
	val := []float64{1.25, -0.4}
	ind := []int32{0, 1}
	const f, n = 3.3, 20000
	acc := make([]int64, 2*3)
	for i := 0; i < n; i++ {
		rd.add(acc, z, f, 2, ind, val)
	}
	want := []float64{f * z[0] * val[0], f * z[0] * val[1], f * z[1] * val[0], f * z[1] * val[1], f * z[0], f * z[1]}
	got := []float64{float64(acc[0]), float64(acc[1]), float64(acc[2]), float64(acc[3]), float64(acc[4]), float64(acc[5])}
	for j := range want {
		mean := got[j] / n
		if math.Abs(mean-want[j]) > 5*0.5/math.Sqrt(n) {
			t.Errorf("coordinate %d: mean %v, want %v", j, mean, want[j])
		}
	}
}

// TestDPLogRegNoiselessMatchesLogReg trains with zero noise, a clip no
// gradient reaches, a fine rounding grid and the same ridge as LogReg's
// objective (1/(C·n) on the average loss): gradient descent must land on
// nearly the same model as L-BFGS.
func TestDPLogRegNoiselessMatchesLogReg(t *testing.T) {
	if testing.Short() {
		t.Skip("trains 1500 full-batch steps")
	}
	d := loadBreastCancer(t)
	ref, err := (&LogReg{C: 1, MaxIter: 1000, Tol: 1e-6}).Fit(d.xtr, d.ytr, 2)
	if err != nil {
		t.Fatal(err)
	}
	const clip, gamma = 200.0, 1 << 16
	sensSq, err := RoundedSensSq(clip*gamma, ParamCount(d.xtr.Cols, 2), 1e-6)
	if err != nil {
		t.Fatal(err)
	}
	zn := &zeroNoise{}
	l := &DPLogReg{
		Params: DPLogRegParams{Steps: 1500, Clip: clip, LearnRate: 0.5, Gamma: gamma, SensSq: sensSq,
			L2: 1 / float64(d.xtr.Rows), Rows: float64(d.xtr.Rows)},
		Noise: zn, Rand: newBits(1),
	}
	m, err := l.Fit(d.xtr, d.ytr, 2)
	if err != nil {
		t.Fatal(err)
	}
	if zn.calls != 1500 {
		t.Errorf("noise added %d times, want once per step (1500)", zn.calls)
	}
	for _, n := range zn.dims {
		if n != ParamCount(d.xtr.Cols, 2) {
			t.Fatalf("noise over %d coordinates, want %d", n, ParamCount(d.xtr.Cols, 2))
		}
	}
	a, b := accuracy(m, d.xte, d.yte), accuracy(ref, d.xte, d.yte)
	if math.Abs(a-b) > 0.012 {
		t.Errorf("noiseless DP-GD accuracy %.4f, L-BFGS %.4f", a, b)
	}
	pa, pb := make([]int32, d.xte.Rows), make([]int32, d.xte.Rows)
	m.Predict(d.xte, pa)
	ref.Predict(d.xte, pb)
	agree := 0
	for i := range pa {
		if pa[i] == pb[i] {
			agree++
		}
	}
	if frac := float64(agree) / float64(len(pa)); frac < 0.98 {
		t.Errorf("noiseless DP-GD agrees with L-BFGS on %.3f of test rows, want ≥ 0.98", frac)
	}
}

// TestDPLogRegSeeded checks that a run is a function of its seeds: the same
// seeds give the same model, another noise seed another one, and that a
// planned run with noise learns better than chance on a separable problem.
func TestDPLogRegSeeded(t *testing.T) {
	x, y := blobs(600, 4, 3, 9)
	fit := func(noiseSeed, roundSeed uint64) Model {
		t.Helper()
		p, err := PlanDPLogReg(x.Cols, 3, 600, 0.0178)
		if err != nil {
			t.Fatal(err)
		}
		// σ of the order a budget ε ≈ 1 gives: 40× the sensitivity.
		l := &DPLogReg{Params: p, Noise: roundedNoise(noiseSeed, 40*math.Sqrt(float64(p.SensSq))), Rand: newBits(roundSeed)}
		m, err := l.Fit(x, y, 3)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	w := func(m Model) []float32 { w, _ := m.(*rowNormModel).m.Linear(); return w }
	a, b, c := fit(1, 2), fit(1, 2), fit(3, 2)
	if !equalF32(w(a), w(b)) {
		t.Error("same seeds gave different models")
	}
	if equalF32(w(a), w(c)) {
		t.Error("different noise seeds gave the same model")
	}
	if acc := accuracy(a, x, y); acc < 0.8 {
		t.Errorf("accuracy %.3f on well-separated blobs, want ≥ 0.8", acc)
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// blobs returns n rows of dim features in classes Gaussian clusters.
func blobs(n, dim, classes int, seed uint64) (*Matrix, []int32) {
	r := rand.New(rand.NewPCG(seed, 1))
	centers := make([]float64, classes*dim)
	for i := range centers {
		centers[i] = 3 * r.NormFloat64()
	}
	x := NewMatrix(n, dim)
	y := make([]int32, n)
	for i := 0; i < n; i++ {
		c := i % classes
		y[i] = int32(c)
		for j := 0; j < dim; j++ {
			x.Data[i*dim+j] = float32(centers[c*dim+j] + r.NormFloat64())
		}
	}
	return x, y
}

func TestDPLogRegErrors(t *testing.T) {
	x, y := blobs(30, 2, 2, 1)
	good, err := PlanDPLogReg(2, 2, 30, 0.0178)
	if err != nil {
		t.Fatal(err)
	}
	noiseErr := errors.New("sampler broke")
	cases := []struct {
		name  string
		l     DPLogReg
		wrap  error
		tweak func(*DPLogRegParams)
	}{
		{name: "no noise", l: DPLogReg{Rand: newBits(1)}, wrap: ErrNoNoise},
		{name: "no rounding source", l: DPLogReg{Noise: &zeroNoise{}}},
		{name: "no steps", l: DPLogReg{Noise: &zeroNoise{}, Rand: newBits(1)}, tweak: func(p *DPLogRegParams) { p.Steps = 0 }},
		{name: "no rows", l: DPLogReg{Noise: &zeroNoise{}, Rand: newBits(1)}, tweak: func(p *DPLogRegParams) { p.Rows = 0 }},
		{name: "bound below clip", l: DPLogReg{Noise: &zeroNoise{}, Rand: newBits(1)}, tweak: func(p *DPLogRegParams) { p.SensSq = 1 }},
		{name: "NaN rate", l: DPLogReg{Noise: &zeroNoise{}, Rand: newBits(1)}, tweak: func(p *DPLogRegParams) { p.LearnRate = math.NaN() }},
		{name: "sampler error", l: DPLogReg{Noise: IntNoiseFunc(func([]int64) error { return noiseErr }), Rand: newBits(1)}, wrap: noiseErr},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.l
			l.Params = good
			if c.tweak != nil {
				c.tweak(&l.Params)
			}
			_, err := l.Fit(x, y, 2)
			if err == nil {
				t.Fatal("no error")
			}
			if c.wrap != nil && !errors.Is(err, c.wrap) {
				t.Errorf("error %v does not wrap %v", err, c.wrap)
			}
		})
	}
	for _, bad := range []struct {
		dim, classes int
		rows, rho    float64
	}{{0, 2, 10, 1}, {3, 1, 10, 1}, {3, 2, 0, 1}, {3, 2, math.Inf(1), 1}, {3, 2, 10, 0}, {3, 2, 10, math.NaN()}} {
		if _, err := PlanDPLogReg(bad.dim, bad.classes, bad.rows, bad.rho); err == nil {
			t.Errorf("PlanDPLogReg(%d, %d, %v, %v): no error", bad.dim, bad.classes, bad.rows, bad.rho)
		}
	}
}

// TestPlanDPLogReg checks the public rule's invariants: the integer bound
// covers the scaled clip, and the plan depends only on its public inputs.
func TestPlanDPLogReg(t *testing.T) {
	for _, c := range []struct{ dim, classes int }{{2, 2}, {112, 2}, {64, 10}, {180, 3}, {5000, 26}} {
		p, err := PlanDPLogReg(c.dim, c.classes, 1000, 0.0178)
		if err != nil {
			t.Fatal(err)
		}
		sc := p.Gamma * p.Clip
		if float64(p.SensSq) < sc*sc {
			t.Errorf("%v: bound %d below (γC)² = %v", c, p.SensSq, sc*sc)
		}
		if infl := math.Sqrt(float64(p.SensSq)) / sc; infl > 1.02 {
			t.Errorf("%v: rounding inflates the sensitivity by %.3f, want ≤ 1.02", c, infl)
		}
		q, _ := PlanDPLogReg(c.dim, c.classes, 1000, 0.0178)
		if p != q {
			t.Errorf("%v: two plans differ", c)
		}
	}
	// The step rule: clamp(round(6·rows·√(2ρ)/√params), 20, cap), cap =
	// min(1000, max(200, 1.5·10⁹/(rows·params))).
	for _, c := range []struct {
		dim, classes int
		rows, rho    float64
		want         int
	}{
		// 6·1198·√0.0356/√650 = 53.2
		{64, 10, 1198, 0.0178, 53},
		// 6·2124·√(2·0.0711)/√543 = 206.0, under the cap of 1000
		{180, 3, 2124, 0.0711, 206},
		{180, 3, 2124, 0.0045, 52}, // 6·2124·√0.009/√543 = 51.9
		{9, 11, 100, 0.0178, 20},   // 6·100·0.1887/10.49 = 10.8, raised
		{9, 11, 660, 40, 1000},     // ε ≈ 50: 6·660·8.94/10.49 = 3377, capped
		// 26 classes, 13,000 rows: 6·13000·0.1887/21.02 = 700, above the
		// work cap 1.5·10⁹/(13000·442) = 261
		{16, 26, 13000, 0.0178, 261},
		// adult's shape: 1.5·10⁹/(32561·224) = 205
		{111, 2, 32561, 0.0178, 205},
		// 10⁶ rows of 650 parameters: 1.5·10⁹/(6.5·10⁸) = 2 passes, so the
		// cap is the base 200
		{64, 10, 1e6, 0.0178, 200},
	} {
		p, err := PlanDPLogReg(c.dim, c.classes, c.rows, c.rho)
		if err != nil {
			t.Fatal(err)
		}
		params := float64(ParamCount(c.dim, c.classes))
		capSteps := math.Min(1000, math.Max(200, math.Floor(1.5e9/(c.rows*params))))
		want := int(math.Min(capSteps, math.Max(20, math.Round(6*c.rows*math.Sqrt(2*c.rho)/math.Sqrt(params)))))
		if p.Steps != c.want || p.Steps != want {
			t.Errorf("%+v: %d steps, want %d (formula %d)", c, p.Steps, c.want, want)
		}
	}
}

// TestRowNormModel checks the prediction path of a row-normalised model
// against the linear model applied to explicitly scaled rows, its
// probabilities, and that predicting allocates nothing (as Model promises).
func TestRowNormModel(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const k, d, n = 3, 5, 40
	lm := &linearModel{classes: k, dim: d, w: make([]float32, k*d), b: make([]float32, k)}
	for i := range lm.w {
		lm.w[i] = float32(r.NormFloat64())
	}
	for i := range lm.b {
		lm.b[i] = float32(r.NormFloat64())
	}
	x := NewMatrix(n, d)
	for i := range x.Data {
		x.Data[i] = float32(3 * r.NormFloat64())
	}
	x.Data[0], x.Data[1], x.Data[2], x.Data[3], x.Data[4] = 0.1, 0, 0, 0, 0 // a row already within the norm
	m := &rowNormModel{m: lm, norm: 1}
	scaled := NewMatrix(n, d)
	for i := 0; i < n; i++ {
		v := make([]float64, d)
		for j, a := range x.Row(i) {
			v[j] = float64(a)
		}
		scaleToNorm(v, 1)
		for j := range v {
			scaled.Row(i)[j] = float32(v[j])
		}
	}
	got, want := make([]int32, n), make([]int32, n)
	m.Predict(x, got)
	lm.Predict(scaled, want)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("row %d: class %d, scaled linear model %d", i, got[i], want[i])
		}
	}
	p := make([]float32, n*k)
	m.PredictProba(x, p)
	for i := 0; i < n; i++ {
		s, best := 0.0, 0
		for c := 0; c < k; c++ {
			s += float64(p[i*k+c])
			if p[i*k+c] > p[i*k+best] {
				best = c
			}
		}
		if math.Abs(s-1) > 1e-5 || int32(best) != got[i] {
			t.Errorf("row %d: probabilities sum to %v, argmax %d, class %d", i, s, best, got[i])
		}
	}
	if a := testing.AllocsPerRun(10, func() { m.Predict(x, got) }); a != 0 {
		t.Errorf("Predict allocates %v times", a)
	}
}

// recordNoise keeps a copy of every vector it is given and adds nothing.
type recordNoise struct{ got [][]int64 }

func (r *recordNoise) AddNoise(v []int64) error {
	r.got = append(r.got, append([]int64(nil), v...))
	return nil
}

// TestDPLogRegStepSensitivity checks the released sum's sensitivity on
// neighbouring data sets: appending one row (last, so that the other rows'
// rounding draws are the same) changes the first step's integer sum by a
// vector of squared norm at most SensSq, however extreme the row.
func TestDPLogRegStepSensitivity(t *testing.T) {
	x, y := blobs(200, 5, 4, 3)
	p, err := PlanDPLogReg(5, 4, 200, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	p.Steps = 1
	release := func(x *Matrix, y []int32) []int64 {
		t.Helper()
		rec := &recordNoise{}
		if _, err := (&DPLogReg{Params: p, Noise: rec, Rand: newBits(8)}).Fit(x, y, 4); err != nil {
			t.Fatal(err)
		}
		return rec.got[0]
	}
	base := release(x, y)
	r := rand.New(rand.NewPCG(6, 6))
	for trial, scale := range []float64{0, 1e-3, 1, 30, 1e6, 1e30} {
		row := make([]float32, 5)
		for j := range row {
			row[j] = float32(scale * r.NormFloat64())
		}
		x2 := &Matrix{Rows: x.Rows + 1, Cols: x.Cols, Data: append(append([]float32(nil), x.Data...), row...)}
		y2 := append(append([]int32(nil), y...), int32(trial%4))
		next := release(x2, y2)
		var d2 int64
		for j := range next {
			d := next[j] - base[j]
			d2 += d * d
		}
		if d2 > p.SensSq {
			t.Errorf("row of scale %g: the sum moved by squared norm %d > %d", scale, d2, p.SensSq)
		}
		if scale > 0 && d2 == 0 {
			t.Errorf("row of scale %g: the sum did not move", scale)
		}
	}
}

// TestDPLogRegChunks: with Streams the rows of a step are rounded in
// parallel chunks, each from its own stream; the model is a function of
// the seeds whatever the number of goroutines, it differs from the
// in-order rounding only by the rounding's draws (it learns as well), and
// the step callback counts every planned step.
func TestDPLogRegChunks(t *testing.T) {
	x, y := blobs(3*dplrChunkRows+100, 4, 3, 9)
	streams := func(key []byte) func(uint64) RandomBits {
		s := binary.LittleEndian.Uint64(key)
		return func(stream uint64) RandomBits { return pcgBits{rand.New(rand.NewPCG(s, stream))} }
	}
	w := func(m Model) []float32 { w, _ := m.(*rowNormModel).m.Linear(); return w }
	tests := []struct {
		name     string
		procs    int
		parallel bool
		bulk     bool // the streams fill blocks of words (the rounder reads ahead)
	}{{"one goroutine", 1, true, false}, {"two goroutines", 2, true, false}, {"four goroutines", 4, true, false},
		{"read ahead", 2, true, true}, {"in order", 2, false, false}}
	var first []float32
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(tc.procs))
			p, err := PlanDPLogReg(x.Cols, 3, float64(x.Rows), 0.0178)
			if err != nil {
				t.Fatal(err)
			}
			p.Steps = 30
			steps := 0
			l := &DPLogReg{Params: p, Noise: roundedNoise(1, 40*math.Sqrt(float64(p.SensSq))), Rand: newBits(2),
				Step: func(done, total int) {
					if steps++; done != steps || total != p.Steps {
						t.Errorf("step %d of %d reported as %d of %d", steps, p.Steps, done, total)
					}
				}}
			if tc.parallel {
				l.Streams = streams
			}
			if tc.bulk {
				l.Streams = func(key []byte) func(uint64) RandomBits {
					open := streams(key)
					return func(s uint64) RandomBits { return fillBits{open(s)} }
				}
			}
			m, err := l.Fit(x, y, 3)
			if err != nil {
				t.Fatal(err)
			}
			if steps != p.Steps {
				t.Errorf("%d steps reported, want %d", steps, p.Steps)
			}
			if acc := accuracy(m, x, y); acc < 0.8 {
				t.Errorf("accuracy %.3f on well-separated blobs, want ≥ 0.8", acc)
			}
			switch {
			case first == nil:
				first = w(m)
			case tc.parallel && !equalF32(first, w(m)):
				t.Error("the model depends on the number of goroutines")
			case !tc.parallel && equalF32(first, w(m)):
				t.Error("the in-order rounding gave the chunks' model: the streams were not used")
			}
		})
	}
}

// fillBits is a RandomBits that also fills blocks (bulkBits), with the
// words its Uint64 would give.
type fillBits struct{ RandomBits }

func (f fillBits) Fill(dst []uint64) {
	for i := range dst {
		dst[i] = f.Uint64()
	}
}

// BenchmarkDPLogRegFit: the gradient steps of letter's shape (13,333 rows
// of 16 features, 26 classes: 442 rounded coordinates a row a step), with
// the rows rounded in order from one source and in parallel chunks that
// read their streams ahead, side by side (the ratio is the figure).
func BenchmarkDPLogRegFit(b *testing.B) {
	x, y := blobs(13333, 16, 26, 4)
	streams := func(key []byte) func(uint64) RandomBits {
		s := binary.LittleEndian.Uint64(key)
		return func(stream uint64) RandomBits { return fillBits{pcgBits{rand.New(rand.NewPCG(s, stream))}} }
	}
	for _, c := range []struct {
		name    string
		streams func(key []byte) func(uint64) RandomBits
	}{{"in-order", nil}, {"chunks", streams}} {
		b.Run(c.name, func(b *testing.B) {
			p, err := PlanDPLogReg(x.Cols, 26, float64(x.Rows), 0.05)
			if err != nil {
				b.Fatal(err)
			}
			p.Steps = 10
			for b.Loop() {
				l := &DPLogReg{Params: p, Noise: &zeroNoise{}, Rand: newBits(1), Streams: c.streams}
				if _, err := l.Fit(x, y, 26); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*p.Steps*x.Rows*26*17), "ns/coordinate")
		})
	}
}

// addReference is rounder.add as it was written before roundBlock: each
// coordinate through round, one call and one word each. The fast loop must
// give its sums, its verdicts and its draws, word for word.
func (r *rounder) addReference(sum []int64, z []float64, f float64, d int, ind []int32, val []float64) bool {
	k, w := len(z), len(ind)+1
	buf := make([]int64, k*w)
	ok := false
	for try := 0; try < maxRoundTries && !ok; try++ {
		if try > 0 {
			r.tries++
		}
		var n2, carry uint64
		bad := false
		for c, zc := range z {
			a := f * zc
			blk := buf[c*w : (c+1)*w]
			for q, v := range val {
				x := a * v
				bad = bad || !(math.Abs(x) <= r.limit)
				blk[q] = r.round(x)
				var cy uint64
				n2, cy = bits.Add64(n2, uint64(blk[q]*blk[q]), 0)
				carry |= cy
			}
			bad = bad || !(math.Abs(a) <= r.limit)
			blk[w-1] = r.round(a)
			var cy uint64
			n2, cy = bits.Add64(n2, uint64(blk[w-1]*blk[w-1]), 0)
			carry |= cy
		}
		if bad {
			return false
		}
		ok = carry == 0 && n2 <= uint64(r.sensSq)
	}
	if !ok {
		r.fell++
		if !truncateToFit(buf, z, f, val, w, r.sensSq) {
			return false
		}
	}
	for c := range z {
		blk := buf[c*w : (c+1)*w]
		for q, j := range ind {
			sum[c*d+int(j)] += blk[q]
		}
		sum[k*d+c] += blk[w-1]
	}
	return true
}

// TestRoundBlockMatchesRound: add, through roundBlock, gives the sums,
// verdicts, redraws and truncations of the coordinate-by-coordinate
// rounding and leaves the source at the same word, read ahead or not, on
// gradients that fit at once, that need redraws or the truncation, with
// integers (no draw), negative values and zeros, and with values beyond the
// limit or not finite (the row is refused after the same draws).
func TestRoundBlockMatchesRound(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	vec := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = r.NormFloat64() * scale
		}
		return v
	}
	tests := []struct {
		name    string
		classes int
		feats   int
		sensSq  int64
		scale   float64 // the gradient's size in rounding units
		special func(val []float64)
	}{
		{"loose", 3, 10, 1 << 40, 30, nil},
		{"tight", 2, 64, 400, 2, nil},
		{"forced truncation", 1, 99, 26, 0.5, nil},
		{"integers and zeros", 4, 12, 1 << 30, 1, func(v []float64) {
			for i := range v {
				v[i] = math.Round(v[i] * 3)
			}
			v[0] = 0
		}},
		{"beyond the limit", 2, 8, 1 << 20, 1, func(v []float64) { v[3] = 1e30 }},
		{"not finite", 2, 8, 1 << 20, 1, func(v []float64) { v[5] = math.NaN() }},
		{"huge", 2, 8, 1 << 20, 1, func(v []float64) { v[1] = -1e300 }},
	}
	var tries, fell int
	defer func() {
		if tries == 0 || fell == 0 {
			t.Errorf("redraws %d, truncations %d: the tight cases should exercise both", tries, fell)
		}
	}()
	for _, tc := range tests {
		for _, bulk := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/read ahead %v", tc.name, bulk), func(t *testing.T) {
				src := func() *rounder {
					rd := newRounder(fillBits{newBits(4)}, tc.sensSq)
					if bulk {
						rd.readAhead()
					}
					return rd
				}
				fast, ref := src(), src()
				d := tc.feats
				for trial := 0; trial < 300; trial++ {
					ind := make([]int32, tc.feats)
					for j := range ind {
						ind[j] = int32(j)
					}
					val := vec(tc.feats, 1)
					if tc.special != nil && trial%3 == 0 {
						tc.special(val)
					}
					z := vec(tc.classes, 1)
					f := tc.scale * (0.5 + r.Float64())
					got, want := make([]int64, tc.classes*(d+1)), make([]int64, tc.classes*(d+1))
					okGot := fast.add(got, z, f, d, ind, val)
					okWant := ref.addReference(want, z, f, d, ind, val)
					if okGot != okWant || !slices.Equal(got, want) {
						t.Fatalf("trial %d: %v %v, the reference's %v %v", trial, okGot, got, okWant, want)
					}
				}
				if fast.tries != ref.tries || fast.fell != ref.fell {
					t.Errorf("redraws %d, truncations %d; the reference's %d, %d", fast.tries, fast.fell, ref.tries, ref.fell)
				}
				tries, fell = tries+ref.tries, fell+ref.fell
				if a, b := fast.word(), ref.word(); a != b {
					t.Error("the sources are at different words")
				}
			})
		}
	}
}
