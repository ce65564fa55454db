package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// SchemaVersion is the version of the JSON report's layout.
const SchemaVersion = 1

// Report is what a run releases about itself. Every figure in it is either a
// public parameter, a count of public rows, or a mechanism output; nothing
// computed from the sensitive data outside a mechanism appears here
// (DESIGN.md invariant 4).
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"`
	Version       string `json:"version"`
	Command       string `json:"command"`
	// CommandLine is the run's command line (a seed's value left out).
	CommandLine []string `json:"command_line,omitempty"`

	Mechanism       string           `json:"mechanism"`
	Params          MechanismParams  `json:"parameters"`
	Noise           string           `json:"noise"`
	Seeded          bool             `json:"seeded"`
	Replicable      bool             `json:"replicable"`
	ReplicableVia   string           `json:"replicable_seed,omitempty"` // how the shared seed was shared (never the seed)
	ReplicableGrid  *ReplicableGrid  `json:"replicable_grid,omitempty"`
	Teachers        int              `json:"teachers"`
	Learner         string           `json:"learner"`
	Label           string           `json:"label"`
	Features        []string         `json:"features,omitempty"` // the feature columns the teachers and the student read
	Classes         []string         `json:"classes"`
	ClassesSource   string           `json:"classes_source"`
	PrivacyUnit     string           `json:"privacy_unit"`
	Neighbouring    string           `json:"neighbouring"`
	Guarantee       Guarantee        `json:"guarantee"`
	Spent           Spend            `json:"spent"`
	Queries         Queries          `json:"queries"`
	Budget          BudgetReport     `json:"budget"`
	ClassDiscovery  *ClassDiscovery  `json:"class_discovery,omitempty"`
	Released        map[string]int64 `json:"released_labels"`
	Timeline        []TimePoint      `json:"timeline,omitempty"`
	PlannedQueries  int64            `json:"planned_queries,omitempty"`
	PlannedFraction float64          `json:"planned_answered_fraction,omitempty"`
	Selection       string           `json:"selection,omitempty"`
	Plan            string           `json:"plan,omitempty"` // why the default plan labels this way
	// Decision says how a model that labels every row (dp-logreg, the
	// cells) turns its scores into labels: the plain argmax, or leant
	// towards balanced accuracy (post-processing of the released model).
	Decision string         `json:"decision,omitempty"`
	Sources  *SourceCounts  `json:"sources,omitempty"`
	Student  *StudentReport `json:"student,omitempty"`
	// Labels, in a multi-label run (several --label columns), says what
	// each label column cost and released; the figures above are then the
	// whole run's (label is the columns joined by commas, answered counts
	// rows with at least one label released).
	Labels []LabelReport `json:"labels,omitempty"`
	PureDP *PureDPReport `json:"pure_dp,omitempty"`
	// DPLogReg is the model of a dp-logreg run (package label's dplrmech.go).
	DPLogReg *DPLogRegReport `json:"dp_logreg,omitempty"`
	// CellHistogram is the model of a cell-histogram run (package label's
	// cellhist.go).
	CellHistogram *CellHistogramReport `json:"cell_histogram,omitempty"`
	// Choice is the chooser's noisy count and rule, when the run chose
	// its mechanism (package label's choose.go).
	Choice *ChoiceReport `json:"choice,omitempty"`
	// Build says what ran the mechanism; absent from reports of older
	// versions.
	Build *BuildReport `json:"build,omitempty"`
	// Warnings are what the run warned its user of, from public figures
	// and released ones only (the audit does not read them).
	Warnings []string `json:"warnings,omitempty"`
}

// BuildReport describes the binary and the CPU that made a report: the Go
// version, whether cgo was on and the vote kernel the teachers voted with.
// It says nothing of the data and is no privacy figure: the audit does not
// read it. Runs of different kernels may differ on teachers whose scores
// tie to within float32 rounding (package learners/kernel), and a build
// without cgo only has the pure-Go kernel.
type BuildReport struct {
	GoVersion string `json:"go_version"`
	CGO       bool   `json:"cgo"`
	// VoteKernel is "generic", "avx2", "avx512" or "avx512-vnni".
	VoteKernel string `json:"vote_kernel"`
}

