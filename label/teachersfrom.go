package label

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"
)

// TeachersFromPlan is what the plan line of a run whose teachers came from
// a file says.
const TeachersFromPlan = "the teachers came from a teacher ensemble file (trained outside pate label on the sensitive data, their number fixed there)"

// NewFromTeachers is New for a run that polls the teachers of an ensemble
// file (RunTeachers) instead of training its own: the label column, the
// classes, the features, the privacy unit, the learner and the number of
// teachers are the file's. A label, classes or label type cfg gives must
// be the file's. The run's mechanism must poll teachers, and it cannot
// choose a mechanism or grow its teachers (both need a noisy count of the
// sensitive rows, which it does not read).
func NewFromTeachers(cfg Config, tf *TeacherFile, public *arrow.Schema) (*Labeler, error) {
	man := tf.Manifest()
	lf := tf.LabelField()
	if len(cfg.Labels) > 1 || cfg.Label != "" && cfg.Label != man.Label || len(cfg.Labels) == 1 && cfg.Labels[0] != man.Label {
		return nil, paramError("label", ": the teachers were trained for the label column %q", man.Label)
	}
	if cfg.LabelType != nil && !arrow.TypeEqual(cfg.LabelType, lf.Type) {
		return nil, paramError("label-type", ": the teachers' label column is of type %s", lf.Type)
	}
	if cfg.Classes != nil {
		cs, err := newClassSet(lf.Type, cfg.Classes)
		if err != nil {
			return nil, paramError("classes", ": %v", err)
		}
		if !slices.Equal(cs.values, man.Classes) {
			return nil, paramError("classes", ": the teachers were trained for the classes %v", man.Classes)
		}
	}
	if cfg.Features != nil && !slices.Equal(cfg.Features, man.Features) || len(cfg.Exclude) > 0 {
		return nil, paramError("features", ": the teachers were trained on the features %v", man.Features)
	}
	if cfg.PrivacyUnit != "" && cfg.PrivacyUnit != man.PrivacyUnit {
		return nil, paramError("privacy-unit", ": the teachers were partitioned by %q", man.PrivacyUnit)
	}
	cfg.Label, cfg.Labels, cfg.Classes, cfg.Features = man.Label, nil, slices.Clone(man.Classes), slices.Clone(man.Features)
	cfg.PrivacyUnit, cfg.Teachers, cfg.Learner = man.PrivacyUnit, man.Teachers, man.Learner
	if cfg.Plan == "" {
		cfg.Plan = TeachersFromPlan
	} else {
		cfg.Plan += "; " + TeachersFromPlan
	}
	// The sensitive schema New checks the run against: the features as the
	// public data has them, the label, the unit.
	fields := make([]arrow.Field, 0, len(man.Features)+2)
	for _, name := range man.Features {
		f, _, err := fieldByName(public, name)
		if err != nil {
			return nil, invalid("%s: feature column %q of the teachers: %v", cfg.pub(), name, err)
		}
		fields = append(fields, f)
	}
	fields = append(fields, lf)
	if man.PrivacyUnit != "" {
		fields = append(fields, arrow.Field{Name: man.PrivacyUnit, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	l, err := New(cfg, arrow.NewSchema(fields, nil), public)
	if err != nil {
		return nil, err
	}
	if err := l.teachersElsewhere(); err != nil {
		return nil, err
	}
	if err := man.Encoder.CheckSchema(public); err != nil {
		return nil, invalid("%s: %v", cfg.pub(), err)
	}
	l.teachersFrom = tf
	return l, nil
}

// RunTeachers is Run with the teachers of the ensemble file NewFromTeachers
// was given: no sensitive data is read, and the teachers' votes are
// aggregated, charged and released as Run's are. On error nothing more is
// written; the caller discards the output.
func (l *Labeler) RunTeachers(ctx context.Context, public RecordReader, out RecordWriter) (*Report, error) {
	l.resetChoice()
	l.warnings = nil
	cfg := &l.cfg
	tf := l.teachersFrom
	if tf == nil {
		return nil, fmt.Errorf("label: RunTeachers needs a Labeler made by NewFromTeachers")
	}
	cfg.phase(PhaseReading, 0, 0)
	head, headRows, err := l.readPublicHead(ctx, public)
	defer func() { releaseAll(head) }()
	if err != nil {
		return nil, err
	}
	enc := tf.man.Encoder
	if err := enc.CheckSchema(public.Schema()); err != nil {
		return nil, invalid("%s: %v", cfg.pub(), err)
	}
	if l.bins, err = l.publicBins(enc, head, headRows); err != nil {
		return nil, invalid("fitting the bin edges on %s: %v", cfg.pub(), err)
	}
	cs, err := newClassSet(l.labelField.Type, tf.man.Classes)
	if err != nil {
		return nil, invalid("%v", err)
	}
	const source = "declared with --classes when the teachers were trained"
	td := &teacherData{classes: cs, classesSource: source,
		labels: []*labelData{{name: l.labelField.Name, field: l.labelField, classes: cs, classesSource: source, ens: tf.ens}}}
	return l.release(ctx, &head, public, out, enc, tf.ens, td)
}
