package learners

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync"

	"github.com/pate-tool/pate/learners/kernel"
)

// This file holds the learning half of differentially private logistic
// regression: full-batch gradient descent whose every step releases one
// integer vector, the sum over the sensitive rows of their clipped, scaled
// and randomly rounded per-example gradients, plus integer noise that the
// caller injects (the package imports nothing of the privacy engine: the
// caller brings the exact sampler and does the accounting).
//
// One step, for the parameters θ = (W, b) of a multinomial model:
//
//  1. per row i, g_i = ∇ logloss_i(θ) (K×(d+1) values), clipped to ℓ2 norm
//     Clip: g_i ← g_i·min(1, Clip/‖g_i‖);
//  2. scaled by the public factor Gamma and rounded to an integer vector r_i
//     by the conditional randomized rounding of Kairouz, Liu, Steinke 2021
//     ("The distributed discrete Gaussian mechanism"): each
//     coordinate goes up with probability equal to its fractional part,
//     down otherwise, and the whole vector is rounded again until
//     ‖r_i‖² ≤ SensSq (an integer fixed before training by RoundedSensSq);
//  3. S = Σ_i r_i, exactly, in int64, and the injected Noise adds an integer
//     to every coordinate of S (the discrete Gaussian: CKS20);
//  4. θ ← θ − LearnRate·(S/(Gamma·Rows) + L2·W), where Rows is a public
//     count or one released privately by the caller.
//
// Adding or removing one row changes S by that row's r_i, whose squared norm
// is at most SensSq whatever the rounding draws and whatever the row holds,
// so the release of S is an integer query of ℓ2 sensitivity √SensSq. The
// bound does not trust floating point: a row with a non-finite value, or
// whose gradient norm is not finite (overflow, NaN: a comparison with NaN is
// false, so it would skip the clip), contributes nothing (it is dropped and
// counted in Dropped); the rounding refuses a coordinate that is not finite
// or beyond √SensSq + 1 before converting it to an integer (int64(NaN) is
// −2⁶³ on amd64), and drops the vector; and the squared norm is summed in
// uint64 with the carry kept (math/bits), so that it cannot wrap. Each row is rounded with its own
// fresh random draws, so the rounding of the other rows does not depend on
// the row (given an ideal random source). When the rounding still fails
// after maxRoundTries draws, the vector is truncated towards zero, which
// never increases a coordinate's magnitude, then shortened until it fits:
// the bound holds on every path. Nothing but the injected noise protects
// the rows; the randomized rounding is there for unbiasedness. The bound
// holds for any draws, but the independence argument above wants fresh
// ones, so a real run rounds with a cryptographically secure source too.
//
// The features reach the learner already encoded by an Encoder fitted on
// public data (privacy invariant 2): its means, standard deviations and
// ranges are public. Each row of encoded features is then scaled to ℓ2 norm
// at most RowNorm (a per-row map that uses no other row), which bounds the
// gradient before clipping (by √2·√(RowNorm²+1)) so that one clip and one
// learning rate serve every feature count.

// IntNoise adds integer noise to every coordinate of v, in place. The
// privacy of DPLogReg rests on it: a discrete Gaussian of the σ that the
// caller's accountant planned for SensSq.
type IntNoise interface {
	AddNoise(v []int64) error
}

// IntNoiseFunc adapts a function to IntNoise.
type IntNoiseFunc func(v []int64) error

// AddNoise calls f(v).
func (f IntNoiseFunc) AddNoise(v []int64) error { return f(v) }

// RandomBits is a source of uniformly random 64-bit words, for the
// randomized rounding (label/noise's Source satisfies it).
type RandomBits interface {
	Uint64() uint64
}

