package label

import (
	"fmt"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// ReleaseGNMaxSS draws one smooth-sensitivity release of GNMax's
// data-dependent RDP on votes (rdp.PrepareGNMaxSS): its integer noise is
// drawn exactly from src, and the result states its own cost. It is the only
// data-dependent figure of a vote analysis that may be published.
func ReleaseGNMaxSS(votes [][]int64, sigma, beta, sigmaSS, order, delta float64, conversion string, src noise.Source) (*rdp.GNSSRelease, error) {
	plan, err := rdp.PrepareGNMaxSS(votes, sigma, beta, sigmaSS, order, delta, conversion)
	if err != nil {
		return nil, err
	}
	dg, err := noise.NewDiscreteGaussian(plan.Scale)
	if err != nil {
		return nil, fmt.Errorf("gnss release: %w", err)
	}
	return plan.Release(dg.Sample(src)), nil
}
