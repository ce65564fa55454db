package replicate

import (
	"fmt"
	"math"
	"math/big"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/ledger"
	"github.com/pate-tool/pate/label/noise"
)

// PrivateReport is the calibration of a private release.
type PrivateReport struct {
	Epsilon         float64 `json:"epsilon"`           // pure ε of the whole release
	EpsilonPerCount float64 `json:"epsilon_per_count"` // each released count
	Sensitivity     int64   `json:"sensitivity"`       // of each count to one sensitive row
	LaplaceScale    string  `json:"laplace_scale"`     // exact: sensitivity / epsilon_per_count
	NoiseBound      int64   `json:"noise_bound"`       // |noise| ≤ this with probability ≥ 97.5%
	Basis           string  `json:"basis"`
}

const privateNote = "PRIVATE (only with --private-report): the disagreement counts (two, four with --replicable) are released with discrete Laplace noise " +
	"calibrated to their global sensitivity to one sensitive row; the rates and intervals are computed from the noisy counts. " +
	"Nothing else computed from the sensitive data is printed."

const reportBasis = "pure ε-DP, discrete Laplace (Canonne–Kamath–Steinke 2020) with scale sensitivity/ε per count; " +
	"sensitivity = repeats × (splits − 1) × queried rows: each row lies in one part per repeat (keyed hash of the row), " +
	"its removal changes that part's teachers, which may change every label that part releases, so every pair of parts " +
	"that includes it may change by up to the number of queried rows; the counts (ε split evenly) compose to ε; " +
	"intervals: 97.5% Wilson widened by the 97.5% noise bound (≥ 95% by a union bound)"

// Mechanism is the name under which the ledger records a release.
const Mechanism = "replicate-report"

// Sensitivity is how much one sensitive row can change one disagreement
// count: in each repeat the row lies in exactly one part (the split is a
// keyed hash of the row, so removing it leaves the other parts as they
// were); that part's teachers change, which may change all of its queried
// labels, so each of the splits−1 pairs with that part may change by up to
// queried rows. Nothing smaller holds for every data set: one teacher's
// changed vote can tip every row whose noisy margin is within a vote of a
// decision boundary, and with shared noise that can be every row.
func Sensitivity(repeats, splits, queried int) int64 {
	return int64(repeats) * int64(splits-1) * int64(queried)
}

// LaplaceFor is the discrete Laplace scale that makes a count of the given
// sensitivity eps-DP: sensitivity/eps, exactly (eps as its exact binary value).
func LaplaceFor(sensitivity int64, eps float64) (*big.Rat, error) {
	e, err := noise.RatFromFloat(eps)
	if err != nil || e.Sign() <= 0 {
		return nil, fmt.Errorf("ε must be a positive finite number, got %g", eps)
	}
	return new(big.Rat).Quo(new(big.Rat).SetInt64(max(1, sensitivity)), e), nil
}

// LaplaceBound is the smallest u with P(|Z| > u) ≤ miss for Z discrete
// Laplace with scale t: P(|Z| > u) = 2p^(u+1)/(1+p), p = exp(−1/t). It
// describes the noise for the reader (float64 is fine here: it is not on
// the noise path).
func LaplaceBound(t *big.Rat, miss float64) int64 {
	tf, _ := t.Float64()
	p := math.Exp(-1 / tf)
	u := int64(math.Ceil(math.Log(miss*(1+p)/2)/math.Log(p))) - 1
	for u > 0 && 2*math.Pow(p, float64(u))/(1+p) <= miss { // P(|Z| > u−1) already small enough
		u--
	}
	for 2*math.Pow(p, float64(u+1))/(1+p) > miss {
		u++
	}
	return max(0, u)
}

// release replaces a's count with count + discrete Laplace noise of scale t
// drawn from src (clamped to [0, compared]: post-processing) and widens its
// interval by the noise's 97.5% bound u.
func (a *Agreement) release(l *noise.DiscreteLaplace, u int64, src noise.Source) {
	noisy := int64(a.Differ) + l.Sample(src)
	n := a.Compared
	*a = Agreement{Compared: n} // nothing but the noisy count is released
	a.Differ = int(min(max(noisy, 0), int64(n)))
	a.Rate = float64(a.Differ) / float64(max(1, n))
	lo := int(min(max(noisy-u, 0), int64(n)))
	hi := int(min(max(noisy+u, 0), int64(n)))
	a.Low, _ = wilson(lo, n, z975)
	_, a.High = wilson(hi, n, z975)
}

