package label

import (
	"math"
	"strconv"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/label/rdp"
)

// confidentGNMax is Confident-GNMax (Papernot et al. 2018): every query
// first checks, with discrete Gaussian noise of scale σ1, that the top vote
// reaches the threshold T, and only then releases the noisy argmax with
// noise of scale σ2. A check charges ρ = 1/(2σ1²), an answer 1/σ2²; it
// plans σ1 = ratio·σ2 from the budget for the planned fraction of answered
// queries, and T at a fraction of the teachers.
type confidentGNMax struct{}

func (confidentGNMax) Name() string { return MechanismConfidentGNMax }

func (confidentGNMax) Noise() string { return gaussianNoise }

func (confidentGNMax) validate(cfg *Config) error { return validateNoise(confidentGNMax{}, cfg) }

func (confidentGNMax) build(a *aggregator, p MechanismParams) error {
	r1, s1, err := parsePositive("sigma1", p.Sigma1)
	if err != nil {
		return err
	}
	r2, s2, err := parsePositive("sigma2", p.Sigma2)
	if err != nil {
		return err
	}
	if a.check, err = noise.NewDiscreteGaussian(r1); err != nil {
		return badParam("sigma1", ": %v", err)
	}
	g, err := noise.NewDiscreteGaussian(r2)
	if err != nil {
		return badParam("sigma2", ": %v", err)
	}
	a.answer = g
	a.rhoCheck = rdp.DiscreteGaussianRho(1, s1, 1)
	a.rhoAnswer = rdp.DiscreteGaussianRho(2, s2, a.classes)
	return nil
}

func (confidentGNMax) plan(rho float64, n int64, p *MechanismParams, frac, ratio float64) error {
	N := float64(n)
	switch {
	case p.Sigma1 == "" && p.Sigma2 == "":
		s1, s2, err := rdp.PlanConfidentRho(rho, int(n), frac, ratio)
		if err != nil {
			return err
		}
		p.Sigma1, p.Sigma2 = decimal(s1), decimal(s2)
	case p.Sigma1 == "":
		s2, err := strconv.ParseFloat(p.Sigma2, 64)
		if err != nil {
			return badParam("sigma2", " %q: %v", p.Sigma2, err)
		}
		left := rho - N*frac/(s2*s2)
		if left <= 0 {
			return badParam("sigma2", " %s leaves no budget for the threshold checks of %d queries", p.Sigma2, n)
		}
		p.Sigma1 = roundUpDecimal(math.Sqrt(N/(2*left)), 4)
	case p.Sigma2 == "":
		s1, err := strconv.ParseFloat(p.Sigma1, 64)
		if err != nil {
			return badParam("sigma1", " %q: %v", p.Sigma1, err)
		}
		left := rho - N/(2*s1*s1)
		if left <= 0 {
			return badParam("sigma1", " %s leaves no budget for the answers of %d queries", p.Sigma1, n)
		}
		p.Sigma2 = roundUpDecimal(math.Sqrt(N*frac/left), 4)
	}
	return nil
}

func (confidentGNMax) missing(p MechanismParams) []string {
	if p.Sigma1 == "" || p.Sigma2 == "" {
		return []string{"sigma1", "sigma2"}
	}
	return nil
}

// complete puts the threshold at DefaultThresholdFraction of the teachers.
func (confidentGNMax) complete(p *MechanismParams, teachers int) {
	if p.Threshold == 0 {
		p.Threshold = int64(DefaultThresholdFraction*float64(teachers) + 0.5)
	}
}

// grid rounds the threshold check only: the argmax of a confident query
// is rarely where two curators differ, and rounding it costs accuracy.
func (confidentGNMax) grid(p MechanismParams, votes gridVotes) (int64, int64, error) {
	check, err := votes("sigma1", p.Sigma1, 1)
	return check, 0, err
}

func (confidentGNMax) checksThreshold() bool { return true }

func (confidentGNMax) accounting() rdp.Accounting { return rdp.ThresholdGaussian }

func (confidentGNMax) describeNoise(p MechanismParams) string {
	return "σ1 = " + p.Sigma1 + ", σ2 = " + p.Sigma2
}

func (confidentGNMax) pureAnswers() bool { return false }
