package label

import (
	"fmt"
	"math"
	"strconv"

	"github.com/pate-tool/pate/label/rdp"
)

// Planning defaults for Confident-GNMax when σ1 and σ2 are derived from a
// budget: σ1 = SigmaRatio·σ2, noise sized for AnsweredFraction of the queries
// being answered, and the threshold at ThresholdFraction of the teachers.
const (
	DefaultSigmaRatio        = 2.0
	DefaultAnsweredFraction  = 0.5
	DefaultThresholdFraction = 0.8
)

// roundUpDecimal returns x rounded up to digits significant decimal digits,
// as a string the exact samplers read without loss. Rounding up keeps the
// noise at least as large as planned.
func roundUpDecimal(x float64, digits int) string {
	if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	e := math.Floor(math.Log10(x)) - float64(digits-1)
	scale := math.Pow(10, e)
	m := math.Ceil(x/scale - 1e-9)
	if m*scale < x { // guard against the tolerance above
		m++
	}
	prec := 0
	if e < 0 {
		prec = int(-e)
	}
	return strconv.FormatFloat(m*scale, 'f', prec, 64)
}

// decimal writes a planned noise level as the shortest decimal that reads
// back as the same float64 (the planners round to 4 significant digits, so
// this is a short exact decimal for the samplers).
func decimal(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// planNoise fills in the noise parameters left empty so that n queries fit
// into rho (zCDP) under data-independent accounting: GNMax ρ = 1/σ² per
// query; Confident-GNMax 1/(2σ1²) per query plus 1/σ2² per answer, planned
// for the fraction frac answered; LNMax (2/b)²/2 per query. Fully planned
// noise comes from the accountant's planners, which check the fit with the
// filter's exact arithmetic.
func planNoise(kind string, rho float64, n int64, p *MechanismParams, frac, ratio float64) error {
	if n <= 0 {
		return fmt.Errorf("no queries to plan the noise for")
	}
	if !(rho > 0) {
		return fmt.Errorf("no privacy budget left to plan the noise")
	}
	if m, err := lookup(kind); err == nil {
		if m, ok := m.(argmaxMechanism); ok {
			return m.plan(rho, n, p, frac, ratio)
		}
	}
	return nil
}

// Plan returns the smallest noise with which n queries of the mechanism
// spend at most eps at delta under the run's data-independent zCDP
// accounting (for Confident-GNMax, with the fraction frac of them answered
// and σ1 = ratio·σ2). Noise parameters already set in p are kept.
func Plan(kind string, eps, delta float64, n int64, p MechanismParams, frac, ratio float64) (MechanismParams, error) {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return p, invalid("%w", err)
	}
	if err := planNoise(kind, f.Budget(), n, &p, frac, ratio); err != nil {
		return p, invalid("%w", err)
	}
	return p, nil
}

// PlannedRho is the zCDP ρ that n queries spend with the noise p, when a
// fraction frac of them is answered (Confident-GNMax; 1 for the others).
func PlannedRho(kind string, classes int, n int64, p MechanismParams, frac float64) (float64, error) {
	a, err := newAggregator(kind, classes, p)
	if err != nil {
		return 0, invalid("%w", err)
	}
	if m, ok := mechanismOf(kind).(argmaxMechanism); !ok || !m.checksThreshold() {
		frac = 1
	}
	return float64(n) * (a.rhoCheck + frac*a.rhoAnswer), nil
}

// QueriesThatFit is how many queries the noise p lets a run put within
// (eps, delta), when a fraction frac of them is answered.
func QueriesThatFit(kind string, classes int, eps, delta float64, p MechanismParams, frac float64) (int64, error) {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return 0, invalid("%w", err)
	}
	per, err := PlannedRho(kind, classes, 1, p, frac)
	if err != nil {
		return 0, err
	}
	return int64(math.Floor(f.Budget() / per)), nil
}

// MaxRho is the most the run can spend (zCDP ρ, class discovery included),
// known before it starts: the filter's budget when it has one, otherwise the
// worst case of every query it may put. A ledger records it before the first
// label is released. MaxDelta is the δ that goes with it.
func (l *Labeler) MaxRho() (float64, error) {
	cfg := &l.cfg
	deltaC := 0.0
	if cfg.Classes == nil {
		deltaC = cfg.Delta * discoveryDeltaShare
	}
	if _, pure := pureEvents(cfg.Mechanism); pure && cfg.Epsilon > 0 {
		// The cap on events pays either by zCDP (ρ ≤ ρ_B) or by basic
		// composition (ρ = Σ εᵢ²/2 ≤ (Σ εᵢ)²/2 ≤ ε²/2).
		return math.Max(rdp.RhoForEps(cfg.Epsilon, cfg.Delta-deltaC), cfg.Epsilon*cfg.Epsilon/2), nil
	}
	if cfg.Epsilon > 0 {
		return rdp.RhoForEps(cfg.Epsilon, cfg.Delta-deltaC), nil
	}
	n := cfg.PublicRows
	if cfg.MaxQueries > 0 && (n < 0 || cfg.MaxQueries < n) {
		n = cfg.MaxQueries
	}
	if n < 0 {
		return 0, invalid("the number of public rows is not known in advance: give --epsilon or --max-queries to bound the spend")
	}
	p := cfg.Params
	if p.Threshold == 0 { // a threshold check charges the same whatever T
		p.Threshold = 1
	}
	per, err := PlannedRho(cfg.Mechanism, 2, 1, p, 1)
	if err != nil {
		return 0, err
	}
	// Every label column pays for every query. The class discoveries of
	// all the columns together cost what one column's would (each column's
	// σ is discoverySigmaFree·√columns, rounded up).
	labels := float64(max(1, len(cfg.Labels)))
	rho := float64(n) * per * labels
	if cfg.Classes == nil {
		rho += 1.0 / (2 * discoverySigmaFree * discoverySigmaFree) // 1.0: untyped integer constants would divide to 0
	}
	return rho, nil
}
