package rdp

import (
	"errors"
	"fmt"
	"math"
	"math/big"
)

// ErrBudgetExceeded is returned by Filter.Charge when a charge would take the
// spend past the budget fixed before the run.
var ErrBudgetExceeded = errors.New("rdp: privacy budget exceeded")

// sumPrec is enough bits to add float64 values of any magnitude exactly.
const sumPrec = 2200

// Filter is a zCDP privacy filter (Feldman & Zrnic 2021 in its zCDP form):
// its budget ρ_B is fixed before the run from the target (ε, δ); every event
// is charged its ρ, and a charge that would take the exact sum of charges
// past ρ_B is refused. The run is then ρ_B-zCDP, hence (ε, δ)-DP.
// The spend is summed exactly (no rounding, no slack). A Filter is not safe
// for concurrent use.
type Filter struct {
	eps, delta float64
	budget     float64
	spent      *big.Float
	n          int
}

// NewFilter returns a filter whose budget is RhoForEps(eps, delta). It fails
// for eps ≤ 0 (or not finite) and δ ∉ (0, 1).
func NewFilter(eps, delta float64) (*Filter, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("rdp: filter epsilon %v: must be a finite number > 0", eps)
	}
	if !(delta > 0 && delta < 1) {
		return nil, fmt.Errorf("rdp: filter delta %v: must be in (0, 1)", delta)
	}
	return &Filter{
		eps: eps, delta: delta,
		budget: RhoForEps(eps, delta),
		spent:  new(big.Float).SetPrec(sumPrec),
	}, nil
}

// NewFilterRho returns a filter of budget ρ_B = rho itself (rho > 0 and
// finite), for replaying a run's charges on the budget its report states.
func NewFilterRho(rho float64) (*Filter, error) {
	if !(rho > 0) || math.IsInf(rho, 0) {
		return nil, fmt.Errorf("rdp: filter budget %v: must be a finite number > 0", rho)
	}
	return &Filter{budget: rho, spent: new(big.Float).SetPrec(sumPrec)}, nil
}

// Fits reports whether charging rho more would keep the exact spend ≤ the
// budget. Negative or NaN rho never fits.
func (f *Filter) Fits(rho float64) bool {
	if !(rho >= 0) || math.IsInf(rho, 1) {
		return false
	}
	s := new(big.Float).SetPrec(sumPrec).Add(f.spent, big.NewFloat(rho))
	return s.Cmp(big.NewFloat(f.budget)) <= 0
}

// Charge records rho if it fits and returns ErrBudgetExceeded otherwise (the
// spend is then unchanged).
func (f *Filter) Charge(rho float64) error {
	if !(rho >= 0) || math.IsInf(rho, 1) {
		return fmt.Errorf("rdp: charge %v: must be a finite number >= 0", rho)
	}
	if !f.Fits(rho) {
		return fmt.Errorf("%w: spent %.6g of %.6g, charge %.6g refused", ErrBudgetExceeded, f.Spent(), f.budget, rho)
	}
	f.spent.Add(f.spent, big.NewFloat(rho))
	f.n++
	return nil
}

// Spent returns the ρ spent so far (rounded up to a float64).
func (f *Filter) Spent() float64 {
	v, acc := f.spent.Float64()
	if acc == big.Below {
		v = math.Nextafter(v, math.Inf(1))
	}
	return v
}

// Budget returns ρ_B.
func (f *Filter) Budget() float64 { return f.budget }

// Remaining returns ρ_B minus the spend (rounded down, never negative).
func (f *Filter) Remaining() float64 {
	r := new(big.Float).SetPrec(sumPrec).Sub(big.NewFloat(f.budget), f.spent)
	v, acc := r.Float64()
	if acc == big.Above {
		v = math.Nextafter(v, math.Inf(-1))
	}
	return math.Max(0, v)
}

// Charges returns the number of accepted charges.
func (f *Filter) Charges() int { return f.n }

// Epsilon returns the ε the filter guarantees (the target it was built for).
func (f *Filter) Epsilon() float64 { return f.eps }

// Delta returns the filter's δ.
func (f *Filter) Delta() float64 { return f.delta }

// SpentEps returns the (ε, δ) conversion of the realized spend (an odometer
// reading, reported beside the guarantee, never instead of it).
func (f *Filter) SpentEps() float64 { return ZCDPEps(f.Spent(), f.delta) }

// Per-event zCDP costs used by the filter.

// GNMaxRho is the zCDP cost of one GNMax answer with noise σ (Δ = √2): 1/σ².
func GNMaxRho(sigma float64) float64 { return 1 / (sigma * sigma) }

// ThresholdRho is the zCDP cost of one threshold check with noise σ1: 1/(2σ1²).
func ThresholdRho(sigma1 float64) float64 { return 1 / (2 * sigma1 * sigma1) }

// PureDPRho is the zCDP cost of an ε-DP event: ε²/2.
func PureDPRho(eps float64) float64 { return eps * eps / 2 }

// LNMaxRho is the zCDP cost of one LNMax answer with Laplace scale b, which
// is (2/b)-DP: ρ = (2/b)²/2.
func LNMaxRho(b float64) float64 { return PureDPRho(2 / b) }

// Accountant sums the per-order RDP curves of realized events and converts
// the total (an odometer: the guarantee of an adaptive run is its Filter).
type Accountant struct {
	orders []float64
	total  []float64
	err    error
}

// NewAccountant returns an accountant over a copy of orders.
func NewAccountant(orders []float64) *Accountant {
	return &Accountant{orders: append([]float64(nil), orders...), total: make([]float64, len(orders))}
}

// Add adds one event's curve (one value per order). A curve of the wrong
// length poisons the accountant: its total becomes +Inf (conservative) and
// Err reports the mistake.
func (a *Accountant) Add(curve []float64) { a.AddScaled(curve, 1) }

// AddScaled adds times × curve (e.g. the same event repeated, or an expected
// count). A wrong length or a negative or NaN factor poisons the accountant
// as in Add.
func (a *Accountant) AddScaled(curve []float64, times float64) {
	if len(curve) != len(a.total) || !(times >= 0) {
		if a.err == nil {
			a.err = fmt.Errorf("rdp: accountant: curve of %d values (want %d), factor %v", len(curve), len(a.total), times)
		}
		for i := range a.total {
			a.total[i] = math.Inf(1)
		}
		return
	}
	for i, v := range curve {
		a.total[i] += times * v
	}
}

// Err returns the first misuse recorded by Add or AddScaled.
func (a *Accountant) Err() error { return a.err }

// Orders returns a copy of the orders.
func (a *Accountant) Orders() []float64 { return append([]float64(nil), a.orders...) }

// Curve returns a copy of the summed RDP curve.
func (a *Accountant) Curve() []float64 { return append([]float64(nil), a.total...) }

// EpsClassic converts the total with EpsClassic.
func (a *Accountant) EpsClassic(delta float64) (eps, order float64) {
	return EpsClassic(a.orders, a.total, delta)
}

// EpsImproved converts the total with EpsImproved.
func (a *Accountant) EpsImproved(delta float64) (eps, order float64) {
	return EpsImproved(a.orders, a.total, delta)
}
