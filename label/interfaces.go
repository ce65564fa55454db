package label

import (
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/label/rdp"
	"github.com/pate-tool/pate/learners"
)

// Mechanism is one way of answering a query (a public row) from the
// sensitive data: what each of its events charges the budget, how its
// parameters are planned from a budget, and how it answers. Every mechanism
// is one file of this package (lnmax.go, gnmax.go, confident.go, svt.go,
// stableem.go, privlearner.go, dplrmech.go, privknn.go, cellhist.go); the registry below is the only place that
// maps a --mechanism name to one. The engine asks a mechanism what it can
// do (the narrower interfaces below), never what it is called.
//
// The mechanisms stay in package label rather than a sub-package: they fill
// in the engine's aggregator, budget filter, configuration and report, and
// a sub-package would have to import those from label while label imports
// it back.
type Mechanism interface {
	// Name is the --mechanism value, and the report's "mechanism".
	Name() string
	// Noise describes its randomness, for the report.
	Noise() string
	// validate checks the settings of cfg it needs beyond those every run
	// needs.
	validate(cfg *Config) error
	// build sets a up to answer queries with the parameters p: the noise it
	// draws and what each event charges (a.rhoCheck, a.rhoAnswer,
	// a.epsAnswer).
	build(a *aggregator, p MechanismParams) error
}

// argmaxMechanism releases the noisy argmax of the teachers' votes and
// charges a zCDP filter with a ρ fixed by its noise (lnmax, gnmax,
// confident-gnmax).
type argmaxMechanism interface {
	Mechanism
	// plan fills in the noise parameters p leaves empty so that n queries
	// fit into rho (zCDP), a fraction frac of them answered and σ1 =
	// ratio·σ2 where that applies.
	plan(rho float64, n int64, p *MechanismParams, frac, ratio float64) error
	// missing names the noise parameters without which it needs a budget
	// to plan from; none when p has them all.
	missing(p MechanismParams) []string
	// complete fills in the parameters that do not depend on the budget,
	// for a run of the given number of teachers.
	complete(p *MechanismParams, teachers int)
	// grid is the replicable rounding's grid (replicable.go) of the
	// threshold check and of the argmax, in votes; votes converts a noise
	// parameter to a width.
	grid(p MechanismParams, votes gridVotes) (check, answer int64, err error)
	// checksThreshold reports whether it puts a threshold check before
	// each answer, so that it answers only a fraction of the queries it
	// puts and its plan depends on --answered-fraction.
	checksThreshold() bool
	// pureAnswers reports whether each answer is a pure ε-DP event
	// (a.epsAnswer), whose spend the audit also reads by basic
	// composition.
	pureAnswers() bool
	// accounting is how pate analyze charges one of its queries.
	accounting() rdp.Accounting
	// describeNoise shows its noise parameters p ("σ = 40").
	describeNoise(p MechanismParams) string
}

// gridVotes converts the noise parameter s (its flag name, its decimal) of
// standard deviation std·s into a replicable grid width in votes.
type gridVotes func(name, s string, std float64) (int64, error)

// eventMechanism charges a cap on pure ε-DP events, all of the same ε,
// fixed before the run from the budget (pure.go).
type eventMechanism interface {
	Mechanism
	// eventEps is the ε of one event with the parameters p over the given
	// number of classes.
	eventEps(classes int, p MechanismParams) (float64, error)
	// planEvents fills in the parameters p leaves empty from the budget
	// of f, before its cap is set, and says in f what one event is.
	planEvents(l *Labeler, td *teacherData, f *pureFilter, p *MechanismParams, queries int64) error
	// capEvents tightens the cap f.max with what is known before the run
	// (queries, -1 when unknown) and completes p with what the cap fixes.
	capEvents(f *pureFilter, p *MechanismParams, queries int64) error
	// describe fills in its part of the report's pure-DP section.
	describe(pr *PureDPReport, p MechanismParams, agg *aggregator)
	// failureShare is the share of δ that is the probability its
	// guarantee fails outright (not a conversion's share).
	failureShare() float64
	// auditEvents checks a report's count of events against its answers.
	auditEvents(rep *Report) error
	// auditParams re-derives its figures of the report's pure-DP section
	// from the exact parameters.
	auditParams(rep *Report, res *AuditResult) error
	// auditFailure re-derives the failure δ (its share extra of δ).
	auditFailure(rep *Report, res *AuditResult, extra float64) error
	// explainFailure says what the failure δ is; "" when it has none.
	explainFailure(extra float64) string
}

