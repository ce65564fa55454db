package label

import (
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/learners"
)

// ErrInvalidInput marks errors caused by the user's data or parameters (a
// missing column, a type mismatch, too few privacy units, bad noise
// parameters). A command line maps it to its "bad usage or input" exit code.
var ErrInvalidInput = errors.New("invalid input")

// ErrBudgetRefused is returned when the budget cannot pay for even one query.
var ErrBudgetRefused = errors.New("privacy budget refused")

// AbortedError is the error of a run that stopped after a mechanism had
// run on the sensitive data (the private class discovery, say): the
// failure itself may reveal that mechanism's output, so what it cost is
// spent even though no label was released. A ledger charges Rho for it.
type AbortedError struct {
	Err error
	Rho float64 // zCDP ρ spent before the run stopped
}

func (e *AbortedError) Error() string { return e.Err.Error() }
func (e *AbortedError) Unwrap() error { return e.Err }

// SpentBefore returns the ρ a run that failed with err had spent on the
// sensitive data before it stopped: 0 when it stopped before any mechanism
// ran.
func SpentBefore(err error) float64 {
	var a *AbortedError
	if errors.As(err, &a) {
		return a.Rho
	}
	return 0
}

// spentBefore wraps err, unless it already says what it spent, with the ρ
// spent so far.
func spentBefore(err error, rho float64) error {
	var a *AbortedError
	if err == nil || rho <= 0 || errors.As(err, &a) {
		return err
	}
	return &AbortedError{Err: err, Rho: rho}
}

// invalid is an error of the input or parameters: format and args as for
// fmt.Errorf (%w keeps a cause, a ParamError say, in the chain).
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidInput}, args...)...)
}

// Config is one labelling run's parameters.
type Config struct {
	Label string // label column of the sensitive data (the first of Labels)
	// Labels are every label column, in order (one multi-label
	// query per row with joint accounting); nil: Label alone. New sets it.
	Labels []string
	// LabelWeights split the budget over Labels (label i gets the fraction
	// wᵢ/Σw of the ρ left after class discovery); nil: equal shares.
	LabelWeights   []float64
	Classes        []string // public class set; nil: discovered privately from the sensitive data
	Features       []string // nil: every sensitive column but the label and the privacy unit
	Exclude        []string // columns left out of the default Features (only without Features)
	Keep           []string // public columns copied to the output; nil: all
	PrivacyUnit    string   // "" : one row is one privacy unit
	Teachers       int
	Learner        string
	LearnerOptions learners.LearnerOptions
	EncoderOptions learners.EncoderOptions

	Mechanism        string
	Params           MechanismParams // explicit noise; empty fields are planned from the budget
	Epsilon          float64         // 0: no budget filter (the noise must then be explicit)
	Delta            float64
	MaxQueries       int64   // 0: every public row is a query
	PublicRows       int64   // number of public rows if known, else -1
	AnsweredFraction float64 // Confident-GNMax planning; 0: DefaultAnsweredFraction
	SigmaRatio       float64 // Confident-GNMax planning; 0: DefaultSigmaRatio

	// The student: a model trained on the released labels when
	// the queries end, which labels every row the teachers did not.
	Student   string // "" : no student; else a learner name (logreg, nb, tree)
	SelfTrain bool   // improve the student by self-training on unlabelled public rows
	Select    string // which rows are queries: SelectFirst (""), SelectRandom or SelectUncertain
	// Plan says why the run labels the way it does, when the default plan
	// (ChoosePlan) chose any of it; the report records it.
	Plan string
	// Choose asks the run to choose between the planned PATE + student and
	// dp-logreg by a noisy row count of the sensitive data (choose.go).
	// The caller sets it only when the plan is left to pate: one label
	// column, declared classes, a budget, a file of known length, no
	// mechanism, student, selection or noise of the user's.
	Choose bool
	// GrowTeachers (with Choose) leaves the number of teachers to pate:
	// Teachers is the base of the teacher rule (teachercount.go), which
	// grows it from the chooser's noisy row count.
	GrowTeachers bool
	// CommandLine is the command line of the run, recorded in its report
	// (the caller leaves out what must stay secret, such as a seed).
	CommandLine []string

	VotesFormat string // NewAggregate: VotesCounts or VotesPredictions
	NumClasses  int    // NewAggregate with predictions: the number of classes
	VotesName   string // how errors name the vote file

	SensitiveName string // how errors name the sensitive input (a file name)
	PublicName    string // how errors name the public input

	Seed      *uint64 // nil: noise and partition keys from a cryptographically secure source
	BatchSize int
	Allocator memory.Allocator
	Version   string

	// Replicable: the aggregation's noise and a replicable
	// rounding drawn from a key shared with other curators (replicable.go).
	Replicable *Replicable

	// Progress, when set, is called after every public batch. Its Answered
	// and EpsilonSpent derive from the noise drawn so far: a caller that
	// shows them and then stops the run (cancels its context) has released
	// them, and must charge what the run had spent, which SpentBefore reads
	// from Run's error.
	Progress func(Progress)
	// Phase, when set, is called as the run moves through the stages
	// before and around the labelling (reading, training, releasing a
	// model), and along a stage that counts public steps (dp-logreg's
	// gradient steps), so that a display
	// shows a long run working from its first second. A Phase carries
	// nothing derived from the sensitive values: its names are fixed and
	// its counts are planned ones.
	Phase func(Phase)
	// Warn, when set, receives warnings meant for the local user (stderr).
	// A warning never depends on the sensitive values.
	Warn func(string)
	// Diagnose, when set, receives statistics of the sensitive data that no
	// mechanism protects (how many rows were dropped, how many teachers got
	// no rows): a local diagnostic for the data owner, NOT PRIVATE. Nil (the
	// default) keeps them in the process.
	Diagnose func(string)

	// LabelType, when set, is the declared type of every label column: the
	// sensitive schema must have it (New refuses it otherwise), so that the
	// output's label type is a declaration, not a reading of the data.
	LabelType arrow.DataType
}

