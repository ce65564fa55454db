package rdp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Accounting is how Analyze charges one query: the RDP curves of the
// mechanism that answered it. Package label's registry says which
// mechanism has which, so that this package needs no mechanism names.
type Accounting int

// The accountings Analyze knows.
const (
	// NoAccounting is the zero value: Analyze refuses it.
	NoAccounting Accounting = iota
	// ThresholdGaussian is a Gaussian threshold check (σ1, T) on every
	// query and a Gaussian noisy argmax (σ2) on the answered ones
	// (Confident-GNMax).
	ThresholdGaussian
	// Gaussian is a Gaussian noisy argmax (σ2) on every query (GNMax).
	Gaussian
	// Laplace is a Laplace noisy argmax (scale b) on every query, a pure
	// ε = 2/b event (LNMax).
	Laplace
)

// AnalyzeParams configures Analyze (the PATE 2018 Table 2 analysis).
type AnalyzeParams struct {
	// Mechanism names the mechanism analysed, for display; Analyze reads
	// Accounting.
	Mechanism string
	// Accounting is how each query is charged.
	Accounting Accounting `json:"-"`
	// Threshold and Sigma1 configure the Confident-GNMax threshold step.
	Threshold, Sigma1 float64
	// Sigma2 is the GNMax noise (σ of the answer step).
	Sigma2 float64
	// Queries truncates the votes to the first Queries rows (0 = all).
	Queries int
	// Delta is the target δ.
	Delta float64
	// Orders are the Rényi orders (nil = DefaultOrders).
	Orders []float64
	// Conversion is "classic" (default, as the paper) or "improved".
	Conversion string
	// Beta and SigmaSS fix the smooth-sensitivity release (0 = skip SS,
	// unless OptimizeSS).
	Beta, SigmaSS float64
	// OptimizeSS chooses β and σ_SS as the reference table script does
	// (minimising ε + 2·std over β ∈ [0.3/λ, 0.495/λ) in steps of 0.01/λ).
	// The choice looks at the votes and is itself not private: it exists to
	// reproduce the published figures.
	OptimizeSS bool
	// LaplaceScale is the LNMax Laplace scale b (per-query ε = 2/b).
	LaplaceScale float64
	// Teachers overrides the number of teachers (0 = the row sum of the votes,
	// which must be the same on every row).
	Teachers int
}

// AnalyzeResult holds Analyze's figures. They are computed from the vote
// histograms and none of them is private, SmoothSensitivity included:
// Analyze draws no noise.
type AnalyzeResult struct {
	Queries              int
	ExpectedAnswered     float64
	EpsDataDependent     float64
	OrderDataDependent   float64
	EpsDataIndependent   float64
	OrderDataIndependent float64
	// SmoothSensitivity is nil when not asked for, or when both steps are
	// data-independent at the optimal order (nothing to sanitize).
	SmoothSensitivity *SSResult
}

// SSResult is the paper's smooth-sensitivity figure of the data-dependent ε
// ("ε ± std"): Eps is the data-dependent RDP plus the cost of a GNSS
// release, converted at Order; Std is the std of the noise such a release
// would add, SS_β·σ_SS. No noise is drawn: both are exact functions of the
// votes (and so is Order, the data-dependent optimal order), so they are not
// a release and not private.
type SSResult struct {
	Eps, Std, Order float64
	// Beta, SigmaSS are the parameters used; SS is the β-smooth sensitivity
	// of the cumulative (expected) data-dependent RDP at Order.
	Beta, SigmaSS, SS float64
	// EpsBeforeSS is the data-dependent ε at Order; GNSSCost the RDP of the
	// release.
	EpsBeforeSS, GNSSCost float64
	// DataIndependentStep1/2 tell which steps were data-independent at Order.
	DataIndependentStep1, DataIndependentStep2 bool
	// ConditionC5, ConditionC6 are the checks of CheckConditions(σ2, m, Order).
	// When they do not both hold the analysis is not valid and Eps is +Inf.
	ConditionC5, ConditionC6 bool
}

// MarshalJSON encodes r with its non-finite figures (Eps and GNSSCost are
// +Inf where the analysis is not valid at this order) as the strings "inf",
// "-inf" and "nan", which encoding/json cannot write as numbers.
func (r SSResult) MarshalJSON() ([]byte, error) {
	f := func(x float64) any {
		switch {
		case math.IsInf(x, 1):
			return "inf"
		case math.IsInf(x, -1):
			return "-inf"
		case math.IsNaN(x):
			return "nan"
		}
		return x
	}
	return json.Marshal(map[string]any{
		"Eps": f(r.Eps), "Std": f(r.Std), "Order": f(r.Order),
		"Beta": f(r.Beta), "SigmaSS": f(r.SigmaSS), "SS": f(r.SS),
		"EpsBeforeSS": f(r.EpsBeforeSS), "GNSSCost": f(r.GNSSCost),
		"DataIndependentStep1": r.DataIndependentStep1, "DataIndependentStep2": r.DataIndependentStep2,
		"ConditionC5": r.ConditionC5, "ConditionC6": r.ConditionC6,
	})
}