// rowMechanism learns from the sensitive rows themselves instead of
// polling teachers trained on them (private-learner and stable-em, which
// are also eventMechanisms; dp-logreg, a modelMechanism).
type rowMechanism interface {
	Mechanism
	// learner prepares the voter from the encoded sensitive rows X (y: their
	// class indices, -1 when unusable); head is the public head, enc the
	// encoder fitted on it.
	learner(l *Labeler, X *learners.Matrix, y []int32, classes int, enc *learners.Encoder, head []arrow.Record) (voter, error)
	// learnerName names its learner, for the report.
	learnerName() string
}

// unitSampler is a rowMechanism that honours --privacy-unit by sampling
// units rather than rows, so that one unit moves its statistic no more
// than one row does (private-knn: one row of each sampled unit).
type unitSampler interface {
	rowMechanism
	// unitLearner is learner for rows grouped into privacy units: units[i]
	// is row i's unit (0, 1, ...; -1 when the row is dropped).
	unitLearner(l *Labeler, X *learners.Matrix, y, units []int32, classes int) (voter, error)
	// unitNoise and unitLearnerName are Noise and learnerName when a
	// privacy unit is set.
	unitNoise() string
	unitLearnerName() string
}

// ownVotes is a mechanism whose vote histogram is not the teachers' (private-knn:
// the k neighbours'), so that its noise is weighed against its own votes.
type ownVotes interface {
	// noiseBeyondVotes returns the noise σ an answer draws, the votes of a
	// histogram, and whether σ exceeds them.
	noiseBeyondVotes(p MechanismParams) (sigma float64, votes int, beyond bool)
}

// modelMechanism trains one model on the sensitive rows under the run's
// zCDP filter (its voter's start makes every charge, before the first
// label) and labels every public row with it: its answers charge nothing.
type modelMechanism interface {
	rowMechanism
	// auditModel re-derives the model's charges from the report's exact
	// parameters, adding its checks to res, and returns their ρ.
	auditModel(rep *Report, res *AuditResult) (float64, error)
	// answerSource is the output's pate_source of the rows it labels.
	answerSource() string
}

// modelVoter is the voter of a modelMechanism once trained.
type modelVoter interface {
	// modelRho is the ρ its training charged.
	modelRho() float64
	// describeModel fills in its section of the report.
	describeModel(rep *Report)
	// trainedModel is the model, which labels rows after the run too
	// (Labeler.Trained); nil before it is trained.
	trainedModel() learners.Model
}

// TrainsModel reports whether a run of the named mechanism trains one model
// on the sensitive rows that labels every row (a modelMechanism): the model
// a run's Trained returns without a student.
func TrainsModel(name string) bool {
	m, err := lookup(name)
	if err != nil {
		return false
	}
	_, ok := m.(modelMechanism)
	return ok
}

// starter is a voter with work to do once the budget is set and before
// the first query: p are the planned parameters, b the budget.
type starter interface {
	start(l *Labeler, p MechanismParams, agg *aggregator, b budget) error
}

// batchStarter is a voter that draws noise of its own: startBatch gives it
// the stream of the batch whose first row is first.
type batchStarter interface {
	startBatch(l *Labeler, first int64)
}

// orderBounded is an argmax mechanism whose ρ per answer holds on the
// Rényi orders 2..maxOrder only (private-knn: subsampling amplifies there):
// its realized spend is converted on those orders, and pate audit checks
// that they reach the order of the claim.
type orderBounded interface {
	maxOrder(p MechanismParams) int
	auditOrders(rep *Report, res *AuditResult, deltaConv float64)
	// setOrder completes p for a budget (ε, δ) fixed before the run: its
	// defaults and the orders its charge holds on.
	setOrder(p *MechanismParams, eps, delta float64) error
}

// orderBoundedOf returns the named mechanism when its charges hold up to an
// order.
func orderBoundedOf(name string) (orderBounded, bool) {
	m, err := lookup(name)
	if err != nil {
		return nil, false
	}
	ob, ok := m.(orderBounded)
	return ob, ok
}