// PureDPReport describes the pure ε-DP events of the pure mechanisms
// (private-learner, svt, stable-em): what one event is, its ε, the cap on
// their number fixed before the run, the events charged, and the two
// readings of the cap, the smaller of which is the guarantee.
type PureDPReport struct {
	Event        string `json:"event"`
	EventEpsilon Float  `json:"event_epsilon"`
	MaxEvents    int64  `json:"max_events"`
	Events       int64  `json:"events"`
	// BasicEpsilon is MaxEvents·EventEpsilon at δ = 0 ("inf" when a
	// Gaussian class discovery is part of the run); ZCDPEpsilon is the
	// conversion of ρ = MaxEvents·EventEpsilon²/2 (+ discovery ρ) at ZCDPDelta.
	BasicEpsilon Float  `json:"basic_composition_epsilon"`
	ZCDPEpsilon  Float  `json:"zcdp_epsilon"`
	ZCDPDelta    Float  `json:"zcdp_delta"`
	Claimed      string `json:"claimed_reading"`
	// StableDelta (svt) is the δ of the event that a query whose majority
	// is not stable is reported stable; it is part of the guarantee's δ.
	StableDelta Float `json:"stable_release_delta,omitempty"`
	// Unstable (svt) counts the queries found unstable (each abstained and
	// ended an instance).
	Unstable int64 `json:"unstable_queries,omitempty"`
	// Beta and Gamma (stable-em): the additive stability of the predictor
	// and the probability of a uniform label.
	Beta  Float  `json:"beta,omitempty"`
	Gamma Float  `json:"gamma,omitempty"`
	Note  string `json:"note,omitempty"`
}

// Guarantee is the (ε, δ) the run claims: the budget of its filter, fixed
// before the run, or without a filter the worst case of the queries it put.
type Guarantee struct {
	Epsilon    Float  `json:"epsilon"`
	Delta      Float  `json:"delta"`
	Rho        Float  `json:"rho"`
	Conversion string `json:"conversion"`
	Basis      string `json:"basis"`
}

// Spend is the realized privacy spend (an odometer reading: information
// beside the guarantee, never a claim of its own). EpsilonImproved is the
// improved RDP conversion at the best order; EpsilonClassic is Mironov's
// classic conversion over the 298 orders of the PATE 2018 scripts, the
// convention of published PATE figures; EpsilonGDP the Gaussian-DP
// composition of the same events, for comparison only: it reads the noise as
// continuous Gaussian, and the trade-off audit finds the discrete Gaussian's
// integer tests below the μ = Δ/σ curve by about 1/(24σ²) relatively, so it
// is not a bound, and nothing is claimed from it.
type Spend struct {
	Rho             Float  `json:"rho"`
	EpsilonImproved Float  `json:"epsilon_improved"`
	OrderImproved   Float  `json:"order_improved"`
	EpsilonClassic  Float  `json:"epsilon_classic"`
	OrderClassic    Float  `json:"order_classic"`
	EpsilonGDP      *Float `json:"epsilon_gdp,omitempty"`
	// EpsilonPure is the basic composition Σ εᵢ (δ = 0) of the pure events
	// charged (pure mechanisms without class discovery); PureEvents
	// their number.
	EpsilonPure     *Float `json:"epsilon_pure,omitempty"`
	PureEvents      int64  `json:"pure_events,omitempty"`
	Delta           Float  `json:"delta"`
	ThresholdChecks int64  `json:"threshold_checks"`
	NoisyArgmaxes   int64  `json:"noisy_argmaxes"`
}

// TimePoint is the state of the run after Rows public rows: the queries
// put, answered, and the realized ρ so far, with its ε (improved
// conversion, computed as the report's spent.epsilon_improved is; absent
// in reports written before). Every figure is a function of the released
// outputs (which rows were answered), so it is public.
type TimePoint struct {
	Rows     int64 `json:"rows"`
	Queries  int64 `json:"queries"`
	Answered int64 `json:"answered"`
	Rho      Float `json:"rho"`
	Epsilon  Float `json:"epsilon,omitempty"`
}

