package label

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// Differentially private logistic regression, the private learner for the
// regime PATE serves badly (many classes, few rows per teacher): the
// learning half is learners.DPLogReg, the noise is this package's exact
// discrete Gaussian, the accounting label/rdp's zCDP filter.
//
// A run spends the whole remaining budget of its filter in two charges,
// each made before its release:
//
//  1. the number of sensitive rows, released as n + N_Z(0, σc²)
//     (sensitivity 1, ρ = 1/(2σc²), DPLogRegCountShare of the budget): the
//     average gradient and the public hyperparameter rule need a row count,
//     and the exact one is sensitive;
//  2. the Steps gradient sums, ρ = Steps·SensSq/(2σ²) with σ planned from
//     what the count left (rdp.PlanDGaussStepsRho).

// DPLogRegCountShare is the share of the budget spent on the noisy row
// count. At ε = 1, δ = 1e-5 it gives σc ≈ 24 rows, a few percent of the
// smallest shared benchmark sets; the count only scales the step size.
const DPLogRegCountShare = 0.05

// DPLogRegRelease describes what a DP logistic regression run released and
// charged. Every field is public (derived from public inputs or from the
// noisy count).
type DPLogRegRelease struct {
	Params     learners.DPLogRegParams // Params.Rows is the noisy count
	Sigma      float64                 // discrete Gaussian σ of every step
	CountSigma float64                 // discrete Gaussian σ of the count
	Rho        float64                 // zCDP ρ charged in all
	// CountFromChoice: the count is the chooser's (released and charged
	// in the choice section), so Rho holds the steps alone.
	CountFromChoice bool
}

// DPLogRegOptions tunes FitDPLogReg; zero values select the public rule.
type DPLogRegOptions struct {
	// Adjust, when set, may change the planned hyperparameters' Steps,
	// LearnRate, RowNorm, L2 and Clip (Gamma follows Clip so that the
	// integer scale and the sensitivity stay those planned). It must read
	// no sensitive data.
	Adjust func(*learners.DPLogRegParams)
	// Diagnose, when set, is told how many rows training dropped for a
	// value or gradient that was not finite: a statistic of the sensitive
	// data that no mechanism protects (Config.Diagnose), never released.
	Diagnose func(string)
	// Count, when set, is a row count already released and charged (the
	// chooser's, drawn as step 1 would draw it): training skips step 1
	// and plans from it and what the filter has left.
	Count *DPLogRegCount
	// Step, when set, is called after each gradient step with the steps
	// done and planned (public: the plan's).
	Step func(done, total int)
}

// DPLogRegCount is a noisy row count released before training.
type DPLogRegCount struct {
	Rows  int64   // n + N_Z(0, σc²), at least 0
	Sigma float64 // σc
}

// dplrNoise adds exact discrete Gaussian noise to every coordinate.
type dplrNoise struct {
	g   *noise.DiscreteGaussian
	src noise.Source
}

func (d dplrNoise) AddNoise(v []int64) error {
	for i := range v {
		v[i] += d.g.Sample(d.src)
	}
	return nil
}

func dplrSampler(sigma float64) (*noise.DiscreteGaussian, error) {
	r, err := noise.ParseRat(strconv.FormatFloat(sigma, 'g', -1, 64))
	if err != nil {
		return nil, err
	}
	return noise.NewDiscreteGaussian(r)
}