// DPLogRegParams are the public hyperparameters of DPLogReg. None of them
// may be computed from the sensitive rows (beyond a count released
// privately).
type DPLogRegParams struct {
	Steps     int     // gradient steps (each one release)
	Clip      float64 // ℓ2 bound of a per-example gradient over (W, b)
	LearnRate float64
	Gamma     float64 // scale applied before rounding to integers
	SensSq    int64   // squared ℓ2 bound of every rounded per-example vector
	RowNorm   float64 // each encoded row is scaled to ℓ2 norm ≤ RowNorm (0: no scaling)
	L2        float64 // ridge strength on W (public)
	// TailAverage in [0, 1) returns the average of the iterates of the last
	// ⌈TailAverage·Steps⌉ steps instead of the last iterate (0): averaging,
	// a post-processing of the released sums, cancels part of the noise.
	TailAverage float64
	// Rows is the denominator of the average gradient: a public bound or a
	// privately released count of the sensitive rows, never their exact
	// number (which would make the step size depend on the data without
	// being charged).
	Rows float64
}

// Constants of the public planning rule (PlanDPLogReg), tuned on the shared
// benchmark datasets only (adult, breast_cancer, digits, dna, vehicle,
// vowel), never on the sensitive data of a run.
const (
	DefaultDPClip      = 1.0
	DefaultDPRowNorm   = 1.0
	DefaultDPLearnRate = 2.0
	// DefaultDPStepsPerSNR, DefaultDPMinSteps and DefaultDPMaxSteps set the
	// steps from the run's signal-to-noise ratio s = rows·√(2ρ)/√params
	// (the size of the summed gradient over the noise's norm per step, for
	// one step): steps = clamp(round(6·s), 20, cap), with cap =
	// min(1000, max(200, DefaultDPWork/(rows·params))). With the learning
	// rate fixed, the noise that reaches the parameters grows with the
	// steps as fast as the progress does, so the number of steps trades
	// optimisation against noise, and a larger s affords more. The factor
	// 6 beat 4 and 10 (and fixed 30, 60 or 100 steps) on the mean accuracy
	// over the five smaller shared sets at ε = 0.5, 1, 2. The cap was 200
	// until the rule's steps were measured to stop short of convergence
	// wherever s is large (a large noisy count or a large ε): at ε = 50
	// a cap of 1000 took digits from 0.926 to 0.953, dna from 0.930 to
	// 0.948, vehicle from 0.702 to 0.746 and vowel from 0.470 to 0.502,
	// and it changes nothing where 6·s < 200 (the small sets at ε ≤ 1).
	// DefaultDPWork bounds the work of a run with a large sensitive set:
	// steps·rows·params ≤ 1.5·10⁹ unless the steps are at most 200. Each
	// step rounds every coordinate of every row's gradient with a fresh
	// random draw; on adult (32,561 rows, 226 parameters) 1000 steps took
	// 23 s of CPU against 1 s for the PATE default, so adult keeps the 200
	// steps it had (0.845 at ε = 1; 0.855 with 1000) and the extra steps go
	// to the sets where they cost little.
	DefaultDPStepsPerSNR = 6.0
	DefaultDPMinSteps    = 20
	DefaultDPMaxSteps    = 1000
	DefaultDPBaseSteps   = 200
	DefaultDPWork        = 1.5e9
	// DefaultRoundingBeta is KLS21's β: the probability that one
	// randomized rounding exceeds the norm bound and is drawn again.
	DefaultRoundingBeta = 1e-6
)

// Parameters of a plan.
const (
	// Gamma·Clip, the per-example gradient's bound in integer units, is
	// max(dpScaledClipMin, 16·√params): the rounding then inflates the
	// sensitivity by about 1% (the √(2 ln(1/β))·c term; d/4 is 1/1024 of
	// c²), the planned σ stays small enough for the exact sampler's
	// uint64 path at the usual budgets, and the sums stay far from int64
	// overflow (rows·c).
	dpScaledClipMin = 1 << 9
	maxRoundTries   = 64
)

// ParamCount is the number of parameters (and of released coordinates per
// step) of a multinomial model over dim encoded features and classes
// classes: classes·(dim+1).
func ParamCount(dim, classes int) int { return classes * (dim + 1) }