// Analyze runs the PATE 2018 privacy analysis over vote histograms exactly as
// ICLR2018/smooth_sensitivity_table.py does: per query the threshold cost
// plus Pr[answered] times the GNMax cost (expected cost), summed per order,
// converted to (ε, δ); the same with data-independent curves; and optionally
// the smooth-sensitivity release at the data-dependent optimal order.
func Analyze(votes [][]int64, p AnalyzeParams) (*AnalyzeResult, error) {
	if len(votes) == 0 {
		return nil, errors.New("rdp: analyze: no votes")
	}
	if !(p.Delta > 0 && p.Delta < 1) {
		return nil, fmt.Errorf("rdp: analyze: delta %v must be in (0, 1)", p.Delta)
	}
	orders := p.Orders
	if len(orders) == 0 {
		orders = DefaultOrders()
	}
	for _, o := range orders {
		if !(o > 1) {
			return nil, fmt.Errorf("rdp: analyze: order %v must be > 1", o)
		}
	}
	var convert func(orders, rdp []float64, delta float64) (float64, float64)
	switch p.Conversion {
	case "", "classic":
		convert = EpsClassic
	case "improved":
		convert = EpsImproved
	default:
		return nil, fmt.Errorf("rdp: analyze: unknown conversion %q (classic|improved)", p.Conversion)
	}
	n := len(votes)
	if p.Queries > 0 {
		if p.Queries > n {
			return nil, fmt.Errorf("rdp: analyze: %d queries asked, only %d vote rows", p.Queries, n)
		}
		n = p.Queries
	}
	votes = votes[:n]
	teachers, err := checkVotes(votes, p.Teachers)
	if err != nil {
		return nil, err
	}
	var c curves
	switch p.Accounting {
	case ThresholdGaussian, Gaussian:
		c, err = gaussianCurves(votes, p, orders)
	case Laplace:
		c, err = laplaceCurves(votes, p, orders)
	default:
		err = fmt.Errorf("rdp: analyze: mechanism %q has no accounting here", p.Mechanism)
	}
	if err != nil {
		return nil, err
	}
	res := &AnalyzeResult{Queries: n, ExpectedAnswered: c.answered}
	res.EpsDataDependent, res.OrderDataDependent = convert(orders, c.dep, p.Delta)
	res.EpsDataIndependent, res.OrderDataIndependent = convert(orders, c.ind, p.Delta)

	wantSS := p.OptimizeSS || (p.Beta > 0 && p.SigmaSS > 0)
	if !wantSS {
		return res, nil
	}
	if p.Accounting == Laplace {
		return nil, errors.New("rdp: analyze: smooth-sensitivity release is implemented for gnmax and confident-gnmax only")
	}
	ss, err := smoothSensitivityRelease(votes, teachers, p, res.OrderDataDependent)
	if err != nil {
		return nil, err
	}
	res.SmoothSensitivity = ss
	return res, nil
}

// checkVotes checks that every row of votes has the same number of classes
// (at least 2) and no negative count, and returns the number of teachers:
// teachers when > 0, otherwise the row sum, which must then be the same on
// every row.
func checkVotes(votes [][]int64, teachers int) (int, error) {
	m := len(votes[0])
	if m < 2 {
		return 0, fmt.Errorf("rdp: analyze: %d classes, need at least 2", m)
	}
	fixed := teachers != 0
	for i, v := range votes {
		if len(v) != m {
			return 0, fmt.Errorf("rdp: analyze: row %d has %d classes, want %d", i, len(v), m)
		}
		var s int64
		for _, c := range v {
			if c < 0 {
				return 0, fmt.Errorf("rdp: analyze: row %d has a negative count", i)
			}
			s += c
		}
		if !fixed {
			if i == 0 {
				teachers = int(s)
			} else if int(s) != teachers {
				return 0, fmt.Errorf("rdp: analyze: row %d has %d votes, row 0 has %d", i, s, teachers)
			}
		}
	}
	if teachers < 1 {
		return 0, errors.New("rdp: analyze: no teachers")
	}
	return teachers, nil
}

// curves are the RDP curves of a run of queries, summed over the queries
// (one figure per order), with the expected number answered.
type curves struct {
	dep, ind []float64 // data-dependent, data-independent
	answered float64
}

// gaussianCurves charges GNMax on every query, or with ThresholdGaussian
// the threshold check on every query and GNMax weighted by the probability
// of answering.
func gaussianCurves(votes [][]int64, p AnalyzeParams, orders []float64) (curves, error) {
	c := curves{dep: make([]float64, len(orders)), ind: make([]float64, len(orders))}
	if !(p.Sigma2 > 0) {
		return c, fmt.Errorf("rdp: analyze: sigma2 %v must be > 0", p.Sigma2)
	}
	conf := p.Accounting == ThresholdGaussian
	if conf && !(p.Sigma1 > 0) {
		return c, fmt.Errorf("rdp: analyze: sigma1 %v must be > 0", p.Sigma1)
	}
	indStep1 := make([]float64, len(orders))
	if conf {
		indStep1 = ThresholdRDP(p.Sigma1, orders)
	}
	indStep2 := GaussianRDP(p.Sigma2, orders)
	for _, v := range votes {
		pr := 1.0
		step1 := make([]float64, len(orders))
		if conf {
			lp := LogPrAnswered(p.Threshold, p.Sigma1, v)
			step1 = ThresholdDataDependentRDP(lp, p.Sigma1, orders)
			pr = math.Exp(lp)
		}
		step2 := GaussianDataDependentRDP(LogQGaussian(v, p.Sigma2), p.Sigma2, orders)
		for j := range orders {
			c.dep[j] += step1[j] + step2[j]*pr
			c.ind[j] += indStep1[j] + indStep2[j]*pr
		}
		c.answered += pr
	}
	return c, nil
}

