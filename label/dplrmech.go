package label

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// dp-logreg: one multinomial logistic regression trained on the sensitive
// rows by differentially private gradient descent (FitDPLogReg: clipped
// per-example gradients, scaled and randomly rounded to integers, summed,
// plus the exact discrete Gaussian on every coordinate), then every public
// row labelled by it (post-processing: the answers charge nothing).
//
// The run's zCDP filter has the budget RhoForEps(ε, δ); the model spends
// all of it, in two charges made before the first label:
//
//   - the noisy row count, σc planned for DPLogRegCountShare of the budget
//     (ρc = 1/(2σc²));
//   - Steps gradient sums of squared sensitivity SensSq, σ planned for what
//     the count left (ρ = Steps·SensSq/(2σ²)).
//
// Every hyperparameter comes from a public rule (learners.PlanDPLogReg):
// the clip, learning rate and row norm are constants; the integer scale
// and SensSq follow the number of parameters classes·(features+1) (public:
// the features are those of the encoder fitted on the public data, the
// classes are declared or released by the private class discovery before
// the model is planned); the steps follow the signal-to-noise ratio of the
// noisy count and the budget. The features are encoded by the encoder
// fitted on the public head (its scaling is public) and each encoded row is
// scaled to ℓ2 norm at most RowNorm on its own. The report's dp_logreg
// section holds every parameter the cost depends on; pate audit re-derives
// the count's and the steps' σ from the budget and the public rule, and the
// ρ from them.

// MechanismDPLogReg is DP logistic regression (Abadi et al. 2016; Kairouz,
// Liu, Steinke 2021 for the integer release).
const MechanismDPLogReg = "dp-logreg"

// SourceDPLogReg is the output's pate_source of the rows the model labelled.
const SourceDPLogReg = "dp-logreg"

// Noise streams of a seeded dp-logreg run.
const (
	streamDPLogRegNoise = 9
	streamDPLogRegRound = 10
)

type dpLogRegMechanism struct{}

func (dpLogRegMechanism) Name() string { return MechanismDPLogReg }

func (dpLogRegMechanism) Noise() string {
	return "exact discrete Gaussian (Canonne, Kamath, Steinke 2020) on the noisy row count and on every coordinate of every integer gradient sum; " +
		"conditional randomized rounding of the scaled gradients (Kairouz, Liu, Steinke 2021)"
}

func (dpLogRegMechanism) validate(cfg *Config) error {
	return validateModelRun(cfg, "clips the gradient of one row", "the model spends", "its model labels every row")
}

// validateModelRun refuses what a mechanism that trains one model on the
// rows under a budget fixed before the run cannot honour (dp-logreg,
// cell-histogram); the three phrases say why in its own terms.
func validateModelRun(cfg *Config, perRow, spends, labelsAll string) error {
	switch {
	case len(cfg.Labels) > 1:
		return paramError("mechanism", " %s labels one %v column for now, got %d", cfg.Mechanism, ParamName("label"), len(cfg.Labels))
	case cfg.Replicable != nil:
		return paramError("replicable", " works with confident-gnmax, gnmax and lnmax, not %v %s", ParamName("mechanism"), cfg.Mechanism)
	case !(cfg.Epsilon > 0):
		return paramError("mechanism", " %s needs %v: %s the budget fixed before the run", cfg.Mechanism, ParamName("epsilon"), spends)
	case cfg.PrivacyUnit != "":
		return paramError("mechanism", " %s %s: %v is not supported with it", cfg.Mechanism, perRow, ParamName("privacy-unit"))
	case cfg.Select == SelectUncertain:
		return paramError("select", " uncertain is not supported with %v %s", ParamName("mechanism"), cfg.Mechanism)
	case cfg.Student != "":
		return paramError("student", " is not needed with %v %s: %s", ParamName("mechanism"), cfg.Mechanism, labelsAll)
	case cfg.Params != MechanismParams{}:
		return paramError("mechanism", " %s plans every parameter from %v: the noise flags of the other mechanisms do not apply", cfg.Mechanism, ParamName("epsilon"))
	}
	return nil
}