// Queries counts public rows by what happened to them.
type Queries struct {
	PublicRows int64 `json:"public_rows"`
	Seen       int64 `json:"queries"`
	Answered   int64 `json:"answered"`
	Abstained  int64 `json:"abstained"`
	NotAsked   int64 `json:"not_queried"`
}

// BudgetReport says whether the run stopped on its budget.
type BudgetReport struct {
	Epsilon       Float `json:"epsilon,omitempty"`
	Delta         Float `json:"delta,omitempty"`
	Filter        bool  `json:"filter"`
	StoppedOn     bool  `json:"stopped_on_budget"`
	StoppedAtRow  int64 `json:"stopped_at_row,omitempty"`
	MaxQueries    int64 `json:"max_queries,omitempty"`
	RhoForQueries Float `json:"rho_budget,omitempty"`
}

// ClassDiscovery describes the private release of the class set.
type ClassDiscovery struct {
	Sigma     string `json:"sigma"`
	Threshold int64  `json:"threshold"`
	Rho       Float  `json:"rho"`
	Delta     Float  `json:"delta"`
	// Share is the share of the budget's ρ the discovery was planned on,
	// and Rule the public rule that set it from the chooser's noisy count
	// (absent: the fixed share of a run without that count).
	Share Float  `json:"share,omitempty"`
	Rule  string `json:"rule,omitempty"`
}

