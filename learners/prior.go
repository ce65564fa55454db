package learners

import (
	"errors"
	"math"
	"slices"

	"github.com/pate-tool/pate/learners/kernel"
)

// BalanceAlphas are the strengths BalanceAlpha weighs, weakest first.
var BalanceAlphas = []float64{0, 0.25, 0.5, 0.75, 1}

// BalanceImbalance is how far below an even share (1/k) the smallest
// class share must lie, as a fraction of it, before BalanceAlpha leans the
// decision at all: on classes about even, the plain argmax stays.
const BalanceImbalance = 0.5

// Balance is how a decision was leant towards balanced accuracy: class c's
// probability is divided by Shares[c]^Alpha before the argmax, and what
// the model itself expects of the decision (its probabilities taken as
// the truth: they are all the run may look at) with and without it.
type Balance struct {
	Alpha  float64
	Shares []float64
	// The expected accuracy and balanced accuracy of the plain argmax
	// (Alpha 0) and of the chosen decision.
	PlainAcc, PlainBA, Acc, BA float64
}

// BalanceAlpha picks, from the class probabilities of n rows (n×k,
// row-major, each row summing to 1, weighted by weight[i] or 1 when
// weight is nil), the strength alpha of BalanceAlphas whose decision
// argmax_c p_c / share_c^alpha has the highest expected balanced accuracy
// among those whose expected accuracy is at most maxLoss below the plain
// argmax's, share_c being the mean probability of class c; alpha is 0
// unless the smallest share is below BalanceImbalance/k. Expectations
// are taken under the probabilities themselves: this reads nothing but
// them, so it is post-processing of whatever produced them. A share below
// floor is taken at floor.
func BalanceAlpha(probs []float64, weight []float64, k int, maxLoss, floor float64) Balance {
	n := len(probs) / max(k, 1)
	shares := make([]float64, k)
	tot := 0.0
	w := func(i int) float64 {
		if weight == nil {
			return 1
		}
		return weight[i]
	}
	for i := 0; i < n; i++ {
		for c := 0; c < k; c++ {
			shares[c] += w(i) * probs[i*k+c]
		}
		tot += w(i)
	}
	if !(tot > 0) || k < 2 {
		return Balance{Shares: shares}
	}
	logShare := make([]float64, k)
	for c := range shares {
		shares[c] /= tot
		logShare[c] = math.Log(math.Max(shares[c], floor))
	}
	expect := func(alpha float64) (acc, ba float64) {
		hit := make([]float64, k)
		for i := 0; i < n; i++ {
			p := probs[i*k : (i+1)*k]
			best, bs := 0, math.Inf(-1)
			for c, v := range p {
				if !(v > 0) {
					continue
				}
				if s := math.Log(v) - alpha*logShare[c]; s > bs {
					best, bs = c, s
				}
			}
			acc += w(i) * p[best]
			hit[best] += w(i) * p[best]
		}
		for c := range hit {
			if shares[c] > 0 {
				ba += hit[c] / (shares[c] * tot)
			}
		}
		return acc / tot, ba / float64(k)
	}
	b := Balance{Shares: shares}
	b.PlainAcc, b.PlainBA = expect(0)
	b.Acc, b.BA = b.PlainAcc, b.PlainBA
	if slices.Min(shares) >= BalanceImbalance/float64(k) {
		return b
	}
	for _, a := range BalanceAlphas[1:] {
		acc, ba := expect(a)
		if acc >= b.PlainAcc-maxLoss && ba > b.BA {
			b.Alpha, b.Acc, b.BA = a, acc, ba
		}
	}
	return b
}

// BalancedLinear returns the linear model m (a logistic regression, plain
// or over norm-scaled rows) with its decision leant towards balanced
// accuracy by BalanceAlpha on its class probabilities over the rows of x:
// the class scores are lowered by alpha·log share_c (for alpha 1, the
// logit adjustment for balanced error of Menon et al., ICLR 2021). It is
// post-processing of m and x: when m is released and x public, so is the
// result. m is returned unchanged when it is not linear, x has no row or
// the plain argmax is kept.
func BalancedLinear(m Model, x *Matrix, maxLoss, floor float64) (Model, Balance, error) {
	var lm *linearModel
	var scores func(row []float32, out []float64)
	wrap := func(l *linearModel) Model { return l }
	switch t := m.(type) {
	case *linearModel:
		lm = t
		scores = func(row []float32, out []float64) {
			for c := 0; c < t.classes; c++ {
				out[c] = float64(t.b[c]) + float64(kernel.Dot(t.w[c*t.dim:(c+1)*t.dim], row))
			}
		}
	case *rowNormModel:
		lm = t.m
		scores = t.scores
		wrap = func(l *linearModel) Model { return &rowNormModel{m: l, norm: t.norm} }
	default:
		return m, Balance{}, nil
	}
	if x == nil || x.Rows == 0 {
		return m, Balance{}, nil
	}
	if x.Cols != lm.dim {
		return nil, Balance{}, errors.New("learners: balancing: rows of another width than the model's")
	}
	k := lm.classes
	probs := make([]float64, 0, x.Rows*k)
	sc := make([]float64, k)
	for i := 0; i < x.Rows; i++ {
		scores(x.Row(i), sc)
		mx := math.Inf(-1)
		for c := range sc {
			if !absent(lm.b[c]) {
				mx = math.Max(mx, sc[c])
			}
		}
		sum := 0.0
		for c := range sc {
			if absent(lm.b[c]) {
				sc[c] = 0
				continue
			}
			sc[c] = math.Exp(sc[c] - mx)
			sum += sc[c]
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			continue
		}
		for c := range sc {
			probs = append(probs, sc[c]/sum)
		}
	}
	b := BalanceAlpha(probs, nil, k, maxLoss, floor)
	if b.Alpha == 0 {
		return m, b, nil
	}
	out := &linearModel{classes: k, dim: lm.dim, w: lm.w, b: append([]float32(nil), lm.b...)}
	for c := range out.b {
		if !absent(lm.b[c]) {
			out.b[c] -= float32(b.Alpha * math.Log(math.Max(b.Shares[c], floor)))
		}
	}
	return wrap(out), b, nil
}