// build: the answers are the model's predictions, free (the model's
// charges are made when it is trained, in start).
func (dpLogRegMechanism) build(*aggregator, MechanismParams) error { return nil }

func (dpLogRegMechanism) learnerName() string {
	return "multinomial logistic regression by DP gradient descent"
}

func (dpLogRegMechanism) answerSource() string { return SourceDPLogReg }

// learner keeps the encoded rows whose label is one of the classes (a row
// without one contributes nothing: dropping it is a map of that row alone,
// and refusing would reveal it); the model is trained once the budget
// filter is set (start).
func (dpLogRegMechanism) learner(_ *Labeler, X *learners.Matrix, y []int32, classes int, enc *learners.Encoder, head []arrow.Record) (voter, error) {
	pub, err := balanceSample(enc, head)
	if err != nil {
		return nil, err
	}
	x, ys := labelledRows(X, y)
	return &dpLogRegVoter{x: x, y: ys, classes: classes, features: X.Cols, pub: pub}, nil
}

// labelledRows keeps the rows of X whose class y is not -1 (X itself when
// every row has one).
func labelledRows(X *learners.Matrix, y []int32) (*learners.Matrix, []int32) {
	if !slices.Contains(y, -1) {
		return X, y
	}
	x, ys := learners.NewMatrix(0, X.Cols), make([]int32, 0, len(y))
	for i, c := range y {
		if c >= 0 {
			x.Data = append(x.Data, X.Row(i)...)
			x.Rows++
			ys = append(ys, c)
		}
	}
	return x, ys
}

// dpLogRegVoter is the trained model: one vote for its prediction.
type dpLogRegVoter struct {
	x       *learners.Matrix // sensitive: dropped once the model is trained
	y       []int32
	classes int
	// features is the encoded width (public: the encoder's).
	features int
	model    learners.Model
	rel      *DPLogRegRelease
	// pub is a sample of the public head the decision is balanced on
	// (balance.go); shares the class shares it estimated.
	pub     *learners.Matrix
	balance learners.Balance
}

// start trains the model on the run's filter: the only charges of the run.
func (v *dpLogRegVoter) start(l *Labeler, _ MechanismParams, _ *aggregator, b budget) error {
	f, ok := b.(*rdp.Filter)
	if !ok {
		return paramError("mechanism", " %s needs a budget filter (%v)", MechanismDPLogReg, ParamName("epsilon"))
	}
	opts := DPLogRegOptions{Diagnose: func(msg string) { l.cfg.diagnose("%s", msg) },
		Step: func(done, total int) { l.cfg.phase(PhaseDPLogReg, done, total) }}
	noiseSrc := l.source(streamDPLogRegNoise)
	if l.choiceCount != nil { // chosen: the chooser's count is step 1
		opts.Count, noiseSrc = l.choiceCount, l.choiceNoise
	}
	m, rel, err := FitDPLogReg(f, v.x, v.y, v.classes, noiseSrc, l.source(streamDPLogRegRound), opts)
	v.x, v.y = nil, nil
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBudgetRefused, err)
	}
	if v.model, v.balance, err = balanceLinear(m, v.pub, int64(rel.Params.Rows)); err != nil {
		return err
	}
	v.rel, v.pub = rel, nil
	if !rel.CountFromChoice { // the chooser warned of its own count
		l.warnFewRows(int64(rel.Params.Rows), rel.CountSigma)
	}
	return nil
}

// Votes implements voter: one vote for the model's class.
func (v *dpLogRegVoter) Votes(x *learners.Matrix, counts []int32) {
	voteModel(v.model, v.classes, x, counts)
}

