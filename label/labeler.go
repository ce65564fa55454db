package label

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/pate-tool/pate/label/noise"
	"github.com/pate-tool/pate/learners"
)

// SourceColumn is the name of the output column that says where each
// row's label came from.
const SourceColumn = "pate_source"

// Values of the SourceColumn.
const (
	SourceTeachers  = "teachers"
	SourceStudent   = "student"
	SourceAbstained = "abstained"
)

// Labeler is a validated labelling run, ready to Run.
type Labeler struct {
	cfg         Config
	sensitive   *arrow.Schema
	public      *arrow.Schema
	labelField  arrow.Field   // the first label column
	labelFields []arrow.Field // every label column (New only; aggregate mode has labelField alone)
	features    []string
	keep        []int // public column indices copied to the output
	out         *arrow.Schema

	votes      *arrow.Schema // aggregate mode: the vote file's schema
	numClasses int           // aggregate mode: classes in the votes
	listVotes  bool          // aggregate mode: predictions in one list column

	trained *Trained // what labels rows after the last Run (see Trained)

	// teachersFrom is the teacher ensemble RunTeachers polls
	// (NewFromTeachers); nil for a run that trains its own.
	teachersFrom *TeacherFile

	// The histogram learners' split edges, fitted by Run on the public
	// head (invariant 2); nil when no learner of the run needs them.
	bins *learners.Bins

	// The chooser's release (choose.go): nil when the run made no choice.
	choice    *ChoiceReport
	choiceRho float64
	planned   *Config // the configuration before the choice switched it
	// teacherBase is the base of the teacher rule when the run grew its
	// teachers from the chooser's count (Config.GrowTeachers); 0 otherwise.
	teacherBase int
	chosen      *teacherData // the class sets the choice of dp-logreg was made with
	// The choice's count and the noise stream it was drawn from: a chosen
	// dp-logreg takes both as its own step 1 and goes on drawing from the
	// stream, so that it trains as --mechanism dp-logreg would.
	choiceCount *DPLogRegCount
	choiceNoise noise.Source
	// count is the chooser's noisy row count when it was released before
	// the class discovery (the discovery's share of the budget is a rule
	// on it); nil otherwise.
	count *choiceCountRelease

	// The warnings of the last Run that the report keeps (public or
	// released figures only).
	warnings []string
}

// New checks cfg against the two schemas and returns a Labeler. Every error
// it returns wraps ErrInvalidInput and names the column or parameter at
// fault.
func New(cfg Config, sensitive, public *arrow.Schema) (*Labeler, error) {
	if err := validate(&cfg); err != nil {
		return nil, err
	}
	if err := validateStudent(&cfg); err != nil {
		return nil, err
	}
	if err := validateLabels(&cfg); err != nil {
		return nil, err
	}
	if err := validateReplicable(&cfg); err != nil {
		return nil, err
	}
	if err := validateChoice(&cfg); err != nil {
		return nil, err
	}
	if cfg.Delta > DeltaSaneBound {
		cfg.warn("δ = %g is above %g: δ is the chance that the guarantee fails outright (a person's rows "+
			"may then be exposed), so it must stay well below 1 / the number of people (1e-5 suits up to about "+
			"10,000 people); lower --delta", cfg.Delta, DeltaSaneBound)
	}
	l := &Labeler{cfg: cfg, sensitive: sensitive, public: public}
	for _, name := range cfg.Labels {
		lf, _, err := fieldByName(sensitive, name)
		if err != nil {
			return nil, invalid("%s: label column %q (--label): %v; its columns are %s", cfg.sens(), name, err, strings.Join(columnNames(sensitive), ", "))
		}
		lf.Type = releasedLabelType(lf.Type)
		if cfg.LabelType != nil && !arrow.TypeEqual(lf.Type, cfg.LabelType) {
			return nil, invalid("%s: label column %q has type %s, but its declared type is %s (--label-type)", cfg.sens(), name, lf.Type, cfg.LabelType)
		}
		if !labelTypeSupported(lf.Type) {
			way := ""
			if arrow.IsFloating(lf.Type.ID()) {
				// pandas makes an integer column with a missing value
				// float; JavaScript numbers are float64.
				way = fmt.Sprintf(" (a class number stored as a float: cast the column to an integer where the file is written, e.g. DuckDB %s::INTEGER, Polars pl.col(%q).cast(pl.Int64), pandas .astype(\"Int64\"))", name, name)
			}
			return nil, invalid("%s: label column %q has type %s; labels must be integers, strings or booleans%s", cfg.sens(), name, lf.Type, way)
		}
		l.labelFields = append(l.labelFields, lf)
	}
	lf := l.labelFields[0]
	l.labelField = lf
	if cfg.PrivacyUnit != "" {
		if slices.Contains(cfg.Labels, cfg.PrivacyUnit) {
			return nil, paramError("privacy-unit", " %q is a label column", cfg.PrivacyUnit)
		}
		if _, _, err := fieldByName(sensitive, cfg.PrivacyUnit); err != nil {
			return nil, invalid("%s: privacy-unit column %q (--privacy-unit): %v", cfg.sens(), cfg.PrivacyUnit, err)
		}
	}
	if cfg.Classes != nil {
		if len(cfg.Classes) < 2 {
			return nil, paramError("classes", " needs at least two classes, got %d", len(cfg.Classes))
		}
		if _, err := newClassSet(lf.Type, cfg.Classes); err != nil {
			return nil, paramError("classes", ": %v", err)
		}
	}

	// Features: each present once in both files, of the same kind.
	feats := cfg.Features
	if feats != nil && len(cfg.Exclude) > 0 {
		return nil, paramError("exclude", " leaves columns out of the default feature set: with %v, list only the features", ParamName("features"))
	}
	for _, name := range cfg.Exclude {
		if _, _, err := fieldByName(sensitive, name); err != nil {
			return nil, invalid("%s: --exclude %q: %v", cfg.sens(), name, err)
		}
	}
	if feats == nil {
		for _, f := range sensitive.Fields() {
			if !slices.Contains(cfg.Labels, f.Name) && f.Name != cfg.PrivacyUnit && !slices.Contains(cfg.Exclude, f.Name) {
				feats = append(feats, f.Name)
			}
		}
	}
	if len(feats) == 0 {
		return nil, invalid("%s: no feature columns besides the label (and the columns --exclude leaves out)", cfg.sens())
	}
	for _, name := range feats {
		if slices.Contains(cfg.Labels, name) {
			return nil, paramError("features", ": %q is a label column", name)
		}
		sf, _, err := fieldByName(sensitive, name)
		if err != nil {
			return nil, invalid("%s: feature column %q (--features): %v", cfg.sens(), name, err)
		}
		pf, _, err := fieldByName(public, name)
		if err != nil {
			if errors.Is(err, errNoField) {
				return nil, invalid("%s has no feature column %q (%s has it; choose features with --features)", cfg.pub(), name, cfg.sens())
			}
			return nil, invalid("%s: feature column %q: %v", cfg.pub(), name, err)
		}
		if ks, kp := kind(sf.Type), kind(pf.Type); ks != kp {
			return nil, invalid("feature column %q is %s in %s but %s in %s", name, sf.Type, cfg.sens(), pf.Type, cfg.pub())
		}
	}
	l.features = feats

	// Output columns: the kept public columns, the labels, the source.
	if err := l.selectKept(public); err != nil {
		return nil, err
	}
	fields := make([]arrow.Field, 0, len(l.keep)+len(l.labelFields)+1)
	for _, i := range l.keep {
		fields = append(fields, public.Field(i))
	}
	for _, f := range l.labelFields {
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: SourceColumn, Type: arrow.BinaryTypes.String, Nullable: false})
	l.out = arrow.NewSchema(fields, nil)
	l.cfg = cfg
	return l, nil
}

