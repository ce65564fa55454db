package label

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/pate-tool/pate/learners"
)

// Teachers trained elsewhere. A run's teachers can be trained outside Run
// (on Apache Beam workers, say, over sensitive data that no one machine
// holds), and a Run then polls them (RunTeachers). A TeacherSpec is what
// every teacher is trained with, fixed before any sensitive row is read;
// with the same public head, configuration and seed it is what Run would
// fit, and teachers trained with it from the same rows are Run's teachers:
//
//	spec   := lab.TeacherSpec(ctx, public)      // public data and the seed only
//	m      := spec.NewMapper()                  // per worker: row → teacher, class, encoded row
//	model  := spec.Train(x, y)                  // per teacher: its rows in input order
//	file   := spec.Ensemble(models)             // the ensemble, written with WriteTo
//	report := lab2.RunTeachers(ctx, file, ...)  // pate label --teachers-from
//
// Invariants 1 and 2 hold as in Run: the partition is the keyed hash of
// each unit's identity alone, and the encoder is fitted on public rows.

// TeacherSpec is what every teacher of a run is trained with. It holds the
// secret partition key: it travels to the workers that train the teachers
// (in a pipeline's graph) and is never written to the ensemble file.
type TeacherSpec struct {
	// Label is the label column; LabelType its Arrow type (a name
	// LabelTypeOf reads).
	Label     string `json:"label"`
	LabelType string `json:"label_type"`
	// Classes are the declared classes, in canonical order.
	Classes []string `json:"classes"`
	// Features are the feature columns, Encoder their encoding fitted on
	// the public head.
	Features []string          `json:"features"`
	Encoder  *learners.Encoder `json:"encoder"`
	// PrivacyUnit is the column that identifies a unit ("": a row).
	PrivacyUnit string `json:"privacy_unit,omitempty"`
	// Teachers is the number of teachers, fixed before the rows are read.
	Teachers int `json:"teachers"`
	// Learner and LearnerOptions train each teacher (the options hold the
	// public bin edges of the histogram learners).
	Learner        string                  `json:"learner"`
	LearnerOptions learners.LearnerOptions `json:"learner_options"`
	// Seeded says the key was drawn from a seed (a test, replicability).
	Seeded bool `json:"seeded"`
	// Key is the secret key of the partition function.
	Key []byte `json:"key"`

	classes *classSet
	field   arrow.Field
}