// voteModel gives each row of x one vote, for m's prediction.
func voteModel(m learners.Model, classes int, x *learners.Matrix, counts []int32) {
	clear(counts[:x.Rows*classes])
	pred := make([]int32, x.Rows) // a batch's worth; no state shared between calls
	m.Predict(x, pred)
	for i, c := range pred {
		counts[i*classes+int(c)] = 1
	}
}

// trainedModel is the model (nil before start).
func (v *dpLogRegVoter) trainedModel() learners.Model { return v.model }

// modelRho is what training the model charged.
func (v *dpLogRegVoter) modelRho() float64 {
	if v.rel == nil {
		return 0
	}
	return v.rel.Rho
}

// describeModel fills in the report's dp_logreg section.
func (v *dpLogRegVoter) describeModel(rep *Report) {
	r := v.rel
	if r == nil {
		return
	}
	p := r.Params
	dims := learners.ParamCount(v.features, v.classes)
	countRho, source := rdp.DiscreteGaussianRho(1, r.CountSigma, 1), ""
	if r.CountFromChoice {
		countRho, source = 0, dplrCountFromChoice
	}
	rep.DPLogReg = &DPLogRegReport{
		Features: v.features, Dims: dims, CountSource: source,
		CountSigma: strconv.FormatFloat(r.CountSigma, 'g', -1, 64), CountRho: Float(countRho),
		Steps: p.Steps, SensSq: p.SensSq, Sigma: strconv.FormatFloat(r.Sigma, 'g', -1, 64),
		StepsRho: Float(r.Rho - countRho), Rho: Float(r.Rho),
		Clip: Float(p.Clip), Scale: Float(p.Gamma), Beta: Float(learners.DefaultRoundingBeta),
		LearnRate: Float(p.LearnRate), RowNorm: Float(p.RowNorm), CountShare: Float(DPLogRegCountShare),
		Rule: "learners.PlanDPLogReg: clip, learning rate, row norm constant; integer scale and sensitivity from the parameter count; " +
			"steps = clamp(round(6·s), 20, min(1000, max(200, 1.5·10⁹/(noisy rows·params)))), s = noisy rows·√(2ρ)/√params; σc and σ the smallest 4-digit decimals that fit the budget's shares",
		Noise:    "the sum over the sensitive rows of their rounded gradients, plus N_Z(0, σ²) on each of released_dims coordinates",
		Rounding: "scaled by integer_scale, randomized rounding repeated until ‖r‖² ≤ sensitivity_sq (truncated towards zero after 64 draws)",
	}
	describeBalance(rep, v.balance)
}

// auditModelCount re-derives the first charge of a mechanism that trains
// one model after a noisy row count (dp-logreg, cell-histogram; section is
// its report section's name): the budget the model spent, what the
// chooser's count and the class discovery, if any, left (res.DiscoveryRho:
// re-derived before), and the count's ρ — σc planned from that budget, or
// the choice's count (source "choice", charged with the choice: ρ 0 here).
func auditModelCount(rep *Report, res *AuditResult, section, source, countSigma string, sc float64) (budget, countRho float64, err error) {
	choiceRho, err := choiceRhoOf(rep, nil)
	if err != nil {
		return 0, 0, err
	}
	budget = float64(rep.Guarantee.Rho) - choiceRho - res.DiscoveryRho
	switch source {
	case "":
		wantSc, err := rdp.PlanGNMaxRho(2*DPLogRegCountShare*budget, 1)
		if err != nil {
			return 0, 0, invalid("report: %s: planning the count: %w", section, err)
		}
		addCheck(res, rep.Mechanism+" count σ planned from the budget", sc, wantSc, sc == wantSc,
			fmt.Sprintf("σc is planned for %.2g of the budget ρ", DPLogRegCountShare))
		return budget, rdp.DiscreteGaussianRho(1, sc, 1), nil
	case dplrCountFromChoice:
		// The choice's σc was checked against the budget with the choice;
		// its ρ is the choice's, counted there.
		c := rep.Choice
		ok := c != nil && c.Chosen == rep.Mechanism && c.CountSigma == countSigma
		addCheck(res, rep.Mechanism+" count is the choice's", sc, sc, ok,
			"a chosen "+rep.Mechanism+" takes the chooser's count (same σc, charged once, in the choice section)")
		if !ok {
			return 0, 0, invalid("report: %s: count_source %q without a choice of %s with this count_sigma", section, source, rep.Mechanism)
		}
		return budget, 0, nil
	}
	return 0, 0, invalid("report: %s: unknown count_source %q", section, source)
}