// FitDPLogReg trains a multinomial logistic regression on the sensitive rows
// x, y (labels in [0, classes)) by differentially private gradient descent,
// spending all that remains of the filter f (see above). x must be encoded
// by an Encoder fitted on public data. noiseSrc draws the discrete
// Gaussians, roundSrc the randomized rounding; both must be
// cryptographically secure in a real run. The model labels any public rows
// (post-processing).
func FitDPLogReg(f *rdp.Filter, x *learners.Matrix, y []int32, classes int, noiseSrc, roundSrc noise.Source, opts DPLogRegOptions) (learners.Model, *DPLogRegRelease, error) {
	if f == nil || noiseSrc == nil || roundSrc == nil {
		return nil, nil, errors.New("label: DP logistic regression needs a filter and two random sources")
	}
	// Validate the public shape before anything is charged.
	if _, err := learners.PlanDPLogReg(x.Cols, classes, 1, 1); err != nil {
		return nil, nil, fmt.Errorf("label: DP logistic regression: %w", err)
	}
	if len(y) != x.Rows {
		// The counts are sensitive: the message does not quote them.
		return nil, nil, errors.New("label: DP logistic regression: the labels and the feature rows differ in number")
	}
	budget := f.Remaining()
	if !(budget > 0) {
		return nil, nil, fmt.Errorf("label: DP logistic regression: %w: nothing left", rdp.ErrBudgetExceeded)
	}
	// 1. The noisy count, unless the chooser released it.
	var sc, rhoCount, rows float64
	if c := opts.Count; c != nil {
		sc, rows = c.Sigma, math.Max(1, float64(c.Rows))
	} else {
		var gc *noise.DiscreteGaussian
		var err error
		if sc, gc, rhoCount, err = dplrCount(budget); err != nil {
			return nil, nil, err
		}
		if err := f.Charge(rhoCount); err != nil {
			return nil, nil, fmt.Errorf("label: charging the row count: %w", err)
		}
		rows = math.Max(1, float64(int64(x.Rows)+gc.Sample(noiseSrc)))
	}

	// 2. The public rule, then the steps' noise from what is left.
	p, err := learners.PlanDPLogReg(x.Cols, classes, rows, f.Remaining())
	if err != nil {
		return nil, nil, fmt.Errorf("label: planning DP logistic regression: %w", err)
	}
	if opts.Adjust != nil {
		scaled := p.Gamma * p.Clip
		opts.Adjust(&p)
		p.Gamma = scaled / p.Clip
		p.Rows = rows
	}
	sigma, g, rhoSteps, err := dplrSteps(f.Remaining(), p, learners.ParamCount(x.Cols, classes))
	if err != nil {
		return nil, nil, err
	}
	if err := f.Charge(rhoSteps); err != nil {
		return nil, nil, fmt.Errorf("label: charging the gradient steps: %w", err)
	}
	l := &learners.DPLogReg{Params: p, Noise: dplrNoise{g: g, src: noiseSrc}, Rand: roundSrc, Step: opts.Step, Streams: keyedStreams}
	m, err := l.Fit(x, y, classes)
	if err != nil {
		return nil, nil, fmt.Errorf("label: DP logistic regression: %w", err)
	}
	if l.Dropped > 0 && opts.Diagnose != nil {
		opts.Diagnose(fmt.Sprintf("dp-logreg: %d sensitive rows were dropped from training for a value or gradient that is not finite", l.Dropped))
	}
	return m, &DPLogRegRelease{Params: p, Sigma: sigma, CountSigma: sc, Rho: rhoCount + rhoSteps, CountFromChoice: opts.Count != nil}, nil
}

// keyedStreams opens the numbered AES-CTR streams of a key
// (noise.NewKeyed): the rounding streams of DPLogReg's parallel chunks.
func keyedStreams(key []byte) func(uint64) learners.RandomBits {
	k := noise.NewKeyed(key)
	return func(stream uint64) learners.RandomBits { return k.Stream(stream) }
}

// dplrCount plans the noisy row count (sensitivity 1) on the whole run's
// budget ρ: σc for DPLogRegCountShare of it, its exact sampler, and the ρ
// the count charges (the claim the trade-off audit checks).
func dplrCount(budget float64) (sc float64, g *noise.DiscreteGaussian, rho float64, err error) {
	sc, err = rdp.PlanGNMaxRho(2*DPLogRegCountShare*budget, 1) // 1/σc² ≤ 2ρc
	if err != nil {
		return 0, nil, 0, fmt.Errorf("label: planning the row count: %w", err)
	}
	g, err = dplrSampler(sc)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("label: row count noise: %w", err)
	}
	rho = rdp.DiscreteGaussianRho(1, sc, 1)
	return sc, g, rho, nil
}

// dplrSteps plans the gradient steps of p (its Steps releases of squared
// sensitivity SensSq, dims coordinates each) on the budget ρ left: the
// smallest σ that fits, its exact sampler, and the ρ the steps charge (the
// accountant's claim, which the trade-off audit checks against the noise).
func dplrSteps(budget float64, p learners.DPLogRegParams, dims int) (sigma float64, g *noise.DiscreteGaussian, rho float64, err error) {
	sigma, err = rdp.PlanDGaussStepsRho(budget, p.Steps, float64(p.SensSq))
	if err != nil {
		return 0, nil, 0, fmt.Errorf("label: planning the gradient noise: %w", err)
	}
	g, err = dplrSampler(sigma)
	if err != nil {
		return 0, nil, 0, fmt.Errorf("label: gradient noise: %w", err)
	}
	rho = rdp.DGaussStepsRho(float64(p.SensSq), sigma, dims, 1, p.Steps)
	return sigma, g, rho, nil
}