// TeacherSpec reads the head of the public stream as Run does and returns
// what the run's teachers are trained with: the encoder fitted on it, the
// partition key drawn from the run's noise source (its seed, when seeded),
// the declared classes and the learner. It reads no sensitive data.
//
// The run must poll teachers (a teacher mechanism), declare its classes
// (the private class discovery is a charged mechanism of the labelling
// run, not of training), label one column and leave the choice between
// mechanisms and the number of teachers to no one (both need a noisy count
// of the sensitive rows).
func (l *Labeler) TeacherSpec(ctx context.Context, public RecordReader) (*TeacherSpec, error) {
	cfg := &l.cfg
	if err := l.teachersElsewhere(); err != nil {
		return nil, err
	}
	if cfg.Classes == nil {
		return nil, paramError("classes", ": teachers trained outside pate label need declared classes: the private class discovery is a charged mechanism that belongs to the labelling run")
	}
	head, headRows, err := l.readPublicHead(ctx, public)
	defer releaseAll(head)
	if err != nil {
		return nil, err
	}
	enc, err := l.fitEncoder(head, headRows, l.sensitive)
	if err != nil {
		return nil, err
	}
	cs, err := newClassSet(l.labelField.Type, cfg.Classes)
	if err != nil {
		return nil, paramError("classes", ": %v", err)
	}
	s := &TeacherSpec{
		Label: l.labelField.Name, LabelType: l.labelField.Type.String(), Classes: slices.Clone(cs.values),
		Features: slices.Clone(l.features), Encoder: enc, PrivacyUnit: cfg.PrivacyUnit, Teachers: cfg.Teachers,
		Learner: cfg.Learner, LearnerOptions: l.learnerOptions(), Seeded: cfg.Seed != nil,
		Key: newPartitioner(1, l.source(streamPartition)).key,
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// teachersElsewhere refuses a run whose teachers cannot be trained apart
// from it.
func (l *Labeler) teachersElsewhere() error {
	cfg := &l.cfg
	switch {
	case !needsTeachers(cfg.Mechanism):
		return paramError("mechanism", " %s learns from the sensitive rows themselves, not from teachers: it cannot use teachers trained elsewhere", cfg.Mechanism)
	case cfg.Choose || cfg.GrowTeachers:
		return invalid("teachers trained elsewhere: the choice of a mechanism and of the number of teachers needs a noisy count of the sensitive rows; fix the mechanism and %v", ParamName("teachers"))
	case l.multi():
		return paramError("label", ": teachers trained elsewhere label one column")
	case cfg.Replicable != nil:
		return paramError("replicable", " is not supported with teachers trained elsewhere")
	}
	return nil
}

// ParseTeacherSpec reads a spec marshalled as JSON (what a pipeline ships
// to its workers) and checks it.
func ParseTeacherSpec(b []byte) (*TeacherSpec, error) {
	var s TeacherSpec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("teacher spec: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// check validates the spec and prepares its class set.
func (s *TeacherSpec) check() error {
	t, ok := LabelTypeOf(s.LabelType)
	if !ok {
		return fmt.Errorf("teacher spec: label type %q is not a label type", s.LabelType)
	}
	cs, err := newClassSet(t, s.Classes)
	if err != nil || !slices.Equal(cs.values, s.Classes) || len(cs.values) < 2 {
		return fmt.Errorf("teacher spec: the classes are not two or more distinct canonical %s values in order", t)
	}
	switch {
	case s.Label == "":
		return fmt.Errorf("teacher spec: no label column")
	case s.Encoder == nil || s.Encoder.Dim() < 1:
		return fmt.Errorf("teacher spec: no encoder")
	case s.Teachers < 1:
		return fmt.Errorf("teacher spec: %d teachers", s.Teachers)
	case len(s.Key) != 32:
		return fmt.Errorf("teacher spec: the partition key has %d bytes, not 32", len(s.Key))
	}
	if _, err := learners.NewLearner(s.Learner, s.LearnerOptions); err != nil {
		return fmt.Errorf("teacher spec: %w", err)
	}
	s.classes, s.field = cs, arrow.Field{Name: s.Label, Type: t, Nullable: true}
	return nil
}

// LabelTypeOf is the label type of the given name (arrow.DataType's
// String: "int64", "utf8", "bool", ...).
func LabelTypeOf(name string) (arrow.DataType, bool) {
	for _, t := range []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64,
		arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.FixedWidthTypes.Boolean,
	} {
		if t.String() == name {
			return t, true
		}
	}
	return nil, false
}

// TeacherMapper maps sensitive batches to the teachers' training rows. It
// is not safe for concurrent use: make one per goroutine.
type TeacherMapper struct {
	s    *TeacherSpec
	part *partitioner
	x    []float32
	ids  [][]byte
}

// NewMapper returns a mapper for the spec.
func (s *TeacherSpec) NewMapper() *TeacherMapper {
	return &TeacherMapper{s: s, part: &partitioner{k: s.Teachers, key: s.Key, mac: hmac.New(sha256.New, s.Key)}}
}

// Map calls emit for every row of rec that trains a teacher, in order:
// its index in rec, its teacher, its class index and its encoded row (dim
// values, valid during the call only). A row whose privacy unit or label
// is null, or whose label is not a declared class, trains no teacher, as
// in Run. Rows are identified as Run identifies them: rec must have the
// columns of the sensitive data as its reader gives them (all of them, in
// the file's order, when a row is the unit).
func (m *TeacherMapper) Map(rec arrow.Record, emit func(row, teacher int, class int32, x []float32) error) error {
	s := m.s
	n := int(rec.NumRows())
	if n == 0 {
		return nil
	}
	sch := rec.Schema()
	li := sch.FieldIndices(s.Label)
	if len(li) != 1 {
		return invalid("no label column %q (or more than one)", s.Label)
	}
	lc := rec.Column(li[0])
	var uc arrow.Array
	if s.PrivacyUnit != "" {
		ui := sch.FieldIndices(s.PrivacyUnit)
		if len(ui) != 1 {
			return invalid("no privacy-unit column %q (or more than one)", s.PrivacyUnit)
		}
		uc = rec.Column(ui[0])
	}
	p, err := s.Encoder.Prepare(rec)
	if err != nil {
		return invalid("%v", err)
	}
	dim := s.Encoder.Dim()
	m.x = growF32(m.x, n*dim)
	p.EncodeRows(0, n, &learners.Matrix{Data: m.x[: n*dim : n*dim]})
	cols := rec.Columns()
	var one []byte
	for lo := 0; lo < n; lo += identityBlock {
		hi := min(n, lo+identityBlock)
		if uc == nil {
			if cap(m.ids) < hi-lo {
				m.ids = make([][]byte, identityBlock)
			}
			rows := m.ids[:hi-lo]
			for k := range rows {
				rows[k] = append(rows[k][:0], 0)
			}
			rowIdentities(rows, cols, lo)
		}
		for i := lo; i < hi; i++ {
			var id [32]byte
			if uc != nil {
				if uc.IsNull(i) {
					continue
				}
				one = rowIdentity(append(one[:0], 1), []arrow.Array{uc}, i)
				id = sha256.Sum256(one)
			} else {
				id = sha256.Sum256(m.ids[i-lo])
			}
			v, ok := valueText(lc, i)
			if !ok {
				continue
			}
			c, ok := s.classes.index[v]
			if !ok {
				continue
			}
			if err := emit(i, m.part.teacher(id[:]), int32(c), m.x[i*dim:(i+1)*dim]); err != nil {
				return err
			}
		}
	}
	return nil
}

// identityBlock is the rows whose identities are built at once.
const identityBlock = 256

// Train trains one teacher from its rows: x (one encoded row each, as Map
// gives them) and y (their class indices), in the order of the sensitive
// input (Run trains each teacher on its rows in the order it read them).
// A teacher without rows votes the first class, as in Run.
func (s *TeacherSpec) Train(x *learners.Matrix, y []int32) (learners.Model, error) {
	dim, classes := s.Encoder.Dim(), len(s.Classes)
	if x.Rows != len(y) || x.Cols != dim && len(y) > 0 {
		return nil, fmt.Errorf("training a teacher: %d rows of %d columns for %d labels, want %d columns", x.Rows, x.Cols, len(y), dim)
	}
	for _, c := range y {
		if c < 0 || int(c) >= classes {
			return nil, fmt.Errorf("training a teacher: class index %d out of %d classes", c, classes)
		}
	}
	if len(y) == 0 {
		return constModel{classes: classes, dim: dim}, nil
	}
	lr, err := learners.NewLearner(s.Learner, s.LearnerOptions)
	if err != nil {
		return nil, paramError("learner", ": %v", err)
	}
	m, err := lr.Fit(x, y, classes)
	if err != nil {
		return nil, fmt.Errorf("training a teacher: %w", err)
	}
	return m, nil
}