// dplrCountFromChoice is the report's count_source of a dp-logreg that
// took the chooser's count as its own.
const dplrCountFromChoice = "choice"

// auditModel re-derives the model's figures from the report's dp_logreg
// section and the budget: the count's σ and the steps' σ must be those the
// planning rule gives for the budget (an edited σ, step count or
// sensitivity fails), the sensitivity the one the rule fixes for the
// parameter count, and the ρ is recomputed from them. It returns the
// recomputed ρ.
func (dpLogRegMechanism) auditModel(rep *Report, res *AuditResult) (float64, error) {
	d := rep.DPLogReg
	if d == nil {
		return 0, invalid("report: --mechanism %s without its dp_logreg section", MechanismDPLogReg)
	}
	if !rep.Budget.Filter || !(float64(rep.Guarantee.Rho) > 0) {
		return 0, invalid("report: --mechanism %s runs on a budget filter, the report has none", MechanismDPLogReg)
	}
	classes := len(rep.Classes)
	if d.Features < 1 || d.Steps < 1 || d.SensSq < 1 {
		return 0, invalid("report: dp_logreg: features, steps and sensitivity_sq must be ≥ 1")
	}
	_, sc, err := parsePositive("dp_logreg count_sigma", d.CountSigma)
	if err != nil {
		return 0, invalid("report: %w", err)
	}
	_, sigma, err := parsePositive("dp_logreg sigma", d.Sigma)
	if err != nil {
		return 0, invalid("report: %w", err)
	}
	dims := learners.ParamCount(d.Features, classes)
	addCheck(res, "dp-logreg released coordinates", float64(d.Dims), float64(dims), d.Dims == dims,
		"classes·(features+1): one coordinate per model parameter")
	budget, countRho, err := auditModelCount(rep, res, "dp_logreg", d.CountSource, d.CountSigma, sc)
	if err != nil {
		return 0, err
	}

	want, err := learners.PlanDPLogReg(d.Features, classes, 1, 1)
	if err != nil {
		return 0, invalid("report: dp_logreg: %w", err)
	}
	addCheck(res, "dp-logreg sensitivity from the public rule", float64(d.SensSq), float64(want.SensSq), d.SensSq == want.SensSq,
		"the squared norm bound of a rounded gradient the rule fixes for the parameter count")
	addCheck(res, "dp-logreg steps within the rule", float64(d.Steps), learners.DefaultDPMaxSteps, d.Steps <= learners.DefaultDPMaxSteps,
		"the rule takes at most this many steps")
	wantSigma, err := rdp.PlanDGaussStepsRho(math.Max(budget-countRho, 0), d.Steps, float64(want.SensSq))
	if err != nil {
		return 0, invalid("report: dp_logreg: planning the steps: %w", err)
	}
	addCheck(res, "dp-logreg step σ planned from the budget", sigma, wantSigma, sigma == wantSigma,
		"σ is planned for what the count left of the budget, for these steps and this sensitivity")
	stepsRho := rdp.DGaussStepsRho(float64(d.SensSq), sigma, dims, 1, d.Steps)
	rho := countRho + stepsRho
	addCheck(res, "dp-logreg model ρ", float64(d.Rho), rho, leq(rho, float64(d.Rho)),
		"1/(2σc²) + steps·sensitivity_sq/(2σ²); the report must not understate it")
	return rho, nil
}