// RoundedSensSq returns the integer bound on the squared ℓ2 norm of a
// vector of dims coordinates whose norm before rounding is at most
// scaledClip, after the conditional randomized rounding with failure
// probability beta (Kairouz, Liu, Steinke 2021, Theorem 1's bound): the
// floor of min{(c + √d)², c² + d/4 + √(2 ln(1/β))·(c + √d/2)} with
// c = scaledClip, d = dims. It is at least ⌈c²⌉ - so truncation towards
// zero always fits - and the rounding meets it with probability ≥ 1 − β per
// draw.
func RoundedSensSq(scaledClip float64, dims int, beta float64) (int64, error) {
	if !(scaledClip > 0) || math.IsInf(scaledClip, 0) || dims < 1 {
		return 0, fmt.Errorf("learners: rounding bound needs a positive clip and dimension, got %v and %d", scaledClip, dims)
	}
	if !(beta > 0 && beta < 1) {
		return 0, fmt.Errorf("learners: rounding failure probability must be in (0, 1), got %v", beta)
	}
	c, d := scaledClip, float64(dims)
	b1 := (c + math.Sqrt(d)) * (c + math.Sqrt(d))
	b2 := c*c + d/4 + math.Sqrt(2*math.Log(1/beta))*(c+math.Sqrt(d)/2)
	b := math.Floor(math.Min(b1, b2))
	if lo := math.Ceil(c * c); b < lo {
		b = lo
	}
	if b > 1<<62 {
		return 0, fmt.Errorf("learners: rounding bound %g overflows int64", b)
	}
	return int64(b), nil
}

// PlanDPLogReg returns the public hyperparameters for a run over dim
// encoded features and classes classes, with rows the public or privately
// released row count (rows ≥ 1) and rho the zCDP budget the steps may
// spend. The rule reads no sensitive data; the caller plans the noise σ
// for (Steps, SensSq) with its accountant, from the same rho.
func PlanDPLogReg(dim, classes int, rows, rho float64) (DPLogRegParams, error) {
	if dim < 1 || classes < 2 {
		return DPLogRegParams{}, fmt.Errorf("learners: DP logistic regression needs features and two classes, got %d and %d", dim, classes)
	}
	if !(rows >= 1) || math.IsInf(rows, 0) {
		return DPLogRegParams{}, fmt.Errorf("learners: DP logistic regression needs a row count ≥ 1, got %v", rows)
	}
	if !(rho > 0) || math.IsInf(rho, 0) {
		return DPLogRegParams{}, fmt.Errorf("learners: DP logistic regression needs a budget ρ > 0, got %v", rho)
	}
	snr := rows * math.Sqrt(2*rho) / math.Sqrt(float64(ParamCount(dim, classes)))
	p := DPLogRegParams{
		Steps:     int(math.Min(StepCap(dim, classes, rows), math.Max(DefaultDPMinSteps, math.Round(DefaultDPStepsPerSNR*snr)))),
		Clip:      DefaultDPClip,
		LearnRate: DefaultDPLearnRate,
		RowNorm:   DefaultDPRowNorm,
		Rows:      rows,
	}
	params := ParamCount(dim, classes)
	scaled := math.Max(dpScaledClipMin, 16*math.Sqrt(float64(params)))
	p.Gamma = scaled / p.Clip
	s, err := RoundedSensSq(scaled, params, DefaultRoundingBeta)
	if err != nil {
		return DPLogRegParams{}, err
	}
	p.SensSq = s
	return p, nil
}

// StepCap is the most steps PlanDPLogReg takes for dim encoded features,
// classes classes and the (noisy) row count rows: DefaultDPMaxSteps, or
// fewer when that many full passes would exceed DefaultDPWork, but never
// fewer than DefaultDPBaseSteps. Public: it reads the shape and the
// released count only.
func StepCap(dim, classes int, rows float64) float64 {
	work := math.Max(1, rows) * float64(ParamCount(dim, classes))
	return math.Min(DefaultDPMaxSteps, math.Max(DefaultDPBaseSteps, math.Floor(DefaultDPWork/work)))
}

// DPLogReg fits a multinomial logistic regression by differentially private
// full-batch gradient descent (see the top of this file). Noise and Rand
// must be set; Noise carries the privacy.
type DPLogReg struct {
	Params DPLogRegParams
	Noise  IntNoise
	Rand   RandomBits
	// Step, when set, is called after each gradient step with the steps
	// done and Params.Steps (a progress display; public figures).
	Step func(done, total int)
	// Streams, when set, opens numbered streams of random bits under a key
	// (label/noise's Keyed): each step's rows are then rounded in parallel
	// chunks, chunk c drawing from stream c under a key drawn from Rand.
	// Nil: the rows are rounded in order from Rand itself.
	Streams func(key []byte) func(stream uint64) RandomBits
	// Dropped is set by Fit: the rows it dropped because a value or an
	// intermediate was not finite (counted once per row, whatever the
	// step). It depends on the sensitive values: a local diagnostic, never
	// part of a release.
	Dropped int
}

