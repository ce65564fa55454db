package label

import "fmt"

// The public rule that sizes the class discovery on the chooser's noisy
// count n̂ (a run that chooses its plan and is not given --classes). A
// fixed share of the budget left small files without a class set: at ε =
// 0.5 a class needed about 262 rows to be released, and sets of a few
// hundred rows were refused where a model given the classes labelled them
// at 0.8–0.9. The discovery's σ is planned at n̂/DiscoveryRowsPerSigma, so
// that a class holding 5% of the rows clears the threshold (about 1 + 4.9σ
// at the discovery's δ) by 1.3σ; its share of ρ is what that σ costs,
// never below the fixed share and never above DiscoveryMaxShare.
const (
	DiscoveryRowsPerSigma = 125
	DiscoveryMaxShare     = 0.5
)

// DiscoveryRule states DiscoveryShare in the report.
var DiscoveryRule = fmt.Sprintf("share of ρ = clamp(1/(2ρ·(n̂/%d)²), %g, %g): a class holding 5%% of the noisy rows clears the threshold",
	DiscoveryRowsPerSigma, discoveryRhoShare, DiscoveryMaxShare)

// DiscoveryShare is the share of the budget ρ (of the run's ε at its δ less
// the discovery's) that the class discovery is planned on, from the noisy
// row count: a function of public and released figures only.
func DiscoveryShare(noisy int64, rho float64) float64 {
	sigma := float64(max(noisy, 1)) / DiscoveryRowsPerSigma
	return min(max(1/(2*rho*sigma*sigma), discoveryRhoShare), DiscoveryMaxShare)
}