// Float is a float64 that encodes ±Inf and NaN as the strings "inf", "-inf"
// and "nan" (encoding/json refuses them).
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	switch {
	case math.IsInf(v, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(v, -1):
		return []byte(`"-inf"`), nil
	case math.IsNaN(v):
		return []byte(`"nan"`), nil
	}
	return json.Marshal(v)
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"inf"`:
		*f = Float(math.Inf(1))
		return nil
	case `"-inf"`:
		*f = Float(math.Inf(-1))
		return nil
	case `"nan"`:
		*f = Float(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// ReplicableGrid is the replicable rounding of a --replicable run: the
// widths, in votes, of the grids the noisy top vote (Check, Confident-GNMax)
// and the noisy counts (Answer) are rounded to.
type ReplicableGrid struct {
	Check  int64 `json:"check,omitempty"`
	Answer int64 `json:"answer,omitempty"`
}

// DPLogRegReport is the report's dp_logreg section: everything the cost of
// the model depends on. Every figure is public (a constant of the rule, a
// function of the budget and of public shapes, or a function of the noisy
// count, which is a mechanism output).
type DPLogRegReport struct {
	Features   int    `json:"features"`      // encoded features (public encoder)
	Dims       int    `json:"released_dims"` // coordinates of one released sum: classes·(features+1)
	CountSigma string `json:"count_sigma"`   // σc of the noisy row count
	CountRho   Float  `json:"count_rho"`     // 1/(2σc²)
	// CountSource is "choice" when the count is the chooser's (charged in
	// the choice section; CountRho is then 0 and Rho the steps' alone);
	// empty when dp-logreg released its own.
	CountSource string `json:"count_source,omitempty"`
	Steps       int    `json:"steps"`            // gradient releases
	SensSq      int64  `json:"sensitivity_sq"`   // squared ℓ2 bound of one row's rounded gradient
	Sigma       string `json:"sigma"`            // σ of every coordinate of every step
	StepsRho    Float  `json:"steps_rho"`        // Steps·SensSq/(2σ²)
	Rho         Float  `json:"rho"`              // CountRho + StepsRho
	Clip        Float  `json:"clip"`             // ℓ2 clip of one row's gradient
	Scale       Float  `json:"integer_scale"`    // γ: the clipped gradient is scaled by it before rounding
	Beta        Float  `json:"rounding_beta"`    // KLS21's β of the norm bound SensSq
	LearnRate   Float  `json:"learning_rate"`    // step size
	RowNorm     Float  `json:"row_norm"`         // each encoded row scaled to ℓ2 norm ≤ it
	CountShare  Float  `json:"count_share"`      // share of the budget planned for the count
	Rule        string `json:"rule"`             // how the parameters were chosen
	Noise       string `json:"noise_per_step"`   // what one step releases
	Rounding    string `json:"integer_rounding"` // how a gradient becomes integers
}

// CellHistogramReport is the report's cell_histogram section: the public
// cells, the noisy count they were planned from, and the one noisy release
// of the cell × class table.
type CellHistogramReport struct {
	Features     int    `json:"features"`               // encoded features (public encoder)
	Cells        int    `json:"cells"`                  // centres fitted on public rows
	PlannedCells int    `json:"planned_cells"`          // the rule's number of cells
	Nearest      int    `json:"nearest"`                // cells summed to score a public row of the sample
	SmoothK      int    `json:"smooth_k"`               // scored public rows whose summed scores label a row
	NoisyRows    int64  `json:"noisy_rows"`             // n̂ the cells were planned from
	CountSigma   string `json:"count_sigma"`            // σc of the noisy row count
	CountRho     Float  `json:"count_rho"`              // 1/(2σc²); 0 when the count is the choice's
	CountSource  string `json:"count_source,omitempty"` // "choice" when the chooser released the count
	Sigma        string `json:"sigma"`                  // σ of every entry of the table
	TableRho     Float  `json:"table_rho"`              // 1/(2σ²): one row moves one entry by 1
	Rho          Float  `json:"rho"`                    // CountRho + TableRho
	CountShare   Float  `json:"count_share"`            // share of the budget planned for the count
	Rule         string `json:"rule"`                   // how cells and nearest were chosen
	Noise        string `json:"noise"`                  // what the release is
}

// ChoiceReport is the report's choice section. Every figure is public: the
// budget's, the declared shapes', or the noisy count (a mechanism output).
type ChoiceReport struct {
	Chosen     string `json:"chosen"`      // the mechanism chosen
	CountSigma string `json:"count_sigma"` // σc of the noisy row count
	CountRho   Float  `json:"count_rho"`   // 1/(2σc²)
	CountShare Float  `json:"count_share"` // share of the budget σc is planned for
	NoisyRows  int64  `json:"noisy_rows"`  // n̂ as released
	Teachers   int    `json:"teachers"`    // T of the rule
	Classes    int    `json:"classes"`     // C of the rule (declared or discovered)
	Threshold  Float  `json:"threshold"`   // rows per class and teacher that keep PATE
	// Student is the student PATE would train (an input of the rule:
	// a linear one cannot beat dp-logreg); "" in reports of the first rule.
	Student string `json:"student,omitempty"`
	// Features is the encoded width (public: the encoder's), an input of
	// the cell-histogram candidate; 0 in reports of rules without it.
	Features int `json:"features,omitempty"`
	// OneHotFeatures are how many of the encoded features are one-hot
	// columns of string features (the current rule reads it).
	OneHotFeatures int    `json:"one_hot_features,omitempty"`
	Rule           string `json:"rule"`
	Why            string `json:"why"`
	// TeacherRule is the rule that set Teachers from n̂ when the run left
	// the number of teachers to pate, and BaseTeachers the least it gives;
	// "" when the number was fixed (every report before the rule).
	TeacherRule  string `json:"teacher_rule,omitempty"`
	BaseTeachers int    `json:"base_teachers,omitempty"`
	// Candidates are the ways of labelling the rule weighed, in its order
	// of preference, each with whether it was eligible and why.
	Candidates []ChoiceCandidate `json:"candidates,omitempty"`
}

// ChoiceCandidate is one way of labelling the chooser weighed.
type ChoiceCandidate struct {
	Mechanism string `json:"mechanism"`
	Student   string `json:"student,omitempty"`
	Eligible  bool   `json:"eligible"`
	Why       string `json:"why"`
}

// LabelReport is what one label column of a multi-label run cost and
// released. Every figure is a public parameter, a count of released
// outputs, or a mechanism output.
type LabelReport struct {
	Label           string           `json:"label"`
	Weight          float64          `json:"weight"` // its share of the budget, wᵢ/Σw
	Classes         []string         `json:"classes"`
	ClassesSource   string           `json:"classes_source"`
	ClassDiscovery  *ClassDiscovery  `json:"class_discovery,omitempty"`
	Params          MechanismParams  `json:"parameters"`
	RhoPlanned      Float            `json:"rho_planned,omitempty"` // the ρ its noise was planned for
	Rho             Float            `json:"rho"`                   // realized ρ of its events (class discovery excluded)
	Epsilon         Float            `json:"epsilon"`               // its ρ (discovery included) alone, converted at the run's δ, for comparison
	ThresholdChecks int64            `json:"threshold_checks"`
	NoisyArgmaxes   int64            `json:"noisy_argmaxes"`
	Answered        int64            `json:"answered"`
	Abstained       int64            `json:"abstained"`
	Released        map[string]int64 `json:"released_labels"`
}

// MechanismParams are the noise parameters of a run, as exact decimals.
type MechanismParams struct {
	Sigma        string `json:"sigma,omitempty"`         // GNMax noise σ
	Threshold    int64  `json:"threshold,omitempty"`     // Confident-GNMax T
	Sigma1       string `json:"sigma1,omitempty"`        // Confident-GNMax threshold noise σ1
	Sigma2       string `json:"sigma2,omitempty"`        // Confident-GNMax argmax noise σ2
	LaplaceScale string `json:"laplace_scale,omitempty"` // LNMax noise scale b

	// The pure ε-DP mechanisms' parameters (package label's pure.go).
	EMEpsilon    string `json:"em_epsilon,omitempty"`    // private-learner, stable-em: ε of the exponential mechanism
	Bins         int    `json:"bins,omitempty"`          // private-learner: stump thresholds at public quantiles
	SubsetRate   string `json:"subset_rate,omitempty"`   // stable-em: probability q that a row is in S1
	Gamma        string `json:"gamma,omitempty"`         // stable-em: probability γ of a uniform label
	SVTEpsilon0  string `json:"svt_epsilon0,omitempty"`  // svt: ε of one sparse-vector instance
	SVTCutoff    int64  `json:"svt_cutoff,omitempty"`    // svt: instances (unstable answers) planned for
	SVTThreshold int64  `json:"svt_threshold,omitempty"` // svt: distance-to-instability threshold w

	// private-knn (package label's privknn.go); Sigma is its noise.
	KNNK       int    `json:"knn_k,omitempty"`       // neighbours that vote
	SampleRate string `json:"sample_rate,omitempty"` // probability γ that a sensitive row is in a query's subsample
	MaxOrder   int    `json:"max_order,omitempty"`   // the charge holds at the Rényi orders 2..MaxOrder
}

// SourceCounts counts output rows by the source of their label.
type SourceCounts struct {
	Teachers  int64 `json:"teachers"`
	Student   int64 `json:"student"`
	Abstained int64 `json:"abstained"`
}

// StudentReport describes the student: a model trained on the released
// labels only (post-processing, no privacy cost) that labels the rows the
// teachers did not.
type StudentReport struct {
	Learner      string         `json:"learner"`
	TrainedOn    int64          `json:"trained_on"`
	SelfTraining *SelfTrainInfo `json:"self_training,omitempty"`
}

// SelfTrainInfo describes self-training: the unlabelled public rows the
// student looked at, and those it pseudo-labelled (probability ≥
// SelfTrainConfidence) before it was refitted once.
type SelfTrainInfo struct {
	Pool           int64   `json:"pool"`
	PseudoLabelled int64   `json:"pseudo_labelled"`
	Confidence     float64 `json:"confidence"`
}

// Parse decodes a JSON report and checks that it is one this version of
// pate can audit: a well-formed pate report of a known schema version.
func Parse(b []byte) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(b)))
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if dec.More() {
		return nil, errors.New("report: trailing data after the JSON object")
	}
	if rep.Tool != "pate" {
		return nil, fmt.Errorf("report: tool %q, not a pate report", rep.Tool)
	}
	if rep.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("report: unknown schema_version %d (this pate reads %d)", rep.SchemaVersion, SchemaVersion)
	}
	if rep.Command != "label" {
		return nil, fmt.Errorf("report: command %q cannot be audited (only label)", rep.Command)
	}
	return &rep, nil
}