// ErrNoNoise reports a DPLogReg without its injected noise.
var ErrNoNoise = errors.New("learners: DP logistic regression has no noise")

func (p *DPLogRegParams) check() error {
	switch {
	case p.Steps < 1:
		return fmt.Errorf("learners: DP logistic regression needs at least one step, got %d", p.Steps)
	case !(p.Clip > 0) || math.IsInf(p.Clip, 0):
		return fmt.Errorf("learners: gradient clip must be positive and finite, got %v", p.Clip)
	case !(p.Gamma > 0) || math.IsInf(p.Gamma, 0):
		return fmt.Errorf("learners: rounding scale must be positive and finite, got %v", p.Gamma)
	case !(p.LearnRate > 0) || math.IsInf(p.LearnRate, 0):
		return fmt.Errorf("learners: learning rate must be positive and finite, got %v", p.LearnRate)
	case !(p.Rows >= 1) || math.IsInf(p.Rows, 0):
		return fmt.Errorf("learners: row count must be at least 1, got %v", p.Rows)
	case p.RowNorm < 0 || math.IsInf(p.RowNorm, 0) || math.IsNaN(p.RowNorm):
		return fmt.Errorf("learners: row norm must be non-negative and finite, got %v", p.RowNorm)
	case p.L2 < 0 || math.IsInf(p.L2, 0) || math.IsNaN(p.L2):
		return fmt.Errorf("learners: L2 strength must be non-negative and finite, got %v", p.L2)
	case !(p.TailAverage >= 0 && p.TailAverage < 1):
		return fmt.Errorf("learners: tail-average share must be in [0, 1), got %v", p.TailAverage)
	}
	c := p.Gamma * p.Clip
	if float64(p.SensSq) < math.Ceil(c*c) {
		return fmt.Errorf("learners: squared sensitivity %d is below (Gamma·Clip)² = %v", p.SensSq, c*c)
	}
	return nil
}

// Fit trains on x and y (labels in [0, classes)); every class can be
// predicted. The labels' counts are not used: the model has classes·(dim+1)
// parameters whatever classes are present.
func (l *DPLogReg) Fit(x *Matrix, y []int32, classes int) (Model, error) {
	// No rows is not an error: refusing would tell an empty sensitive set
	// from its neighbour with one row. The releases are then noise alone.
	if x.Rows > 0 {
		if _, err := checkFit(x, y, classes); err != nil {
			return nil, err
		}
	} else if classes < 1 || len(y) != 0 {
		return nil, fmt.Errorf("learners: %d labels for no rows and %d classes", len(y), classes)
	}
	if l.Noise == nil {
		return nil, ErrNoNoise
	}
	if l.Rand == nil {
		return nil, errors.New("learners: DP logistic regression has no random source for rounding")
	}
	p := l.Params
	if err := p.check(); err != nil {
		return nil, err
	}
	k, d := classes, x.Cols
	np := ParamCount(d, k)
	xs := toSparse(x)
	// A row with a value that is not finite is dropped (it contributes
	// nothing at any step); so is one that normalisation would make so.
	dropped := make([]bool, xs.rows)
	for i := range dropped {
		dropped[i] = !finiteRow(xs.val[xs.ptr[i]:xs.ptr[i+1]])
	}
	if p.RowNorm > 0 {
		normalizeRows(xs, p.RowNorm, dropped)
	}
	theta := make([]float64, np) // W (k×d) then b (k)
	sum := make([]int64, np)
	r := newRounder(l.Rand, p.SensSq)
	z := make([]float64, k)
	scale := 1 / (p.Gamma * p.Rows)
	avgFrom := p.Steps - int(math.Ceil(p.TailAverage*float64(p.Steps)))
	var avg []float64
	if avgFrom < p.Steps {
		avg = make([]float64, np)
	}
	for step := 0; step < p.Steps; step++ {
		clear(sum)
		if l.Streams != nil && xs.rows > dplrChunkRows {
			l.roundChunks(sum, theta, xs, y, dropped, d, k, &p)
		} else {
			roundRows(sum, theta, xs, y, dropped, 0, xs.rows, d, k, &p, r, z)
		}
		if err := l.Noise.AddNoise(sum); err != nil {
			return nil, fmt.Errorf("learners: adding noise at step %d: %w", step+1, err)
		}
		for j := range theta {
			g := float64(sum[j]) * scale
			if j < k*d {
				g += p.L2 * theta[j]
			}
			theta[j] -= p.LearnRate * g
		}
		if step >= avgFrom && avg != nil {
			for j, v := range theta {
				avg[j] += v
			}
		}
		if l.Step != nil {
			l.Step(step+1, p.Steps)
		}
	}
	if avg != nil {
		for j := range theta {
			theta[j] = avg[j] / float64(p.Steps-avgFrom)
		}
	}
	l.Dropped = 0
	for _, b := range dropped {
		if b {
			l.Dropped++
		}
	}
	m := &linearModel{classes: k, dim: d, w: make([]float32, k*d), b: make([]float32, k)}
	for j := range m.w {
		m.w[j] = float32(theta[j])
	}
	for c := range m.b {
		m.b[c] = float32(theta[k*d+c])
	}
	var out Model = m
	if p.RowNorm > 0 {
		out = &rowNormModel{m: m, norm: p.RowNorm}
	}
	return out, nil
}

