package rdp

import (
	"fmt"
	"math"
	"math/big"
)

// Planning under the zCDP filter accounting of a live run: GNMax ρ = 1/σ²,
// threshold ρ = 1/(2σ1²), LNMax ρ = (2/b)²/2. Planned noise is rounded up to
// 4 significant digits (a short decimal, so exact samplers take their fast
// path) and checked against the filter's exact arithmetic.

const planDigits = 4

func checkPlan(eps, delta float64, queries int) (float64, error) {
	if !(eps > 0) || math.IsInf(eps, 0) {
		return 0, fmt.Errorf("rdp: plan: epsilon %v must be a finite number > 0", eps)
	}
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("rdp: plan: delta %v must be in (0, 1)", delta)
	}
	budget := RhoForEps(eps, delta)
	return budget, checkBudget(budget, queries)
}

func checkBudget(budget float64, queries int) error {
	if !(budget > 0) || math.IsInf(budget, 0) {
		return fmt.Errorf("rdp: plan: budget ρ %v must be a finite number > 0", budget)
	}
	if queries < 1 {
		return fmt.Errorf("rdp: plan: %d queries, need at least 1", queries)
	}
	return nil
}

// exactFits reports whether the exact sum of the charges (count_i copies of
// rho_i) is ≤ budget, as a Filter would decide it.
func exactFits(budget float64, counts []int, rhos []float64) bool {
	s := new(big.Float).SetPrec(sumPrec)
	for i, r := range rhos {
		t := new(big.Float).SetPrec(sumPrec).SetFloat64(r)
		t.Mul(t, new(big.Float).SetPrec(sumPrec).SetInt64(int64(counts[i])))
		s.Add(s, t)
	}
	return s.Cmp(big.NewFloat(budget)) <= 0
}

// bumpUntil rounds x up to planDigits significant digits and increases it by
// one unit in the last digit until ok holds (at most 1000 times).
func bumpUntil(x float64, ok func(float64) bool) (float64, error) {
	v := roundUpSig(x, planDigits)
	for i := 0; i < 1000; i++ {
		if ok(v) {
			return v, nil
		}
		v = roundUpSig(math.Nextafter(v, math.Inf(1)), planDigits)
	}
	return 0, fmt.Errorf("rdp: plan: no noise level fits near %v", x)
}

// PlanGNMax returns the smallest σ (rounded up to 4 significant digits) such
// that queries GNMax answers, each charged ρ = 1/σ², fit a zCDP filter of
// budget RhoForEps(eps, delta).
func PlanGNMax(eps, delta float64, queries int) (sigma float64, err error) {
	budget, err := checkPlan(eps, delta, queries)
	if err != nil {
		return 0, err
	}
	return PlanGNMaxRho(budget, queries)
}

// PlanGNMaxRho is PlanGNMax for a filter budget ρ given directly.
func PlanGNMaxRho(budget float64, queries int) (sigma float64, err error) {
	if err := checkBudget(budget, queries); err != nil {
		return 0, err
	}
	return bumpUntil(math.Sqrt(float64(queries)/budget), func(s float64) bool {
		return exactFits(budget, []int{queries}, []float64{GNMaxRho(s)})
	})
}

// AnsweredOf returns the number of answered queries PlanConfident charges for:
// ⌈answeredFrac·queries⌉, at most queries.
func AnsweredOf(queries int, answeredFrac float64) int {
	a := int(math.Ceil(answeredFrac * float64(queries)))
	return min(max(a, 0), queries)
}

// PlanConfident returns σ1 = sigmaRatio·σ2 and σ2 (each rounded up to 4
// significant digits) such that queries threshold checks (ρ = 1/(2σ1²)) and
// ⌈answeredFrac·queries⌉ GNMax answers (ρ = 1/σ2²) fit the filter of
// RhoForEps(eps, delta).
func PlanConfident(eps, delta float64, queries int, answeredFrac, sigmaRatio float64) (sigma1, sigma2 float64, err error) {
	budget, err := checkPlan(eps, delta, queries)
	if err != nil {
		return 0, 0, err
	}
	return PlanConfidentRho(budget, queries, answeredFrac, sigmaRatio)
}

// PlanConfidentRho is PlanConfident for a filter budget ρ given directly.
func PlanConfidentRho(budget float64, queries int, answeredFrac, sigmaRatio float64) (sigma1, sigma2 float64, err error) {
	if err := checkBudget(budget, queries); err != nil {
		return 0, 0, err
	}
	if !(answeredFrac >= 0 && answeredFrac <= 1) {
		return 0, 0, fmt.Errorf("rdp: plan: answered fraction %v must be in [0, 1]", answeredFrac)
	}
	if !(sigmaRatio > 0) || math.IsInf(sigmaRatio, 0) {
		return 0, 0, fmt.Errorf("rdp: plan: sigma ratio %v must be a finite number > 0", sigmaRatio)
	}
	ans := AnsweredOf(queries, answeredFrac)
	fits := func(s2 float64) bool {
		s1 := roundUpSig(sigmaRatio*s2, planDigits)
		return exactFits(budget, []int{queries, ans}, []float64{ThresholdRho(s1), GNMaxRho(s2)})
	}
	x := math.Sqrt((float64(queries)/(2*sigmaRatio*sigmaRatio) + float64(ans)) / budget)
	sigma2, err = bumpUntil(x, fits)
	if err != nil {
		return 0, 0, err
	}
	return roundUpSig(sigmaRatio*sigma2, planDigits), sigma2, nil
}

// PlanLNMax returns the smallest Laplace scale b (rounded up to 4 significant
// digits) such that queries LNMax answers, each (2/b)-DP and charged
// ρ = (2/b)²/2, fit the filter of RhoForEps(eps, delta).
func PlanLNMax(eps, delta float64, queries int) (b float64, err error) {
	budget, err := checkPlan(eps, delta, queries)
	if err != nil {
		return 0, err
	}
	return PlanLNMaxRho(budget, queries)
}

// PlanLNMaxRho is PlanLNMax for a filter budget ρ given directly.
func PlanLNMaxRho(budget float64, queries int) (b float64, err error) {
	if err := checkBudget(budget, queries); err != nil {
		return 0, err
	}
	return bumpUntil(math.Sqrt(2*float64(queries)/budget), func(s float64) bool {
		return exactFits(budget, []int{queries}, []float64{LNMaxRho(s)})
	})
}

// QueriesThatFit returns how many events of zCDP cost rhoPerQuery fit a
// filter of RhoForEps(eps, delta) (the inverse of planning). Use GNMaxRho,
// ThresholdRho(σ1)+answeredFrac·GNMaxRho(σ2) or LNMaxRho for the cost.
func QueriesThatFit(eps, delta, rhoPerQuery float64) (int, error) {
	if !(rhoPerQuery > 0) || math.IsInf(rhoPerQuery, 0) {
		return 0, fmt.Errorf("rdp: queries that fit: cost %v must be a finite number > 0", rhoPerQuery)
	}
	budget, err := checkPlan(eps, delta, 1)
	if err != nil {
		return 0, err
	}
	n := math.Floor(budget / rhoPerQuery)
	if n > math.MaxInt32 {
		return math.MaxInt32, nil
	}
	k := int(n)
	for k > 0 && !exactFits(budget, []int{k}, []float64{rhoPerQuery}) {
		k--
	}
	for exactFits(budget, []int{k + 1}, []float64{rhoPerQuery}) {
		k++
	}
	return k, nil
}