// PublicColumns returns the public columns a Run reads (the features and
// the kept columns), in the public schema's order, or nil when it reads
// them all.
func (l *Labeler) PublicColumns() []string {
	used := make([]bool, l.public.NumFields())
	for _, i := range l.keep {
		used[i] = true
	}
	for _, name := range l.features {
		_, i, err := fieldByName(l.public, name)
		if err != nil {
			return nil // New has checked them: not reached
		}
		used[i] = true
	}
	var cols []string
	for i, u := range used {
		if u {
			cols = append(cols, l.public.Field(i).Name)
		}
	}
	if len(cols) == len(used) {
		return nil
	}
	return cols
}

// UsePublic makes Run read public batches of schema public, the public
// schema New was given narrowed to PublicColumns (the reader leaves the
// other columns out).
func (l *Labeler) UsePublic(public *arrow.Schema) error {
	keep := make([]int, len(l.keep))
	for j, i := range l.keep {
		_, k, err := fieldByName(public, l.public.Field(i).Name)
		if err != nil {
			return invalid("%s: column %q: %v", l.cfg.pub(), l.public.Field(i).Name, err)
		}
		keep[j] = k
	}
	for _, name := range l.features {
		f, _, err := fieldByName(public, name)
		if err != nil {
			return invalid("%s: feature column %q: %v", l.cfg.pub(), name, err)
		}
		old, _, _ := fieldByName(l.public, name)
		if !arrow.TypeEqual(f.Type, old.Type) {
			return invalid("%s: feature column %q: type %s, was %s", l.cfg.pub(), name, f.Type, old.Type)
		}
	}
	l.public, l.keep = public, keep
	return nil
}

