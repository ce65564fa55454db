package label

import (
	"strings"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// gnmax is the Gaussian noisy argmax (Papernot et al. 2018): every query
// adds discrete Gaussian noise of scale σ to each class's votes and
// releases the argmax. One answer charges ρ = 1/σ² (the ℓ2 sensitivity of
// a histogram of votes is √2); it plans σ from the budget so that every
// query fits.
type gnmax struct{}

func (gnmax) Name() string { return MechanismGNMax }

func (gnmax) Noise() string { return gaussianNoise }

func (gnmax) validate(cfg *Config) error { return validateNoise(gnmax{}, cfg) }

func (gnmax) build(a *aggregator, p MechanismParams) error {
	r, s, err := parsePositive("sigma", p.Sigma)
	if err != nil {
		return err
	}
	g, err := noise.NewDiscreteGaussian(r)
	if err != nil {
		return badParam("sigma", ": %v", err)
	}
	a.answer = g
	a.rhoAnswer = rdp.DiscreteGaussianRho(2, s, a.classes)
	return nil
}

func (gnmax) plan(rho float64, n int64, p *MechanismParams, _, _ float64) error {
	if p.Sigma == "" {
		s, err := rdp.PlanGNMaxRho(rho, int(n))
		if err != nil {
			return err
		}
		p.Sigma = decimal(s)
	}
	return nil
}

func (gnmax) missing(p MechanismParams) []string {
	if p.Sigma == "" {
		return []string{"sigma"}
	}
	return nil
}

func (gnmax) complete(*MechanismParams, int) {}

func (gnmax) grid(p MechanismParams, votes gridVotes) (int64, int64, error) {
	answer, err := votes("sigma", p.Sigma, 1)
	return 0, answer, err
}

func (gnmax) checksThreshold() bool { return false }

func (gnmax) accounting() rdp.Accounting { return rdp.Gaussian }

func (gnmax) describeNoise(p MechanismParams) string { return "σ = " + p.Sigma }

func (gnmax) pureAnswers() bool { return false }

// gaussianNoise describes the noise of the Gaussian mechanisms.
const gaussianNoise = "discrete Gaussian (Canonne, Kamath, Steinke 2020), sampled exactly with integer arithmetic"

// validateNoise checks that a run without a budget gives m's noise.
func validateNoise(m argmaxMechanism, cfg *Config) error {
	if cfg.Epsilon == 0 {
		if missing := m.missing(cfg.Params); len(missing) > 0 {
			verbs := make([]string, len(missing))
			args := make([]any, len(missing))
			for i, name := range missing {
				verbs[i], args[i] = "%v", ParamName(name)
			}
			err := badParam("epsilon", " (the noise is then planned from it) or "+strings.Join(verbs, " and "), args...)
			err.Before = "give "
			return invalid("%w", err)
		}
	}
	return nil
}