// roundRows adds the clipped, scaled and rounded gradients of rows
// [lo, hi) of xs at theta to sum, drawing the rounding from r; a row whose
// gradient is not finite is marked in dropped and adds nothing.
func roundRows(sum []int64, theta []float64, xs *sparse, y []int32, dropped []bool, lo, hi, d, k int, p *DPLogRegParams, r *rounder, z []float64) {
	for i := lo; i < hi; i++ {
		if dropped[i] {
			continue
		}
		lo, hi := xs.ptr[i], xs.ptr[i+1]
		ind, val := xs.ind[lo:hi], xs.val[lo:hi]
		// Residuals p_c − [y = c] of the softmax.
		softmaxRow(theta, d, k, ind, val, z)
		z[y[i]]--
		rn, xn := 0.0, 1.0 // ‖residual‖², ‖(x, 1)‖²
		for _, v := range z {
			rn += v * v
		}
		for _, v := range val {
			xn += v * v
		}
		norm := math.Sqrt(rn * xn)
		if !(norm <= math.MaxFloat64) { // NaN or +Inf: no clip can bound it
			dropped[i] = true
			continue
		}
		f := p.Gamma
		if norm > p.Clip {
			f *= p.Clip / norm
		}
		if !r.add(sum, z, f, d, ind, val) {
			dropped[i] = true
		}
	}
}

// dplrChunkRows is the rows of a step whose rounding draws from one
// stream (Streams): the unit of the parallel rounding, small enough that
// the cores share a few thousand rows evenly (5,000 rows in chunks of
// 2,048 left one core with twice the other's work).
const dplrChunkRows = 512

// roundChunks is roundRows over every row, in chunks of dplrChunkRows
// rounded in parallel: each step draws a 32-byte key from Rand, and chunk c
// rounds from stream c under that key, so that the sum (integers, added in
// any order) depends on the seed and not on the number of goroutines.
func (l *DPLogReg) roundChunks(sum []int64, theta []float64, xs *sparse, y []int32, dropped []bool, d, k int, p *DPLogRegParams) {
	var key [32]byte
	for j := 0; j < 4; j++ {
		binary.LittleEndian.PutUint64(key[8*j:], l.Rand.Uint64())
	}
	open := l.Streams(key[:])
	clear(key[:])
	chunks := (xs.rows + dplrChunkRows - 1) / dplrChunkRows
	workers := min(runtime.GOMAXPROCS(0), chunks)
	next := make(chan int, chunks)
	for c := 0; c < chunks; c++ {
		next <- c
	}
	close(next)
	sums := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range sums {
		sums[w] = make([]int64, len(sum))
		wg.Add(1)
		go func() {
			defer wg.Done()
			z := make([]float64, k)
			for c := range next {
				r := newRounder(open(uint64(c)), p.SensSq)
				r.readAhead()
				roundRows(sums[w], theta, xs, y, dropped, c*dplrChunkRows, min(xs.rows, (c+1)*dplrChunkRows), d, k, p, r, z)
			}
		}()
	}
	wg.Wait()
	for _, part := range sums {
		for j, v := range part {
			sum[j] += v
		}
	}
}