// ReleaseOptions says what a private release costs and where it is charged.
type ReleaseOptions struct {
	Epsilon float64 // pure ε of the whole release, split evenly over the counts
	Label   string  // the label column, for the ledger
	Delta   float64 // the δ the ledger records with the run
	// Begin records the charge (write-ahead) before any noise is drawn; it
	// returns nil when no ledger records the run. Nil: no ledger.
	Begin func(ledger.BeginRequest) (*ledger.Run, error)
}

// Release charges the release's ε in the ledger (write-ahead), then
// replaces every disagreement count by its noisy version and drops every
// other figure computed from the sensitive data. It returns the ledger's
// entry, ended with the charge (nil without a ledger).
func (r *Result) Release(opt ReleaseOptions) (*ledger.Run, error) {
	arms := r.arms()
	sens := Sensitivity(r.Repeats, r.Splits, r.Queried)
	perCount := opt.Epsilon / float64(len(arms))
	t, err := LaplaceFor(sens, perCount)
	if err != nil {
		return nil, &ParamError{Param: "report-epsilon", Detail: err.Error(), Usage: true}
	}
	lap, err := noise.NewDiscreteLaplace(t)
	if err != nil {
		return nil, &ParamError{Param: "report-epsilon", Value: fmt.Sprintf("%g", opt.Epsilon),
			Detail: fmt.Sprintf("the noise scale %s: %v", t.RatString(), err)}
	}
	var run *ledger.Run
	rho := opt.Epsilon * opt.Epsilon / 2 // pure ε-DP is ε²/2-zCDP (Bun & Steinke 2016, Proposition 1.4)
	if opt.Begin != nil {
		// The same dataset as pate label's: the ledger composes them.
		run, err = opt.Begin(ledger.BeginRequest{
			Labels: []string{opt.Label}, Mechanism: Mechanism,
			MaxRho: rho, Delta: opt.Delta, Epsilon: opt.Epsilon,
		})
		if err != nil {
			return nil, err
		}
	}
	u := LaplaceBound(t, 0.025)
	src := noise.NewCryptoSource() // never seeded: a seeded report would not be private
	for _, a := range arms {
		a.release(lap, u, src)
	}
	r.Private, r.Note = true, privateNote
	r.Report = &PrivateReport{Epsilon: opt.Epsilon, EpsilonPerCount: perCount, Sensitivity: sens,
		LaplaceScale: t.FloatString(6), NoiseBound: u, Basis: reportBasis}
	if run != nil {
		if err := run.End(rho); err != nil {
			return nil, &LedgerError{Err: err}
		}
	}
	return run, nil
}

// arms are the agreements of r: shared and independent randomness, and
// with replicable rounding the same two again.
func (r *Result) arms() []*Agreement {
	arms := []*Agreement{&r.Shared, &r.Independent}
	if r.Replicable != nil {
		arms = append(arms, &r.Replicable.Shared, &r.Replicable.Independent)
	}
	return arms
}

// ParamError is a parameter that cannot be used. Param is its name as
// the command line spells it without its dashes.
type ParamError struct {
	Param  string
	Value  string // the value, when the message quotes it
	Detail string // why, when Err does not say it
	Usage  bool   // a mistake in the parameters; else in the input (label.ErrInvalidInput)
	Err    error  // the cause, when there is one
}

func (e *ParamError) Error() string {
	p := "--" + e.Param
	if e.Value != "" {
		p += " " + e.Value
	}
	switch {
	case e.Err != nil:
		return p + ": " + e.Err.Error()
	case e.Usage:
		return p + ": " + e.Detail
	}
	return label.ErrInvalidInput.Error() + ": " + p + ": " + e.Detail
}

func (e *ParamError) Unwrap() error { return e.Err }

// Is makes an error in the input match label.ErrInvalidInput.
func (e *ParamError) Is(target error) bool {
	return !e.Usage && e.Err == nil && target == label.ErrInvalidInput
}

// LedgerError is a failure to write the ledger's end entry.
type LedgerError struct{ Err error }

func (e *LedgerError) Error() string { return "--ledger: " + e.Err.Error() }
func (e *LedgerError) Unwrap() error { return e.Err }
