package label

import (
	"math"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// lnmax is the Laplace noisy argmax (Papernot et al. 2017): every query
// adds discrete Laplace noise of scale b to each class's votes and releases
// the argmax. One answer is pure ε = 2/b (the ℓ1 sensitivity of a
// histogram of votes is 2), charged to the zCDP filter as ρ = ε²/2; it
// plans b from the budget so that every query fits.
type lnmax struct{}

func (lnmax) Name() string { return MechanismLNMax }

func (lnmax) Noise() string {
	return "discrete Laplace (Canonne, Kamath, Steinke 2020), sampled exactly with integer arithmetic"
}

func (lnmax) validate(cfg *Config) error { return validateNoise(lnmax{}, cfg) }

func (lnmax) build(a *aggregator, p MechanismParams) error {
	r, b, err := parsePositive("laplace-scale", p.LaplaceScale)
	if err != nil {
		return err
	}
	l, err := noise.NewDiscreteLaplace(r)
	if err != nil {
		return badParam("laplace-scale", ": %v", err)
	}
	a.answer = l
	a.epsAnswer = 2 / b
	a.rhoAnswer = a.epsAnswer * a.epsAnswer / 2
	return nil
}

func (lnmax) plan(rho float64, n int64, p *MechanismParams, _, _ float64) error {
	if p.LaplaceScale == "" {
		b, err := rdp.PlanLNMaxRho(rho, int(n))
		if err != nil {
			return err
		}
		p.LaplaceScale = decimal(b)
	}
	return nil
}

func (lnmax) missing(p MechanismParams) []string {
	if p.LaplaceScale == "" {
		return []string{"laplace-scale"}
	}
	return nil
}

func (lnmax) complete(*MechanismParams, int) {}

// grid: a Laplace of scale b has standard deviation b√2.
func (lnmax) grid(p MechanismParams, votes gridVotes) (int64, int64, error) {
	answer, err := votes("laplace-scale", p.LaplaceScale, math.Sqrt2)
	return 0, answer, err
}

func (lnmax) checksThreshold() bool { return false }

func (lnmax) accounting() rdp.Accounting { return rdp.Laplace }

func (lnmax) describeNoise(p MechanismParams) string { return "b = " + p.LaplaceScale }

// pureAnswers: each answer is pure ε = 2/b.
func (lnmax) pureAnswers() bool { return true }