// registry lists the mechanisms, the default first.
var registry = []Mechanism{confidentGNMax{}, gnmax{}, lnmax{}, privateLearnerMechanism{}, svtMechanism{}, stableEMMechanism{}, dpLogRegMechanism{}, privateKNNMechanism{}, cellHistogramMechanism{}}

// Mechanisms lists the names of the aggregation mechanisms, the default
// first.
var Mechanisms = func() []string {
	names := make([]string, len(registry))
	for i, m := range registry {
		names[i] = m.Name()
	}
	return names
}()

// lookup returns the mechanism of the given name.
func lookup(name string) (Mechanism, error) {
	for _, m := range registry {
		if m.Name() == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("unknown mechanism %q (valid: %v)", name, Mechanisms)
}

// mechanismOf returns the mechanism of a validated configuration.
func mechanismOf(name string) Mechanism {
	m, err := lookup(name)
	if err != nil {
		panic(err) // validate refuses unknown names
	}
	return m
}

// pureEvents returns the mechanism of the given name when it charges a cap
// on pure ε-DP events.
func pureEvents(name string) (eventMechanism, bool) {
	m, err := lookup(name)
	if err != nil {
		return nil, false
	}
	e, ok := m.(eventMechanism)
	return e, ok
}

// needsTeachers reports whether the named mechanism polls teachers.
func needsTeachers(name string) bool {
	m, err := lookup(name)
	if err != nil {
		return true
	}
	_, rows := m.(rowMechanism)
	return !rows
}

// checksThreshold reports whether the named mechanism puts a threshold
// check before each answer.
func checksThreshold(name string) bool {
	m, err := lookup(name)
	if err != nil {
		return false
	}
	am, ok := m.(argmaxMechanism)
	return ok && am.checksThreshold()
}

// IsMechanism reports whether name is a --mechanism value.
func IsMechanism(name string) bool {
	_, err := lookup(name)
	return err == nil
}

// argmaxOf returns the named mechanism when it is a noisy argmax over the
// teachers' votes (the mechanisms pate plan and pate analyze know).
func argmaxOf(name string) (argmaxMechanism, bool) {
	m, err := lookup(name)
	if err != nil {
		return nil, false
	}
	am, ok := m.(argmaxMechanism)
	return am, ok
}

// PlansNoise reports whether pate plan can plan the noise of the named
// mechanism.
func PlansNoise(name string) bool {
	_, ok := argmaxOf(name)
	return ok
}

// ChecksThreshold reports whether the named mechanism puts a threshold
// check before each answer, so that a plan depends on the fraction of
// queries answered.
func ChecksThreshold(name string) bool { return checksThreshold(name) }

// NoiseGiven reports whether p gives all the noise parameters of the named
// mechanism (false for a mechanism pate plan does not know).
func NoiseGiven(name string, p MechanismParams) bool {
	am, ok := argmaxOf(name)
	return ok && len(am.missing(p)) == 0
}

// DescribeNoise shows the noise parameters p of the named mechanism
// ("σ = 40"); "" for a mechanism pate plan does not know.
func DescribeNoise(name string, p MechanismParams) string {
	am, ok := argmaxOf(name)
	if !ok {
		return ""
	}
	return am.describeNoise(p)
}

// AnalyzeAccounting is how pate analyze charges a query of the named
// mechanism; false when it cannot analyse it.
func AnalyzeAccounting(name string) (rdp.Accounting, bool) {
	am, ok := argmaxOf(name)
	if !ok || am.accounting() == rdp.NoAccounting {
		return rdp.NoAccounting, false
	}
	return am.accounting(), true
}

// AnalyzableMechanisms lists the mechanisms pate analyze knows, the
// default first.
func AnalyzableMechanisms() []string {
	var names []string
	for _, m := range registry {
		if am, ok := m.(argmaxMechanism); ok && am.accounting() != rdp.NoAccounting {
			names = append(names, m.Name())
		}
	}
	return names
}

// pureAnswers reports whether each answer of the named mechanism is a pure
// ε-DP event.
func pureAnswers(name string) bool {
	m, err := lookup(name)
	if err != nil {
		return false
	}
	am, ok := m.(argmaxMechanism)
	return ok && am.pureAnswers()
}
