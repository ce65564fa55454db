package label

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/pate-tool/pate/label/rdp"
)

// The chooser: a run whose plan is left to pate (Config.Choose) decides
// between PATE with a student and dp-logreg once it has read the sensitive
// rows, by a rule on a noisy row count n̂:
//
//	R = n̂ / (T·C) ≥ ChooseRowsPerClass → PATE + student, else dp-logreg
//
// with T the teachers and C the classes: the rows one teacher
// sees of one class. PATE needs teachers that learn something; with a few
// rows per class and teacher they vote at random and DP logistic
// regression, which learns from every row at once, labels better (shared
// benchmarks: breast cancer, digits, vehicle, vowel).
//
// The count is the same release as dp-logreg's own (dplrCount: sensitivity
// 1, the exact discrete Gaussian, σc planned for DPLogRegCountShare of the
// budget ρ), charged to the run's filter before anything else, recorded in
// the report's choice section and in the failure charge like the class
// discovery. A run that picks dp-logreg then trains it exactly as
// --mechanism dp-logreg does, on what the count left of the filter (it
// spends its own count: the model's audit stays that of dp-logreg on the
// budget less the choice's and the discovery's ρ). C is the declared class
// set, or the one the private class discovery released (public once
// released): the count is released after the discovery.

// ChooseRowsPerClass is the rule's threshold: the fewest sensitive rows
// per class and teacher with which the chooser keeps PATE. Public: set
// once from the shared benchmarks (adult has 65, every small set < 3).
const ChooseRowsPerClass = 10

// streamChoiceCount draws the chooser's noisy count.
const streamChoiceCount = 11

// ChoiceRule is the rule the report and pate plan print.
var ChoiceRule = fmt.Sprintf("n̂/(teachers·classes) ≥ %d → PATE + student, else %s", ChooseRowsPerClass, MechanismDPLogReg)

// ChooseByRule is the chooser's rule: the mechanism for a noisy count of
// rows, teachers and classes ("" keeps PATE), and R = rows/(T·C).
func ChooseByRule(rows int64, teachers, classes int) (mech string, perClass float64) {
	perClass = float64(rows) / (float64(max(teachers, 1)) * float64(max(classes, 1)))
	if perClass >= ChooseRowsPerClass {
		return "", perClass
	}
	return MechanismDPLogReg, perClass
}

// PlanChoice is what pate plan shows: the σc of the choice's count for the
// budget (ε, δ), and the mechanism the rule picks for rows, teachers and
// classes (the count taken as exact).
func PlanChoice(eps, delta float64, rows int64, teachers, classes int) (sigma float64, mech string, perClass float64, err error) {
	f, err := rdp.NewFilter(eps, delta)
	if err != nil {
		return 0, "", 0, invalid("%v", err)
	}
	sigma, _, _, err = dplrCount(f.Budget())
	if err != nil {
		return 0, "", 0, err
	}
	mech, perClass = ChooseByRule(rows, teachers, classes)
	if mech == "" {
		mech = Mechanisms[0]
	}
	return sigma, mech, perClass, nil
}

// ChooseError is New's error for a run that leaves its mechanism to the
// chooser (Config.Choose) with a configuration that one of the mechanisms
// it may run refuses: the choice is validated for both before anything is
// drawn. It wraps the refusal (which wraps ErrInvalidInput).
type ChooseError struct {
	// Mechanism is the mechanism the chooser may switch to that refuses
	// the configuration; "" when the choice itself is refused (its noisy
	// count is of rows at sensitivity 1: a privacy unit of many rows is
	// not covered).
	Mechanism string
	Err       error
}

func (e *ChooseError) Error() string {
	if e.Mechanism == "" {
		return "the run's choice of mechanism: " + e.Err.Error()
	}
	return "the run may choose " + e.Mechanism + ": " + e.Err.Error()
}

func (e *ChooseError) Unwrap() error { return e.Err }

// validateChoice checks a Config.Choose run for every mechanism it may
// run: the planned one is validated by validate, dp-logreg here, on the
// configuration choose would switch to. A privacy unit is refused: the
// count would have to count units and dp-logreg clip per unit, which
// neither does.
func validateChoice(cfg *Config) error {
	if !cfg.Choose {
		return nil
	}
	if cfg.PrivacyUnit != "" {
		return &ChooseError{Err: paramError("privacy-unit", " cannot be used when the run chooses its mechanism: "+
			"the choice's noisy count is of rows, charged at sensitivity 1, and one unit may hold many rows; name the %v",
			ParamName("mechanism"))}
	}
	switched := switchedConfig(*cfg, MechanismDPLogReg)
	if switched.Classes == nil {
		// Classes left to discover: the private discovery releases them
		// before the count is drawn, so dp-logreg's shape is then public.
		switched.Classes = []string{}
	}
	if err := mechanismOf(MechanismDPLogReg).validate(&switched); err != nil {
		return &ChooseError{Mechanism: MechanismDPLogReg, Err: err}
	}
	return nil
}

// switchedConfig is cfg as choose switches it to mech.
func switchedConfig(cfg Config, mech string) Config {
	cfg.Mechanism, cfg.Student, cfg.Select, cfg.MaxQueries = mech, "", SelectFirst, 0
	cfg.SelfTrain = false
	return cfg
}