// softmaxRow writes the class probabilities of one sparse row into z.
func softmaxRow(theta []float64, d, k int, ind []int32, val []float64, z []float64) {
	mx := math.Inf(-1)
	for c := 0; c < k; c++ {
		s := theta[k*d+c]
		wc := theta[c*d : (c+1)*d]
		for q, j := range ind {
			s += wc[j] * val[q]
		}
		z[c] = s
		mx = math.Max(mx, s)
	}
	sum := 0.0
	for c := range z {
		z[c] = math.Exp(z[c] - mx)
		sum += z[c]
	}
	for c := range z {
		z[c] /= sum
	}
}

// normalizeRows scales every row of x (with the constant 1 of the bias
// appended) so that ‖(x_i, 1)‖ ≤ norm·√2 at most, by scaling x_i to norm
// ≤ norm. A row whose squared norm is not finite is marked in dropped.
func normalizeRows(x *sparse, norm float64, dropped []bool) {
	for i := 0; i < x.rows; i++ {
		v := x.val[x.ptr[i]:x.ptr[i+1]]
		if !scaleToNorm(v, norm) {
			dropped[i] = true
		}
	}
}

// scaleToNorm scales v to ℓ2 norm at most norm, and returns false (leaving
// v as it is) when its squared norm is not finite.
func scaleToNorm(v []float64, norm float64) bool {
	s := 0.0
	for _, a := range v {
		s += a * a
	}
	if !(s <= math.MaxFloat64) {
		return false
	}
	if s > norm*norm {
		f := norm / math.Sqrt(s)
		for q := range v {
			v[q] *= f
		}
	}
	return true
}

// finiteRow reports whether every value of v is finite.
func finiteRow(v []float64) bool {
	for _, a := range v {
		if a-a != 0 {
			return false
		}
	}
	return true
}

// rowNormModel is a linear model over rows scaled as training scaled them
// (to ℓ2 norm ≤ norm): the class scores are s·(x·w_c) + b_c with
// s = min(1, norm/‖x‖). Like every Model it allocates nothing to predict.
type rowNormModel struct {
	m    *linearModel
	norm float64
}

// rowScale returns the factor that brings row to norm ≤ r.norm.
func (r *rowNormModel) rowScale(row []float32) float64 {
	n2 := 0.0
	for _, v := range row {
		n2 += float64(v) * float64(v)
	}
	if n2 > r.norm*r.norm {
		return r.norm / math.Sqrt(n2)
	}
	return 1
}

// scores writes the class scores of row into out (len classes).
func (r *rowNormModel) scores(row []float32, out []float64) {
	m := r.m
	s := r.rowScale(row)
	for c := 0; c < m.classes; c++ {
		out[c] = float64(m.b[c]) + s*float64(kernel.Dot(m.w[c*m.dim:(c+1)*m.dim], row))
	}
}

// Predict predicts the argmax class of every row (ties to the lowest).
func (r *rowNormModel) Predict(x *Matrix, out []int32) {
	var buf [64]float64
	sc := buf[:0]
	if r.m.classes <= len(buf) {
		sc = buf[:r.m.classes]
	} else {
		sc = make([]float64, r.m.classes)
	}
	for i := 0; i < x.Rows; i++ {
		r.scores(x.Row(i), sc)
		best := 0
		for c := 1; c < len(sc); c++ {
			if sc[c] > sc[best] {
				best = c
			}
		}
		out[i] = int32(best)
	}
}