// laplaceCurves charges LNMax, a pure ε = 2/b event, on every query.
func laplaceCurves(votes [][]int64, p AnalyzeParams, orders []float64) (curves, error) {
	c := curves{dep: make([]float64, len(orders)), ind: make([]float64, len(orders))}
	b := p.LaplaceScale
	if !(b > 0) {
		return c, fmt.Errorf("rdp: analyze: laplace scale %v must be > 0", b)
	}
	pure := PureDP(2/b, orders)
	for _, v := range votes {
		cost := PureEpsRDP(LogQLaplace(v, b), 2/b, orders)
		for j := range orders {
			c.dep[j] += cost[j]
			c.ind[j] += pure[j]
		}
	}
	c.answered = float64(len(votes))
	return c, nil
}

// smoothSensitivityRelease follows _find_optimal_smooth_sensitivity_parameters
// of the table script at a fixed order.
func smoothSensitivityRelease(votes [][]int64, teachers int, p AnalyzeParams, order float64) (*SSResult, error) {
	conf := p.Accounting == ThresholdGaussian
	m := len(votes[0])
	o := []float64{order}
	ind1 := true
	if conf {
		ind1 = IsDataIndependentAlwaysOptThreshold(teachers, p.Threshold, p.Sigma1, order)
	}
	ind2 := IsDataIndependentAlwaysOptGaussian(teachers, m, p.Sigma2, o)[0]
	r := &SSResult{Order: order, DataIndependentStep1: ind1, DataIndependentStep2: ind2}
	if ind1 && ind2 {
		return nil, nil
	}
	r.ConditionC5, r.ConditionC6 = CheckConditions(p.Sigma2, m, order)

	var thrList []float64
	if conf && !ind1 {
		thrList = thresholdRDPList(teachers, p.Threshold, p.Sigma1, order)
	}
	rdpCum := 0.0
	lsCum := make([]float64, teachers)
	for _, v := range votes {
		pr, rdp1 := 1.0, 0.0
		if conf {
			lp := LogPrAnswered(p.Threshold, p.Sigma1, v)
			pr = math.Exp(lp)
			if ind1 {
				rdp1 = ThresholdRDP(p.Sigma1, o)[0]
			} else {
				rdp1 = ThresholdDataDependentRDP(lp, p.Sigma1, o)[0]
				for d, x := range lsThreshold(v, teachers, thrList) {
					lsCum[d] += x
				}
			}
		}
		var rdp2 float64
		if ind2 {
			rdp2 = GaussianRDP(p.Sigma2, o)[0]
		} else {
			rdp2 = GaussianDataDependentRDP(LogQGaussian(v, p.Sigma2), p.Sigma2, o)[0]
			for d, x := range LocalSensitivityBoundsGNMax(v, teachers, p.Sigma2, order) {
				lsCum[d] += pr * x
			}
		}
		rdpCum += rdp1 + pr*rdp2
	}
	beta, sigmaSS := p.Beta, p.SigmaSS
	if p.OptimizeSS {
		best := math.Inf(1)
		for i := 0; ; i++ {
			b := .3/order + float64(i)*(.01/order)
			if b >= .495/order {
				break
			}
			ss := DiscountedMax(b, lsCum)
			s := math.Cbrt(order * math.Exp(2*b) / ss)
			cost := rdpCum + GNSSRDP(b, s, order) + 2*ss*s
			if cost < best {
				best, beta, sigmaSS = cost, b, s
			}
		}
		if math.IsInf(best, 1) {
			return nil, errors.New("rdp: analyze: smooth-sensitivity optimisation failed")
		}
	}
	r.Beta, r.SigmaSS = beta, sigmaSS
	r.SS = DiscountedMax(beta, lsCum)
	r.GNSSCost = GNSSRDP(beta, sigmaSS, order)
	r.Std = r.SS * sigmaSS
	switch p.Conversion {
	case "improved":
		r.EpsBeforeSS = improvedAt(order, rdpCum, p.Delta)
		r.Eps = improvedAt(order, rdpCum+r.GNSSCost, p.Delta)
	default:
		r.EpsBeforeSS = rdpCum + math.Log(1/p.Delta)/(order-1)
		r.Eps = r.EpsBeforeSS + r.GNSSCost
	}
	if !(r.ConditionC5 && r.ConditionC6) {
		r.Eps = math.Inf(1)
	}
	return r, nil
}