// choose releases the noisy row count n of the sensitive rows and, when
// the rule says so, switches the run to dp-logreg (it returns true). It runs
// once the class sets are fixed (declared, or discovered: a mechanism
// output) and before any teacher is trained; the count's ρ is charged to
// the filter with the class discovery's (prepareMechanism), on the same
// budget ρ the filter will have (ε at δ less the discovery's δ).
func (l *Labeler) choose(n int64, td *teacherData) (bool, error) {
	cfg := &l.cfg
	if err := validateChoice(cfg); err != nil { // New checked it: nothing is drawn for a choice that cannot run
		return false, err
	}
	f, err := rdp.NewFilter(cfg.Epsilon, cfg.Delta-td.discoveryDelta)
	if err != nil {
		return false, invalid("budget: %v", err)
	}
	sc, g, rho, err := dplrCount(f.Budget())
	if err != nil {
		return false, err
	}
	classes := len(td.classes.values)
	noisy := max(0, n+g.Sample(l.source(streamChoiceCount)))
	mech, perClass := ChooseByRule(noisy, cfg.Teachers, classes)
	chosen := mech
	if chosen == "" {
		chosen = cfg.Mechanism
	}
	why := fmt.Sprintf("%d noisy rows / (%d teachers · %d classes) = %.3g rows per class and teacher", noisy, cfg.Teachers, classes, perClass)
	if mech == "" {
		why += fmt.Sprintf(" ≥ %d: PATE + student", ChooseRowsPerClass)
	} else {
		why += fmt.Sprintf(" < %d: too few for the teachers to learn; %s labels every row", ChooseRowsPerClass, mech)
	}
	l.choiceRho = rho
	l.choice = &ChoiceReport{
		Chosen: chosen, CountSigma: strconv.FormatFloat(sc, 'g', -1, 64), CountRho: Float(rho),
		CountShare: Float(DPLogRegCountShare), NoisyRows: noisy, Teachers: cfg.Teachers, Classes: classes,
		Threshold: ChooseRowsPerClass, Rule: ChoiceRule, Why: why,
	}
	if mech == "" {
		return false, nil
	}
	planned := *cfg
	l.planned = &planned // a later Run chooses afresh from the plan
	*cfg = switchedConfig(*cfg, mech)
	cfg.Plan = "chosen: " + why
	l.chosen = td
	return true, nil
}

// resetChoice undoes a previous Run's choice: every Run chooses afresh.
func (l *Labeler) resetChoice() {
	if l.planned != nil {
		l.cfg, l.planned = *l.planned, nil
	}
	l.choice, l.choiceRho, l.chosen = nil, 0, nil
}

// withChoice adds the chooser's count to what a failed run says it spent
// (the training's own failure charge knows only the class discovery).
func (l *Labeler) withChoice(err error) error {
	var a *AbortedError
	if l.choiceRho <= 0 || err == nil {
		return err
	}
	if errors.As(err, &a) {
		a.Rho += l.choiceRho
		return err
	}
	return spentBefore(err, l.choiceRho)
}

// choiceRhoOf re-derives the ρ of a report's choice count from the budget,
// with the checks of the choice in res when res is not nil: σc must be the
// one planned for the budget, the threshold the rule's, the classes the
// report's, and the mechanism the one the rule gives for the released n̂.
func choiceRhoOf(rep *Report, res *AuditResult) (float64, error) {
	c := rep.Choice
	if c == nil {
		return 0, nil
	}
	if !rep.Budget.Filter || !(float64(rep.Guarantee.Rho) > 0) {
		return 0, invalid("report: a choice is made on a budget filter, the report has none")
	}
	_, sc, err := parsePositive("choice count_sigma", c.CountSigma)
	if err != nil {
		return 0, invalid("report: %v", err)
	}
	want, _, _, err := dplrCount(float64(rep.Guarantee.Rho)) // the filter's budget, at δ less the discovery's
	if err != nil {
		return 0, invalid("report: choice: %v", err)
	}
	rho := rdp.DiscreteGaussianRho(1, sc, 1)
	if res == nil {
		return rho, nil
	}
	addCheck(res, "choice count σ planned from the budget", sc, want, sc == want,
		fmt.Sprintf("σc is planned for %.2g of the budget ρ, as dp-logreg's count", DPLogRegCountShare))
	addCheck(res, "choice threshold is the rule's", float64(c.Threshold), ChooseRowsPerClass, float64(c.Threshold) == ChooseRowsPerClass,
		"rows per class and teacher that keep PATE")
	addCheck(res, "choice classes are the report's", float64(c.Classes), float64(len(rep.Classes)), c.Classes == len(rep.Classes),
		"C of the rule is the class set, declared or discovered")
	mech, perClass := ChooseByRule(c.NoisyRows, c.Teachers, c.Classes)
	ok := c.NoisyRows >= 0 && c.Teachers >= 1 && c.Chosen == rep.Mechanism
	if mech == "" { // PATE: the run's own argmax mechanism and teachers
		_, argmax := mechanismOf(rep.Mechanism).(argmaxMechanism)
		ok = ok && argmax && c.Teachers == rep.Teachers
	} else { // dp-logreg trains no teachers: T is the default plan's
		ok = ok && rep.Mechanism == mech
	}
	addCheck(res, "choice follows from n̂ and the rule", perClass, ChooseRowsPerClass, ok,
		fmt.Sprintf("%s; the run used %s", ChoiceRule, rep.Mechanism))
	addCheck(res, "choice count ρ", float64(c.CountRho), rho, leq(rho, float64(c.CountRho)),
		"1/(2σc²); the report must not understate it")
	return rho, nil
}

// Mechanism is the mechanism the run uses: Config.Mechanism, or, once a
// Run has chosen (Config.Choose), the one it chose. A Run chooses before it
// writes its first batch, so a writer may ask at its first Write.
func (l *Labeler) Mechanism() string { return l.cfg.Mechanism }