// PredictProba writes the class probabilities of every row.
func (r *rowNormModel) PredictProba(x *Matrix, out []float32) {
	k := r.m.classes
	var buf [64]float64
	sc := buf[:0]
	if k <= len(buf) {
		sc = buf[:k]
	} else {
		sc = make([]float64, k)
	}
	for i := 0; i < x.Rows; i++ {
		r.scores(x.Row(i), sc)
		p := out[i*k : (i+1)*k]
		mx := math.Inf(-1)
		for c, v := range sc {
			p[c] = float32(v)
			mx = math.Max(mx, v)
		}
		softmaxInPlace(p, mx)
	}
}

// rounder does the conditional randomized rounding of one per-example
// gradient into a running integer sum.
type rounder struct {
	src    RandomBits
	sensSq int64
	// limit bounds a coordinate's magnitude before it is rounded: above it
	// (or NaN) the coordinate alone exceeds the norm bound, which the clip
	// rules out for finite arithmetic, so the vector is dropped rather
	// than converted (int64 of NaN or of a value beyond ±2⁶³ is not
	// defined by Go). Every rounded coordinate is then at most limit + 1 ≤
	// 2³¹ + 2 in magnitude, and its square fits in int64.
	limit float64
	bulk  bulkBits // src, when it reads ahead (readAhead)
	ahead []uint64
	next  int
	buf   []int64 // the rounded vector: k blocks of (len(ind) + 1)
	tries int     // draws beyond the first, over the run (for tests)
	fell  int     // vectors truncated after maxRoundTries failures
}

func newRounder(src RandomBits, sensSq int64) *rounder {
	return &rounder{src: src, sensSq: sensSq, limit: math.Floor(math.Sqrt(float64(sensSq))) + 1}
}

// bulkBits is a RandomBits that writes its next words into a slice at
// once (label/noise's seeded and keyed streams).
type bulkBits interface {
	RandomBits
	Fill(dst []uint64)
}

// readAhead makes r draw its words from src in blocks of roundAhead,
// when src can fill them: the same words, in the same order, without a
// call each. The words read ahead and not used are lost with r, so src
// must be r's alone (a chunk's stream).
func (r *rounder) readAhead() {
	if b, ok := r.src.(bulkBits); ok {
		r.bulk, r.ahead = b, make([]uint64, roundAhead)
		r.next = roundAhead
	}
}

// roundAhead is the words a rounder reads ahead.
const roundAhead = 512

// word returns the rounder's next random word.
func (r *rounder) word() uint64 {
	if r.bulk == nil {
		return r.src.Uint64()
	}
	if r.next == len(r.ahead) {
		r.bulk.Fill(r.ahead)
		r.next = 0
	}
	w := r.ahead[r.next]
	r.next++
	return w
}

