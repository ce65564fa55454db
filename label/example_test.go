package label_test

import (
	"fmt"

	"github.com/pate-tool/pate/label"
	"github.com/pate-tool/pate/label/rdp"
)

// The smallest GNMax noise for 1,500 queries at (ε, δ) = (2, 1e-5), and
// what those queries then spend.
func ExamplePlan() {
	p, err := label.Plan(label.MechanismGNMax, 2, 1e-5, 1500, label.MechanismParams{}, 1, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	rho, _ := label.PlannedRho(label.MechanismGNMax, 2, 1500, p, 1)
	fmt.Printf("σ = %s, ρ = %.4f, ε = %.4f\n", p.Sigma, rho, rdp.ZCDPEps(rho, 1e-5))
	// Output: σ = 117.8, ρ = 0.1081, ε = 1.9983
}