// validate checks and completes the parameters common to New and
// NewAggregate.
func validate(cfg *Config) error {
	if cfg.Mechanism == "" {
		cfg.Mechanism = MechanismConfidentGNMax
	}
	if !slices.Contains(Mechanisms, cfg.Mechanism) {
		return paramError("mechanism", " %q is not one of %s", cfg.Mechanism, strings.Join(Mechanisms, ", "))
	}
	if cfg.Teachers < 1 {
		return paramError("teachers", " must be at least 1, got %d", cfg.Teachers)
	}
	if cfg.Epsilon < 0 {
		return paramError("epsilon", " must be positive, got %g", cfg.Epsilon)
	}
	if !(cfg.Delta > 0 && cfg.Delta < 1) {
		return paramError("delta", " must be in (0, 1), got %g", cfg.Delta)
	}
	if cfg.MaxQueries < 0 {
		return paramError("max-queries", " must not be negative, got %d", cfg.MaxQueries)
	}
	if cfg.BatchSize <= 0 {
		return paramError("batch-size", " must be positive, got %d", cfg.BatchSize)
	}
	if cfg.AnsweredFraction == 0 {
		cfg.AnsweredFraction = DefaultAnsweredFraction
	}
	if !(cfg.AnsweredFraction > 0 && cfg.AnsweredFraction <= 1) {
		return paramError("answered-fraction", " must be in (0, 1], got %g", cfg.AnsweredFraction)
	}
	if cfg.SigmaRatio == 0 {
		cfg.SigmaRatio = DefaultSigmaRatio
	}
	if !(cfg.SigmaRatio > 0) {
		return paramError("sigma-ratio", " must be positive, got %g", cfg.SigmaRatio)
	}
	if cfg.Allocator == nil {
		cfg.Allocator = memory.DefaultAllocator
	}
	return mechanismOf(cfg.Mechanism).validate(cfg)
}

// selectKept chooses the public columns copied to the output.
func (l *Labeler) selectKept(public *arrow.Schema) error {
	cfg := &l.cfg
	if cfg.Keep == nil {
		for i, f := range public.Fields() {
			if slices.Contains(l.labelNames(), f.Name) {
				return invalid("%s has a column named like the label column %q; leave it out with --keep", cfg.pub(), f.Name)
			}
			if f.Name == SourceColumn {
				return invalid("%s has a column named %q, which pate writes; leave it out with --keep", cfg.pub(), SourceColumn)
			}
			l.keep = append(l.keep, i)
		}
	} else {
		for _, name := range cfg.Keep {
			_, i, err := fieldByName(public, name)
			if err != nil {
				return invalid("%s: column %q (--keep): %v", cfg.pub(), name, err)
			}
			if slices.Contains(l.labelNames(), name) || name == SourceColumn {
				return paramError("keep", " %q: that name is taken by an output column", name)
			}
			if slices.Contains(l.keep, i) {
				return paramError("keep", " names %q twice", name)
			}
			l.keep = append(l.keep, i)
		}
	}
	return nil
}

// maxLabels bounds the label columns of one run (each has its own noise
// streams, keyed in the low byte of a seeded stream id).
const maxLabels = 64

// validateLabels completes cfg.Labels from cfg.Label and checks the label
// list and its weights.
func validateLabels(cfg *Config) error {
	if len(cfg.Labels) == 0 {
		if cfg.Label == "" {
			return paramError("label", ": no label column given")
		}
		cfg.Labels = []string{cfg.Label}
	}
	if len(cfg.Labels) > maxLabels {
		return paramError("label", ": %d label columns, at most %d", len(cfg.Labels), maxLabels)
	}
	for i, name := range cfg.Labels {
		if name == "" {
			return paramError("label", ": an empty column name")
		}
		if slices.Contains(cfg.Labels[:i], name) {
			return paramError("label", " %q is given twice", name)
		}
	}
	cfg.Label = cfg.Labels[0]
	if cfg.LabelWeights != nil {
		if cfg.Epsilon == 0 {
			return paramError("label-weights", " splits the %v budget; without %v the noise is explicit and the same for every label column", ParamName("epsilon"), ParamName("epsilon"))
		}
		if len(cfg.LabelWeights) != len(cfg.Labels) {
			return paramError("label-weights", " has %d weights for %d label columns", len(cfg.LabelWeights), len(cfg.Labels))
		}
		for _, w := range cfg.LabelWeights {
			if !(w > 0) || math.IsInf(w, 0) {
				return paramError("label-weights", ": each weight must be a positive finite number, got %g", w)
			}
		}
	}
	if len(cfg.Labels) > 1 {
		if cfg.Classes != nil {
			return paramError("classes", " declares the classes of one label column; with several %v columns each column's classes are released privately (leave out %v)", ParamName("label"), ParamName("classes"))
		}
		if cfg.Student != "" {
			return paramError("student", " is not supported with several %v columns yet (run one pate label per label to get a student)", ParamName("label"))
		}
	}
	return nil
}

// labelNames are the label columns, in order.
func (l *Labeler) labelNames() []string {
	if len(l.cfg.Labels) > 0 {
		return l.cfg.Labels
	}
	return []string{l.cfg.Label}
}

// multi reports whether the run labels several columns.
func (l *Labeler) multi() bool { return len(l.labelFields) > 1 }

// OutputSchema is the schema of the labelled batches, without metadata.
func (l *Labeler) OutputSchema() *arrow.Schema { return l.out }

// Features are the feature columns the teachers learn from.
func (l *Labeler) Features() []string { return l.features }

// Config is the run's configuration with defaults filled in.
func (l *Labeler) Config() Config { return l.cfg }

// errorf wraps err with context, keeping sentinels visible to errors.Is.
func errorf(err error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), err)
}