// add rounds f·(z ⊗ (x, 1)) - the gradient (k blocks of the row's non-zero
// features, then the bias) scaled to integer units - and adds it to sum at
// the parameters' positions. It returns false, adding nothing, when a
// coordinate is not finite or beyond limit (a row the clip did not bound).
func (r *rounder) add(sum []int64, z []float64, f float64, d int, ind []int32, val []float64) bool {
	k, w := len(z), len(ind)+1
	if cap(r.buf) < k*w {
		r.buf = make([]int64, k*w)
	}
	buf := r.buf[:k*w]
	ok := false
	for try := 0; try < maxRoundTries && !ok; try++ {
		if try > 0 {
			r.tries++
		}
		// The squared norm in uint64 with the carries kept: each square is
		// below 2⁶³, so the sum cannot wrap unnoticed.
		var n2, carry uint64
		bad := false
		for c, zc := range z {
			a := f * zc
			blk := buf[c*w : (c+1)*w]
			// A block's squares, summed with their own carry, then added.
			b2, bc, bb := r.roundBlock(blk[:w-1], a, val)
			bad = bad || bb
			var cy uint64
			n2, cy = bits.Add64(n2, b2, 0)
			carry |= bc | cy
			bad = bad || !(math.Abs(a) <= r.limit)
			blk[w-1] = r.round(a)
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

// roundBlock writes into blk[q] a·val[q] rounded as round rounds it,
// drawing the same words in the same order, and returns the sum of their
// squares in uint64 with its carry, and whether a value was beyond the
// limit (or NaN). It is round's loop with the words read from the block
// read ahead in place and ⌊x⌋ by conversion (exact: |x| ≤ 2⁶² here), the
// rounder's inner loop: a call, a floor and a branch on the sign each were
// most of its time.
func (r *rounder) roundBlock(blk []int64, a float64, val []float64) (n2, carry uint64, bad bool) {
	blk = blk[:len(val)]
	lim := r.limit
	// The block read ahead and its position, in registers: through r,
	// each word's position was a load and a store.
	ahead, next := r.ahead, r.next
	defer func() { r.next = next }()
	for q, v := range val {
		x := a * v
		ax := math.Abs(x)
		bad = bad || !(ax <= lim)
		var iv int64
		if ax <= 1<<62 {
			// ⌊x⌋ and x − ⌊x⌋ without a branch on x's sign: t = x − int(x)
			// is exact, and when it is negative ⌊x⌋ is one less and t + 1
			// is round's x − ⌊x⌋ (the same real, rounded once).
			iv = int64(x)
			t := x - float64(iv)
			neg := int64(b2i(t < 0))
			iv -= neg
			if frac := t + float64(neg); frac > 0 {
				var w uint64
				if next < len(ahead) {
					w = ahead[next]
					next++
				} else {
					r.next = next
					w = r.word()
					ahead, next = r.ahead, r.next
				}
				d := float64(w>>11)*0x1p-53 - frac
				iv += int64(math.Float64bits(d) >> 63)
			}
		}
		blk[q] = iv
		var cy uint64
		n2, cy = bits.Add64(n2, uint64(iv*iv), 0)
		carry |= cy
	}
	return n2, carry, bad
}

// round returns ⌊v⌋ + 1 with probability v − ⌊v⌋, ⌊v⌋ otherwise. v must
// be finite and within ±2⁶² (the caller checks |v| ≤ limit); anything
// else gives 0, never an undefined conversion.
func (r *rounder) round(v float64) int64 {
	if !(math.Abs(v) <= 1<<62) {
		return 0
	}
	fl := math.Floor(v)
	if frac := v - fl; frac > 0 {
		// Up when the uniform u = word·2⁻⁵³ is below frac: the sign bit
		// of u − frac (a difference of floats is never rounded to zero,
		// and u = frac gives +0), without a branch on a coin the predictor
		// cannot guess.
		d := float64(r.word()>>11)*0x1p-53 - frac
		fl += float64(math.Float64bits(d) >> 63)
	}
	return int64(fl)
}

// truncateToFit writes the vector rounded towards zero, then moves its
// largest coordinates one step towards zero until its squared norm is at
// most sensSq (the first loop already achieves it when the unrounded norm
// is within the clip, as RoundedSensSq ensures; the second guards against
// floating-point excess). Its coordinates are within the rounder's limit
// (add checked them), so each square fits in int64; the sum is kept in
// uint64 with its carry. A vector far beyond the bound (more than twice
// sensSq, or a sum that carried: not floating-point excess, a clip that did
// not hold) is cleared instead, and it returns false.
func truncateToFit(buf []int64, z []float64, f float64, val []float64, w int, sensSq int64) bool {
	var n2, carry uint64
	for c, zc := range z {
		a := f * zc
		blk := buf[c*w : (c+1)*w]
		for q, v := range val {
			blk[q] = int64(math.Trunc(a * v))
			var cy uint64
			n2, cy = bits.Add64(n2, uint64(blk[q]*blk[q]), 0)
			carry |= cy
		}
		blk[w-1] = int64(math.Trunc(a))
		var cy uint64
		n2, cy = bits.Add64(n2, uint64(blk[w-1]*blk[w-1]), 0)
		carry |= cy
	}
	if carry != 0 || n2/2 > uint64(sensSq) {
		clear(buf)
		return false
	}
	for n2 > uint64(sensSq) {
		big := 0
		for j := range buf {
			if abs64(buf[j]) > abs64(buf[big]) {
				big = j
			}
		}
		a := abs64(buf[big])
		n2 -= uint64(2*a - 1)
		if buf[big] > 0 {
			buf[big]--
		} else {
			buf[big]++
		}
	}
	return true
}

func abs64(a int64) int64 {
	if a < 0 {
		return -a
	}
	return a
}