// Progress is a running count of what the labelling has done so far.
type Progress struct {
	Rows, Answered, Abstained int64
	EpsilonSpent              float64
	// Public says that these figures derive from no noise: a DP model
	// (dp-logreg, cell-histogram) labels every row, and its ε was fixed
	// before the run. Showing them releases nothing; otherwise Answered
	// and EpsilonSpent derive from the noise drawn.
	Public bool
}

// The stages a run reports to Config.Phase, in order (a run passes through
// those of its mechanism).
const (
	PhaseReading   = "reading"
	PhaseTraining  = "training"
	PhaseDPLogReg  = "dp-logreg gradient steps"
	PhaseCells     = "fitting the cells"
	PhaseLabelling = "labelling"
)

// Phase is a stage of a run: Name, and when the stage counts planned steps,
// Done of Total (both 0 otherwise).
type Phase struct {
	Name        string
	Done, Total int
}

// phase reports a stage to Config.Phase, when set.
func (c *Config) phase(name string, done, total int) {
	if c != nil && c.Phase != nil {
		c.Phase(Phase{Name: name, Done: done, Total: total})
	}
}

func (c *Config) sens() string {
	if c.SensitiveName != "" {
		return c.SensitiveName
	}
	return "sensitive data"
}

func (c *Config) pub() string {
	if c.PublicName != "" {
		return c.PublicName
	}
	return "public data"
}

func (c *Config) votesName() string {
	if c.VotesName != "" {
		return c.VotesName
	}
	return "the vote file"
}

func (c *Config) warn(format string, args ...any) {
	if c.Warn != nil {
		c.Warn(fmt.Sprintf(format, args...))
	}
}

// diagnose sends a not-private statistic of the sensitive data to
// Diagnose, if set. Anything that depends on sensitive values outside a
// mechanism (a count, a row index) goes here, never to warn or an error.
func (c *Config) diagnose(format string, args ...any) {
	if c.Diagnose != nil {
		c.Diagnose(fmt.Sprintf(format, args...))
	}
}

// kind groups Arrow types into what the encoder treats alike.
func kind(t arrow.DataType) string {
	if k, err := learners.KindOf(t); err == nil {
		return string(k)
	}
	return t.String()
}

func fieldByName(s *arrow.Schema, name string) (arrow.Field, int, error) {
	idx := s.FieldIndices(name)
	switch len(idx) {
	case 0:
		return arrow.Field{}, -1, errNoField
	case 1:
		return s.Field(idx[0]), idx[0], nil
	}
	return arrow.Field{}, -1, errDupField
}

var (
	errNoField  = errors.New("no such column")
	errDupField = errors.New("column name appears more than once")
)

func columnNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i := range out {
		out[i] = s.Field(i).Name
	}
	return out
}
